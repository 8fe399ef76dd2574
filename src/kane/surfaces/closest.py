"""The closest point of a parametric surface to a point in space: Newton's method on the first-order conditions
S_s . (S - x) = 0, S_t . (S - x) = 0 (the minimum of f = |S(s, t) - x|^2 / 2) from a starting guess, with a
backtracking line search on f, steps kept inside the parameter bounds (the building block of the contact
coordinates of seed 003). One point's Newton step is computed on Python floats: for a 2 x 2 system that costs
less than numpy's small-array calls, and the surface evaluation itself is compiled for NURBS surfaces."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from .base import Surface

__all__ = ["ClosestPoint", "closest_point", "keep_in_bounds"]


@dataclass(frozen=True)
class ClosestPoint:
    """The nearest point found: parameters ``s``, ``t``; ``point`` (3,) [m]; ``distance`` |point - x| [m];
    ``residual`` [m], the largest tangential component of point - x (|S_s . r| / |S_s| and |S_t . r| / |S_t|; a
    parameter held at its bound by the step counts only if it pulls inward); ``iterations``; ``converged``;
    ``on_boundary`` (a parameter ended on one of its bounds)."""

    s: float
    t: float
    point: np.ndarray
    distance: float
    residual: float
    iterations: int
    converged: bool
    on_boundary: bool


def keep_in_bounds(surface: Surface, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(params, held): periodic parameters wrapped into their bounds, the others clamped; ``held`` (2,) flags
    -1 / +1 for a parameter clamped to its lower / upper bound, 0 otherwise."""
    out = np.array(params, dtype=float)
    held = np.zeros(2, dtype=int)
    for k, ((lo, hi), periodic) in enumerate(zip(surface.bounds, surface.periodic)):
        if periodic and np.isfinite(lo) and np.isfinite(hi):
            out[k] = lo + np.mod(out[k] - lo, hi - lo)
        elif out[k] <= lo:
            out[k], held[k] = lo, -1
        elif out[k] >= hi:
            out[k], held[k] = hi, 1
    return out, held


class _Local:
    """The surface at one parameter pair, as Python floats (a single point's Newton step costs less in floats
    than in small numpy arrays): the point P, r = P - x, the tangents and second derivatives (3-tuples)."""

    __slots__ = ("d", "r", "s", "t", "ss", "st", "tt", "f")

    def __init__(self, surface: Surface, z, x):
        self.d = d = surface.derivatives(z[0], z[1])
        p = d.point.tolist()
        self.r = (p[0] - x[0], p[1] - x[1], p[2] - x[2])
        self.s, self.t, self.ss, self.st, self.tt = (v.tolist() for v in (d.d_s, d.d_t, d.d_ss, d.d_st, d.d_tt))
        self.f = 0.5 * _dot(self.r, self.r)

    def gradient_hessian(self):
        """(g, J^T J, H) of f = |r|^2 / 2: g = J^T r, H = J^T J + sum_k r_k d2S_k, J = [S_s S_t] (2-tuples and
        2 x 2 nested tuples)."""
        r, s, t = self.r, self.s, self.t
        ss, st, tt = _dot(s, s), _dot(s, t), _dot(t, t)
        hst = st + _dot(self.st, r)
        return ((_dot(s, r), _dot(t, r)), ((ss, st), (st, tt)),
                ((ss + _dot(self.ss, r), hst), (hst, tt + _dot(self.tt, r))))

    def residual(self, held) -> float:
        """The largest tangential component of r, a parameter held at a bound that f pushes against excepted."""
        out = 0.0
        for k, tangent in enumerate((self.s, self.t)):
            g = _dot(tangent, self.r)
            if held[k] != 0 and (g > 0) - (g < 0) == -held[k]:  # f decreases outward: the bound holds it
                continue
            out = max(out, abs(g) / max(_dot(tangent, tangent) ** 0.5, 1e-300))
        return out


def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _step(g, JTJ, H, free) -> tuple[float, float]:
    """The Newton step -H^-1 g in the free parameters (closed form: Sylvester's criterion and Cramer's rule), or
    where H is not positive definite the Gauss-Newton step on J^T J (lightly regularized)."""
    idx = [k for k in range(2) if free[k]]
    for A, reg in ((H, 0.0), (JTJ, 1e-12 * (JTJ[0][0] + JTJ[1][1]))):
        if len(idx) == 1:
            k = idx[0]
            a = A[k][k] + reg
            if a > 0:
                out = [0.0, 0.0]
                out[k] = -g[k] / a
                return out[0], out[1]
        elif len(idx) == 2:
            a, b, c = A[0][0] + reg, A[0][1], A[1][1] + reg
            det = a * c - b * b
            if a > 0 and det > 0:
                return -(c * g[0] - b * g[1]) / det, -(a * g[1] - b * g[0]) / det
        else:
            return 0.0, 0.0
    return 0.0, 0.0


def closest_point(surface: Surface, x, s0: float, t0: float, *, tol: float = 1e-12,
                  max_iterations: int = 50) -> ClosestPoint:
    """The parameters (s, t) of the point of ``surface`` nearest to ``x`` (3,) [m], by Newton's method from
    (s0, t0). A Hessian that is not positive definite (far from the surface, near a focal point) falls back to
    the Gauss-Newton step; a parameter on a bound that f pushes against is held there and the Newton step is taken
    in the others (an active set); ``tol`` is relative to max(1, |x|, distance). Converged or not, the result
    says so."""
    x = np.asarray(x, dtype=float)
    if x.shape != (3,) or not np.all(np.isfinite(x)):
        raise ArgumentError(f"closest_point on surface {surface.name!r}: x must be a finite point of shape (3,), "
                            f"got {x!r}")
    if surface.scalar_parameters(s0, t0) is None:
        surface.parameters(s0, t0)  # names a parameter that is not a finite number inside its bounds
    z, held = keep_in_bounds(surface, np.array([s0, t0], dtype=float))
    xs = x.tolist()
    scale = max(1.0, _dot(xs, xs) ** 0.5)
    here = _Local(surface, z, xs)
    residual = here.residual(held)
    iterations = 0
    while residual > tol * max(scale, np.sqrt(2 * here.f)) and iterations < max_iterations:
        iterations += 1
        g, JTJ, H = here.gradient_hessian()
        free = [not (held[k] != 0 and (g[k] > 0) - (g[k] < 0) == -held[k]) for k in range(2)]
        step = np.array(_step(g, JTJ, H, free))
        if not step.any():  # no descent direction (vanishing tangents): stop, unconverged
            break
        slope = g[0] * step[0] + g[1] * step[1]
        alpha, moved = 1.0, False
        for _ in range(40):
            z_new, held_new = keep_in_bounds(surface, z + alpha * step)
            trial = _Local(surface, z_new, xs)
            residual_new = trial.residual(held_new)
            # Armijo on f, or (where f no longer changes in floating point) a halved first-order residual
            if trial.f <= here.f + 1e-4 * alpha * slope or residual_new < 0.5 * residual:
                moved = True
                break
            alpha *= 0.5
        if not moved:
            break
        z, held, here, residual = z_new, held_new, trial, residual_new
    f, d = here.f, here.d
    converged = residual <= tol * max(scale, np.sqrt(2 * f))
    return ClosestPoint(s=float(z[0]), t=float(z[1]), point=d.point.copy(), distance=float(np.sqrt(2 * f)),
                        residual=residual, iterations=iterations, converged=bool(converged),
                        on_boundary=bool(np.any(held != 0)))
