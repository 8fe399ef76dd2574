"""Projected Gauss-Seidel on isotropic Coulomb (elliptic) cones for the frictional contact problem of one time step
(Moreau 1988, Jean 1999; the blockwise form of Anitescu and Potra 1997 with the exact normal/tangential split).

The problem: m contacts, each with a local velocity v_i = (v_n, v_t1, v_t2) [m/s] and impulse p_i = (p_n, p_t1,
p_t2) [N s], related by the Delassus operator W (3m, 3m) [m/s per N s] as v = W p + b (b (3m,) the free
velocities less the normal targets). Find p with, per contact,

* Signorini: v_n >= 0, p_n >= 0, v_n p_n = 0;
* Coulomb (maximal dissipation): |p_t| <= mu_i p_n, and when |p_t| < mu_i p_n then v_t = 0, else v_t = -s p_t with
  s >= 0 (the friction impulse opposes the slip).

Each sweep visits the contacts in order: the normal impulse takes its 1-D update p_n <- max(0, p_n - w v_n / W_nn)
(w = 1 the exact one; over-relaxed by the default w = 1.2, :attr:`ConeSolverOptions.relaxation`, successive
over-relaxation as in ODE's quickstep: the fixed points are the same, on the 20-box pile it takes ~15 % fewer
sweeps from the same states), then the tangential impulse its exact update, the minimum of the contact's
tangential energy over the disc |p_t| <= mu p_n (:func:`_disc_minimum`, a 2-D trust-region problem: on the rim the
velocity opposes the friction, Coulomb's maximal dissipation, also when the 2x2 tangential block is anisotropic).
Its multiplier is kept per contact from sweep to sweep as the start of the next sweep's Newton iteration (near
convergence one or two steps). v is kept up to date incrementally through the nonzero 3x3 blocks of W (contacts
that share a body, copied contiguous in sweep order), so a sweep costs O(nonzero blocks). The inner loop runs under
numba when it is installed (the plain-Python loop otherwise, with the same arithmetic).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..jit import HAVE_NUMBA, kernel, with_globals

__all__ = ["ConeSolution", "ConeSolverOptions", "solve_cones"]


@dataclass(frozen=True)
class ConeSolverOptions:
    """Stopping rule of :func:`solve_cones`: at most ``max_iterations`` sweeps; stop when every contact is within
    ``tolerance`` times the largest free velocity |b| of Signorini and Coulomb's law (a velocity residual:
    |v_n| of a pressed contact, v_n < 0 of an open one, |v_t| of one inside its cone, the part of v_t not opposite
    p_t of one on the rim), so that a statically indeterminate distribution of impulses (a box resting on four
    corners) stops as soon as the motion is right. ``relaxation`` w in (0, 2) scales the normal update (module
    docstring; 1: plain projected Gauss-Seidel)."""

    max_iterations: int = 20000
    tolerance: float = 1e-12
    relaxation: float = 1.2

    def __post_init__(self):
        if int(self.max_iterations) < 1:
            raise ArgumentError(f"ConeSolverOptions: max_iterations: expected >= 1, got {self.max_iterations!r}")
        if not float(self.tolerance) > 0:
            raise ArgumentError(f"ConeSolverOptions: tolerance: expected > 0, got {self.tolerance!r}")
        if not 0.0 < float(self.relaxation) < 2.0:
            raise ArgumentError(f"ConeSolverOptions: relaxation: expected 0 < relaxation < 2 (1: plain projected "
                                f"Gauss-Seidel), got {self.relaxation!r}")


@dataclass(frozen=True)
class ConeSolution:
    """impulse (m, 3) [N s] and velocity (m, 3) [m/s] per contact in (normal, t1, t2); ``iterations`` (sweeps
    done), ``residual`` (the last sweep's velocity residual over max |b|), ``converged`` (it met the tolerance)."""

    impulse: np.ndarray
    velocity: np.ndarray
    iterations: int
    residual: float
    converged: bool


def _disc_setup(a, d, c, E):
    """E (10,) := what :func:`_disc_minimum` needs of the tangential block T = [[a, c], [c, d]] (positive
    semidefinite), once per contact and solve: a, d (regularized when T is singular: a jointed body that cannot
    slide one way), T^-1 (11, 12, 22), the eigenvalues l1 >= l2 and the eigenvector (cos, sin) of l1, and 1.0
    (0.0: T = 0, no tangential mobility)."""
    scale = a + d
    if scale <= 0.0:
        E[9] = 0.0
        return
    det = a * d - c * c
    if det <= 1e-14 * scale * scale:
        a, d = a + 1e-12 * scale, d + 1e-12 * scale
        det = a * d - c * c
    half = 0.5 * (a - d)
    root = np.sqrt(half * half + c * c)
    # the eigenvector of l1: (l1 - d, c) or (c, l1 - a), whichever has no cancellation; (1, 0) when T is isotropic
    v1, v2 = (half + root, c) if half >= 0.0 else (c, root - half)
    norm = np.sqrt(v1 * v1 + v2 * v2)
    cs, sn = (1.0, 0.0) if norm == 0.0 else ((v1 / norm, v2 / norm) if v1 >= 0.0 else (-v1 / norm, -v2 / norm))
    E[0], E[1], E[2], E[3], E[4] = a, d, d / det, -c / det, a / det
    E[5], E[6], E[7], E[8], E[9] = 0.5 * (a + d) + root, 0.5 * (a + d) - root, cs, sn, 1.0


def _disc_minimum(E, g1, g2, radius, lam):
    """(x1, x2, multiplier): argmin over |x| <= radius of x^T T x / 2 + g . x for the tangential block T of
    :func:`_disc_setup` (E): the exact tangential update (a 2-D trust-region problem). On the rim (T + lam 1) x = -g
    with lam >= 0, so the velocity T x + g = -lam x opposes the friction: Coulomb's maximal dissipation holds at
    every update. The Newton iteration for lam starts from the given ``lam`` (the previous sweep's, or 0); the
    returned multiplier is 0 off the rim."""
    if radius <= 0.0:
        return 0.0, 0.0, 0.0
    if E[9] == 0.0:  # no tangential mobility: the friction only has to oppose g, on the rim
        gn = np.sqrt(g1 * g1 + g2 * g2)
        return (0.0, 0.0, 0.0) if gn == 0.0 else (-radius * g1 / gn, -radius * g2 / gn, 0.0)
    x1 = -(E[2] * g1 + E[3] * g2)  # the unconstrained minimum -T^-1 g
    x2 = -(E[3] * g1 + E[4] * g2)
    if x1 * x1 + x2 * x2 <= radius * radius:
        return x1, x2, 0.0
    l1, l2, cs, sn = E[5], E[6], E[7], E[8]
    h1, h2 = cs * g1 + sn * g2, -sn * g1 + cs * g2  # g in the eigenbasis
    inv_radius = 1.0 / radius
    for _ in range(60):  # Newton on 1/|x(lam)| - 1/radius: concave and increasing (from above the root one
        # step lands below it, from below it climbs monotonically)
        r1, r2 = 1.0 / (l1 + lam), 1.0 / (l2 + lam)
        e1, e2 = h1 * r1, h2 * r2  # x(lam) in the eigenbasis, s2 = |x|^2, d(s2)/d(lam) = -2 (e1^2 r1 + e2^2 r2)
        s2 = e1 * e1 + e2 * e2
        norm = np.sqrt(s2)
        if abs(norm - radius) <= 1e-15 * radius:
            break
        step = s2 * (1.0 - norm * inv_radius) / (e1 * e1 * r1 + e2 * e2 * r2)
        lam = max(lam - step, 0.5 * lam)
    y1, y2 = -h1 / (l1 + lam), -h2 / (l2 + lam)
    x1, x2 = cs * y1 - sn * y2, sn * y1 + cs * y2
    f = radius / np.sqrt(x1 * x1 + x2 * x2)
    return x1 * f, x2 * f, lam


def _pgs(W, b, mu, p, ptr, nbr, max_it, tol, relax):
    """The blocks of W (:func:`_blocks`) and the sweeps (:func:`_sweeps`) in one call (compiled by :func:`_kernel`)."""
    blocks, diag = _blocks(W, ptr, nbr)
    return _sweeps(blocks, diag, b, mu, p, ptr, nbr, max_it, tol, relax)


def _blocks(W, ptr, nbr):
    """(blocks (nnz, 3, 3), diag (m, 3, 3)): blocks[jj] = W[3j:3j+3, 3i:3i+3] for the neighbours j = nbr[jj] of
    contact i (ptr[i] <= jj < ptr[i+1]), diag[i] the block W_ii; contiguous, so that a sweep reads them in order."""
    m = ptr.shape[0] - 1
    blocks, diag = np.empty((nbr.shape[0], 3, 3)), np.empty((m, 3, 3))
    for i in range(m):
        for r in range(3):
            for c in range(3):
                diag[i, r, c] = W[3 * i + r, 3 * i + c]
        for jj in range(ptr[i], ptr[i + 1]):
            j = nbr[jj]
            for r in range(3):
                for c in range(3):
                    blocks[jj, r, c] = W[3 * j + r, 3 * i + c]
    return blocks, diag


def _sweeps(blocks, diag, b, mu, p, ptr, nbr, max_it, tol, relax):
    """The sweeps (numba-compiled when available) on the blocks of :func:`_blocks`: p (3m,) updated in place;
    returns (v (3m,), sweeps, residual)."""
    m = mu.shape[0]
    v = b.copy()
    for i in range(m):  # v = W p + b for the warm start
        p0, p1, p2 = p[3 * i], p[3 * i + 1], p[3 * i + 2]
        for jj in range(ptr[i], ptr[i + 1]):
            j = nbr[jj]
            B = blocks[jj]
            for r in range(3):
                v[3 * j + r] += B[r, 0] * p0 + B[r, 1] * p1 + B[r, 2] * p2
    vscale = 0.0
    for k in range(3 * m):
        vscale = max(vscale, abs(b[k]))
    residual = 0.0
    it = 0
    lam = np.zeros(m)  # per contact the multiplier of its last tangential update on the rim
    E = np.empty((m, 10))  # per contact its tangential block, factored once
    inv_n = np.empty(m)  # and 1 / W_nn
    for i in range(m):
        _disc_setup(diag[i, 1, 1], diag[i, 2, 2], diag[i, 1, 2], E[i])
        inv_n[i] = 1.0 / diag[i, 0, 0]
    for it in range(1, max_it + 1):
        for i in range(m):
            k = 3 * i
            D = diag[i]
            pn = max(0.0, p[k] - relax * v[k] * inv_n[i])  # over-relaxed (relax > 1) exact 1-D update
            dn = pn - p[k]
            # the tangential velocity after the normal update
            vt1 = v[k + 1] + D[1, 0] * dn
            vt2 = v[k + 2] + D[2, 0] * dn
            a, d, c = D[1, 1], D[2, 2], D[1, 2]
            g1 = vt1 - a * p[k + 1] - c * p[k + 2]  # the tangential velocity without this contact's friction
            g2 = vt2 - c * p[k + 1] - d * p[k + 2]
            x1, x2, lam[i] = _disc_minimum(E[i], g1, g2, mu[i] * pn, lam[i])
            d0, d1, d2 = dn, x1 - p[k + 1], x2 - p[k + 2]
            p[k], p[k + 1], p[k + 2] = pn, x1, x2
            for jj in range(ptr[i], ptr[i + 1]):
                j = nbr[jj]
                B = blocks[jj]
                for r in range(3):
                    v[3 * j + r] += B[r, 0] * d0 + B[r, 1] * d1 + B[r, 2] * d2
        residual = 0.0  # how far each contact is from Signorini and Coulomb, in velocity [m/s]
        for i in range(m):
            k = 3 * i
            rn = abs(v[k]) if p[k] > 0.0 else max(-v[k], 0.0)
            pt = np.sqrt(p[k + 1] ** 2 + p[k + 2] ** 2)
            vt = np.sqrt(v[k + 1] ** 2 + v[k + 2] ** 2)
            if pt < mu[i] * p[k] * (1.0 - 1e-12) or pt == 0.0:
                rt = vt if p[k] > 0.0 else 0.0  # inside the cone: no slip (an open contact may slide)
            else:
                rt = np.sqrt((v[k + 1] + vt * p[k + 1] / pt) ** 2 + (v[k + 2] + vt * p[k + 2] / pt) ** 2)
            residual = max(residual, rn, rt)
            if residual > tol * vscale and it < max_it:
                break  # another sweep follows: its residual is the one that counts
        if residual <= tol * vscale:
            break
    return v, it, residual / vscale if vscale > 0.0 else 0.0


_COMPILED = {}
_LOCK = threading.Lock()


def _kernel():
    """The numba-compiled sweeps (:func:`kane.jit.kernel`: compiled once, cached on disk; under a lock), or the
    Python function."""
    with _LOCK:
        if "pgs" not in _COMPILED:
            if not HAVE_NUMBA:  # numba is optional: the same loop in Python
                _COMPILED["pgs"], _COMPILED["parts"] = _pgs, (_sweeps, _disc_minimum, _blocks)
            else:
                disc, blocks = kernel(_disc_minimum, inline=True), kernel(_blocks)  # inlined: ~1/3 of a sweep
                sweeps = kernel(with_globals(_sweeps, _disc_minimum=disc, _disc_setup=kernel(_disc_setup)))
                _COMPILED["pgs"] = kernel(with_globals(_pgs, _blocks=blocks, _sweeps=sweeps))
                _COMPILED["parts"] = (sweeps, disc, blocks)
        return _COMPILED["pgs"]


def _parts():
    """(sweeps, tangential update, blocks) as :func:`_kernel` compiled them, for a compiled caller's loop."""
    _kernel()
    return _COMPILED["parts"]


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
    v, it, residual = _kernel()(W, b, mu, p, ptr, nbr, int(options.max_iterations), float(options.tolerance),
                                    float(options.relaxation))
    return ConeSolution(p.reshape(m, 3), v.reshape(m, 3), int(it), float(residual),
                        bool(residual <= options.tolerance))
