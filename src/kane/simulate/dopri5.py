"""Dormand-Prince 5(4) (Dormand & Prince 1980) as in Hairer, Norsett & Wanner, *Solving ODEs I*, II.5-II.6:
FSAL stages, RMS error norm on atol + rtol |x|, PI step-size control, and the 4th-order continuous extension.
"""

from __future__ import annotations

import math

import numpy as np

from kane.simulate.stepping import Integrator, IntegratorError, Method, Rhs, Step

__all__ = ["DormandPrince5"]


_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_TABLEAU = np.zeros((7, 6))
_TABLEAU[1, :1] = [1 / 5]
_TABLEAU[2, :2] = [3 / 40, 9 / 40]
_TABLEAU[3, :3] = [44 / 45, -56 / 15, 32 / 9]
_TABLEAU[4, :4] = [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729]
_TABLEAU[5, :5] = [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]
_TABLEAU[6, :6] = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]
_E = np.array([71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40])
_D = np.array([-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799, -10690763975 / 1880347072,
               701980252875 / 199316789632, -1453857185 / 822651844, 69997945 / 29380423])


class DormandPrince5(Integrator):
    """Dormand-Prince 5(4) with FSAL, PI step-size control and 4th-order dense output (Hairer's DOPRI5).

    A step is accepted when the RMS norm of the local error scaled by atol + rtol max(|x_old|, |x_new|) is <= 1.
    A non-finite error estimate (NaN or inf from the dynamics) rejects the step and shrinks it tenfold; a step
    below ``min_step`` (at least 16 ulp of t) raises IntegratorError.
    """

    method = Method.DOPRI5
    safety = 0.9
    fac_min = 0.2
    fac_max = 10.0
    beta = 0.04

    def __init__(self, rhs: Rhs, t0: float, x0: np.ndarray, *, rtol: float = 1e-8, atol: float | np.ndarray = 1e-10,
                 t_bound: float = np.inf, max_step: float = np.inf, min_step: float = 0.0,
                 first_step: float | None = None):
        super().__init__(rhs, t0, x0, t_bound)
        self.rtol = float(rtol)
        self.atol = np.broadcast_to(np.asarray(atol, dtype=float), (rhs.n,)).copy()
        if not self.rtol > 0 or np.any(self.atol < 0):
            raise ValueError(f"DOPRI5 needs rtol > 0 and atol >= 0, got rtol={rtol!r}, atol={atol!r}")
        self.max_step = float(max_step)
        self.min_step = float(min_step)
        self._first_step = first_step
        self._restart()

    def _restart(self) -> None:
        self._K = np.empty((7, self.rhs.n))
        self.rhs(self._t, self._x, out=self._K[0])
        self._err_old = 1e-4
        self._rejected_last = False
        h = self._first_step if self._first_step else self._initial_step()
        self._h = min(float(h), self.max_step)

    def reset(self, t: float, x: np.ndarray) -> None:
        h = self._h
        super().reset(t, x)
        self._first_step = h
        self._restart()

    def _initial_step(self) -> float:
        """Hairer's starting step from the sizes of x, f and an estimate of x'' (one extra evaluation)."""
        x, f0 = self._x, self._K[0]
        scale = self.atol + self.rtol * np.abs(x)
        d0 = _rms(x / scale)
        d1 = _rms(f0 / scale)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        room = self._t_bound - self._t
        h0 = min(h0, self.max_step, room if room > 0 else h0)
        if not (h0 > 0 and math.isfinite(h0)):
            raise IntegratorError(f"the state derivative is too large for the tolerances (its scaled RMS size "
                                  f"is {d1:.3g} against {d0:.3g} for the state)", self._t)
        with np.errstate(over="ignore", invalid="ignore"):
            f1 = self.rhs(self._t + h0, x + h0 * f0)
            d2 = _rms((f1 - f0) / scale) / h0
        dm = max(d1, d2)
        h1 = max(1e-6, h0 * 1e-3) if not dm > 1e-15 else (0.01 / dm) ** 0.2
        h = min(100 * h0, h1)
        if not h > 0:
            raise IntegratorError(f"the state derivative changes too fast for the tolerances (estimated scaled "
                                  f"second derivative {d2:.3g}): no first step > 0 s exists", self._t)
        return h

    def step(self) -> Step:
        self._check_room()
        t, x, rhs = self._t, self._x, self.rhs
        K = self._K
        n = x.size
        abs_x = np.abs(x)
        h_floor = max(self.min_step, 16 * np.spacing(max(abs(t), 1.0)))
        nonfinite = False
        while True:
            h = min(self._h, self.max_step)
            room = self._t_bound - t
            clipped = h >= 0.99 * room
            if clipped:
                h = room
            if h < h_floor and not clipped:
                if nonfinite:
                    raise IntegratorError(
                        f"the dynamics returned NaN or inf: the step size shrank to {h:.3g} s "
                        f"without a finite result", t)
                raise IntegratorError(f"step size {h:.3g} s fell below the minimum {h_floor:.3g} s", t)
            h_tab = h * _TABLEAU
            for i in range(1, 6):
                y = np.dot(h_tab[i, :i], K[:i])
                y += x
                rhs(t + _C[i] * h, y, out=K[i])
            t_new = self._t_bound if clipped else t + h
            x_new = np.dot(h_tab[6], K[:6])
            x_new += x
            rhs(t_new, x_new, out=K[6])
            scale = np.abs(x_new)
            np.maximum(scale, abs_x, out=scale)
            scale *= self.rtol
            scale += self.atol
            err_vec = np.dot(h * _E, K)
            err_vec /= scale
            err = math.sqrt(float(np.dot(err_vec, err_vec)) / n)
            if err <= 1.0:
                break
            self.n_rejected += 1
            self._rejected_last = True
            if math.isfinite(err):
                nonfinite = False
                self._h = h * max(self.fac_min, self.safety * err ** -0.2)
            else:
                nonfinite = True
                self._h = h * 0.1
        fac = self.safety * max(err, 1e-10) ** (-0.2 + 0.75 * self.beta) * self._err_old ** self.beta
        fac = min(self.fac_max, max(self.fac_min, fac))
        if self._rejected_last:
            fac = min(fac, 1.0)
        self._err_old = max(err, 1e-4)
        self._rejected_last = False
        self._h = h * fac
        self.n_accepted += 1
        self._t, self._x = t_new, x_new
        self._K = np.empty_like(K)
        self._K[0] = K[6]

        def build():
            return _dopri_dense(t, h, x, x_new, K)

        return Step(t, t_new, x, x_new, build)


def _rms(v: np.ndarray) -> float:
    """Root mean square, scaled by the largest entry so that squares of entries near 1e154 do not overflow."""
    if not v.size:
        return 0.0
    big = float(np.max(np.abs(v)))
    if not (big > 0 and math.isfinite(big)):
        return big
    w = v / big
    return big * math.sqrt(float(np.dot(w, w)) / v.size)


def _dopri_dense(t0: float, h: float, x0: np.ndarray, x1: np.ndarray, K: np.ndarray):
    """Hairer's 4th-order continuous extension of a DOPRI5 step with stages K (7, n)."""
    r1 = x1 - x0
    r2 = h * K[0] - r1
    r3 = r1 - h * K[6] - r2
    r4 = h * (_D @ K)

    def interp(t: float) -> np.ndarray:
        s = (t - t0) / h
        s1 = 1.0 - s
        return x0 + s * (r1 + s1 * (r2 + s * (r3 + s1 * r4)))

    return interp
