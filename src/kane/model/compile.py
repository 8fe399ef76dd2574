"""Compile a ``System`` into a frozen ``Model``: topology, q/u layout, symbol checks, inertia checks."""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..errors import ModelError
from . import joints as J
from .elements import Body, Constraint, ConstraintKind, Force, JointLoad, PlacedJoint, Spring, Torque
from .model import GROUND, Model, float_value, stretch, stretch_rate, t
from .values import _vec, check_rotation

__all__ = ["compile_system"]


def _order_bodies(system) -> list[str]:
    """Bodies in the order their joints were added (a body after its parent); checks parents exist, one inboard
    joint per body, no cycle."""
    inboard = {}
    for e in system._joints:
        if e.parent != GROUND and e.parent not in system._bodies:
            raise ModelError(f"joint {e.name!r}: parent body {e.parent!r} does not exist; expected 'ground' or "
                             f"one of: {', '.join(system._bodies) or '(no bodies)'}")
        if e.child not in system._bodies:
            raise ModelError(f"joint {e.name!r}: child body {e.child!r} does not exist")
        if e.child == e.parent:
            raise ModelError(f"joint {e.name!r}: a body cannot be jointed to itself ({e.child!r})")
        if e.child in inboard:
            raise ModelError(f"body {e.child!r} has two inboard joints, {inboard[e.child].name!r} and {e.name!r}; "
                             "a tree has one per body: close loops with add_loop_closure")
        inboard[e.child] = e
    for b in system._bodies:
        if b not in inboard:
            raise ModelError(f"body {b!r} has no inboard joint; expected a joint from its parent or a "
                             "kane.joints.Free joint from 'ground'")
    # the order in which joints were added (a child whose joint came before its parent's waits for the parent):
    # declared depth-first, as URDF and Pinocchio users write them, it stays depth-first
    order, placed, waiting = [], {GROUND}, list(system._joints)
    while True:
        ready = next((e for e in waiting if e.parent in placed), None)
        if ready is None:
            break
        waiting.remove(ready)
        placed.add(ready.child)
        order.append(ready.child)
    missing = [b for b in system._bodies if b not in placed]
    if missing:
        raise ModelError(f"joints form a cycle through bodies {', '.join(missing)}: every body must be reachable "
                         "from 'ground' through a tree of joints; close loops with add_loop_closure")
    return order, inboard


def _check_inertia(body: Body, defaults: dict):
    try:
        m = float(_numeric(body.mass, defaults, f"body {body.name!r} field 'mass'"))
        I = _numeric(body.inertia, defaults, f"body {body.name!r} field 'inertia'")
    except TypeError:
        raise ModelError(f"body {body.name!r}: mass and inertia must be numbers or expressions of parameters") from None
    if not np.isfinite(m) or not np.all(np.isfinite(I)):
        raise ModelError(f"body {body.name!r} fields 'mass' and 'inertia': expected finite numbers, got mass "
                         f"{m:g} and inertia {np.array2string(I.ravel(), precision=4)}")
    if not m >= 0:
        raise ModelError(f"body {body.name!r} field 'mass': expected a mass >= 0 (0 for a massless frame), "
                         f"got {m:g}")
    if body.is_particle or not np.any(I):
        return  # a point mass (or a massless frame) has no rotational inertia
    ev = np.linalg.eigvalsh(I)
    tol = 1e-12 * max(1.0, float(np.max(np.abs(ev))))
    if np.any(ev <= tol):
        raise ModelError(f"body {body.name!r} field 'inertia': expected a positive-definite central inertia "
                         f"tensor (or all zeros for a point mass), got principal moments "
                         f"{np.array2string(ev, precision=4)}")
    a, b, c = ev
    if a + b < c * (1 - 1e-9):
        raise ModelError(f"body {body.name!r} field 'inertia': principal moments {a:g}, {b:g}, {c:g} violate "
                         "the triangle inequality (no rigid body has them)")


def compile_system(system) -> Model:
    if not system._bodies:
        raise ModelError(f"system {system.name!r} has no bodies")
    order, inboard = _order_bodies(system)
    body_index = {name: i for i, name in enumerate(order)}
    gravity = _vec(system.gravity, f"system {system.name!r} field 'gravity'")

    def bidx(name, what):
        if name == GROUND:
            return -1
        if name not in body_index:
            raise ModelError(f"{what}: no body named {name!r}; bodies: {', '.join(order)}")
        return body_index[name]

    bodies, joints, parent, qs, us, q0, u0 = [], [], [], [], [], [], []
    param_symbols = frozenset(sp.Symbol(k) for k in system._params)
    for i, name in enumerate(order):
        body = system._bodies[name]
        _check_inertia(body, system._params)
        bodies.append(body)
        e = inboard[name]
        p = bidx(e.parent, f"joint {e.name!r}")
        parent.append(p)
        nq, nu = e.joint.nq, e.joint.nu
        qsl, usl = slice(len(qs), len(qs) + nq), slice(len(us), len(us) + nu)
        qs += [sp.Symbol(n) for n in e.q_names]
        us += [sp.Symbol(n) for n in e.u_names]
        q_init = e.q0 if e.q0 is not None else _neutral_q(e.joint)
        u_init = e.u0 if e.u0 is not None else (0.0,) * nu
        if len(q_init) != nq or len(u_init) != nu:
            raise ModelError(f"joint {e.name!r}: q0 needs {nq} values and u0 {nu}; got {len(q_init)} and {len(u_init)}")
        q0 += list(q_init)
        u0 += list(u_init)
        _check_placement(e, system._params)
        joints.append(PlacedJoint(e.name, p, i, e.joint, e.R_parent_F, e.r_parent_F, e.R_child_M, e.r_child_M,
                                  qsl, usl))
        # early check that the joint's own kinematics are well defined for its speed choice
        try:
            q_sym = sp.Matrix([sp.Symbol(n) for n in e.q_names])
            e.joint.kinematics(q_sym, t)
            e.joint.transform(q_sym)
        except ModelError as exc:
            raise ModelError(f"joint {e.name!r}: {exc}") from None
        _check_subspace(e, q_sym, q_init, system._params, param_symbols)

    params = tuple(sp.Symbol(n) for n in system._params)
    inputs = tuple(sp.Symbol(n) for n in system._inputs)
    known = set(qs) | set(us) | set(params) | set(inputs) | {t}
    joint_names = [e.name for e in joints]

    def check(expr, what, extra=()):
        unknown = sorted(str(s) for s in sp.sympify(expr).free_symbols - known - set(extra))
        if unknown:
            raise ModelError(f"{what}: unknown symbol(s) {', '.join(unknown)}; expected coordinates, speeds, 't', "
                             "or parameters/inputs declared with System.parameter / System.input")
        return expr

    param_set = frozenset(params)
    for b in bodies:
        for expr in [b.mass, *b.com, *b.inertia]:
            check(expr, f"body {b.name!r}")
            if expr.free_symbols - param_set:
                raise ModelError(f"body {b.name!r}: mass properties may depend on parameters only")
    check(gravity, "gravity")
    forces = tuple(Force(bidx(b, "force"), check(v, f"force on {b!r}"), check(pt, f"force point on {b!r}"),
                         bidx(f, f"force on {b!r} field 'frame'")) for b, v, pt, f in system._forces)
    torques = tuple(Torque(bidx(b, "torque"), check(v, f"torque on {b!r}"), bidx(f, f"torque on {b!r} field 'frame'"))
                    for b, v, f in system._torques)
    springs = tuple(Spring(bidx(a, "spring field 'body_a'"), check(pa, "spring field 'point_a'"),
                           bidx(b, "spring field 'body_b'"), check(pb, "spring field 'point_b'"),
                           check(L0, "spring field 'rest_length'"),
                           check(law, "spring field 'tension'", (stretch, stretch_rate)), pot)
                    for a, pa, b, pb, L0, law, pot in system._springs)
    joint_loads = []
    for entry in system._joint_loads:
        jname = entry[1]
        if jname not in joint_names:
            raise ModelError(f"joint load: no joint named {jname!r}; joints: {', '.join(joint_names)}")
        k = joint_names.index(jname)
        pj = joints[k]
        if pj.joint.nq != pj.joint.nu:
            raise ModelError(f"joint load on {jname!r}: generalized forces need a joint with as many coordinates "
                             f"as speeds; a {pj.joint.kind} joint has {pj.joint.nq} and {pj.joint.nu}: apply a "
                             "torque with add_torque instead")
        qj = sp.Matrix(qs[pj.q_slice])
        if entry[0] == "spring":
            _, _, kk, rest, cc = entry
            W = pj.joint.kinematics(qj, t).W
            qdot = W * sp.Matrix(us[pj.u_slice])
            Q = sp.Matrix([-kk * (qj[r] - rest) - cc * qdot[r] for r in range(len(qj))])
            pot = sum(kk * (qj[r] - rest) ** 2 / 2 for r in range(len(qj)))
        else:
            Q = sp.Matrix(list(entry[2]))
            if Q.shape[0] != pj.joint.nq:
                raise ModelError(f"joint torque on {jname!r}: expected {pj.joint.nq} generalized forces")
            pot = sp.S.Zero  # an applied torque stores no energy: it does work (see the work-energy balance)
        joint_loads.append(JointLoad(k, sp.ImmutableMatrix(check(Q, f"joint load on {jname!r}")),
                                     check(pot, f"joint load on {jname!r}") if pot is not None else None))

    defaults = {sp.Symbol(k): v for k, v in system._params.items()}
    constraints = tuple(_compile_constraint(c, bidx, joints, check, set(us), gravity, defaults)
                        for c in system._constraints)
    model = Model(system.name, tuple(bodies), tuple(joints), tuple(parent), tuple(qs), tuple(us), t, params,
                  tuple(system._params.values()), inputs, tuple(system._inputs.values()), gravity, forces, torques,
                  springs, tuple(joint_loads), constraints, tuple(float(x) for x in q0), tuple(float(x) for x in u0),
                  _parameter_bounds(system, bodies), tuple(system._visuals),
                  collisions=tuple(system._collisions), collision_excludes=tuple(system._collision_excludes))
    model.check_quaternions(model.q0, "q0")
    return model


def _check_placement(e, defaults: dict) -> None:
    """A joint placement rotation written with parameters is checked at the parameters' default values, with the
    message a numeric one gets."""
    for field, R in (("parent_rotation", e.R_parent_F), ("child_rotation", e.R_child_M)):
        if R.free_symbols:
            subs = [s for s in R.free_symbols if str(s) in defaults]
            try:
                Rn = _numeric(R, defaults, f"joint {e.name!r} field {field!r}")
            except TypeError:
                raise ModelError(f"joint {e.name!r} field {field!r}: expected numbers or expressions of parameters, "
                                 f"got {R.tolist()}") from None
            check_rotation(Rn, f"joint {e.name!r} field {field!r}", " at the parameters' default values "
                           + ", ".join(f"{s} = {defaults[str(s)]:g}" for s in sorted(subs, key=str)))


def _parameter_bounds(system, bodies) -> tuple:
    """(lower, upper) per parameter: as declared, and non-negative for one used alone as a mass or a principal
    moment of inertia (a negative value there is not a rigid body)."""
    bounds = {name: system._param_bounds.get(name, (-np.inf, np.inf)) for name in system._params}
    for b in bodies:
        for expr in (b.mass, b.inertia[0, 0], b.inertia[1, 1], b.inertia[2, 2]):
            name = str(expr)
            if expr.is_Symbol and name in bounds and name not in system._param_bounds:
                lo, hi = bounds[name]
                bounds[name] = (max(lo, 0.0), hi)
    return tuple(bounds[name] for name in system._params)


def _check_subspace(e, q_sym, q_init, defaults: dict, param_symbols: frozenset):
    """Every joint axis is a direction at the default parameters: a zero (or undefined) column of the motion
    subspace there, such as a parametric axis (a, a, 0) with a = 0, is refused with the joint's name.
    ``param_symbols``: the symbols of ``defaults``' names."""
    S = e.joint.kinematics(q_sym, t).S_M
    if not S.free_symbols & param_symbols:
        return
    values = dict(defaults) | {str(q): v for q, v in zip(q_sym, q_init)}
    try:
        Sn = _numeric(S, values, f"joint {e.name!r} axis")
    except TypeError:  # a symbol left over is reported by the symbol checks
        return
    except ModelError:  # not finite (0/0 of a zero axis normalized)
        Sn = np.full(S.shape, np.nan)
    bad = [k for k in range(Sn.shape[1]) if not np.all(np.isfinite(Sn[:, k])) or not np.any(Sn[:, k])]
    if bad:
        raise ModelError(f"joint {e.name!r}: its axis is zero or undefined at the default parameter values "
                         f"(motion subspace column(s) {bad}); an axis must be a nonzero direction")


def _neutral_q(joint: J.Joint) -> tuple:
    """Zero coordinates, with the identity rotation for a quaternion (scalar first)."""
    return tuple(1.0 if joint.unit_quaternion and k == joint.unit_quaternion[0] else 0.0 for k in range(joint.nq))


def _at_defaults(expr, defaults) -> np.ndarray | None:
    """The numeric value of an expression (or matrix) at the default parameters, None if it depends on more."""
    try:
        out = _numeric(expr, {str(k): v for k, v in defaults.items()}, "a vector")
    except (TypeError, ModelError):
        return None
    return out.reshape(-1) if isinstance(expr, sp.MatrixBase) else out


def _numeric(expr, values: dict, what: str) -> np.ndarray:
    """The value of an expression (a 0-d array) or a matrix (its shape) at ``values`` (name -> float), in double
    precision (:func:`kane.model.model.float_value`: a tower of powers is refused at once, never evaluated
    exactly). TypeError for a symbol without a value; ModelError naming ``what`` for a value beyond the range of
    a double or not real."""
    items = list(expr) if isinstance(expr, sp.MatrixBase) else [sp.sympify(expr)]
    out = []
    for item in items:
        known = {s: float(values[str(s)]) for s in item.free_symbols if str(s) in values}
        try:
            out.append(float_value(item, known))
        except KeyError as exc:
            raise TypeError(f"no value for {exc.args[0]}") from None
        except TypeError:  # a function float_value does not know: sympy's own evaluation
            out.append(float(item.xreplace({s: sp.Float(v) for s, v in known.items()}).evalf()))
        except (OverflowError, RecursionError):
            raise ModelError(f"{what}: a value is beyond the range of a double (about 1.8e308) at the default "
                             "parameter values") from None
        except (ValueError, ZeroDivisionError):
            raise ModelError(f"{what}: a value is not a finite real number at the default parameter values") from None
    return np.array(out).reshape(expr.shape if isinstance(expr, sp.MatrixBase) else ())


def _unit(v) -> sp.Matrix:
    v = sp.Matrix(v)
    return v / sp.sqrt(sum(c**2 for c in v))


def _plane_normal(what, given, gravity, defaults) -> sp.ImmutableMatrix:
    """The plane's unit normal: as given, else -g/|g| at the default parameters (z up without gravity)."""
    if given is not None:
        n = _at_defaults(given, defaults)
        if n is None or not np.isfinite(n).all() or np.linalg.norm(n) == 0:
            raise ModelError(f"{what}: plane_normal must be a nonzero vector at the default parameters")
        return sp.ImmutableMatrix(_unit(given))
    g = _at_defaults(gravity, defaults)
    if g is None:
        raise ModelError(f"{what}: gravity depends on the state or time, so the ground plane is not defined by "
                         "it; give plane_normal")
    if not np.any(g):
        return sp.ImmutableMatrix([0, 0, 1])
    exact = [sp.Integer(int(round(x))) if x in (-1.0, 0.0, 1.0) else sp.Float(x) for x in -g / np.linalg.norm(g)]
    return sp.ImmutableMatrix(exact)


def _nonzero(what, field, vec, defaults):
    value = _at_defaults(vec, defaults)
    if value is not None and not np.any(value):
        raise ModelError(f"{what}: {field} is zero at the default parameters; the constraint would constrain "
                         "nothing")


def _compile_constraint(entry, bidx, joints, check, speeds, gravity, defaults) -> Constraint:
    """Check one declared constraint; a constraint that constrains nothing (no rows, a row without speeds, a
    zero direction or radius, a body closed on itself, ground's velocity) is refused with its name."""
    name, kind, data, transient = entry
    what = f"constraint {name!r}"
    joint_names = [j.name for j in joints]
    if kind is ConstraintKind.MOTION:
        data = tuple(check(e, what) for e in data)
        if not data:
            raise ModelError(f"{what}: no rows given; expected expressions linear in the speeds")
        for r, e in enumerate(data):
            if not e.free_symbols & speeds:
                raise ModelError(f"{what} row {r + 1} ({e}): contains no speed; a motion constraint row is linear "
                                 "in the speeds, A(q) u + b = 0 (a row without speeds constrains nothing or "
                                 "nothing possible)")
    elif kind is ConstraintKind.JOINT_LOCK:
        if data[0] not in joint_names:
            raise ModelError(f"{what}: no joint named {data[0]!r}; joints: {', '.join(joint_names)}")
        data = (joint_names.index(data[0]),)
        if joints[data[0]].joint.nu == 0:
            raise ModelError(f"{what}: joint {joint_names[data[0]]!r} has no speeds to lock")
    elif kind is ConstraintKind.POINT_VELOCITY:
        data = (bidx(data[0], what), check(data[1], what), tuple(check(d, what) for d in data[2]))
        if data[0] < 0:
            raise ModelError(f"{what}: a point of 'ground' has no velocity to constrain; name a body")
        for d in data[2]:
            _nonzero(what, "a direction", d, defaults)
    elif kind is ConstraintKind.ROLLING_DISK:
        body, radius, axis, center, point, normal = data
        data = (bidx(body, what), check(radius, what), check(axis, what), check(center, what), check(point, what),
                _plane_normal(what, check(normal, what) if normal is not None else None, gravity, defaults))
        if data[0] < 0:
            raise ModelError(f"{what}: the rolling body cannot be 'ground'")
        _nonzero(what, "the radius", radius, defaults)
        _nonzero(what, "the axis", axis, defaults)
    elif kind is ConstraintKind.NO_SLIP:
        data = (bidx(data[0], what), check(data[1], what), check(data[2], what))
        _nonzero(what, "the direction", data[2], defaults)
    elif kind is ConstraintKind.LOOP_CLOSURE:
        data = (bidx(data[0], what), check(data[1], what), bidx(data[2], what), check(data[3], what), data[4],
                tuple(check(d, what) for d in data[5]))
        if data[0] == data[2]:
            raise ModelError(f"{what}: closes body {entry[2][0]!r} on itself; a loop closure joins two bodies")
        for d in data[5]:
            _nonzero(what, "a direction", d, defaults)
    return Constraint(name, kind, data, transient)
