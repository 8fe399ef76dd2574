"""Fixed-step integrators: classical RK4 and semi-implicit (symplectic) Euler, with cubic Hermite dense output.

Steps lie on the grid t_start + k dt [s] (no accumulated round-off); the last one ends exactly on t_bound.
The Hermite interpolant of a step uses f at both ends, evaluated on first use and shared with the next step
(RK4's first stage), so dense output costs no extra evaluations for RK4 and one per step for Euler.
"""

from __future__ import annotations

import math

import numpy as np

from kane.simulate.stepping import Integrator, Method, Rhs, Step

__all__ = ["RK4", "SemiImplicitEuler"]


def _hermite(t0: float, x0: np.ndarray, f0: np.ndarray, t1: float, x1: np.ndarray, f1: np.ndarray):
    """Cubic Hermite interpolant through (t0, x0, x0' = f0) and (t1, x1, x1' = f1)."""
    h = t1 - t0
    hf0 = h * f0
    hf1 = h * f1

    def interp(t: float) -> np.ndarray:
        s = (t - t0) / h
        s2 = s * s
        s3 = s2 * s
        return ((2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * hf0
                + (3 * s2 - 2 * s3) * x1 + (s3 - s2) * hf1)

    return interp


class _FixedStep(Integrator):
    """Fixed step ``dt`` [s] on the grid t_start + k dt (no accumulated round-off); the last step ends on t_bound."""

    def __init__(self, rhs: Rhs, t0: float, x0: np.ndarray, dt: float, t_bound: float = np.inf):
        super().__init__(rhs, t0, x0, t_bound)
        if not (dt > 0 and math.isfinite(dt)):
            raise ValueError(f"{type(self).__name__} needs a finite step dt > 0 [s], got {dt!r}")
        self.dt = float(dt)
        self._t_start = self._t
        self._k = 0
        self._cache: list[tuple[float, np.ndarray, np.ndarray]] = []

    def reset(self, t: float, x: np.ndarray) -> None:
        super().reset(t, x)
        self._t_start = self._t
        self._k = 0
        self._cache.clear()

    def _next_time(self) -> tuple[float, bool]:
        self._check_room()
        t_new = self._t_start + (self._k + 1) * self.dt
        if t_new >= self._t_bound - 1e-6 * self.dt:
            return self._t_bound, True
        return t_new, False

    def _advance(self, t_new: float, x_new: np.ndarray, clipped: bool) -> None:
        if clipped:
            self._t_start = t_new
            self._k = 0
        else:
            self._k += 1
        self._t = t_new
        self._x = x_new
        self.n_accepted += 1

    def _deriv(self, t: float, x: np.ndarray) -> np.ndarray:
        """f(t, x), remembered for the last two (t, x) pairs (x by identity) so step ends are evaluated once."""
        for tc, xc, fc in self._cache:
            if tc == t and xc is x:
                return fc
        f = self.rhs(t, x)
        self._cache.append((t, x, f))
        if len(self._cache) > 2:
            del self._cache[0]
        return f

    def _make_step(self, t0: float, x0: np.ndarray, t1: float, x1: np.ndarray) -> Step:
        def build():
            return _hermite(t0, x0, self._deriv(t0, x0), t1, x1, self._deriv(t1, x1))

        return Step(t0, t1, x0, x1, build)


class RK4(_FixedStep):
    """Classical 4th-order Runge-Kutta, fixed step dt [s]: 4 evaluations of f per step."""

    method = Method.RK4

    def step(self) -> Step:
        t_new, clipped = self._next_time()
        t, x, f = self._t, self._x, self.rhs
        h = t_new - t
        hh = 0.5 * h
        k1 = self._deriv(t, x)
        k2 = f(t + hh, x + hh * k1)
        k3 = f(t + hh, x + hh * k2)
        k4 = f(t_new, x + h * k3)
        k2 += k3
        k2 *= 2.0
        k2 += k1
        k2 += k4
        x_new = x + (h / 6.0) * k2
        self._advance(t_new, x_new, clipped)
        return self._make_step(t, x, t_new, x_new)


class SemiImplicitEuler(_FixedStep):
    """Semi-implicit (symplectic) Euler, fixed step dt [s]: u1 = u0 + h u'(t0, q0, u0), then q1 = q0 + h q'(t0, q0, u1).

    One step costs one udot and one qdot call, counted as one evaluation of f.
    """

    method = Method.SEMI_IMPLICIT_EULER

    def step(self) -> Step:
        t_new, clipped = self._next_time()
        t, x, rhs = self._t, self._x, self.rhs
        h = t_new - t
        n_q = rhs.n_q
        q = x[:n_q]
        x_new = np.empty_like(x)
        x_new[n_q:] = x[n_q:] + h * np.asarray(rhs.udot(t, q, x[n_q:]), dtype=float)
        x_new[:n_q] = q + h * np.asarray(rhs.qdot(t, q, x_new[n_q:]), dtype=float)
        rhs.n_fev += 1
        self._advance(t_new, x_new, clipped)
        return self._make_step(t, x, t_new, x_new)
