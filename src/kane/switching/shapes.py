"""Collision detection for simple shapes: sphere, disk and point against a plane, sphere against sphere.

A shape is attached to a body of a :class:`kane.System` (its geometry in body axes [m]); the :class:`Plane` is
fixed in the ground. :func:`contact` declares on the System the transient motion constraint of a pair and returns
a :class:`Contact` whose ``gap(t, q)`` [m] (> 0 apart) is computed from the model's kinematics, so that
``UnilateralContact(c.constraint, c.gap, e)`` (or ``c.unilateral(e)``) can be handed to the switching loop:

* sphere / point / disk on the plane (unit normal n, offset d: the points x with n . x = d): a
  point_velocity constraint at the contact point along n (row 0, the gap rate [m/s]); with ``no_slip`` two more
  rows along tangents t1, t2 (a rolling contact); with ``stick_direction`` a separate one-row constraint
  ``<name>_stick`` along that tangent for a :class:`~kane.switching.rules.Coulomb` rule. The contact point is the
  sphere's centre - r n, the disk's lowest rim point centre - r k/|k| (k: n in the disk's plane, regularized by
  ``eps`` when the disk lies flat, where the contact is taken at the centre), the point itself;
* sphere against sphere (frictionless): a motion constraint whose row is the time derivative of the gap
  |c_b - c_a| - r_a - r_b, i.e. n . (v_cb - v_ca) with n = (c_b - c_a)/|c_b - c_a| the line of centres: the
  relative normal velocity of the two contact points (their rotations add nothing along n).

The contact point, n and the centres' velocities are expressions of the coordinates (and speeds), so the
shapes' bodies must have their joints when :func:`contact` is called; the gap is a small traced Program
(kane.codegen) compiled on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..codegen.numpy_backend import compile_program
from ..codegen.program import ProgramBuilder
from ..errors import ModelError
from ..model.system import GROUND, Model, System
from .rules import Coulomb, UnilateralContact

__all__ = ["Contact", "Disk", "Gap", "Plane", "Point", "Sphere", "contact"]


def _vec3(value, what: str) -> tuple:
    try:
        v = tuple(sp.sympify(x) for x in value)
    except (TypeError, sp.SympifyError):
        raise ModelError(f"{what}: expected 3 numbers or expressions, got {value!r}") from None
    if len(v) != 3:
        raise ModelError(f"{what}: expected 3 components, got {len(v)}")
    return v


def _positive(value, what: str):
    r = sp.sympify(value)
    if r.is_number and not float(r) > 0:
        raise ModelError(f"{what}: expected a radius > 0 [m], got {value!r}")
    return r


def _body(value, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ModelError(f"{what}: expected a body name (or 'ground'), got {value!r}")
    return value


@dataclass(frozen=True)
class Sphere:
    """A sphere of ``radius`` [m] centred at ``center`` (body axes [m]) of ``body``."""

    body: str
    center: tuple = (0, 0, 0)
    radius: object = 1.0

    def __post_init__(self):
        object.__setattr__(self, "body", _body(self.body, "Sphere body"))
        object.__setattr__(self, "center", _vec3(self.center, f"Sphere on {self.body!r} center"))
        object.__setattr__(self, "radius", _positive(self.radius, f"Sphere on {self.body!r}"))


@dataclass(frozen=True)
class Disk:
    """A thin disk of ``radius`` [m], centre ``center`` and symmetry ``axis`` (body axes) of ``body``."""

    body: str
    center: tuple = (0, 0, 0)
    axis: tuple = (0, 0, 1)
    radius: object = 1.0

    def __post_init__(self):
        object.__setattr__(self, "body", _body(self.body, "Disk body"))
        object.__setattr__(self, "center", _vec3(self.center, f"Disk on {self.body!r} center"))
        a = np.array([float(x) for x in _vec3(self.axis, f"Disk on {self.body!r} axis")])
        if not np.linalg.norm(a) > 0:
            raise ModelError(f"Disk on {self.body!r} axis: expected a nonzero direction, got {self.axis!r}")
        object.__setattr__(self, "axis", tuple(sp.Float(x) for x in a / np.linalg.norm(a)))
        object.__setattr__(self, "radius", _positive(self.radius, f"Disk on {self.body!r}"))


@dataclass(frozen=True)
class Point:
    """The body-fixed ``point`` (body axes [m]) of ``body``."""

    body: str
    point: tuple = (0, 0, 0)

    def __post_init__(self):
        object.__setattr__(self, "body", _body(self.body, "Point body"))
        object.__setattr__(self, "point", _vec3(self.point, f"Point on {self.body!r}"))


@dataclass(frozen=True)
class Plane:
    """The ground plane n . x = ``offset`` [m] (ground axes; default z = 0), the free side along ``normal``."""

    normal: tuple = (0.0, 0.0, 1.0)
    offset: float = 0.0

    def __post_init__(self):
        n = np.array(self.normal, dtype=float).reshape(-1)
        if n.shape != (3,) or not np.linalg.norm(n) > 0 or not np.all(np.isfinite(n)):
            raise ModelError(f"Plane normal: expected a nonzero 3-vector, got {self.normal!r}")
        object.__setattr__(self, "normal", tuple(float(x) for x in n / np.linalg.norm(n)))
        object.__setattr__(self, "offset", float(self.offset))

    def tangents(self) -> tuple:
        """Two unit tangents (t1, t2) with (t1, t2, n) right-handed."""
        n = np.array(self.normal)
        e = np.eye(3)[int(np.argmin(np.abs(n)))]
        t1 = e - (e @ n) * n
        t1 /= np.linalg.norm(t1)
        return tuple(t1), tuple(np.cross(n, t1))


class _Frames:
    """Explicit rotations R_0_i (body i's axes to ground) and origins (ground axes) of a Model's bodies, as
    sympy expressions of the coordinates and parameters (composed from the joints' transforms)."""

    def __init__(self, model):
        self.model, self._R, self._r = model, {}, {}
        self._qdot: dict | None = None  # q_j -> q_j' of every coordinate, built on the first velocity()

    def index(self, body: str) -> int:
        return -1 if body == GROUND else self.model.body_index(body)

    def R(self, i) -> sp.Matrix:
        if i < 0:
            return sp.eye(3)
        if i not in self._R:
            pj = self.model.joints[i]
            R_FM, p_FM = pj.joint.transform(sp.Matrix(self.model.q[pj.q_slice]))
            R_pc = sp.Matrix(pj.R_parent_F) * R_FM * sp.Matrix(pj.R_child_M).T
            r_pc = sp.Matrix(pj.r_parent_F) + sp.Matrix(pj.R_parent_F) * p_FM - R_pc * sp.Matrix(pj.r_child_M)
            self._R[i] = self.R(pj.parent) * R_pc
            self._r[i] = self.origin(pj.parent) + self.R(pj.parent) * r_pc
        return self._R[i]

    def origin(self, i) -> sp.Matrix:
        if i < 0:
            return sp.zeros(3, 1)
        self.R(i)
        return self._r[i]

    def velocity(self, x) -> sp.Matrix:
        """d/dt of the expressions x(q, t) (a column), linear in the speeds: sum_j dx/dq_j q_j' + dx/dt, with
        q' = W(q) u + X of every joint."""
        m = self.model
        if self._qdot is None:
            self._qdot = {}
            for pj in m.joints:
                q_j = sp.Matrix(m.q[pj.q_slice])
                if not pj.joint.nq:
                    continue
                jk = pj.joint.kinematics(q_j, m.t)
                rates = jk.W * sp.Matrix(m.u[pj.u_slice]) + jk.X
                self._qdot.update(zip(q_j, rates))
        out = sp.zeros(x.shape[0], 1)
        for r in range(x.shape[0]):
            e = x[r]
            out[r] = sum((e.diff(s) * self._qdot[s] for s in e.free_symbols if s in self._qdot), e.diff(m.t))
        return out

    def point(self, i, p) -> sp.Matrix:
        """Ground position of the body point p (body axes)."""
        return self.origin(i) + self.R(i) * sp.Matrix(p)


@dataclass(eq=False)
class Gap:
    """The gap gap(t [s], q (n_q,)) -> float [m] of a shape pair, > 0 apart, from the model's kinematics.

    ``kind``: "sphere_plane", "point_plane", "disk_plane" or "sphere_sphere"; ``exprs``: the ground-axes
    quantities it needs (centres [m], disk axis, radii [m]) as expressions; evaluated by a Program compiled on the
    first call against ``system.compile()`` (or the model given to :meth:`bind`). ``params``: parameter values
    (dict name -> value) used instead of the defaults.
    """

    system: System
    kind: str
    exprs: tuple
    plane: Plane | None = None
    eps: float = 1e-12
    params: dict | None = None
    _fn: object = field(default=None, repr=False)

    def bind(self, model) -> Gap:
        """Compile against ``model`` (a kane.Model, or Equations / Dynamics holding one); returns self."""
        model = model if isinstance(model, Model) else model.model
        groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters, "inputs": model.inputs}
        b = ProgramBuilder(groups, prefix="g")
        prog = b.build({"x": [b.assign(e) for e in self.exprs]})
        self._fn = compile_program(prog, ["x"])
        self._model = model
        self._p = model.parameter_values(self.params)
        self._w = model.input_values()
        self._u = np.zeros(model.n_u)
        return self

    def _x(self, t, q) -> np.ndarray:
        if self._fn is None:
            self.bind(self.system.compile())
        return np.asarray(self._fn(float(t), np.asarray(q, dtype=float), self._u, self._p, self._w)[0], dtype=float)

    def evaluate(self, t, q):
        """(gap [m], points (2, 3) [m]): the gap and the two closest points (ground axes), the first on shape a
        (for a plane pair: the shape's contact point, then its projection onto the plane)."""
        x = self._x(t, q)
        if self.kind == "sphere_sphere":
            ca, cb, ra, rb = x[0:3], x[3:6], x[6], x[7]
            d = cb - ca
            dist = float(np.sqrt(d @ d))
            n = d / dist if dist > 0 else np.array([0.0, 0.0, 1.0])
            return dist - ra - rb, np.array([ca + ra * n, cb - rb * n])
        n, off = np.array(self.plane.normal), self.plane.offset
        if self.kind == "point_plane":
            p = x[0:3]
        elif self.kind == "sphere_plane":
            p = x[0:3] - x[3] * n
        else:  # disk: the lowest rim point
            c, a, r = x[0:3], x[3:6], x[6]
            k = n - (n @ a) * a
            p = c - r * k / np.sqrt(k @ k + self.eps * self.eps)
        h = float(n @ p) - off
        return h, np.array([p, p - h * n])

    def __call__(self, t, q) -> float:
        return self.evaluate(t, q)[0]

    def points(self, t, q) -> np.ndarray:
        """The closest points (2, 3) [m] in ground axes (see :meth:`evaluate`)."""
        return self.evaluate(t, q)[1]


@dataclass(frozen=True)
class Contact:
    """A declared contact: ``constraint`` (its row ``row`` is the gap rate [m/s]; for a rolling contact rows 1-2
    are the tangential slip velocities), the ``gap`` function, and ``stick`` (name of the one-row tangential
    constraint for a Coulomb rule, or None)."""

    name: str
    constraint: str
    gap: Gap
    stick: str | None = None
    row: int = 0

    def unilateral(self, restitution: float = 0.0, v_min: float = 1e-3) -> UnilateralContact:
        """The :class:`UnilateralContact` rule of this contact (restitution e, plastic below ``v_min`` [m/s])."""
        return UnilateralContact(self.constraint, self.gap, restitution, v_min, self.row)

    def coulomb(self, mu_s: float, mu_k: float, v_stick: float = 1e-6) -> Coulomb:
        """The :class:`Coulomb` rule on the stick constraint, the normal force being this contact's multiplier."""
        if self.stick is None:
            raise ModelError(f"contact {self.name!r} has no stick constraint: declare it with stick_direction=...")
        return Coulomb(self.stick, self.constraint, mu_s, mu_k, self.row, v_stick)


def _unit_expr(v):
    return v / sp.sqrt(sum(x * x for x in v))


def contact(system: System, shape_a, shape_b, name: str, *, no_slip: bool = False, stick_direction=None,
            transient: bool = True, eps: float = 1e-12, params: dict | None = None) -> Contact:
    """Declare on ``system`` the contact constraint ``name`` between two shapes and return its :class:`Contact`.

    Pairs: (Sphere | Disk | Point, Plane) in either order, (Sphere, Sphere). ``no_slip``: the contact point has
    no tangential velocity either (plane pairs; rows 1-2 of the constraint). ``stick_direction``: a tangent
    (ground axes) along which a separate one-row constraint ``<name>_stick`` is declared (plane pairs), for
    Coulomb friction. ``eps`` [-]: regularization of a flat disk's contact point. ``params``: parameter values
    for the gap function. The shapes' bodies and joints must already be on ``system``.
    """
    if not isinstance(system, System):
        raise ModelError(f"contact {name!r}: expected a kane.System, got {type(system).__name__}")
    shapes = (Sphere, Disk, Point, Plane)
    for s in (shape_a, shape_b):
        if not isinstance(s, shapes):
            raise ModelError(f"contact {name!r}: expected Sphere, Disk, Point or Plane shapes, got {s!r}")
    if isinstance(shape_a, Plane):
        shape_a, shape_b = shape_b, shape_a
    frames = _Frames(system.compile())
    if isinstance(shape_b, Plane):
        if isinstance(shape_a, Plane):
            raise ModelError(f"contact {name!r}: two planes cannot collide")
        return _plane_contact(system, frames, shape_a, shape_b, name, no_slip, stick_direction, transient, eps,
                              params)
    if isinstance(shape_a, Sphere) and isinstance(shape_b, Sphere):
        if no_slip or stick_direction is not None:
            raise ModelError(f"contact {name!r}: sphere-sphere contacts are frictionless (no no_slip or "
                             "stick_direction)")
        if shape_a.body == shape_b.body:
            raise ModelError(f"contact {name!r}: both spheres are on body {shape_a.body!r}")
        return _sphere_sphere(system, frames, shape_a, shape_b, name, transient, params)
    raise ModelError(f"contact {name!r}: unsupported pair {type(shape_a).__name__}-{type(shape_b).__name__}; "
                     "supported: sphere, disk or point with a plane, sphere with sphere")


def _plane_contact(system, frames, shape, plane, name, no_slip, stick_direction, transient, eps, params):
    i = frames.index(shape.body)
    if i < 0:
        raise ModelError(f"contact {name!r}: the shape on the plane must be on a moving body, not 'ground'")
    n = sp.Matrix(plane.normal)
    R = frames.R(i)
    needs_point = no_slip or stick_direction is not None
    if isinstance(shape, Point):
        kind, point = "point_plane", sp.Matrix(shape.point)
        exprs = list(frames.point(i, shape.point))
    elif isinstance(shape, Sphere):
        kind = "sphere_plane"
        c = sp.Matrix(shape.center)
        # n . v is the same for the centre and the contact point; the tangential rows need the contact point
        point = c - shape.radius * (R.T * n) if needs_point else c
        exprs = list(frames.point(i, shape.center)) + [shape.radius]
    else:
        kind = "disk_plane"
        c, a = sp.Matrix(shape.center), sp.Matrix(shape.axis)
        nb = R.T * n  # the plane normal in the disk's axes
        k = nb - (a.T * nb)[0] * a
        point = c - shape.radius * k / sp.sqrt((k.T * k)[0] + sp.Float(eps) ** 2)
        exprs = list(frames.point(i, shape.center)) + list(R * a) + [shape.radius]
    directions = [plane.normal]
    if no_slip:
        directions += list(plane.tangents())
    system.add_point_velocity_constraint(name, shape.body, tuple(point), directions, transient=transient)
    stick = None
    if stick_direction is not None:
        d = np.array(stick_direction, dtype=float).reshape(-1)
        nn = np.array(plane.normal)
        d = d - (d @ nn) * nn if d.shape == (3,) else d
        if d.shape != (3,) or not np.linalg.norm(d) > 1e-12:
            raise ModelError(f"contact {name!r} stick_direction: expected a 3-vector not along the plane normal, "
                             f"got {stick_direction!r}")
        stick = system.add_point_velocity_constraint(f"{name}_stick", shape.body, tuple(point),
                                                     [tuple(d / np.linalg.norm(d))], transient=transient)
    return Contact(name, name, Gap(system, kind, tuple(sp.sympify(e) for e in exprs), plane, float(eps),
                                   params), stick)


def _sphere_sphere(system, frames, sa, sb, name, transient, params):
    ia, ib = frames.index(sa.body), frames.index(sb.body)
    ca, cb = frames.point(ia, sa.center), frames.point(ib, sb.center)
    n = _unit_expr(cb - ca)  # from a to b, ground axes
    rate = (n.T * (frames.velocity(cb) - frames.velocity(ca)))[0]
    system.add_motion_constraint(name, [rate], transient=transient)
    exprs = list(ca) + list(cb) + [sa.radius, sb.radius]
    return Contact(name, name, Gap(system, "sphere_sphere", tuple(sp.sympify(e) for e in exprs), None, 0.0,
                                   params))
