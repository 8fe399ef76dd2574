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
                   plane_point; plane_normal (default: normal to gravity);  "no_slip": body; point; direction;  "loop_closure": body_a; point_a; body_b; point_b;
                   frames = false; directions = [vec]
    [simulation]   t_start = 0.0; t_end = 10.0; method = "dopri5" | "rk4" | "semi_implicit_euler" | "radau"
                   | "bdf"; rtol = 1e-8; atol = 1e-10; dt (fixed-step methods); output_dt = 0.01; max_step;
                   dependent = [speed names] (default: chosen automatically)
    [[collision]], [[collision_exclude]]
                   collision shapes on bodies and excluded pairs (see kane.io.model_collision)
    [realtime], [[visuals]], [[surfaces]], [[contacts]], [[switching]]
                   read by kane.realtime, kane.viz, kane.io.model_surfaces and kane.switching.model_table (see their
                   docs); kept as data on ``LoadedModel.tables`` and checked through
                   ``LoadedModel.context(table, index)``

Symbols in scope: parameters, inputs, joint coordinates and speeds, and ``t`` in loads, constraints and speed
maps; spring tensions add ``stretch`` and ``stretch_rate``; mass properties and joint placements use parameters
only; parameter values, q0, u0 and [simulation] numbers are evaluated from the parameters. An input given as a
string is a schedule evaluated during ``kane simulate`` (its symbol stays in the derived equations). The
initial values of dependent speeds are not used: they follow from the constraints. Values are evaluated in
double precision (never exactly, so a tower such as ``exp(exp(exp(exp(exp(1)))))`` is refused at once), and every
part of a field that depends on parameters alone must be a finite real number there: a value beyond the range
of a double (``"1e308*10"``, ``"exp(710)"``) is refused with the field's name. An expression of parameters alone
in mass properties, placements or gravity is one named constant of the derivation, computed once per run.

Every error is a :class:`ModelFileError` (a :class:`kane.ModelError`) whose one-paragraph message names the
file, the table (``[[joints]] #2 'caster'``), the key, the line where known, and what was expected.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

from ..errors import ArgumentError, DerivationError, ModelError
from ..model.system import System
from ..symbolic.derive import derive
from .expressions import folding_problem
from .input_schedule import InputSchedule
from .model_collision import add_collisions
from .model_context import Ctx, Loader, ModelFileError, SimulationSettings, type_name
from .model_tables import (EXTENSION_TABLES, TOP_TABLES, add_bodies, add_constraint, add_joints, add_load, model_defaults,
                           simulation_settings)

__all__ = ["ModelFileError", "SimulationSettings", "LoadedModel", "check_dependent", "load_model", "parse_model"]


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
    tables: Mapping[str, object] = field(default_factory=dict, repr=False)
    loader: Loader | None = field(default=None, repr=False, compare=False)

    def context(self, table: str, index: int | None = None) -> Ctx:
        """A checking context for the extension table ``table`` (one of ``EXTENSION_TABLES``; ``index`` for an
        array of tables): its ``error(key, reason)``, ``check_keys``, ``number``, ``vector``... raise a
        :class:`ModelFileError` naming this file, the table, the key and the line."""
        data = self.tables.get(table, [] if TOP_TABLES.get(table) is list else {})
        item = data if index is None else data[index]
        loader = self.loader or Loader("", self.path or self.name)
        return Ctx(loader, table, item, index)

    @classmethod
    def from_system(cls, system: System, path=None, simulation: SimulationSettings | None = None) -> LoadedModel:
        """Wrap a System built in Python (initial values from its joints, default settings)."""
        model = system.compile()
        return cls(None if path is None else Path(path), model.name, system, *model_defaults(model),
                   simulation or SimulationSettings())

    def derive(self, dependent=None, **kwargs):
        """Equations of motion (:func:`kane.derive`), dependent speeds from the argument (checked as the
        ``[simulation]`` table's ``dependent``) or the settings. Errors name the file."""
        if dependent is not None:
            dependent = _names(dependent, "dependent")
            check_dependent(dependent, self.system.compile(), lambda reason: ModelFileError(
                self.path or self.name, "the dependent speeds given (--dependent)", None, None, reason))
        dep = self.simulation.dependent if dependent is None else dependent
        try:
            return derive(self.system, dependent=list(dep) if dep else None, **kwargs)
        except ModelFileError:
            raise
        except ModelError as exc:
            if self.path is None:
                raise
            key = "dependent" if dependent is None and dep else None
            raise ModelFileError(self.path, "[simulation]" if key else None, key, None, str(exc)) from exc
        except DerivationError as exc:
            if self.path is None:
                raise
            raise DerivationError(f"model file {self.path}: {exc}") from exc

    def initial_state(self, dynamics) -> tuple[np.ndarray, np.ndarray]:
        """(q0 (n_q,), u0 (n_u,)) in the order of ``dynamics`` (its independent speeds)."""
        return (np.array([self.q0[n] for n in dynamics.q_names], dtype=float),
                np.array([self.u0[n] for n in dynamics.u_names], dtype=float))

    def input_schedule(self) -> InputSchedule | None:
        """The ``[inputs]`` schedules as an :class:`InputSchedule` (picklable; bound per run to a Dynamics and the
        run's parameters), None without schedules."""
        if not self.input_laws:
            return None
        model = self.system.compile()
        names = tuple(self.input_laws)
        return InputSchedule(names, tuple(self.input_laws[n] for n in names), tuple(model.q), tuple(model.u),
                             tuple(sp.Symbol(k) for k in self.parameters),
                             tuple(float(v) for v in self.parameters.values()))

    def input_function(self, dynamics=None):
        """Inputs for :func:`kane.simulate.simulate`: None (defaults) or a callable (t, q, u) -> {name: value}
        evaluating the schedules with the parameter defaults, u the speeds of ``dynamics`` (None: every speed of
        the model, as in kane.switching)."""
        schedule = self.input_schedule()
        return None if schedule is None else schedule.bind(dynamics, self.parameters)


def _names(values, what) -> tuple[str, ...]:
    if isinstance(values, str) or not all(isinstance(v, str) for v in values):
        raise ArgumentError(f"{what}: expected a list of speed names (strings), got {values!r}")
    return tuple(values)


def check_dependent(names, model, error) -> None:
    """Refuse dependent-speed ``names`` that are not speeds of ``model``, repeated, or given to a model with no
    permanent constraint; ``error(reason)`` makes the exception raised."""
    speeds = [str(u) for u in model.u]
    for n in names or ():
        if n not in speeds:
            raise error(f"no speed named {n!r}; expected some of: {', '.join(speeds)}")
    if names and len(set(names)) != len(names):
        raise error(f"a speed is named twice in {', '.join(names)}")
    if names and not any(not c.transient for c in model.constraints):
        raise error("the model has no permanent constraints, so no speed can be dependent")


def load_model(path) -> LoadedModel:
    """Read a TOML model file (see the module docstring); raises :class:`ModelFileError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(p, None, None, None, f"cannot read the file ({exc})") from None
    return parse_model(text, p)


def parse_model(text: str, path="<string>") -> LoadedModel:
    """Parse the text of a TOML model file; ``path`` names it in messages. Raises :class:`ModelFileError`."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ModelFileError(path, None, None, int(m.group(1)) if m else None,
                             f"not valid TOML: {exc}") from None
    L = Loader(text, path)
    root = Ctx(L, None, doc)
    root.label = "top level"
    for key, value in doc.items():
        if key not in TOP_TABLES:
            raise root.error(key, f"unknown table; allowed tables: {', '.join(f'[{k}]' for k in TOP_TABLES)} "
                                  "([[bodies]], [[joints]], [[loads]] and [[constraints]] are arrays of tables)")
        if TOP_TABLES[key] is list and not (isinstance(value, list) and all(isinstance(x, dict) for x in value)):
            raise root.error(key, f"expected an array of tables [[{key}]], got {type_name(value)}")
        if TOP_TABLES[key] is dict and not isinstance(value, dict):
            raise root.error(key, f"expected a table [{key}], got {type_name(value)}")
    mctx = Ctx(L, "model", doc.get("model", {}))
    mctx.check_keys({"name", "description", "gravity"})
    name = mctx.string("name", Path(str(path)).stem or "model")
    system = System(name)

    pctx = Ctx(L, "parameters", doc.get("parameters", {}))
    ictx = Ctx(L, "inputs", doc.get("inputs", {}))
    for ctx in (pctx, ictx):  # names are compared as written: "ｍ" is not a second "m" (nor the same one)
        for key in ctx.data:
            problem = folding_problem(key) if isinstance(key, str) else None
            if problem:
                raise ctx.error(key, f"the name is not read as written: {problem}")
    for key in pctx.data:
        with pctx.guard(key):
            value = pctx.number(key, L.scope())
            L.params[key] = system.parameter(key, value)
            L.values[L.params[key]] = value
    if "gravity" in mctx.data:
        system.gravity = mctx.vector("gravity", L.scope())

    raw_laws = []
    for key, value in ictx.data.items():
        if isinstance(value, str):  # a schedule, parsed once the coordinates and speeds are known
            raw_laws.append(key)
            default = 0.0
        else:
            default = ictx.number(key, L.scope())
        with ictx.guard(key):
            L.inputs[key] = system.input(key, default)

    bodies = add_bodies(L, system, doc.get("bodies", []))
    qu, joints = add_joints(L, system, doc.get("joints", []), bodies)
    laws = {k: ictx.expr(k, {**L.base, **L.params, **qu}) for k in raw_laws}
    for table, build in (("loads", add_load), ("constraints", add_constraint)):
        for i, d in enumerate(doc.get(table, [])):
            build(Ctx(L, table, d, i), system, bodies, L.scope(qu), joints)
    add_collisions(L, system, doc, bodies)
    settings = simulation_settings(Ctx(L, "simulation", doc.get("simulation", {})), L)
    try:
        model = system.compile()
    except ModelError as exc:
        m = re.match(r"(body|joint|constraint) '([^']+)'(?:.*?field '(\w+)')?", str(exc))
        ctx = L.named.get((m.group(1), m.group(2))) if m else None
        if ctx is None:
            raise ModelFileError(path, None, None, None, str(exc)) from None
        raise ctx.error(m.group(3), str(exc)) from None
    sctx = Ctx(L, "simulation", doc.get("simulation", {}))
    check_dependent(settings.dependent, model, lambda reason: sctx.error("dependent", reason))
    return LoadedModel(None if path == "<string>" else Path(path), name, system, *model_defaults(model), settings, laws,
                       mctx.string("description", "") or "", {k: doc[k] for k in EXTENSION_TABLES if k in doc}, L)

