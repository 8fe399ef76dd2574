"""scipy.integrate's implicit solvers Radau (Hairer & Wanner's RADAU5) and BDF behind the Integrator interface."""

from __future__ import annotations

import numpy as np
from scipy.integrate import BDF, Radau

from kane.simulate.stepping import Counters, Integrator, IntegratorError, Method, Rhs, Step

__all__ = ["ScipyImplicit"]


class ScipyImplicit(Integrator):
    """scipy.integrate's Radau (order 5) or BDF (orders 1-5), stepped one accepted step at a time.

    Jacobians are formed by scipy's finite differences; their evaluations are counted in ``n_fev``. scipy does
    not report rejected steps, so ``n_rejected`` is None.
    """

    def __init__(self, method: Method, rhs: Rhs, t0: float, x0: np.ndarray, *, rtol: float = 1e-8,
                 atol: float | np.ndarray = 1e-10, t_bound: float = np.inf, max_step: float = np.inf,
                 min_step: float = 0.0, first_step: float | None = None):
        if method not in (Method.RADAU, Method.BDF):
            raise ValueError(f"ScipyImplicit runs RADAU or BDF, not {method}")
        super().__init__(rhs, t0, x0, t_bound)
        self.method = method
        self.rtol = float(rtol)
        self.atol = atol
        self.max_step = float(max_step)
        self.min_step = float(min_step)
        self.n_rejected = None
        self._base_jev = 0
        self._base_lu = 0
        self._solver = self._new_solver(first_step)

    def _new_solver(self, first_step: float | None):
        cls = Radau if self.method is Method.RADAU else BDF
        room = self._t_bound - self._t
        first_step = min(first_step, room) if first_step and room > 0 else None
        return cls(lambda t, x: self.rhs(t, x), self._t, self._x, self._t_bound, rtol=self.rtol, atol=self.atol,
                   max_step=self.max_step, first_step=first_step)

    @property
    def t_bound(self) -> float:
        """Time [s] no step goes past; changing it restarts scipy's solver from the current state."""
        return self._t_bound

    @t_bound.setter
    def t_bound(self, value: float) -> None:
        if float(value) != self._t_bound:
            self._t_bound = float(value)
            self._restart()

    @property
    def counters(self) -> Counters:
        s = self._solver
        return Counters(self.rhs.n_fev, self._base_jev + s.njev, self._base_lu + s.nlu, self.n_accepted, None)

    def reset(self, t: float, x: np.ndarray) -> None:
        super().reset(t, x)
        self._restart()

    def _restart(self) -> None:
        s = self._solver
        self._base_jev += s.njev
        self._base_lu += s.nlu
        h = s.step_size or getattr(s, "h_abs", None)
        self._solver = self._new_solver(h)

    def step(self) -> Step:
        self._check_room()
        s = self._solver
        t, x = self._t, self._x
        message = s.step()
        if s.status == "failed":
            raise IntegratorError(f"{self.method.name} failed: {message}", s.t)
        if s.step_size is not None and s.step_size < self.min_step and s.t < self._t_bound:
            raise IntegratorError(f"step size {s.step_size:.3g} s fell below the minimum {self.min_step:.3g} s", t)
        self.n_accepted += 1
        self._t = float(s.t)
        self._x = np.array(s.y, dtype=float)
        dense = s.dense_output()
        return Step(t, self._t, x, self._x, lambda: dense)
