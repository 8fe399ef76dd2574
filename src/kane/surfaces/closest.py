"""The closest point of a parametric surface to a point in space: Newton's method on the first-order conditions
S_s . (S - x) = 0, S_t . (S - x) = 0 (the minimum of f = |S(s, t) - x|^2 / 2) from a starting guess, with a
backtracking line search on f, steps kept inside the parameter bounds (the building block of the contact
coordinates of seed 003)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from .base import Surface, SurfaceDerivatives

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


def _gradient_hessian(d: SurfaceDerivatives, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(g, J^T J, H) of f = |r|^2 / 2 with r = S - x: g = J^T r, H = J^T J + sum_k r_k d2S_k, J = [S_s S_t]."""
    J = np.stack([d.d_s, d.d_t], axis=1)  # (3, 2)
    JTJ = J.T @ J
    return J.T @ r, JTJ, JTJ + np.array([[d.d_ss @ r, d.d_st @ r], [d.d_st @ r, d.d_tt @ r]])


def _residual(d: SurfaceDerivatives, r: np.ndarray, held: np.ndarray) -> float:
    out = 0.0
    for k, tangent in enumerate((d.d_s, d.d_t)):
        g = float(tangent @ r)
        if held[k] != 0 and np.sign(g) == -held[k]:  # f decreases outward: the bound holds this parameter
            continue
        out = max(out, abs(g) / max(float(np.linalg.norm(tangent)), 1e-300))
    return out


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
    surface.parameters(s0, t0)
    z, held = keep_in_bounds(surface, np.array([s0, t0], dtype=float))
    scale = max(1.0, float(np.linalg.norm(x)))
    d = surface.derivatives(z[0], z[1])
    r = d.point - x
    f = 0.5 * float(r @ r)
    residual = _residual(d, r, held)
    iterations = 0
    while residual > tol * max(scale, np.sqrt(2 * f)) and iterations < max_iterations:
        iterations += 1
        g, JTJ, H = _gradient_hessian(d, r)
        free = ~((held != 0) & (np.sign(g) == -held))  # a bound that f pushes against holds its parameter
        step = np.zeros(2)
        H_f, JTJ_f = H[np.ix_(free, free)], JTJ[np.ix_(free, free)]
        try:
            np.linalg.cholesky(H_f)
            step[free] = -np.linalg.solve(H_f, g[free])
        except np.linalg.LinAlgError:
            step[free] = -np.linalg.lstsq(JTJ_f + 1e-12 * np.trace(JTJ_f) * np.eye(len(JTJ_f)), g[free],
                                          rcond=None)[0]
        alpha, moved = 1.0, False
        for _ in range(40):
            z_new, held_new = keep_in_bounds(surface, z + alpha * step)
            d_new = surface.derivatives(z_new[0], z_new[1])
            r_new = d_new.point - x
            f_new = 0.5 * float(r_new @ r_new)
            residual_new = _residual(d_new, r_new, held_new)
            # Armijo on f, or (where f no longer changes in floating point) a halved first-order residual
            if f_new <= f + 1e-4 * alpha * float(g @ step) or residual_new < 0.5 * residual:
                moved = True
                break
            alpha *= 0.5
        if not moved:
            break
        z, held, d, r, f, residual = z_new, held_new, d_new, r_new, f_new, residual_new
    converged = residual <= tol * max(scale, np.sqrt(2 * f))
    return ClosestPoint(s=float(z[0]), t=float(z[1]), point=d.point.copy(), distance=float(np.sqrt(2 * f)),
                        residual=residual, iterations=iterations, converged=bool(converged),
                        on_boundary=bool(np.any(held != 0)))
