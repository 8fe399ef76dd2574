"""Building blocks shared by every integrator: the Method enum, the right-hand side x' = f(t, x) for
x = concat(q, u) with evaluation counts, the accepted-step record with dense output, and the Integrator base.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kane.errors import KaneError
from kane.options import Method

__all__ = ["IntegratorError", "Method", "Rhs", "Counters", "Step", "Integrator"]


class IntegratorError(KaneError):
    """A step could not be taken; ``t`` [s] is where the integrator stood, ``reason`` says why."""

    def __init__(self, reason: str, t: float):
        t = float(t)
        super().__init__(f"{reason} (t = {t!r} s)")
        self.reason = reason
        self.t = t


class Rhs:
    """x' = f(t, x) for x = concat(q, u) (shape (n_q + n_u,)), built on a dynamics object; counts evaluations.

    ``params`` is passed through to the dynamics; ``inputs`` is a mapping name -> value or a callable
    ``inputs(t, q, u) -> mapping``, evaluated at every call. ``n_fev`` counts full evaluations of f.
    """

    def __init__(self, dynamics: Any, params: Any = None, inputs: Mapping[str, float] | Callable | None = None):
        self.dynamics = dynamics
        self.n_q = int(dynamics.n_q)
        self.n_u = int(dynamics.n_u)
        self.n = self.n_q + self.n_u
        self.params = params
        self.inputs = inputs
        self._inputs_callable = callable(inputs)
        self.n_fev = 0

    def inputs_at(self, t: float, q: np.ndarray, u: np.ndarray) -> Any:
        """The inputs mapping at (t, q, u): the callable's result, or the fixed mapping."""
        if self._inputs_callable:
            return self.inputs(t, q, u)
        return self.inputs

    def qdot(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """q' [units of q / s], shape (n_q,); not counted in ``n_fev``."""
        return self.dynamics.qdot(t, q, u, params=self.params, inputs=self.inputs_at(t, q, u))

    def udot(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """u' [units of u / s], shape (n_u,); not counted in ``n_fev``."""
        return self.dynamics.udot(t, q, u, params=self.params, inputs=self.inputs_at(t, q, u))

    def __call__(self, t: float, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """f(t, x), shape (n,), written into ``out`` when given."""
        self.n_fev += 1
        n_q = self.n_q
        q = x[:n_q]
        u = x[n_q:]
        inputs = self.inputs(t, q, u) if self._inputs_callable else self.inputs
        if out is None:
            out = np.empty(self.n)
        dyn = self.dynamics
        out[:n_q] = dyn.qdot(t, q, u, params=self.params, inputs=inputs)
        out[n_q:] = dyn.udot(t, q, u, params=self.params, inputs=inputs)
        return out


@dataclass(frozen=True)
class Counters:
    """Work done so far: function evaluations, Jacobians, LU decompositions, accepted and rejected steps.

    ``n_rejected`` is None where the method does not report it (scipy's Radau and BDF).
    """

    n_fev: int
    n_jev: int
    n_lu: int
    n_accepted: int
    n_rejected: int | None

    @property
    def n_steps(self) -> int:
        """Attempted steps: accepted plus rejected (accepted only where rejections are not reported)."""
        return self.n_accepted + (self.n_rejected or 0)


class Step:
    """One accepted step from ``t_old`` to ``t_new`` [s], states ``x_old``, ``x_new`` (n,), and dense output.

    ``step(t)`` returns x(t), shape (n,), for t in [t_old, t_new]; the interpolant is built on first use.
    """

    __slots__ = ("t_old", "t_new", "x_old", "x_new", "_build", "_interp")

    def __init__(self, t_old: float, t_new: float, x_old: np.ndarray, x_new: np.ndarray,
                 build: Callable[[], Callable[[float], np.ndarray]]):
        self.t_old = t_old
        self.t_new = t_new
        self.x_old = x_old
        self.x_new = x_new
        self._build = build
        self._interp: Callable[[float], np.ndarray] | None = None

    @property
    def h(self) -> float:
        """Step size [s]."""
        return self.t_new - self.t_old

    def __call__(self, t: float) -> np.ndarray:
        if t == self.t_new:
            return self.x_new.copy()
        if t == self.t_old:
            return self.x_old.copy()
        if self._interp is None:
            self._interp = self._build()
        return np.asarray(self._interp(t), dtype=float).reshape(-1)


class Integrator:
    """Base class: holds the current time ``t`` [s] and state ``x`` (n,), the bound ``t_bound`` [s] and counts."""

    method: Method

    def __init__(self, rhs: Rhs, t0: float, x0: np.ndarray, t_bound: float = np.inf):
        self.rhs = rhs
        self._t = float(t0)
        self._x = self._own(x0)
        self._t_bound = float(t_bound)
        self.n_accepted = 0
        self.n_rejected: int | None = 0

    def _own(self, x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=float).reshape(-1)
        if x.shape != (self.rhs.n,):
            raise ValueError(f"state has shape {x.shape}, expected ({self.rhs.n},) = n_q + n_u")
        return x

    @property
    def t(self) -> float:
        """Current time [s]."""
        return self._t

    @property
    def x(self) -> np.ndarray:
        """Current state concat(q, u), shape (n,); do not modify in place."""
        return self._x

    @property
    def t_bound(self) -> float:
        """Time [s] no step goes past; steps end on it exactly."""
        return self._t_bound

    @t_bound.setter
    def t_bound(self, value: float) -> None:
        self._t_bound = float(value)

    @property
    def counters(self) -> Counters:
        """Snapshot of the work counters."""
        return Counters(self.rhs.n_fev, 0, 0, self.n_accepted, self.n_rejected)

    def reset(self, t: float, x: np.ndarray) -> None:
        """Restart from (t, x), for instance after a projection, an event or an impulse."""
        self._t = float(t)
        self._x = self._own(x)

    def step(self) -> Step:
        """Take one accepted step and return it; raises IntegratorError when it cannot."""
        raise NotImplementedError

    def _check_room(self) -> None:
        if not self._t < self._t_bound:
            raise IntegratorError(f"cannot step past t_bound = {self._t_bound!r} s", self._t)
