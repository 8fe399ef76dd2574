"""NURBS surfaces: rational B-spline surfaces with first and second derivatives (Piegl & Tiller, The NURBS Book,
2nd ed., A3.6 on the homogeneous net and the quotient rule A4.4): in the compiled kernel of
:mod:`.nurbs_c` where a C compiler is found, else vectorized over points with numpy."""

from __future__ import annotations

from math import comb

import numpy as np

from ..errors import ModelError
from .base import Surface, SurfaceDerivatives, placement
from .bspline import basis_derivatives, find_span, span_polynomials
from .nurbs_c import MAX_DEGREE, kernel

__all__ = ["NurbsSurface"]


def _knot_vector(name: str, field: str, knots, degree: int, n_points: int) -> np.ndarray:
    """The knot vector as a float array (n_points + degree + 1,), non-decreasing, finite, with each interior knot
    repeated at most ``degree`` times and the ends at most degree + 1 times; else :class:`ModelError`."""
    try:
        U = np.array(knots, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"surface {name!r}: field {field!r} must be a list of numbers, got {knots!r}") from None
    expected = n_points + degree + 1
    if U.ndim != 1 or U.shape[0] != expected:
        raise ModelError(f"surface {name!r}: field {field!r} has {U.size} knots; degree {degree} with {n_points} "
                         f"control points needs {expected} (control points + degree + 1)")
    if not np.all(np.isfinite(U)):
        raise ModelError(f"surface {name!r}: field {field!r} has a non-finite knot: {U.tolist()!r}")
    drops = np.flatnonzero(np.diff(U) < 0)
    if drops.size:
        i = int(drops[0])
        raise ModelError(f"surface {name!r}: field {field!r} must be non-decreasing, but knot {i + 1} = "
                         f"{float(U[i + 1])!r} < knot {i} = {float(U[i])!r}")
    if not U[degree] < U[n_points]:
        raise ModelError(f"surface {name!r}: field {field!r} has an empty parameter range [knot {degree}, knot "
                         f"{n_points}] = [{float(U[degree])!r}, {float(U[n_points])!r}]")
    values, counts = np.unique(U, return_counts=True)
    for value, count in zip(values, counts):
        limit = degree + 1 if value in (U[0], U[-1]) else degree
        if count > limit:
            raise ModelError(f"surface {name!r}: field {field!r} repeats the knot {float(value)!r} {count} times; "
                             f"at most "
                             f"{limit} for degree {degree} (the surface would be discontinuous there)")
    return U


def _degree(name: str, field: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ModelError(f"surface {name!r}: field {field!r} must be an integer >= 1, got {value!r}")
    return int(value)


class NurbsSurface(Surface):
    """S(s, t) = sum_ij N_i,p(s) N_j,q(t) w_ij P_ij / sum_ij N_i,p(s) N_j,q(t) w_ij.

    ``control_points`` (n_u, n_v, 3) [m]; ``weights`` (n_u, n_v), each > 0 (None: all 1, a B-spline surface);
    ``knots_u`` (n_u + degree_u + 1,) and ``knots_v`` (n_v + degree_v + 1,) non-decreasing. The parameter s runs
    over [knots_u[degree_u], knots_u[n_u]] and t over [knots_v[degree_v], knots_v[n_v]]. ``origin`` (3,) [m] and
    ``rotation`` R (3, 3) (world from local, as the primitives') place the net: the control points are
    origin + R P (a NURBS surface moves with its net), ``control_points`` keeping the placed ones. Bad input raises
    :class:`ModelError` naming the surface, the field and the value.
    """

    def __init__(self, control_points, weights, knots_u, knots_v, degree_u: int, degree_v: int,
                 name: str = "nurbs", *, origin=None, rotation=None):
        self.name = str(name)
        try:
            P = np.array(control_points, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"surface {self.name!r}: field 'control_points' must be an array (n_u, n_v, 3) of "
                             "numbers") from None
        if P.ndim != 3 or P.shape[2] != 3 or P.shape[0] < 2 or P.shape[1] < 2:
            raise ModelError(f"surface {self.name!r}: field 'control_points' must have shape (n_u, n_v, 3) with "
                             f"n_u, n_v >= 2, got {P.shape}")
        bad = np.argwhere(~np.isfinite(P))
        if bad.size:
            i, j, _ = bad[0]
            raise ModelError(f"surface {self.name!r}: field 'control_points' has a non-finite entry at [{i}, {j}]: "
                             f"{P[i, j].tolist()!r}")
        if origin is not None or rotation is not None:
            o, R = placement(self.name, origin, rotation)
            P = o + P @ R.T
        n_u, n_v = P.shape[:2]
        if weights is None:
            W = np.ones((n_u, n_v))
        else:
            try:
                W = np.array(weights, dtype=float)
            except (TypeError, ValueError):
                raise ModelError(f"surface {self.name!r}: field 'weights' must be an array ({n_u}, {n_v}) of "
                                 "numbers") from None
            if W.shape != (n_u, n_v):
                raise ModelError(f"surface {self.name!r}: field 'weights' must have shape ({n_u}, {n_v}) like the "
                                 f"control net, got {W.shape}")
            bad = np.argwhere(~(np.isfinite(W) & (W > 0)))
            if bad.size:
                i, j = bad[0]
                raise ModelError(f"surface {self.name!r}: field 'weights' must be positive and finite, got "
                                 f"weights[{i}, {j}] = {float(W[i, j])!r}")
        self.degree_u = _degree(self.name, "degree_u", degree_u)
        self.degree_v = _degree(self.name, "degree_v", degree_v)
        for n, p, field in ((n_u, self.degree_u, "degree_u"), (n_v, self.degree_v, "degree_v")):
            if n < p + 1:
                raise ModelError(f"surface {self.name!r}: field {field!r} = {p} needs at least {p + 1} control "
                                 f"points in that direction, got {n}")
        self.knots_u = _knot_vector(self.name, "knots_u", knots_u, self.degree_u, n_u)
        self.knots_v = _knot_vector(self.name, "knots_v", knots_v, self.degree_v, n_v)
        if np.ptp(P.reshape(-1, 3), axis=0).max() == 0.0:
            raise ModelError(f"surface {self.name!r}: field 'control_points' are all the same point "
                             f"{P[0, 0].tolist()!r}: the surface collapses to a point")
        self.control_points, self.weights = P, W
        self._homogeneous = np.concatenate([P * W[..., None], W[..., None]], axis=-1)  # (n_u, n_v, 4)
        self.bounds = ((float(self.knots_u[self.degree_u]), float(self.knots_u[n_u])),
                       (float(self.knots_v[self.degree_v]), float(self.knots_v[n_v])))
        size = float(np.linalg.norm(np.ptp(P.reshape(-1, 3), axis=0)))
        self.tangent_scale = tuple(size / (hi - lo) for lo, hi in self.bounds)
        self._poly_u = span_polynomials(self.knots_u, self.degree_u, n_u, 2)
        self._poly_v = span_polynomials(self.knots_v, self.degree_v, n_v, 2)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_fast", None)  # the C descriptor: bound again after unpickling
        return state

    def _kernel(self):
        """(the compiled kernel, this surface's C descriptor), or None: no compiler, or a degree above MAX_DEGREE."""
        fast = self.__dict__.get("_fast")
        if fast is None:
            k = kernel() if max(self.degree_u, self.degree_v) <= MAX_DEGREE else None
            fast = self._fast = (k, None) if k is None else (k,) + k.bind(self._homogeneous, self.knots_u,
                                                                          self.knots_v, self.degree_u, self.degree_v)
        return None if fast[0] is None else fast

    def derivatives(self, s, t, order: int = 2) -> SurfaceDerivatives:
        """S and its derivatives up to ``order`` (0, 1 or 2) at (s, t); each field (..., 3). One point given as two
        Python or numpy floats inside the bounds takes a short path into the compiled kernel (about a microsecond
        instead of a hundred); everything else goes through :meth:`Surface.derivatives`."""
        fast = self._kernel() if order in (0, 1, 2) else None
        z = None if fast is None else self.scalar_parameters(s, t)
        if z is None:
            return super().derivatives(s, t, order)
        k, desc, _ = fast
        parts = (1, 3, 6)[order]
        out = np.empty((parts, 3))
        k.lib.kane_nurbs_eval(desc, 1, k.ffi.new("double[1]", [z[0]]), k.ffi.new("double[1]", [z[1]]), order,
                              k.ffi.cast("double *", k.ffi.from_buffer(out)))
        return SurfaceDerivatives(*out)

    def _evaluate(self, s, t, order):
        fast = self._kernel()
        if fast is None:
            return self._evaluate_numpy(s, t, order)
        s, t = (np.where((x < lo) | (x > hi), lo + np.mod(x - lo, hi - lo), x) if wrap else x
                for x, (lo, hi), wrap in zip((s, t), self.bounds, self.periodic))
        s, t = (np.ascontiguousarray(x, dtype=np.float64) for x in (s, t))
        k, desc, _ = fast
        out = np.empty(((1, 3, 6)[order], len(s), 3))
        cast = k.ffi.cast
        k.lib.kane_nurbs_eval(desc, len(s), cast("double *", k.ffi.from_buffer(s)),
                              cast("double *", k.ffi.from_buffer(t)), order, cast("double *", k.ffi.from_buffer(out)))
        return list(out)

    def _evaluate_numpy(self, s, t, order):
        """The numpy evaluator (vectorized over points): the reference of the compiled kernel and its fallback."""
        s, t = (np.where((x < lo) | (x > hi), lo + np.mod(x - lo, hi - lo), x) if wrap else x
                for x, (lo, hi), wrap in zip((s, t), self.bounds, self.periodic))  # a closed surface wraps
        p, q = self.degree_u, self.degree_v
        n_u, n_v = self.control_points.shape[:2]
        span_u = find_span(self.knots_u, p, n_u, s)
        span_v = find_span(self.knots_v, q, n_v, t)
        Nu = basis_derivatives(self._poly_u[:, : order + 1], self.knots_u, span_u, s)  # (n, order + 1, p + 1)
        Nv = basis_derivatives(self._poly_v[:, : order + 1], self.knots_v, span_v, t)
        iu = span_u[:, None] - p + np.arange(p + 1)
        iv = span_v[:, None] - q + np.arange(q + 1)
        Pw = self._homogeneous[iu[:, :, None], iv[:, None, :]]  # (n, p + 1, q + 1, 4)
        Aw = np.einsum("nlj,nkjd->nkld", Nv, np.einsum("nki,nijd->nkjd", Nu, Pw))  # d^(k+l) Aw / ds^k dt^l
        A, w = Aw[..., :3], Aw[..., 3]
        S = {}
        for k in range(order + 1):  # the quotient rule (A4.4) for the derivatives of A / w
            for m in range(order + 1 - k):
                v = A[:, k, m].copy()
                for j in range(1, m + 1):
                    v -= comb(m, j) * w[:, 0, j, None] * S[k, m - j]
                for i in range(1, k + 1):
                    v -= comb(k, i) * w[:, i, 0, None] * S[k - i, m]
                    for j in range(1, m + 1):
                        v -= comb(k, i) * comb(m, j) * w[:, i, j, None] * S[k - i, m - j]
                S[k, m] = v / w[:, 0, 0, None]
        keys = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)][: (1, 3, 6)[order]]
        return [S[key] for key in keys]
