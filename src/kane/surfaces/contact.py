"""Contact coordinates of two surfaces (seed 003: the parameters (u1, v1, u2, v2) of the contact point on each
surface): the common-normal conditions solved by Newton's method.

With d = S2(u2, v2) - S1(u1, v1) and n1 the unit normal of surface 1, the four conditions are

    S1_u . d = 0,   S1_v . d = 0     (d lies along n1),
    n1 . S2_u = 0,  n1 . S2_v = 0    (surface 2's tangent plane is normal to n1: the normals are parallel),

which stay regular at touching contact (d = 0), where the extremal-distance form |d|^2 has a singular Hessian.
The signed distance d . n1 is the gap (> 0 apart, 0 touching, < 0 interpenetrating). The Jacobian is exact:
dn1 = (I - n1 n1^T) dN1 / |N1| with N1 = S1_u x S1_v, from the second derivatives. Two NURBS surfaces are
evaluated, conditions and Jacobian included, in one call of the compiled kernel (:mod:`.nurbs_c`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import _DEGENERATE, Surface, SurfaceDerivatives, cross3
from .closest import keep_in_bounds
from .moved import MovedSurface
from .nurbs import NurbsSurface

__all__ = ["CommonNormal", "common_normal", "common_normal_conditions"]

_IDENTITY, _ZERO = np.eye(3), np.zeros(3)


@dataclass(frozen=True)
class CommonNormal:
    """The solution: ``params`` (u1, v1, u2, v2); ``point1``, ``point2`` (3,) [m]; the unit normals ``normal1``,
    ``normal2`` (3,) (opposite at a contact of outward normals, equal for a ball inside a bowl); ``gap``
    (point2 - point1) . normal1 [m]; ``residual`` max |F| of the four conditions [m^2 or m]; ``iterations``;
    ``converged``."""

    params: np.ndarray
    point1: np.ndarray
    point2: np.ndarray
    normal1: np.ndarray
    normal2: np.ndarray
    gap: float
    residual: float
    iterations: int
    converged: bool


def common_normal_conditions(surface1: Surface, surface2: Surface, z: np.ndarray):
    """(F (4,), dF/dz (4, 4), d1, d2, n1) at z = (u1, v1, u2, v2): the four conditions, their exact Jacobian, the
    two surfaces' :class:`SurfaceDerivatives` to second order and the unit normal n1 (3,) of surface 1. Two NURBS
    surfaces (the second possibly a :class:`MovedSurface` of one) go through one call of the compiled kernel."""
    got = _compiled_conditions(surface1, surface2, z)
    if got is not None:
        return got
    a = surface1.derivatives(z[0], z[1])
    b = surface2.derivatives(z[2], z[3])
    d = b.point - a.point
    n1 = surface1.unit_normal(a, z[0], z[1])
    N = cross3(a.d_s, a.d_t)
    P = (np.eye(3) - np.outer(n1, n1)) / np.linalg.norm(N)
    n1_u = P @ (cross3(a.d_ss, a.d_t) + cross3(a.d_s, a.d_st))
    n1_v = P @ (cross3(a.d_st, a.d_t) + cross3(a.d_s, a.d_tt))
    F = np.array([a.d_s @ d, a.d_t @ d, n1 @ b.d_s, n1 @ b.d_t])
    J = np.array([
        [a.d_ss @ d - a.d_s @ a.d_s, a.d_st @ d - a.d_s @ a.d_t, a.d_s @ b.d_s, a.d_s @ b.d_t],
        [a.d_st @ d - a.d_t @ a.d_s, a.d_tt @ d - a.d_t @ a.d_t, a.d_t @ b.d_s, a.d_t @ b.d_t],
        [n1_u @ b.d_s, n1_v @ b.d_s, n1 @ b.d_ss, n1 @ b.d_st],
        [n1_u @ b.d_t, n1_v @ b.d_t, n1 @ b.d_st, n1 @ b.d_tt],
    ])
    return F, J, a, b, n1


def _compiled_conditions(surface1: Surface, surface2: Surface, z):
    """common_normal_conditions in C, or None where it does not apply (not NURBS, no compiler, a parameter
    outside its bounds, a degenerate normal: the numpy path then names the problem)."""
    inner, R, o = surface2, _IDENTITY, _ZERO
    if type(surface2) is MovedSurface:
        inner, R, o = surface2.surface, surface2.rotation, surface2.origin
    if type(surface1) is not NurbsSurface or type(inner) is not NurbsSurface:
        return None
    fast1, fast2 = surface1._kernel(), inner._kernel()
    if fast1 is None or fast2 is None:
        return None
    z1 = surface1.scalar_parameters(float(z[0]), float(z[1]))
    z2 = inner.scalar_parameters(float(z[2]), float(z[3]))
    if z1 is None or z2 is None:
        return None
    k, ffi = fast1[0], fast1[0].ffi
    R = np.ascontiguousarray(R, dtype=np.float64)
    o = np.ascontiguousarray(o, dtype=np.float64)
    out = np.empty(60)
    size = k.lib.kane_common_normal(fast1[1], fast2[1], ffi.from_buffer("double[]", R),
                                    ffi.from_buffer("double[]", o), ffi.new("double[4]", z1 + z2),
                                    ffi.from_buffer("double[]", out))
    ts = surface1.tangent_scale
    if not size > _DEGENERATE * max(out[59], ts[0] * ts[1]):
        return None
    a, b = out[20:38].reshape(6, 3), out[38:56].reshape(6, 3)
    return (out[:4], out[4:20].reshape(4, 4), SurfaceDerivatives(a[0], a[1], a[2], a[3], a[4], a[5]),
            SurfaceDerivatives(b[0], b[1], b[2], b[3], b[4], b[5]), out[56:59])


def common_normal(surface1: Surface, surface2: Surface, start, *, tol: float = 1e-12,
                  max_iterations: int = 50) -> CommonNormal:
    """The contact coordinates (u1, v1, u2, v2) where the two surfaces have a common normal, by Newton's method
    from ``start`` (4,), with step halving on max |F|; each surface's parameters are kept in its bounds (wrapped
    where periodic). A degenerate point of either surface (a pole, a collapsed edge) raises
    :class:`kane.errors.ModelError` naming it. ``tol`` bounds max |F| relative to the squared length scale of the
    two points."""
    z = np.array(start, dtype=float).reshape(4)
    surface1.parameters(z[0], z[1])
    surface2.parameters(z[2], z[3])
    F, J, d1, d2, n1 = common_normal_conditions(surface1, surface2, z)
    p1, p2 = d1.point, d2.point
    scale = max(1.0, float(np.linalg.norm(p1)), float(np.linalg.norm(p2))) ** 2
    iterations = 0
    while np.abs(F).max() > tol * scale and iterations < max_iterations:
        iterations += 1
        step = np.linalg.lstsq(J, -F, rcond=None)[0]
        alpha = 1.0
        for _ in range(30):
            trial = np.concatenate([keep_in_bounds(surface1, z[:2] + alpha * step[:2])[0],
                                    keep_in_bounds(surface2, z[2:] + alpha * step[2:])[0]])
            got = common_normal_conditions(surface1, surface2, trial)
            if np.abs(got[0]).max() < np.abs(F).max() or alpha < 1e-6:
                break
            alpha *= 0.5
        z, (F, J, d1, d2, n1) = trial, got
        p1, p2 = d1.point, d2.point
    residual = float(np.abs(F).max())
    n2 = surface2.normal(z[2], z[3])
    return CommonNormal(params=z, point1=p1, point2=p2, normal1=n1, normal2=n2, gap=float((p2 - p1) @ n1),
                        residual=residual, iterations=iterations, converged=bool(residual <= tol * scale))
