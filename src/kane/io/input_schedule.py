"""The ``[inputs]`` schedules of a model file as data that travels: :class:`InputSchedule` holds the parsed
expressions (of t, the coordinates, the speeds and the parameters), pickles to another process (a sweep's Dask
workers) and gives each run its ``inputs(t, q, u) -> {name: value}`` at that run's parameter values.

    >>> schedule = loaded.input_schedule()                 # None without schedules
    >>> inputs = schedule.bind(dynamics, {"F0": 30.0})     # for kane.simulate.simulate(dynamics, ..., inputs=inputs)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..model.system import t

__all__ = ["InputSchedule"]


@dataclass(frozen=True)
class InputSchedule:
    """Scheduled inputs ``names`` with their ``expressions`` (sympy, free in t, ``q`` (the model's coordinates),
    ``u`` (all its speeds) and ``parameters``, whose ``defaults`` are used where :meth:`bind` is not given a
    value). The numpy function is printed from the parsed expression trees (never from the file's text) once per
    process, on the first :meth:`bind`."""

    names: tuple[str, ...]
    expressions: tuple[sp.Expr, ...]
    q: tuple[sp.Symbol, ...]
    u: tuple[sp.Symbol, ...]
    parameters: tuple[sp.Symbol, ...]
    defaults: tuple[float, ...]

    def text(self) -> str:
        """A canonical text of the schedules (for content hashes)."""
        return "\n".join(f"{n} = {sp.srepr(e)}" for n, e in zip(self.names, self.expressions))

    def _functions(self):
        """(fast, safe): the schedules printed (from the parsed expression trees) with the math module first, for
        floats (about 0.6 us for the cart's two), and with numpy, whose nan and inf a value out of a function's
        domain gives where math raises."""
        fns = self.__dict__.get("_fns")
        if fns is None:
            args = [t, *self.q, *self.u, *self.parameters]
            fns = tuple(sp.lambdify(args, list(self.expressions), modules=m) for m in (["math", "numpy"], "numpy"))
            self.__dict__["_fns"] = fns
        return fns

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_fns"}  # the printed functions are rebuilt

    def bind(self, dynamics=None, params: Mapping[str, float] | None = None):
        """inputs(t, q, u) -> {name: value} for ``dynamics`` (its ``u_names``; the speeds it does not integrate
        come from its ``full_speeds`` where a schedule reads them; None: u holds every speed of the model, in its
        order, as in kane.switching) at the parameter values ``params`` (name -> value; the defaults for the
        others). A schedule that is not finite gives NaN: a Simulator stops there with the time and the state."""
        (fast, safe), names = self._functions(), self.names
        given = dict(params or {})
        p = [float(given.get(str(s), d)) for s, d in zip(self.parameters, self.defaults)]
        u_names = [str(s) for s in self.u] if dynamics is None else list(dynamics.u_names)
        dependent = {sp.Symbol(n) for n in getattr(dynamics, "u_dependent_names", ())}
        needs_full = any(e.free_symbols & dependent for e in self.expressions)
        index = [u_names.index(str(s)) if str(s) in u_names else None for s in self.u]

        def inputs(time, q, u):
            full = dynamics.full_speeds(time, q, u) if needs_full else [0.0 if k is None else u[k] for k in index]
            x = [float(time), *np.asarray(q, dtype=float).tolist(), *np.asarray(full, dtype=float).tolist(), *p]
            try:
                values = fast(*x)
            except (ValueError, OverflowError, ZeroDivisionError):  # out of a function's domain: nan or inf
                with np.errstate(all="ignore"):
                    values = safe(*x)
            return {n: float(v) for n, v in zip(names, values)}

        return inputs
