"""TOML model files: a multibody system described as data and loaded into a :class:`kane.System`.

A model file is data, never code: every expression string goes through the whitelist parser
:func:`kane.io.expressions.parse_expression` (no ``eval``, no ``sympify`` of raw text). Numbers may be written
as TOML numbers or as expression strings of the symbols in scope. SI units throughout: lengths [m], masses [kg],
inertias [kg m^2] about the centre of mass in body axes, angles [rad], forces [N], torques [N m], time [s].

Schema (tables and their keys; ``expr`` = a number or an expression string; ``vec`` = a list of 3 ``expr``)::

    [model]        name = "cart"; description = "..."; gravity = vec (ground axes [m/s^2], default zero)
    [parameters]   NAME = expr                # numbers, or expressions of the parameters declared above
    [inputs]       NAME = number | "expr"     # a default value, or a schedule (string) of t, parameters, q, u
    [[bodies]]     name; mass = expr; com = vec; inertia = [Ixx, Iyy, Izz] | [Ixx, Iyy, Izz, Ixy, Iyz, Izx]
                   | 3x3; particle = false   # mass properties depend on parameters only
    [[joints]]     name; parent ("ground" or a body); child; type = "revolute" | "prismatic" | "cylindrical"
                   | "universal" | "planar" | "gimbal" | "spherical" | "free" | "weld";
                   axis = "x" | "-z" | vec (revolute, prismatic, cylindrical); sequence = "213" (gimbal; two
                   digits for universal); n_free = 1..3 (gimbal); speeds = "rates" | "body" | {Y = [[expr]],
                   Z = [expr]} (u = Y q' + Z; default "rates", "body" for spherical and free);
                   coordinates = [names]; speed_names = [names];
                   parent_point, child_point = vec; parent_rotation, child_rotation = 3x3 of expr or
                   {sequence = "3", angles = [expr]}; q0 = [expr]; u0 = [expr]
    [[loads]]      type = "force":        body; vector = vec; point = vec (body axes); frame = "ground" | body
                   type = "torque":       body; vector = vec; frame
                   type = "spring":       body_a; point_a; body_b; point_b; stiffness; rest_length; damping;
                                          tension = expr of stretch [m] and stretch_rate [m/s] (replaces k, c)
                   type = "joint_spring": joint; stiffness; rest; damping
                   type = "joint_torque": joint; values = [expr] (one per coordinate) or expr
                   (every load may carry a ``name`` used in messages)
    [[constraints]] name; type; transient = false, and per type:
                   "motion": rows = [expr linear in the speeds];  "joint_lock": joint;
                   "point_velocity": body; point; directions = [vec];  "rolling_disk": body; radius; axis; center;
                   "no_slip": body; point; direction;  "loop_closure": body_a; point_a; body_b; point_b;
                   frames = false; directions = [vec]
    [simulation]   t_start = 0.0; t_end = 10.0; method = "dopri5" | "rk4" | "semi_implicit_euler" | "radau"
                   | "bdf"; rtol = 1e-8; atol = 1e-10; dt (fixed-step methods); output_dt = 0.01; max_step;
                   dependent = [speed names] (default: chosen automatically)

Symbols in scope: parameters, inputs, joint coordinates and speeds, and ``t`` in loads, constraints and speed
maps; spring tensions add ``stretch`` and ``stretch_rate``; mass properties and joint placements use parameters
only; parameter values, q0, u0 and [simulation] numbers are evaluated from the parameters. An input given as a
string is a schedule evaluated during ``kane simulate`` (its symbol stays in the derived equations). The
initial values of dependent speeds are not used: they follow from the constraints.

Every error is a :class:`ModelFileError` (a :class:`kane.ModelError`) whose one-paragraph message names the
file, the table (``[[joints]] #2 'caster'``), the key, the line where known, and what was expected.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

from ..errors import ModelError
from ..model import joints as J
from ..model.system import GROUND, System, stretch, stretch_rate, t
from ..simulate.stepping import Method
from .expressions import ExpressionError, parse_expression

__all__ = ["ModelFileError", "SimulationSettings", "LoadedModel", "load_model", "parse_model"]

_TOP = {"model": dict, "parameters": dict, "inputs": dict, "bodies": list, "joints": list, "loads": list,
        "constraints": list, "simulation": dict}
_JOINT_COMMON = {"name", "type", "parent", "child", "coordinates", "speed_names", "parent_point", "child_point",
                 "parent_rotation", "child_rotation", "q0", "u0", "speeds"}
_JOINT_KINDS = {"revolute": {"axis"}, "prismatic": {"axis"}, "cylindrical": {"axis"}, "universal": {"sequence"},
                "gimbal": {"sequence", "n_free"}, "planar": set(), "spherical": set(), "free": set(),
                "weld": set()}
# kind -> (required keys, optional keys)
_LOAD_KEYS = {"force": (("body", "vector"), {"point", "frame"}), "torque": (("body", "vector"), {"frame"}),
              "spring": (("body_a", "point_a", "body_b", "point_b"),
                         {"stiffness", "rest_length", "damping", "tension"}),
              "joint_spring": (("joint", "stiffness"), {"rest", "damping"}),
              "joint_torque": (("joint", "values"), set())}
_CONSTRAINT_KEYS = {"motion": (("rows",), set()), "joint_lock": (("joint",), set()),
                    "point_velocity": (("body",), {"point", "directions"}),
                    "rolling_disk": (("body", "radius"), {"axis", "center"}),
                    "no_slip": (("body", "point", "direction"), set()),
                    "loop_closure": (("body_a", "point_a", "body_b", "point_b"), {"frames", "directions"})}
_SIM_KEYS = {"t_start", "t_end", "method", "rtol", "atol", "dt", "output_dt", "max_step", "dependent"}


class ModelFileError(ModelError):
    """A model file is invalid. Attributes: ``path``, ``table`` (e.g. ``[[joints]] #2 'caster'``), ``key``,
    ``line`` (1-based, or None where unknown) and ``reason`` (what was expected)."""

    def __init__(self, path, table: str | None, key: str | None, line: int | None, reason: str):
        self.path, self.table, self.key, self.line, self.reason = str(path), table, key, line, reason
        where = ", ".join(p for p in (table, f"key '{key}'" if key else None) if p)
        at = f" (line {line})" if line else ""
        super().__init__(f"model file {self.path}: {where}{at}: {reason}" if where else
                         f"model file {self.path}{at}: {reason}")


@dataclass(frozen=True)
class SimulationSettings:
    """Run settings from ``[simulation]``: times [s], the method's name, tolerances, fixed step ``dt`` [s],
    sampling interval ``output_dt`` [s] (None: every step), ``max_step`` [s] and the dependent speeds."""

    t_start: float = 0.0
    t_end: float = 10.0
    method: str = "dopri5"
    rtol: float = 1e-8
    atol: float = 1e-10
    dt: float | None = None
    output_dt: float | None = 0.01
    max_step: float = math.inf
    dependent: tuple[str, ...] | None = None


@dataclass(frozen=True)
class LoadedModel:
    """A model file, loaded: the ``system`` (a kane.System), parameter and input defaults, input schedules
    (``input_laws``: name -> expression of t, q, u and parameters), initial coordinates and speeds by name
    (``q0``, ``u0``) and the ``simulation`` settings."""

    path: Path | None
    name: str
    system: System = field(repr=False)
    parameters: Mapping[str, float]
    inputs: Mapping[str, float]
    q0: Mapping[str, float]
    u0: Mapping[str, float]
    simulation: SimulationSettings = field(default_factory=SimulationSettings)
    input_laws: Mapping[str, sp.Expr] = field(default_factory=dict)
    description: str = ""

    @classmethod
    def from_system(cls, system: System, path=None, simulation: SimulationSettings | None = None) -> LoadedModel:
        """Wrap a System built in Python (initial values from its joints, default settings)."""
        model = system.compile()
        return cls(None if path is None else Path(path), model.name, system, *_defaults(model),
                   simulation or SimulationSettings())

    def derive(self, dependent=None, **kwargs):
        """Equations of motion (:func:`kane.derive`), dependent speeds from the argument or the settings."""
        from ..symbolic.derive import derive

        dep = self.simulation.dependent if dependent is None else tuple(dependent)
        try:
            return derive(self.system, dependent=list(dep) if dep else None, **kwargs)
        except ModelFileError:
            raise
        except ModelError as exc:
            if dependent is None and dep and self.path is not None:
                raise ModelFileError(self.path, "[simulation]", "dependent", None, str(exc)) from exc
            raise

    def initial_state(self, dynamics) -> tuple[np.ndarray, np.ndarray]:
        """(q0 (n_q,), u0 (n_u,)) in the order of ``dynamics`` (its independent speeds)."""
        return (np.array([self.q0[n] for n in dynamics.q_names], dtype=float),
                np.array([self.u0[n] for n in dynamics.u_names], dtype=float))

    def input_function(self, dynamics):
        """Inputs for :func:`kane.simulate.simulate`: None (defaults) or a callable (t, q, u) -> {name: value}
        evaluating the schedules with the parameter defaults."""
        if not self.input_laws:
            return None
        model = dynamics.model
        pvals = {sp.Symbol(k): v for k, v in self.parameters.items()}
        names = list(self.input_laws)
        exprs = [self.input_laws[n].xreplace(pvals) for n in names]
        needs_full = any(e.free_symbols & {sp.Symbol(n) for n in dynamics.u_dependent_names} for e in exprs)
        # lambdify prints the parsed expression tree (never user text) into numpy code
        fn = sp.lambdify([t, *model.q, *model.u], exprs, modules="numpy")
        index = [dynamics.u_names.index(str(u)) if str(u) in dynamics.u_names else None for u in model.u]

        def inputs(time, q, u):
            full = dynamics.full_speeds(time, q, u) if needs_full else [
                0.0 if k is None else u[k] for k in index]
            with np.errstate(all="ignore"):  # a NaN stops the run with the time and state (Simulator)
                return {n: float(v) for n, v in zip(names, fn(time, *q, *full))}

        return inputs


def load_model(path) -> LoadedModel:
    """Read a TOML model file (see the module docstring); raises :class:`ModelFileError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(p, None, None, None, f"cannot read the file ({exc})") from None
    return parse_model(text, p)


def _type_name(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    return {str: "a string", list: "a list", dict: "a table"}.get(type(v), f"a {type(v).__name__}")


def _line_index(text: str) -> dict:
    """(table, index, key) -> 1-based line of ``key = ...`` for top-level keys of every table in the text."""
    out, table, index, counts = {}, None, None, {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[(\[)?\s*([A-Za-z_][\w.\-]*)\s*\](?(1)\])\s*(#.*)?$", line)
        if m:
            table = m.group(2)
            if m.group(1):
                index = counts.get(table, 0)
                counts[table] = index + 1
            else:
                index = None
            out.setdefault((table, index, None), n)
            continue
        k = re.match(r"\s*(\"[^\"]*\"|'[^']*'|[\w\-]+)\s*=", line)
        if k:
            out.setdefault((table, index, k.group(1).strip("\"'")), n)
    return out


class _Ctx:
    """One table of the file: checks keys and values, converts them, and raises errors that name it."""

    def __init__(self, loader: _Loader, table: str, data: dict, index: int | None = None, label: str = ""):
        self.loader, self.table, self.data, self.index = loader, table, data, index
        name = data.get("name") if isinstance(data.get("name"), str) else label
        self.label = (f"[[{table}]] #{index + 1}" + (f" '{name}'" if name else "")) if index is not None \
            else f"[{table}]"

    def error(self, key, reason) -> ModelFileError:
        lines = self.loader.lines
        line = lines.get((self.table, self.index, key)) or lines.get((self.table, self.index, None)) or (
            lines.get((key, None, None)) if not self.table else None)
        return ModelFileError(self.loader.path, self.label, key, line, reason)

    def check_keys(self, allowed, required=(), what=""):
        for key in self.data:
            if key not in allowed:
                raise self.error(key, f"unknown key{what}; allowed keys: {', '.join(sorted(allowed))}")
        for key in required:
            if key not in self.data:
                raise self.error(key, f"missing required key '{key}'")

    @contextmanager
    def guard(self, key=None):
        """Turn a kane.ModelError raised while building into a ModelFileError naming this table and key."""
        try:
            yield
        except ModelFileError:
            raise
        except ModelError as exc:
            raise self.error(key, str(exc)) from None

    def get(self, key, default=None):
        return self.data.get(key, default)

    def kind(self, kinds, what, extra=()) -> str:
        """The ``type`` key, one of ``kinds``; checks the keys of that kind (``kinds[k]``: (required, optional))."""
        kind = self.string("type", choices=list(kinds))
        if kind is None:
            raise self.error("type", f"missing required key 'type' (one of: {', '.join(kinds)})")
        required, optional = kinds[kind]
        self.check_keys(set(required) | optional | {"type", "name", *extra}, required, f" for a {kind} {what}")
        return kind

    def ref(self, key, known, what="body", ground=True, default=None) -> str:
        """A name from ``known`` (bodies, or joints), or "ground" where ``ground``."""
        name = self.string(key, default)
        if name is None:
            raise self.error(key, f"missing required key '{key}'")
        if name not in known and not (ground and name == GROUND):
            choices = sorted(known) + ([GROUND] if ground else [])
            raise self.error(key, f"no {what} named {name!r}; expected one of: {', '.join(choices)}")
        return name

    def string(self, key, default=None, choices=None) -> str | None:
        v = self.data.get(key, default)
        if v is None:
            return None
        if not isinstance(v, str):
            raise self.error(key, f"expected a string, got {_type_name(v)}")
        if choices is not None and v not in choices:
            raise self.error(key, f"expected one of {', '.join(repr(c) for c in choices)}, got {v!r}")
        return v

    def boolean(self, key, default=False) -> bool:
        v = self.data.get(key, default)
        if not isinstance(v, bool):
            raise self.error(key, f"expected true or false, got {_type_name(v)}")
        return v

    def names(self, key, n=None) -> tuple[str, ...] | None:
        v = self.data.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.error(key, f"expected a list of names (strings), got {_type_name(v)}")
        if n is not None and len(v) != n:
            raise self.error(key, f"expected {n} names, got {len(v)}")
        return tuple(v)

    def expr(self, key, symbols, value=None, item="") -> sp.Expr:
        v = self.data.get(key) if value is None else value
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise self.error(key, f"expected a number or an expression string{item}, got {_type_name(v)}")
        if isinstance(v, int):
            return sp.Integer(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise self.error(key, f"expected a finite number{item}, got {v}")
            return sp.Float(v)
        return self.loader.parse(v, symbols, self, key)

    def vector(self, key, symbols, n=3, value=None) -> tuple:
        v = self.data.get(key) if value is None else value
        if not isinstance(v, list) or len(v) != n:
            got = f"{len(v)} items" if isinstance(v, list) else _type_name(v)
            raise self.error(key, f"expected a list of {n} numbers or expression strings, got {got}")
        return tuple(self.expr(key, symbols, x, f" (item {i + 1})") for i, x in enumerate(v))

    def number(self, key, symbols, default=None, positive=False) -> float | None:
        """A float from a number or an expression of the parameters (evaluated with their values)."""
        v = self.data.get(key, default)
        if v is None:
            return None
        return self.evaluate(key, self.expr(key, symbols, v), positive)

    def evaluate(self, key, e, positive=False, item="") -> float:
        val = sp.sympify(e).xreplace(self.loader.values)
        if not val.is_number or not val.is_real:
            raise self.error(key, f"expected a value computable from the parameters{item}, got {e}")
        x = float(val)
        if positive and not x > 0:
            raise self.error(key, f"expected a value > 0{item}, got {x:g}")
        return x


class _Loader:
    def __init__(self, text: str, path):
        self.path, self.lines = path, _line_index(text)
        self.values: dict = {}
        self.params: dict = {}
        self.inputs: dict = {}
        self.base = {"t": t}
        self.named: dict = {}

    def parse(self, text, symbols, ctx: _Ctx, key) -> sp.Expr:
        try:
            return parse_expression(text, symbols, source=str(self.path), where=f"{ctx.label}, key '{key}'")
        except ExpressionError as exc:
            col = f", column {exc.column}" if exc.column else ""
            raise ctx.error(key, f"bad expression {text!r}{col}: {exc.detail}") from None

    def scope(self, *extra) -> dict:
        out = dict(self.base)
        for d in (self.params, self.inputs, *extra):
            out.update(d)
        return out


def parse_model(text: str, path="<string>") -> LoadedModel:
    """Parse the text of a TOML model file; ``path`` names it in messages. Raises :class:`ModelFileError`."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ModelFileError(path, None, None, int(m.group(1)) if m else None,
                             f"not valid TOML: {exc}") from None
    L = _Loader(text, path)
    root = _Ctx(L, None, doc)
    root.label = "top level"
    for key, value in doc.items():
        if key not in _TOP:
            raise root.error(key, f"unknown table; allowed tables: {', '.join(f'[{k}]' for k in _TOP)} "
                                  "([[bodies]], [[joints]], [[loads]] and [[constraints]] are arrays of tables)")
        if _TOP[key] is list and not (isinstance(value, list) and all(isinstance(x, dict) for x in value)):
            raise root.error(key, f"expected an array of tables [[{key}]], got {_type_name(value)}")
        if _TOP[key] is dict and not isinstance(value, dict):
            raise root.error(key, f"expected a table [{key}], got {_type_name(value)}")
    mctx = _Ctx(L, "model", doc.get("model", {}))
    mctx.check_keys({"name", "description", "gravity"})
    name = mctx.string("name", Path(str(path)).stem or "model")
    system = System(name)

    pctx = _Ctx(L, "parameters", doc.get("parameters", {}))
    for key in pctx.data:
        with pctx.guard(key):
            value = pctx.number(key, L.scope())
            L.params[key] = system.parameter(key, value)
            L.values[L.params[key]] = sp.Float(value)
    if "gravity" in mctx.data:
        system.gravity = mctx.vector("gravity", L.scope())

    ictx = _Ctx(L, "inputs", doc.get("inputs", {}))
    raw_laws = []
    for key, value in ictx.data.items():
        if isinstance(value, str):  # a schedule, parsed once the coordinates and speeds are known
            raw_laws.append(key)
            default = 0.0
        else:
            default = ictx.number(key, L.scope())
        with ictx.guard(key):
            L.inputs[key] = system.input(key, default)

    bodies = _bodies(L, system, doc.get("bodies", []))
    qu, joints = _joints(L, system, doc.get("joints", []), bodies)
    laws = {k: ictx.expr(k, {**L.base, **L.params, **qu}) for k in raw_laws}
    for table, build in (("loads", _load), ("constraints", _constraint)):
        for i, d in enumerate(doc.get(table, [])):
            build(_Ctx(L, table, d, i), system, bodies, L.scope(qu), joints)
    settings = _simulation(_Ctx(L, "simulation", doc.get("simulation", {})), L)
    try:
        model = system.compile()
    except ModelError as exc:
        m = re.match(r"(body|joint|constraint) '([^']+)'(?:.*?field '(\w+)')?", str(exc))
        ctx = L.named.get((m.group(1), m.group(2))) if m else None
        if ctx is None:
            raise ModelFileError(path, None, None, None, str(exc)) from None
        raise ctx.error(m.group(3), str(exc)) from None
    speeds = {str(u) for u in model.u}
    sctx = _Ctx(L, "simulation", doc.get("simulation", {}))
    for n in settings.dependent or ():
        if n not in speeds:
            raise sctx.error("dependent", f"no speed named {n!r}; expected some of: {', '.join(sorted(speeds))}")
    if settings.dependent and not any(not c.transient for c in model.constraints):
        raise sctx.error("dependent", "the model has no permanent constraints, so no speed can be dependent")
    return LoadedModel(None if path == "<string>" else Path(path), name, system, *_defaults(model), settings, laws,
                       mctx.string("description", "") or "")


def _defaults(model) -> tuple[dict, dict, dict, dict]:
    """Parameter and input defaults, q0 and u0 of a compiled model, by name."""
    return tuple({str(s): v for s, v in zip(names, values)} for names, values in (
        (model.parameters, model.parameter_defaults), (model.inputs, model.input_defaults), (model.q, model.q0),
        (model.u, model.u0)))


def _bodies(L, system, items) -> set:
    names = set()
    for i, d in enumerate(items):
        ctx = _Ctx(L, "bodies", d, i)
        particle = ctx.boolean("particle")
        ctx.check_keys({"name", "mass", "particle"} | (set() if particle else {"com", "inertia"}),
                       ("name", "mass"), " (a particle has only name and mass)" if particle else "")
        name = ctx.string("name")
        L.named[("body", name)] = ctx
        mass = ctx.expr("mass", L.params)
        with ctx.guard("name"):
            if particle:
                system.add_particle(name, mass)
                names.add(name)
                continue
        inertia = ctx.get("inertia", [0, 0, 0])
        if isinstance(inertia, list) and len(inertia) == 3 and all(isinstance(r, list) for r in inertia):
            inertia = [ctx.vector("inertia", L.params, value=row) for row in inertia]
        elif isinstance(inertia, list) and len(inertia) in (3, 6):
            inertia = ctx.vector("inertia", L.params, n=len(inertia), value=inertia)
        else:
            raise ctx.error("inertia", f"expected [Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or a 3x3 list, "
                                       f"got {_type_name(inertia)}")
        com = ctx.vector("com", L.params, value=ctx.get("com", [0, 0, 0]))
        with ctx.guard("inertia"):
            system.add_body(name, mass=mass, com=com, inertia=inertia)
        names.add(name)
    return names


def _joints(L, system, items, bodies) -> tuple[dict, set]:
    """Two passes: names, kinds and symbols first (expressions may use any coordinate), then the placement."""
    pending, symbols, jnames = [], {}, []
    for i, d in enumerate(items):
        ctx = _Ctx(L, "joints", d, i)
        kind = ctx.string("type", choices=list(_JOINT_KINDS))
        if kind is None:
            raise ctx.error("type", f"missing required key 'type' (one of: {', '.join(_JOINT_KINDS)})")
        allowed = _JOINT_COMMON | _JOINT_KINDS[kind]
        if kind == "weld":
            allowed = allowed - {"coordinates", "speed_names", "q0", "u0", "speeds"}
        ctx.check_keys(allowed, ("parent", "child"), f" for a {kind} joint")
        parent, child = ctx.ref("parent", bodies), ctx.ref("child", bodies, ground=False)
        name = ctx.string("name", f"{parent}_{child}")
        L.named[("joint", name)] = ctx
        with ctx.guard("axis" if "axis" in _JOINT_KINDS[kind] else "sequence"):
            joint = _make_joint(ctx, kind, L)
        qn = ctx.names("coordinates", joint.nq) or ((f"q_{name}",) if joint.nq == 1 else tuple(
            f"q_{name}_{s}" for s in joint.coordinate_suffixes()))
        un = ctx.names("speed_names", joint.nu) or ((f"u_{name}",) if joint.nu == 1 else tuple(
            f"u_{name}_{k + 1}" for k in range(joint.nu)))
        for key, group in (("coordinates", qn), ("speed_names", un)):
            for n in group:
                if n in symbols or n in L.params or n in L.inputs or n in ("t", "stretch", "stretch_rate"):
                    raise ctx.error(key, f"the name {n!r} is already used by another symbol of the model")
                if not n.isidentifier():
                    raise ctx.error(key, f"expected identifiers as names, got {n!r}")
                symbols[n] = sp.Symbol(n)
        pending.append((ctx, kind, joint, name, parent, child, qn, un))
        jnames.append(name)
    scope = L.scope(symbols)
    for ctx, kind, joint, name, parent, child, qn, un in pending:
        speeds = ctx.get("speeds", "body" if kind in ("spherical", "free") else "rates")
        if isinstance(speeds, dict):
            sctx = _Ctx(L, "joints", speeds, ctx.index)
            sctx.label = ctx.label
            sctx.check_keys({"Y", "Z"}, ("Y",), " in 'speeds'")
            Y = speeds["Y"]
            if not isinstance(Y, list) or len(Y) != joint.nu:
                raise ctx.error("speeds", f"expected Y as a list of {joint.nu} rows of {joint.nq} expressions")
            Y = tuple(sctx.vector("Y", scope, n=joint.nq, value=row) for row in Y)
            Z = sctx.vector("Z", scope, n=joint.nu) if "Z" in speeds else None
            speeds = J.SpeedMap(Y, Z)
            with ctx.guard("speeds"):  # Y must be invertible
                J.replace_speeds(joint, speeds).kinematics(sp.Matrix([symbols[n] for n in qn]), t)
        elif speeds in ("rates", "body"):
            speeds = J.Speeds(speeds)
        else:
            raise ctx.error("speeds", f"expected 'rates', 'body' or a table {{Y = [[...]], Z = [...]}}, got "
                                      f"{speeds!r}")
        if kind != "weld":
            joint = J.replace_speeds(joint, speeds)
        place = {k: ctx.vector(k, L.params) for k in ("parent_point", "child_point") if k in ctx.data}
        for k in ("parent_rotation", "child_rotation"):
            if k in ctx.data:
                place[k] = _rotation(ctx, k, L.params)
        init = {}
        for k, n in (("q0", joint.nq), ("u0", joint.nu)):
            if k in ctx.data:
                init[k] = [ctx.evaluate(k, e, item=f" (item {i + 1})")
                           for i, e in enumerate(ctx.vector(k, L.scope(), n=n))]
        with ctx.guard("speeds"):
            system.add_joint(parent, child, joint, name=name, coordinates=qn, speeds=un, **place, **init)
    return symbols, set(jnames)


def _make_joint(ctx, kind, L) -> J.Joint:
    if kind in ("revolute", "prismatic", "cylindrical"):
        axis = ctx.get("axis", "x" if kind == "prismatic" else "z")
        if not isinstance(axis, str):
            axis = ctx.vector("axis", L.params)
        cls = {"revolute": J.Revolute, "prismatic": J.Prismatic, "cylindrical": J.Cylindrical}[kind]
        joint = cls(axis)
        joint.axis_partition()  # checks the axis
        return joint
    if kind == "gimbal":
        n_free = ctx.get("n_free", 3)
        if isinstance(n_free, bool) or not isinstance(n_free, int):
            raise ctx.error("n_free", f"expected 1, 2 or 3, got {_type_name(n_free)}")
        return J.Gimbal(ctx.string("sequence", "123"), n_free)
    if kind == "universal":
        return J.Universal(ctx.string("sequence", "12"))
    return {"planar": J.Planar, "spherical": J.Spherical, "free": J.Free, "weld": J.Weld}[kind]()


def _rotation(ctx, key, scope):
    v = ctx.get(key)
    if isinstance(v, dict):
        rctx = _Ctx(ctx.loader, ctx.table, v, ctx.index)
        rctx.label = ctx.label
        rctx.check_keys({"sequence", "angles"}, ("sequence", "angles"), f" in '{key}'")
        seq = rctx.string("sequence")
        if not seq or any(c not in "123" for c in seq):
            raise ctx.error(key, f"expected a sequence of axis digits 1-3 such as '3' or '213', got {seq!r}")
        return J.euler_rotation(seq, rctx.vector("angles", scope, n=len(seq)))
    if not isinstance(v, list) or len(v) != 3:
        raise ctx.error(key, f"expected a 3x3 list of expressions or {{sequence = '...', angles = [...]}}, got "
                             f"{_type_name(v)}")
    return [ctx.vector(key, scope, value=row) for row in v]


def _load(ctx, system, bodies, scope, joints):
    kind = ctx.kind(_LOAD_KEYS, "load")
    with ctx.guard():
        if kind in ("force", "torque"):
            body, frame = ctx.ref("body", bodies), ctx.ref("frame", bodies, default=GROUND)
            vec = ctx.vector("vector", scope)
            if kind == "force":
                system.add_force(body, vec, point=ctx.vector("point", scope, value=ctx.get("point", [0, 0, 0])),
                                 frame=frame)
            else:
                system.add_torque(body, vec, frame=frame)
        elif kind == "spring":
            a, b = ctx.ref("body_a", bodies), ctx.ref("body_b", bodies)
            opts = {k: ctx.expr(k, scope) for k in ("stiffness", "rest_length", "damping") if k in ctx.data}
            if "tension" in ctx.data:
                opts["tension"] = ctx.expr("tension", {**scope, "stretch": stretch, "stretch_rate": stretch_rate})
            system.add_spring(a, ctx.vector("point_a", scope), b, ctx.vector("point_b", scope), **opts)
        elif kind == "joint_spring":
            system.add_joint_spring(ctx.ref("joint", joints, "joint", ground=False), ctx.expr("stiffness", scope),
                                    *(ctx.expr(k, scope) if k in ctx.data else 0 for k in ("rest", "damping")))
        else:
            name, values = ctx.ref("joint", joints, "joint", ground=False), ctx.get("values")
            values = ctx.vector("values", scope, n=len(values)) if isinstance(values, list) else [
                ctx.expr("values", scope)]
            system.add_joint_torque(name, values)


def _constraint(ctx, system, bodies, scope, joints):
    kind = ctx.kind(_CONSTRAINT_KEYS, "constraint", ("transient",))
    if "name" not in ctx.data:
        raise ctx.error("name", "missing required key 'name'")
    name, tr = ctx.string("name"), ctx.boolean("transient")
    ctx.loader.named[("constraint", name)] = ctx
    vec = (lambda k, d=None: ctx.vector(k, scope, value=ctx.get(k, d)))

    def directions():
        d = ctx.get("directions")
        if d is None:
            return None
        if not isinstance(d, list) or not d:
            raise ctx.error("directions", f"expected a list of 3-vectors, got {_type_name(d)}")
        return [ctx.vector("directions", scope, value=x) for x in d]

    with ctx.guard():
        if kind == "motion":
            rows = ctx.get("rows")
            rows = ctx.vector("rows", scope, n=len(rows)) if isinstance(rows, list) else [ctx.expr("rows", scope)]
            system.add_motion_constraint(name, rows, transient=tr)
        elif kind == "joint_lock":
            system.add_joint_lock(name, ctx.ref("joint", joints, "joint", ground=False), transient=tr)
        elif kind == "point_velocity":
            system.add_point_velocity_constraint(name, ctx.ref("body", bodies), vec("point", [0, 0, 0]),
                                                 directions(), transient=tr)
        elif kind == "rolling_disk":
            system.add_rolling_disk(name, ctx.ref("body", bodies, ground=False), ctx.expr("radius", scope),
                                    vec("axis", [0, 1, 0]), vec("center", [0, 0, 0]), transient=tr)
        elif kind == "no_slip":
            system.add_no_slip(name, ctx.ref("body", bodies), vec("point"), vec("direction"), transient=tr)
        else:
            system.add_loop_closure(name, ctx.ref("body_a", bodies), vec("point_a"),
                                    ctx.ref("body_b", bodies), vec("point_b"),
                                    frames=ctx.boolean("frames"), directions=directions(), transient=tr)


def _simulation(ctx, L) -> SimulationSettings:
    ctx.check_keys(_SIM_KEYS)
    d, scope = SimulationSettings(), L.scope()
    method = ctx.string("method", d.method)
    try:
        m = Method.parse(method)
    except ValueError:
        raise ctx.error("method", f"expected one of {', '.join(repr(x.value) for x in Method)}, got {method!r}")
    out = {k: ctx.number(k, scope, getattr(d, k), positive=k != "t_start")
           for k in ("t_start", "t_end", "rtol", "atol", "dt", "output_dt", "max_step") if k in ctx.data}
    if out.get("t_end", d.t_end) <= out.get("t_start", d.t_start):
        raise ctx.error("t_end", "expected t_end > t_start")
    if not m.adaptive and out.get("dt") is None:
        raise ctx.error("dt", f"the fixed-step method {m.value!r} needs a step 'dt' [s]")
    dep = ctx.names("dependent")
    return SimulationSettings(**{**out, "method": m.value, "dependent": dep})
