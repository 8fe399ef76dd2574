"""TOML model files: a multibody system described as data and loaded into a :class:`kane.System`.

A model file is data, never code: every expression string goes through the whitelist parser
:func:`kane.io.expressions.parse_expression` (no ``eval``, no ``sympify`` of raw text). SI units throughout;
inertias are about the centre of mass in body axes. Every table and key (type, unit, default, allowed values) is
declared once, next to the function that reads it (:mod:`kane.io.model_keys` for the core tables, and the
``[realtime]``, ``[[visuals]]``, ``[[surfaces]]``, ``[[contacts]]`` and ``[[switching]]`` readers), checked from
that declaration, and listed in the model-file reference, docs/reference/model-file.md, written from the same
declarations by :func:`kane.model_reference.render_reference` (with the rules on symbols, units and evaluation,
:data:`kane.io.model_keys.FORMAT_NOTES`).

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
from .model_keys import MODEL
from .model_context import Ctx, Loader, ModelFileError, SimulationSettings, type_name
from .model_tables import (EXTENSION_TABLES, TOP_TABLES, add_bodies, add_constraint, add_joints, add_load, model_defaults,
                           simulation_settings)

__all__ = ["ModelFileError", "SimulationSettings", "LoadedModel", "check_dependent", "load_model", "load_model_data", "parse_model", "MODEL_DATA_SUFFIXES"]


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


MODEL_DATA_SUFFIXES = (".toml", ".xml", ".urdf")  # model files that are data (read, never run)


def load_model_data(path) -> LoadedModel:
    """A :class:`LoadedModel` from a model file that is data: kane's TOML (:func:`load_model`), an MJCF ``.xml``
    (:func:`kane.io.load_mjcf`) or a ``.urdf`` (:func:`kane.io.load_urdf`), chosen by the suffix; a
    :class:`~kane.errors.ModelError` names the file otherwise."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".toml":
        return load_model(p)
    if suffix == ".xml":
        from .mjcf import load_mjcf
        return LoadedModel.from_system(load_mjcf(p).system, p, None)
    if suffix == ".urdf":
        from .urdf import load_urdf
        return LoadedModel.from_system(load_urdf(p).system, p, None)
    raise ModelError(f"{p}: expected a model file ({', '.join(MODEL_DATA_SUFFIXES)})")


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
    MODEL.check(mctx)
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

