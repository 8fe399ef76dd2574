"""The compiled path of the contact time stepping for free rigid bodies: a step from a :class:`ContactBatch`.

:func:`kane.switching.contact_stepping.contact_step` takes this path when ``contacts(q)`` returns a
:class:`kane.mechanics.collision_batch.ContactBatch` and the dynamics is a
:class:`kane.switching.contact_bodies.FreeBodies` (block-diagonal M = diag(I_i, m_i 1)). It is the same step (the
contact_stepping module docstring: u_free, the gap test, the targets, static/kinetic friction, the demotion of
contacts that start to slip, the same PGS sweeps of :mod:`.cone_solver`), with the per-contact work in numba:

1. per contact the rows J_i (3, 6) of each side's body, basis (n, t1, t2) @ [-[p - c]x R, 1] (analytic), and the
   free and start velocities J u_free, J u (:func:`_rows`);
2. W = J M^-1 J^T of the active contacts in 3x3 blocks, only between contacts that share a body, and the block
   neighbour lists of the sweeps (:func:`_delassus`);
3. the sweeps (:func:`kane.switching.cone_solver` kernel), then u+ = u_free + M^-1 J^T p and v+ = J u+
   (:func:`_response`).

No scipy.sparse and no Python object per contact; warm starts match contacts by (pair id, rank in the pair) in
arrays. Results equal the general path's to round-off (tests/switching/test_contact_fast.py).
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ArgumentError
from .cone_solver import _kernel as _pgs_kernel

__all__ = ["WarmStart", "batch_step", "free_bodies_of"]


def _rows(qb, u, u_free, body_a, body_b, point_a, point_b, normal, basis, JA, JB, v_free, v_start):
    """Per contact k: basis[k] (3, 3) rows (n, t1, t2); JA[k], JB[k] (3, 6) the rows on body a's speeds (minus
    the point Jacobian) and body b's; v_free[k], v_start[k] (3,) = J_k u_free, J_k u."""
    for k in range(normal.shape[0]):
        n0, n1, n2 = normal[k, 0], normal[k, 1], normal[k, 2]
        if abs(n0) < 0.9:  # ContactPoint.tangents_world: a = e_x, else e_y; t1 = a x n / |a x n|, t2 = n x t1
            a0, a1, a2 = 0.0, -n2, n1
        else:
            a0, a1, a2 = n2, 0.0, -n0
        s = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        a0, a1, a2 = a0 / s, a1 / s, a2 / s
        basis[k, 0, 0], basis[k, 0, 1], basis[k, 0, 2] = n0, n1, n2
        basis[k, 1, 0], basis[k, 1, 1], basis[k, 1, 2] = a0, a1, a2
        basis[k, 2, 0], basis[k, 2, 1], basis[k, 2, 2] = n1 * a2 - n2 * a1, n2 * a0 - n0 * a2, n0 * a1 - n1 * a0
        for r in range(3):
            v_free[k, r] = 0.0
            v_start[k, r] = 0.0
        for side in range(2):
            body = body_a[k] if side == 0 else body_b[k]
            out = JA if side == 0 else JB
            sign = -1.0 if side == 0 else 1.0
            if body < 0:
                for r in range(3):
                    for c in range(6):
                        out[k, r, c] = 0.0
                continue
            p = point_a[k] if side == 0 else point_b[k]
            w, x, y, z = qb[body, 3], qb[body, 4], qb[body, 5], qb[body, 6]
            nq = np.sqrt(w * w + x * x + y * y + z * z)
            w, x, y, z = w / nq, x / nq, y / nq, z / nq
            R = np.empty((3, 3))
            R[0, 0], R[0, 1], R[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
            R[1, 0], R[1, 1], R[1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
            R[2, 0], R[2, 1], R[2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)
            d0, d1, d2 = p[0] - qb[body, 0], p[1] - qb[body, 1], p[2] - qb[body, 2]
            for r in range(3):
                e0, e1, e2 = basis[k, r, 0], basis[k, r, 1], basis[k, r, 2]
                # e . (-[d]x R) = -(e . (d x R_col)) = (d x e) . R_col
                c0, c1, c2 = d1 * e2 - d2 * e1, d2 * e0 - d0 * e2, d0 * e1 - d1 * e0
                for c in range(3):
                    out[k, r, c] = sign * (c0 * R[0, c] + c1 * R[1, c] + c2 * R[2, c])
                out[k, r, 3], out[k, r, 4], out[k, r, 5] = sign * e0, sign * e1, sign * e2
                for c in range(6):
                    v_free[k, r] += out[k, r, c] * u_free[6 * body + c]
                    v_start[k, r] += out[k, r, c] * u[6 * body + c]


def _block(Ji, Jj, Iinv, minv, out, i, j, sign):
    """out[3i:3i+3, 3j:3j+3] += sign Ji (3, 6) diag(Iinv, minv 1) Jj^T."""
    for r in range(3):
        t0 = Ji[r, 0] * Iinv[0, 0] + Ji[r, 1] * Iinv[1, 0] + Ji[r, 2] * Iinv[2, 0]
        t1 = Ji[r, 0] * Iinv[0, 1] + Ji[r, 1] * Iinv[1, 1] + Ji[r, 2] * Iinv[2, 1]
        t2 = Ji[r, 0] * Iinv[0, 2] + Ji[r, 1] * Iinv[1, 2] + Ji[r, 2] * Iinv[2, 2]
        for c in range(3):
            out[3 * i + r, 3 * j + c] += sign * (t0 * Jj[c, 0] + t1 * Jj[c, 1] + t2 * Jj[c, 2] + minv * (
                Ji[r, 3] * Jj[c, 3] + Ji[r, 4] * Jj[c, 4] + Ji[r, 5] * Jj[c, 5]))


def _delassus(body_a, body_b, JA, JB, Iinv, minv, W, ptr, nbr):
    """W (3m, 3m) = J M^-1 J^T (zeroed here; blocks of contacts that share a body) and the neighbour lists of
    the sweeps (:func:`kane.switching.cone_solver.block_neighbours` of W); returns the neighbour count."""
    m = body_a.shape[0]
    for i in range(3 * m):
        for j in range(3 * m):
            W[i, j] = 0.0
    for i in range(m):
        for j in range(i, m):
            for si in range(2):
                bi = body_a[i] if si == 0 else body_b[i]
                if bi < 0:
                    continue
                Ji = JA[i] if si == 0 else JB[i]
                for sj in range(2):
                    bj = body_a[j] if sj == 0 else body_b[j]
                    if bj != bi:
                        continue
                    _block(Ji, JA[j] if sj == 0 else JB[j], Iinv[bi], minv[bi], W, i, j, 1.0)
            if j > i:
                for r in range(3):
                    for c in range(3):
                        W[3 * j + c, 3 * i + r] = W[3 * i + r, 3 * j + c]
    count = 0
    ptr[0] = 0
    for i in range(m):
        for j in range(m):
            nonzero = i == j
            for r in range(3):
                for c in range(3):
                    if W[3 * j + r, 3 * i + c] != 0.0:
                        nonzero = True
            if nonzero:
                nbr[count] = j
                count += 1
        ptr[i + 1] = count
    return count


def _response(p, body_a, body_b, JA, JB, Iinv, minv, u_free, u_next, velocity):
    """u_next = u_free + M^-1 J^T p; velocity (m, 3) = J u_next."""
    for c in range(u_free.shape[0]):
        u_next[c] = u_free[c]
    m = body_a.shape[0]
    for k in range(m):
        for side in range(2):
            body = body_a[k] if side == 0 else body_b[k]
            if body < 0:
                continue
            Jk = JA[k] if side == 0 else JB[k]
            f = np.zeros(6)  # J_k^T p_k on the body's speeds
            for c in range(6):
                f[c] = Jk[0, c] * p[3 * k] + Jk[1, c] * p[3 * k + 1] + Jk[2, c] * p[3 * k + 2]
            for r in range(3):
                u_next[6 * body + r] += Iinv[body, r, 0] * f[0] + Iinv[body, r, 1] * f[1] + Iinv[body, r, 2] * f[2]
                u_next[6 * body + 3 + r] += minv[body] * f[3 + r]
    for k in range(m):
        for r in range(3):
            acc = 0.0
            for side in range(2):
                body = body_a[k] if side == 0 else body_b[k]
                if body < 0:
                    continue
                Jk = JA[k] if side == 0 else JB[k]
                for c in range(6):
                    acc += Jk[r, c] * u_next[6 * body + c]
            velocity[k, r] = acc


_COMPILED: dict = {}
_LOCK = threading.Lock()


def _kernels():
    """(rows, delassus, response) compiled by numba once per process (the Python functions without numba)."""
    with _LOCK:
        if "k" not in _COMPILED:
            try:
                import numba
            except ImportError:
                _COMPILED["k"] = (_rows, _delassus, _response)
            else:
                jit = numba.njit(cache=False, nogil=True)
                block = jit(_block)
                g = dict(_delassus.__globals__, _block=block)
                delassus = jit(type(_delassus)(_delassus.__code__, g, "_delassus"))
                _COMPILED["k"] = (jit(_rows), delassus, jit(_response))
        return _COMPILED["k"]


def free_bodies_of(dynamics, bodies):
    """The FreeBodies this path steps (``bodies`` or ``dynamics``, when it is the dynamics too), or None."""
    from .contact_bodies import FreeBodies

    b = dynamics if bodies is None else bodies
    return b if isinstance(b, FreeBodies) and b is dynamics else None


class WarmStart:
    """The impulses (k, 3) [N s] of a step's active contacts with their ``pair`` ids (k,) (ContactBatch.pair, in
    the step's order), for the next step: a contact takes the impulse of the same (pair, rank within the pair)."""

    def __init__(self, pair, impulse, shape_names: tuple[str, ...] = ()):
        self.pair = np.asarray(pair, dtype=np.int64).reshape(-1)
        self.impulse = np.asarray(impulse, dtype=float).reshape(-1, 3)
        self.shape_names = tuple(shape_names)

    @staticmethod
    def from_names(batch, warm: dict) -> WarmStart:
        """From the general path's {pair name: impulses (k, 3)} mapping (the pairs of ``batch`` only)."""
        n = len(batch.shape_names)
        pair, impulse = [], []
        for code in np.unique(batch.pair).tolist():
            for p in warm.get(f"{batch.shape_names[code // n]}|{batch.shape_names[code % n]}", ()):
                pair.append(code)
                impulse.append(p)
        return WarmStart(pair, np.array(impulse, dtype=float).reshape(-1, 3), batch.shape_names)

    def names(self) -> dict:
        """The general path's {pair name: [impulse (3,), ...]} mapping."""
        n, out = len(self.shape_names), {}
        for code, p in zip(self.pair.tolist(), self.impulse):
            out.setdefault(f"{self.shape_names[code // n]}|{self.shape_names[code % n]}", []).append(p)
        return out


def _ranks(pair):
    """Per contact its rank among the consecutive contacts of its pair."""
    if pair.size == 0:
        return pair.copy()
    start = np.r_[0, np.flatnonzero(np.diff(pair)) + 1]
    return np.arange(pair.size) - np.repeat(start, np.diff(np.r_[start, pair.size]))


def _warm_impulses(warm: WarmStart, pair):
    start = np.zeros((pair.size, 3))
    if warm is None or warm.pair.size == 0 or pair.size == 0:
        return start
    big = 1 << 20
    prev = warm.pair * big + _ranks(warm.pair)
    cur = pair * big + _ranks(pair)
    order = np.argsort(prev, kind="stable")
    at = np.searchsorted(prev[order], cur)
    hit = (at < prev.size)
    hit[hit] = prev[order][at[hit]] == cur[hit]
    start[hit] = warm.impulse[order[at[hit]]]
    return start


def batch_step(bodies, batch, t, q, u, h, options, warm: WarmStart | None):
    """One step of :func:`kane.switching.contact_stepping.contact_step` for FreeBodies ``bodies`` and a
    ContactBatch ``batch`` of q (module docstring). Returns (q+, u+, active batch, impulse (m, 3), velocity
    (m, 3), mode (m,), iterations, converged)."""
    rows, delassus, response = _kernels()
    lookup = np.array([bodies.index.get(name, -2) for name in batch.body_names] + [-1], dtype=np.int64)
    ia, ib = lookup[batch.body_a], lookup[batch.body_b]
    if np.any(ia == -2) or np.any(ib == -2):
        bad = sorted({batch.body_names[k] for k in np.r_[batch.body_a[ia == -2], batch.body_b[ib == -2]]})
        raise ArgumentError(f"contact batch: bodies {', '.join(map(repr, bad))} are not among the free bodies "
                            f"({', '.join(bodies.names)})")
    f = bodies.forcing(t, q, u).reshape(-1, 6)
    u_free = u + h * np.concatenate([np.einsum("bij,bj->bi", bodies.inertias_inv, f[:, 0:3]),
                                     f[:, 3:6] * bodies.masses_inv[:, None]], axis=1).reshape(-1)
    m_all = len(batch)
    qb = np.ascontiguousarray(q.reshape(-1, 7))
    basis, JA, JB = np.empty((m_all, 3, 3)), np.empty((m_all, 3, 6)), np.empty((m_all, 3, 6))
    v_free, v_start = np.empty((m_all, 3)), np.empty((m_all, 3))
    if m_all:
        rows(qb, u, u_free, ia, ib, np.ascontiguousarray(batch.point_a), np.ascontiguousarray(batch.point_b),
             np.ascontiguousarray(batch.normal), basis, JA, JB, v_free, v_start)
    active = np.flatnonzero(batch.distance + h * v_free[:, 0] <= 0.0)
    m = active.size
    if m == 0:
        q_next = bodies.normalize(q + h * bodies.qdot(t, q, u_free))
        return q_next, u_free, batch.take(active), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int8), 0, True
    ia, ib, JA, JB, v_start = ia[active], ib[active], JA[active], JB[active], v_start[active]
    gap, e = batch.distance[active], batch.restitution[active]
    mu_s, mu_k = batch.mu_static[active], batch.mu_kinetic[active]
    target = np.where(e > 0, -e * np.minimum(v_start[:, 0], 0.0), -np.maximum(gap, 0.0) / h)
    mu = np.where(np.hypot(v_start[:, 1], v_start[:, 2]) <= options.slip_tolerance, mu_s, mu_k)
    W, ptr, nbr = np.empty((3 * m, 3 * m)), np.empty(m + 1, np.int64), np.empty(m * m, np.int64)
    count = delassus(ia, ib, JA, JB, bodies.inertias_inv, bodies.masses_inv, W, ptr, nbr)
    nbr = nbr[:count]
    b = v_free[active].copy()
    b[:, 0] -= target
    b = b.reshape(-1)
    if np.any(mu < 0) or not np.all(np.diag(W)[0::3] > 0):
        raise ArgumentError("contact batch: expected mu >= 0 and a positive normal entry W_nn for every contact")
    start = _warm_impulses(warm, batch.pair[active]) if warm is not None else None
    pgs = _pgs_kernel()
    u_next, velocity = np.empty_like(u_free), np.empty((m, 3))
    solver = options.solver
    for _ in range(3):  # a contact that starts to slip in this step slips with kinetic friction
        p = np.zeros(3 * m)
        if start is not None:
            pn = np.maximum(start[:, 0], 0.0)
            norm = np.hypot(start[:, 1], start[:, 2])
            scale = np.where(norm > mu * pn, mu * pn / np.where(norm > 0, norm, 1.0), 1.0)
            p = np.column_stack([pn, start[:, 1:] * scale[:, None]]).reshape(-1)
        _, iterations, residual = pgs(W, b, mu, p, ptr, nbr, int(solver.max_iterations), float(solver.tolerance))
        response(p, ia, ib, JA, JB, bodies.inertias_inv, bodies.masses_inv, u_free, u_next, velocity)
        slip = np.hypot(velocity[:, 1], velocity[:, 2])
        demote = (slip > options.slip_tolerance) & (mu != mu_k)
        if not demote.any():
            break
        mu, start = np.where(demote, mu_k, mu), p.reshape(m, 3).copy()
    impulse = p.reshape(m, 3)
    mode = np.where(impulse[:, 0] <= 0.0, 0, np.where(slip <= options.slip_tolerance, 1, 2)).astype(np.int8)
    q_next = bodies.normalize(q + h * bodies.qdot(t, q, u_next))
    return (q_next, u_next, batch.take(active), impulse, velocity, mode, int(iterations),
            bool(residual <= solver.tolerance))
