"""The ``[[switching]]`` tables of a TOML model file: the rules that switch its transient constraints on and off
during a run (seed 000's hybrid state machine; :mod:`kane.switching`), written as data.

One table per rule, on a ``[[constraints]]`` entry declared ``transient = true``; the keys are declared in
:data:`SWITCHING` (see the model-file reference, docs/reference/model-file.md).

:func:`switching_rules` turns them into :class:`kane.switching.Lock`, :class:`~kane.switching.Coulomb` and
:class:`~kane.switching.UnilateralContact` records; ``kane realtime`` runs a model with such tables under its rules
(:class:`kane.realtime.SwitchingDynamics`). Errors name the file, the table, the key and the line.
"""

from __future__ import annotations

import copy
import dataclasses

import sympy as sp

from ..errors import ModelError
from ..model.system import t
from ..io.model_schema import KeySpec as K
from ..io.model_schema import KindSpec, TableSpec
from .rules import Coulomb, Lock, UnilateralContact

__all__ = ["SWITCHING", "switching_rules", "switching_note", "GapFunction"]

_RESTITUTION = K("restitution", "expr", "the coefficient of restitution of the impact (0: plastic)", default="0.0",
                 example="0.5")
SWITCHING = TableSpec(
    "switching", "Rules that switch transient constraints on and off during a run (seed 000's hybrid state machine, "
    "`kane.switching`); `kane simulate`, `kane realtime`, `kane view --live` and `kane sweep` run them. Numbers may "
    "be expressions of the parameters.", array=True, keys=(
        K("type", "string", "the kind of rule", required=True, allowed=("lock", "coulomb", "contact"),
          example='"lock"'),
        K("name", "string", "a name used in messages", example='"latch"'),
        K("constraint", "name", "a `[[constraints]]` entry with transient = true", required=True, example='"c1"'),
    ), kinds=(
        KindSpec("lock", "the constraint holds during given intervals", (
            K("on", "intervals", "[[t_on, t_off], ...] while it holds", unit="s", required=True,
              example="[[0.5, 1.5]]"), _RESTITUTION)),
        KindSpec("coulomb", "dry friction on a one-row constraint (a slip velocity): stick while the friction force "
                 "stays within mu_s N, else slip with mu_k N", (
                     K("mu_s", "expr", "the static coefficient", required=True, example="0.5"),
                     K("mu_k", "expr", "the kinetic coefficient (<= mu_s)", required=True, example="0.4"),
                     K("normal", "name or expr", "the normal force [N], or the name of a contact's constraint "
                       "(its multiplier)", unit="N", required=True, example="10.0"),
                     K("normal_row", "integer", "the row of the normal constraint", default="0", example="0"),
                     K("v_stick", "expr", "the slip speed below which it sticks", unit="m/s", default="1e-6",
                       example="1e-5"))),
        KindSpec("contact", "a unilateral contact: on when the gap closes, off when its force would pull", (
            K("gap", "expr", "the gap, an expression of t, the coordinates and the parameters (> 0 apart)", unit="m",
              required=True, example='"1 + s"'),
            _RESTITUTION, K("v_min", "expr", "the impact speed below which it does not bounce", unit="m/s",
                            default="1e-3", example="1e-2"),
            K("row", "integer", "the constraint's row that is the gap rate", default="0", example="0"))),
    ), reader="kane.switching.model_table.switching_rules")
_GUARDED = {"lock": "on", "coulomb": "mu_k", "contact": "restitution"}


def switching_rules(loaded, params=None, model=None) -> tuple:
    """The rule records of every ``[[switching]]`` table of ``loaded`` (a :class:`kane.io.LoadedModel`), in file
    order; () without such tables. ``params`` (name -> value) replace the file's parameter values in the rules'
    numbers and gaps (a sweep's point); ``model``: ``loaded.system`` compiled, if at hand (compiling it is most of
    the cost). The records pickle (a gap is a :class:`GapFunction`)."""
    items = loaded.tables.get("switching", [])
    if not items:
        return ()
    if loaded.tables.get("contacts"):
        raise ModelError(f"{loaded.path or loaded.name}: [[contacts]] and [[switching]] in one model are not run "
                         f"together (the rolling contacts run in absolute coordinates, the switching rules on the "
                         f"derived equations); keep one of them")
    if params:
        loaded = _at(loaded, params)
    model = loaded.system.compile() if model is None else model
    transient = {c.name: c for c in model.constraints if c.transient}
    L = loaded.loader
    scope = {**L.scope(), **{str(q): q for q in model.q}}
    values = {sp.Symbol(k): v for k, v in loaded.parameters.items()}
    rules, switched = [], {}
    for i in range(len(items)):
        ctx = loaded.context("switching", i)
        kind = SWITCHING.kind(ctx, what="rule")
        name = ctx.string("constraint")
        if name not in transient:
            listed = ", ".join(sorted(transient)) or "none (declare one with transient = true in [[constraints]])"
            raise ctx.error("constraint", f"no transient constraint named {name!r}; the transient constraints: "
                                          f"{listed}")
        if name in switched:
            raise ctx.error("constraint", f"{name!r} is already switched by [[switching]] #{switched[name] + 1}")
        switched[name] = i
        with ctx.guard(_GUARDED[kind]):  # a rule's own check (kane.ModelError) named at its key
            if kind == "lock":
                on = ctx.get("on")
                if not isinstance(on, list) or not all(isinstance(p, list) and len(p) == 2 for p in on):
                    raise ctx.error("on", "expected a list of [t_on, t_off] intervals [s], such as [[0.5, 1.5]]")
                rule = Lock(name, [tuple(ctx.evaluate("on", ctx.expr("on", scope, x)) for x in p) for p in on],
                            ctx.number("restitution", scope, 0.0))
            elif kind == "coulomb":
                normal = ctx.get("normal")
                if isinstance(normal, str) and normal in transient:
                    force = normal
                else:
                    force = ctx.number("normal", scope)
                rule = Coulomb(name, force, ctx.number("mu_s", scope), ctx.number("mu_k", scope),
                               _index(ctx, "normal_row"), ctx.number("v_stick", scope, 1e-6))
            else:
                rule = UnilateralContact(name, _gap(ctx, scope, model.q, values), ctx.number("restitution", scope, 0.0),
                                         ctx.number("v_min", scope, 1e-3), _index(ctx, "row"))
        rules.append(rule)
    return tuple(rules)


def switching_note(loaded, what: str) -> str | None:
    """The note that ``what`` (such as "the linearization") is that of the free mode, the rules of ``loaded``'s
    ``[[switching]]`` tables not applied; None without such tables."""
    names = [item.get("constraint") for item in loaded.tables.get("switching", [])]
    if not names:
        return None
    return (f"note: {loaded.path or loaded.name} has [[switching]] rules, which {what} does not apply: it holds with "
            f"the switched constraints ({', '.join(map(str, names))}) off")


def _index(ctx, key) -> int:
    v = ctx.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ctx.error(key, f"expected a row index (an integer >= 0), got {v!r}")
    return v


def _at(loaded, params):
    """``loaded`` with the parameter values ``params`` (name -> value) in place of the file's."""
    loader = copy.copy(loaded.loader)
    loader.values = {**loader.values, **{loader.params[k]: float(v) for k, v in params.items() if k in loader.params}}
    return dataclasses.replace(loaded, loader=loader, parameters={**loaded.parameters, **params})


class GapFunction:
    """gap(t, q) -> float [m]: a contact's gap ``expression`` of t and the coordinates ``q`` (the parameters at their
    values), printed into numpy code (from the parsed expression tree, never the file's text) on its first call in
    a process; it pickles as its expression."""

    def __init__(self, expression, q):
        self.expression, self.q = expression, tuple(q)
        self._fn = None

    def __call__(self, time, coordinates) -> float:
        if self._fn is None:
            self._fn = sp.lambdify([t, *self.q], self.expression, modules="numpy")
        return float(self._fn(time, *coordinates))

    def __getstate__(self):
        return {"expression": self.expression, "q": self.q, "_fn": None}

    def __repr__(self) -> str:
        return f"GapFunction({self.expression})"


def _gap(ctx, scope, q, values) -> GapFunction:
    """The gap of key ``gap`` (parameters at their values)."""
    e = ctx.expr("gap", scope).xreplace(values)
    unknown = sorted(str(s) for s in e.free_symbols - {t, *q})
    if unknown:
        raise ctx.error("gap", f"the gap may depend on t, the coordinates and the parameters only; it uses "
                               f"{', '.join(unknown)}")
    return GapFunction(e, q)
