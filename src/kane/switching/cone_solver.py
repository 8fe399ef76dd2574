"""Projected Gauss-Seidel on isotropic Coulomb (elliptic) cones for the frictional contact problem of one time step
(Moreau 1988, Jean 1999; the blockwise form of Anitescu and Potra 1997 with the exact normal/tangential split).

The problem: m contacts, each with a local velocity v_i = (v_n, v_t1, v_t2) [m/s] and impulse p_i = (p_n, p_t1,
p_t2) [N s], related by the Delassus operator W (3m, 3m) [m/s per N s] as v = W p + b (b (3m,) the free
velocities less the normal targets). Find p with, per contact,

* Signorini: v_n >= 0, p_n >= 0, v_n p_n = 0;
* Coulomb (maximal dissipation): |p_t| <= mu_i p_n, and when |p_t| < mu_i p_n then v_t = 0, else v_t = -s p_t with
  s >= 0 (the friction impulse opposes the slip).

Each sweep visits the contacts in order: the normal impulse takes its exact 1-D update p_n <- max(0, p_n - v_n /
W_nn), then the tangential impulse takes one projected step p_t <- proj_{|p_t| <= mu p_n}(p_t - v_t / w_t) with
w_t the largest eigenvalue of the contact's 2x2 tangential block. The scalar step w_t matters: a fixed point of
the Euclidean projection with a scalar step has v_t parallel to -p_t on the cone's rim (Coulomb's law), which a
step by the inverse 2x2 block would not give when that block is anisotropic. v is kept up to date incrementally
through the nonzero 3x3 blocks of W (contacts that share a body), so a sweep costs O(nonzero blocks). The inner
loop runs under numba when it is installed (the plain-Python loop otherwise, with the same arithmetic).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError

__all__ = ["ConeSolution", "ConeSolverOptions", "solve_cones"]


@dataclass(frozen=True)
class ConeSolverOptions:
    """Stopping rule of :func:`solve_cones`: at most ``max_iterations`` sweeps; stop when no impulse component
    changed by more than ``tolerance`` times the largest impulse (relative, dimensionless) in a sweep."""

    max_iterations: int = 20000
    tolerance: float = 1e-14

    def __post_init__(self):
        if int(self.max_iterations) < 1:
            raise ArgumentError(f"ConeSolverOptions: max_iterations: expected >= 1, got {self.max_iterations!r}")
        if not float(self.tolerance) > 0:
            raise ArgumentError(f"ConeSolverOptions: tolerance: expected > 0, got {self.tolerance!r}")


@dataclass(frozen=True)
class ConeSolution:
    """impulse (m, 3) [N s] and velocity (m, 3) [m/s] per contact in (normal, t1, t2); ``iterations`` (sweeps
    done), ``change`` (the last sweep's largest relative impulse change), ``converged`` (it met the tolerance)."""

    impulse: np.ndarray
    velocity: np.ndarray
    iterations: int
    change: float
    converged: bool


def _pgs(W, b, mu, p, ptr, nbr, max_it, tol):
    """The sweeps (numba-compiled when available): p (3m,) updated in place; returns (v (3m,), sweeps, change)."""
    m = mu.shape[0]
    v = b.copy()
    for i in range(m):  # v = W p + b for the warm start
        for jj in range(ptr[i], ptr[i + 1]):
            j = nbr[jj]
            for r in range(3):
                acc = 0.0
                for c in range(3):
                    acc += W[3 * j + r, 3 * i + c] * p[3 * i + c]
                v[3 * j + r] += acc
    wt = np.empty(m)
    for i in range(m):
        k = 3 * i
        a, d, c = W[k + 1, k + 1], W[k + 2, k + 2], W[k + 1, k + 2]
        wt[i] = 0.5 * (a + d) + np.sqrt(0.25 * (a - d) ** 2 + c * c)
    change = 0.0
    it = 0
    dp = np.zeros(3)
    for it in range(1, max_it + 1):
        change = 0.0
        scale = 0.0
        for i in range(m):
            k = 3 * i
            pn = max(0.0, p[k] - v[k] / W[k, k])
            dn = pn - p[k]
            # the tangential velocity after the normal update
            vt1 = v[k + 1] + W[k + 1, k] * dn
            vt2 = v[k + 2] + W[k + 2, k] * dn
            x1 = p[k + 1] - vt1 / wt[i]
            x2 = p[k + 2] - vt2 / wt[i]
            radius = mu[i] * pn
            norm = np.sqrt(x1 * x1 + x2 * x2)
            if norm > radius:
                f = radius / norm if norm > 0.0 else 0.0
                x1 *= f
                x2 *= f
            dp[0], dp[1], dp[2] = dn, x1 - p[k + 1], x2 - p[k + 2]
            p[k], p[k + 1], p[k + 2] = pn, x1, x2
            for jj in range(ptr[i], ptr[i + 1]):
                j = nbr[jj]
                for r in range(3):
                    v[3 * j + r] += (W[3 * j + r, k] * dp[0] + W[3 * j + r, k + 1] * dp[1]
                                     + W[3 * j + r, k + 2] * dp[2])
            for r in range(3):
                change = max(change, abs(dp[r]))
            scale = max(scale, abs(pn))
        if change <= tol * scale or scale == 0.0:
            break
    return v, it, change / scale if scale > 0.0 else 0.0


_COMPILED = {}
_LOCK = threading.Lock()


def _kernel():
    """The numba-compiled sweeps (compiled once per process, under a lock), or the Python function."""
    with _LOCK:
        if "pgs" not in _COMPILED:
            try:
                import numba
            except ImportError:  # numba is optional: the same loop in Python
                _COMPILED["pgs"] = _pgs
            else:
                _COMPILED["pgs"] = numba.njit(cache=False, nogil=True)(_pgs)
        return _COMPILED["pgs"]


def block_neighbours(W: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(ptr (m+1,), nbr (nnz,)): for each contact i the contacts j whose 3x3 block W[j, i] is not zero (i itself
    included), in CSR form."""
    blocks = np.abs(W).reshape(m, 3, m, 3).max(axis=(1, 3)) > 0.0
    blocks[np.arange(m), np.arange(m)] = True
    ptr = np.zeros(m + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(blocks.sum(axis=0))
    nbr = np.nonzero(blocks.T)[1].astype(np.int64)
    return ptr, nbr


def solve_cones(W, b, mu, options: ConeSolverOptions = ConeSolverOptions(), warm_start=None) -> ConeSolution:
    """Solve the frictional contact problem v = W p + b on elliptic cones |p_t| <= mu p_n (module docstring).

    W (3m, 3m) symmetric positive semidefinite with W_nn > 0 per contact [m/s per N s]; b (3m,) [m/s]; mu (m,)
    friction coefficients; ``warm_start`` (m, 3) impulses to start from (projected onto the cones first)."""
    W = np.ascontiguousarray(W, dtype=float)
    b = np.ascontiguousarray(b, dtype=float).reshape(-1)
    mu = np.ascontiguousarray(mu, dtype=float).reshape(-1)
    m = mu.shape[0]
    if W.shape != (3 * m, 3 * m) or b.shape != (3 * m,):
        raise ArgumentError(f"solve_cones: expected W (3m, 3m) and b (3m,) for m = {m} contacts, got W {W.shape} "
                            f"and b {b.shape}")
    if m == 0:
        return ConeSolution(np.zeros((0, 3)), np.zeros((0, 3)), 0, 0.0, True)
    if np.any(mu < 0) or not np.all(np.diag(W)[0::3] > 0):
        raise ArgumentError("solve_cones: expected mu >= 0 and a positive normal entry W_nn for every contact")
    p = np.zeros(3 * m)
    if warm_start is not None:
        p0 = np.asarray(warm_start, dtype=float).reshape(m, 3)
        pn = np.maximum(p0[:, 0], 0.0)
        pt = p0[:, 1:]
        norm = np.linalg.norm(pt, axis=1)
        f = np.where(norm > mu * pn, mu * pn / np.where(norm > 0, norm, 1.0), 1.0)
        p = np.column_stack([pn, pt * f[:, None]]).reshape(-1)
    ptr, nbr = block_neighbours(W, m)
    v, it, change = _kernel()(W, b, mu, p, ptr, nbr, int(options.max_iterations), float(options.tolerance))
    return ConeSolution(p.reshape(m, 3), v.reshape(m, 3), int(it), float(change),
                        bool(change <= options.tolerance))
