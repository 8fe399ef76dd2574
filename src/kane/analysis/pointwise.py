"""Per-point linear algebra of the linearizer, formed for small dense arrays without numpy's and scipy's wrapper
overhead: the mass matrix factorized once for all its right-hand sides (LAPACK getrf/getrs, as
``np.linalg.solve``), the pivoted QR that chooses the dependent coordinates (geqp3, as ``scipy.linalg.qr``), the
state layout of one choice of dependent coordinates (:class:`StateLayout`, formed once) and A's assembly."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

__all__ = ["StateLayout", "ill_conditioned", "lu_factors", "lu_solve", "pivoted_qr", "singular_values",
           "state_matrix"]

_GETRF, _GETRS, _GEQP3, _GESDD = sla.get_lapack_funcs(("getrf", "getrs", "geqp3", "gesdd"), (np.zeros((1, 1)),))
_QR_WORK: dict = {}  # shape (m, n) -> the optimal work size of geqp3 (as scipy.linalg.qr queries it)


def lu_factors(M):
    """LU factors of the mass matrix M (p, p), formed once per point for every solve with it (LAPACK getrf, as
    np.linalg.solve); a singular M raises :class:`numpy.linalg.LinAlgError` as np.linalg.solve does."""
    if not M.size:
        return None
    lu, piv, info = _GETRF(M)
    if info > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return lu, piv


def lu_solve(lu, b) -> np.ndarray:
    """M^-1 b (p,) or (p, k) from :func:`lu_factors`'s factors."""
    if lu is None or not b.size:
        return np.zeros(b.shape)
    return _GETRS(lu[0], lu[1], b)[0]


def ill_conditioned(a, limit: float) -> bool:
    """``np.linalg.cond(a) > limit`` for a square a (m, m), without the SVD for m = 1 (cond 1, or inf for 0 and
    +-inf; a nan raises :class:`numpy.linalg.LinAlgError` as the SVD does)."""
    if a.shape == (1, 1):
        size = abs(float(a[0, 0]))
        if size != size:
            raise np.linalg.LinAlgError("SVD did not converge")
        return size == 0.0 or size == np.inf
    return bool(np.linalg.cond(a) > limit)


def singular_values(a) -> np.ndarray:
    """The singular values of a (m, n), largest first (LAPACK gesdd without vectors, as
    ``np.linalg.svd(a, compute_uv=False)``)."""
    if not a.size or not np.isfinite(a).all():
        return np.linalg.svd(a, compute_uv=False)
    _, s, _, info = _GESDD(a, compute_uv=0, full_matrices=0)
    if info != 0:
        raise np.linalg.LinAlgError("SVD did not converge")
    return s


def pivoted_qr(a):
    """(R's diagonal, the first m column pivots) of the QR factorization with column pivoting of a (m, n), m <= n
    (LAPACK geqp3 with the work size scipy.linalg.qr would query, so its pivots; for m = 1 its first step)."""
    if not np.isfinite(a).all():  # scipy's message for NaN or inf
        _, R, piv = sla.qr(a, pivoting=True, mode="economic")
        return np.diag(R), piv[:len(a)]
    if a.shape[0] == 1:  # geqp3's first pivot: the first column of largest norm |a_0j|; R_00 = a_0j
        j = int(np.abs(a[0]).argmax())
        return a[0, j:j + 1], np.array([j])
    lwork = _QR_WORK.get(a.shape)
    if lwork is None:
        lwork = _QR_WORK[a.shape] = int(_GEQP3(a, lwork=-1)[-2][0].real)
    qr, jpvt, _, _, info = _GEQP3(a, lwork=lwork)
    if info < 0:
        raise ValueError(f"illegal value in {-info}th argument of internal geqp3")
    return np.diag(qr), jpvt[:len(a)] - 1


@dataclass(frozen=True)
class StateLayout:
    """What one choice of dependent chart coordinates fixes for every point: ``dep`` and ``ind`` (chart indices),
    ``ind_array`` (n_i,), ``P0`` (n_c, n_i) dq/dx_i without the dependent rows (read-only), ``sel`` the chart and
    speed indices of the state, ``Pfull0`` (n_c + p, n_i + p) the state's dq/dx without P (read-only), the names of
    the coordinates, states and dependent coordinates."""

    dep: list
    ind: list
    ind_array: np.ndarray
    P0: np.ndarray
    sel: np.ndarray
    Pfull0: np.ndarray
    coords: tuple
    states: tuple
    dep_names: tuple

    @staticmethod
    def of(names, dep, u_names) -> "StateLayout":
        n_c, n_p = len(names), len(u_names)
        ind = [k for k in range(n_c) if k not in dep]
        n_i = len(ind)
        P0 = np.zeros((n_c, n_i))
        P0[ind, np.arange(n_i)] = 1.0
        Pfull0 = np.zeros((n_c + n_p, n_i + n_p))
        Pfull0[n_c:, n_i:] = np.eye(n_p)
        P0.flags.writeable = Pfull0.flags.writeable = False
        coords = tuple(names[k] for k in ind)
        return StateLayout(list(dep), ind, np.array(ind, dtype=np.intp), P0,
                           np.array(ind + list(range(n_c, n_c + n_p)), dtype=np.intp),
                           Pfull0, coords, coords + tuple(u_names), tuple(names[k] for k in dep))


def state_matrix(h_x, h_u, g_x, g_u, P, ind) -> np.ndarray:
    """A (n_i + p, n_i + p) = [[h_x[ind] P, h_u[ind]], [g_x P, g_u]]."""
    n_i, n_p = len(ind), g_u.shape[0]
    A = np.empty((n_i + n_p, n_i + n_p))
    A[:n_i, :n_i] = h_x[ind] @ P
    A[:n_i, n_i:] = h_u[ind]
    A[n_i:, :n_i] = g_x @ P
    A[n_i:, n_i:] = g_u
    return A
