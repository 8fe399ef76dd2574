"""``kane.from_sympy``: a sympy.physics.mechanics ``KanesMethod`` (or mechanics ``System``) as kane ``Equations``.

sympy's equations are taken as they are (no re-derivation): its mass matrix and forcing over the independent
speeds, its kinematic differential equations q' = W u + X (``kindiffdict``) and, with dependent speeds, its
velocity constraints B u + c = 0 and their rates (the acceleration constraints). kane names the entries as the
intermediates of a :class:`kane.codegen.program.Program` and, for dependent speeds, solves the constraint block by
its own symbolic elimination; the result compiles through the same backends as a derived model (numpy, numba, C),
so ``compile()``, ``kane.linearize`` and the simulators work on it.

The imported model has no kane bodies or joints (``Equations.model.bodies`` is empty): what needs the geometry
(the viewer, per-body outputs) does not apply; the kinetic energy is sympy's (of the bodies the KanesMethod
holds), the potential energy is not known; constraint forces with dependent speeds need the unconstrained
equations, which a ``KanesMethod`` with dependent speeds does not keep (``constraint_forces`` says so). sympy's
configuration constraints (dependent coordinates) are evaluated as the configuration residual C but not
eliminated: every coordinate is integrated and ``kane.linearize`` keeps the dependent ones as states. Coordinates
and speeds become plain sympy Symbols named as sympy's functions of t (``q1(t)`` -> ``q1``); every other function
of t is an input (default 0); every other free symbol a parameter, whose value must be given. Only sympy objects
are taken: no text is parsed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import sympy as sp
import sympy.physics.mechanics as me

from ..codegen.program import ProgramBuilder
from ..errors import DerivationError, KaneError
from ..mechanics.constraints import EmbeddingChoice
from ..mechanics.kinematics import sum_products
from ..model.model import Model, t as kane_t
from .derive import Equations, RowBlock
from .embedding import solve_dependent

__all__ = ["from_sympy"]

_TIME = me.dynamicsymbols._t
_BLOCK = "sympy_velocity_constraints"
_FORMING = threading.Lock()  # forming a KanesMethod's equations mutates it: one thread at a time


def from_sympy(method, parameters: Mapping | None = None, inputs: Mapping | None = None,
               name: str = "sympy_model") -> Equations:
    """kane :class:`Equations` of a ``sympy.physics.mechanics.KanesMethod`` (``kanes_equations`` called, or called
    here from the bodies and loads it was given) or ``sympy.physics.mechanics.System`` (``form_eoms`` called, or
    called here with Kane's method).

    parameters: the value of every free symbol of the equations (a mapping from the sympy Symbol, or its name, to a
    float); inputs: default values of the other functions of t (0 where not given); name: the model's name.
    Raises :class:`kane.KaneError` for another object, auxiliary speeds (whose equations give constraint forces,
    not motion: form the KanesMethod without them), a parameter without a value, or equations that still hold
    derivatives kane cannot resolve."""
    with _FORMING:
        km = _kanes_method(method)
    if km._uaux:
        raise KaneError(f"from_sympy: the KanesMethod has the auxiliary speeds {', '.join(map(_name, km._uaux))}, "
                        "whose equations are not solved for motion (they give constraint forces): form the "
                        "KanesMethod without u_auxiliary to import it")
    q_fun, u_fun = list(km.q), list(km.u)
    u_dep_fun = list(km._udep)
    p = len(u_fun) - len(u_dep_fun)
    q = tuple(sp.Symbol(_name(x)) for x in q_fun)
    u = tuple(sp.Symbol(_name(x)) for x in u_fun)
    kdd = km.kindiffdict()
    rep = dict(zip(q_fun, q))
    rep.update(zip(u_fun, u))
    qdot_exprs = [kdd[x.diff(_TIME)] for x in q_fun]
    M_all, f_all = km.mass_matrix, km.forcing
    raw = {"M": M_all, "f": f_all, "qdot": sp.Matrix(qdot_exprs)}
    if u_dep_fun:
        raw.update(B=km._k_nh, c=km._f_nh, bias=km._f_dnh)
    if len(km._f_h):
        raw["C"] = km._f_h
    kinetic = _kinetic_energy(km)
    if kinetic is not None:
        raw["kinetic"] = sp.Matrix([kinetic.xreplace(kdd)])
    others = set()
    for m in raw.values():
        others |= me.find_dynamicsymbols(m, exclude=list(q_fun) + list(u_fun))
    inputs_fun = sorted((x for x in others if isinstance(x, sp.Function)), key=sp.default_sort_key)
    wrong = sorted(others - set(inputs_fun), key=sp.default_sort_key)
    if wrong:
        raise KaneError(f"from_sympy: the equations hold {', '.join(map(str, wrong))}: only the coordinates, the "
                        "speeds (not their derivatives) and inputs (functions of t) can be imported")
    w = tuple(sp.Symbol(_name(x)) for x in inputs_fun)
    rep.update(zip(inputs_fun, w))
    conv = {k: sp.Matrix(v).xreplace(rep).xreplace({_TIME: kane_t}) for k, v in raw.items()}
    params = sorted(set().union(*(m.free_symbols for m in conv.values())) - set(q) - set(u) - set(w) - {kane_t},
                    key=sp.default_sort_key)
    _check_names(q, u, w, params)
    p_values = _values(params, parameters or {}, "parameter", required=True)
    w_values = _values(w, inputs or {}, "input", required=False)

    b = ProgramBuilder({"t": (kane_t,), "q": q, "u": u, "params": tuple(params), "inputs": w})
    a = b.assign
    conv = _shared(conv, a)
    u_ind, u_dep = u[:p], u[p:]
    M_rows, f_rows = conv["M"][:p, :], conv["f"][:p, :]
    defs, pivots, choice, layout = {}, [], None, {}
    outputs = {"qdot": [a(e) for e in conv["qdot"]], "u_full": list(u), "C": [a(e) for e in conv.get("C", [])]}
    if u_dep:
        m = len(u_dep)
        B, c, bias = conv["B"], conv["c"], conv["bias"]
        A_acc, f_acc = conv["M"][p:, :], conv["f"][p:, :]
        rhs = sp.Matrix.hstack(-B[:, :p], -c, -A_acc[:, :p], f_acc)
        try:
            X, pivots = solve_dependent(b, B[:, p:], rhs, range(m)) if A_acc[:, p:] == B[:, p:] else (None, [])
        except DerivationError:
            raise KaneError(f"from_sympy: the velocity constraints cannot be solved for the dependent speeds "
                            f"{', '.join(map(str, u_dep))} in the order given (a zero pivot)") from None
        if X is None:
            raise KaneError("from_sympy: the acceleration constraints' dependent block differs from the velocity "
                            "constraints' one; only acceleration constraints that are the rates of the velocity "
                            "constraints (sympy's default) can be imported")
        for r, s in enumerate(u_dep):
            defs[s] = a(sum_products([(X[r, k], u_ind[k]) for k in range(p)]) + X[r, p])
        # u'_dep = Y u'_ind + y from the acceleration rows; M~ = K [I; Y], f~ = f - K [0; y] for sympy's K (p x o)
        Y, y = X[:, p + 1:2 * p + 1], X[:, 2 * p + 1]
        M = sp.zeros(p, p)
        for r in range(p):
            for s in range(r, p):
                M[r, s] = M[s, r] = a(M_rows[r, s] + sum_products([(M_rows[r, p + k], Y[k, s]) for k in range(m)]))
        f = [a(f_rows[r] - sum_products([(M_rows[r, p + k], y[k]) for k in range(m)])) for r in range(p)]
        outputs["constraint_residual"] = [a(sum_products([(B[r, k], u[k]) for k in range(len(u))]) + c[r])
                                          for r in range(m)]
        choice = EmbeddingChoice(tuple(range(m)), tuple(range(p, len(u))), tuple(range(p)), tuple(range(m)), ())
        layout = {_BLOCK: RowBlock(slice(0, m), None, False)}
        full = {"A": B, "b": list(c), "A_bias": [a(e) for e in bias]}
    else:
        M = sp.zeros(p, p)
        for r in range(p):
            for s in range(r, p):
                M[r, s] = M[s, r] = a(M_rows[r, s])
        f = [a(e) for e in f_rows]
        outputs["constraint_residual"] = []
        full = {"A": sp.zeros(0, p), "b": [], "A_bias": [], "M": M, "f": list(f)}
    outputs.update(M=M, f=f, dependent_pivots=list(pivots))
    if "kinetic" in conv:
        outputs["kinetic"] = [a(conv["kinetic"][0])]
    W = sp.Matrix(conv["qdot"]).jacobian(list(u))
    full.update(qdot=outputs["qdot"], C=outputs["C"], A_C=sp.zeros(0, len(u)), W=W)
    program = b.build(outputs, inputs={"u": u_ind}, definitions=defs)
    model = Model(name, (), (), (), q, u, kane_t, tuple(params), p_values, w, w_values, sp.ImmutableMatrix([0, 0, 0]),
                  (), (), (), (), (), (0.0,) * len(q), (0.0,) * len(u))
    return Equations(model, program, b.build(full), u_ind, tuple(defs), choice,
                     tuple(layout), (), False, layout)


def _shared(matrices: dict, assign) -> dict:
    """The matrices with their common subexpressions (sympy's ``cse``) named one by one by ``assign``: sympy's
    expressions can be large trees (a bicycle's are 10^5 operations), which the builder names fastest in pieces."""
    keys = list(matrices)
    flat = [e for k in keys for e in matrices[k]]
    pieces, reduced = sp.cse(flat, symbols=sp.numbered_symbols("cse", cls=sp.Dummy))
    named: dict = {}
    for sym, expr in pieces:
        named[sym] = assign(expr.xreplace(named))
    out, at = {}, 0
    for k in keys:
        m = matrices[k]
        out[k] = sp.Matrix(m.rows, m.cols, [e.xreplace(named) for e in reduced[at:at + len(m)]])
        at += len(m)
    return out


def _kanes_method(method) -> me.KanesMethod:
    """The KanesMethod of ``method`` with its equations formed."""
    if isinstance(method, me.System):
        if not isinstance(method.eom_method, me.KanesMethod):
            method.form_eoms(me.KanesMethod)
        method = method.eom_method
    if not isinstance(method, me.KanesMethod):
        raise KaneError(f"from_sympy: expected a sympy.physics.mechanics KanesMethod or System, got "
                        f"{type(method).__module__}.{type(method).__name__}")
    if method._fr is None or method._frstar is None:
        if not method.bodies:
            raise KaneError("from_sympy: the KanesMethod has no equations yet and no bodies to form them from: "
                            "call its kanes_equations(bodies, loads) first")
        method.kanes_equations()
    return method


def _kinetic_energy(km):
    """The kinetic energy of the bodies the KanesMethod holds, or None where it holds none or one's velocity in the
    inertial frame is not defined (then ``kinetic_energy`` of the imported dynamics is not available)."""
    if not km.bodies:
        return None
    try:
        return sp.sympify(sum(body.kinetic_energy(km._inertial) for body in km.bodies))
    except ValueError:
        return None


def _name(fn) -> str:
    """The name of a function of t (q1(t) -> "q1")."""
    return str(fn.func) if isinstance(fn, sp.Function) else str(fn)


def _check_names(q, u, w, params) -> None:
    seen: dict = {}
    for what, group in (("coordinate", q), ("speed", u), ("input", w), ("parameter", params)):
        for s in group:
            if str(s) in seen:
                raise KaneError(f"from_sympy: the name {str(s)!r} is both a {seen[str(s)]} and a {what}; rename one")
            seen[str(s)] = what


def _values(symbols, given: Mapping, what: str, required: bool) -> tuple:
    """The float value of each symbol from ``given`` (keys: the symbol or its name)."""
    by_name = {str(k): v for k, v in given.items()}
    known = {str(s) for s in symbols}
    extra = sorted(set(by_name) - known)
    if extra:
        raise KaneError(f"from_sympy: {what} values given for {', '.join(extra)}, which the equations do not hold "
                        f"(their {what}s: {', '.join(sorted(known)) or 'none'})")
    missing = [str(s) for s in symbols if str(s) not in by_name]
    if required and missing:
        raise KaneError(f"from_sympy: no value for the {what}(s) {', '.join(missing)}: pass "
                        f"{what}s={{name: value, ...}}")
    out = []
    for s in symbols:
        value = by_name.get(str(s), 0.0)
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            raise KaneError(f"from_sympy: the {what} {str(s)!r} must be a number, got {value!r}") from None
    return tuple(out)
