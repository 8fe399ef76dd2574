"""The compiled path of the contact time stepping for free rigid bodies: a step from a :class:`ContactBatch`.

:func:`kane.switching.contact_stepping.contact_step` takes this path when ``contacts(q)`` returns a
:class:`kane.mechanics.collision_batch.ContactBatch` and the dynamics is a
:class:`kane.switching.contact_bodies.FreeBodies` (block-diagonal M = diag(I_i, m_i 1)). It is the same step (the
contact_stepping module docstring: u_free, the gap test, the targets, static/kinetic friction, the demotion of
contacts that start to slip, the same PGS sweeps of :mod:`.cone_solver`, the same free velocity and position
update of :mod:`.contact_bodies`), the whole step one compiled call (:func:`_step`, numba):

0. u_free (:func:`kane.switching.contact_bodies.free_velocities`: gravity, the gyroscopic term kinetic-energy
   preserving);
1. per contact the rows J_i (3, 6) of each side's body, basis (n, t1, t2) @ [-[p - c]x R, 1] (analytic), and the
   free and start velocities J u_free, J u (:func:`_rows`);
2. W = J M^-1 J^T of the active contacts in 3x3 blocks, only between contacts that share a body, and the block
   neighbour lists of the sweeps (:func:`_delassus`);
3. the sweeps (:func:`kane.switching.cone_solver` kernel), then u+ = u_free + M^-1 J^T p and v+ = J u+
   (:func:`_response`); the demotion of contacts that start to slip; q+
   (:func:`kane.switching.contact_bodies.advance_positions`).

No scipy.sparse and no Python object per contact; warm starts match contacts by (pair id, rank in the pair) in
arrays. Results equal the general path's to round-off (tests/switching/test_contact_fast.py).
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ArgumentError
from ..jit import HAVE_NUMBA, kernel, with_globals
from ..mechanics.collision_prims import quaternion_rotations
from .cone_solver import _parts as _cone_parts
from .contact_bodies import FreeBodies, advance_positions, free_velocities
from .contact_bodies import _compiled as _body_kernels

__all__ = ["WarmStart", "batch_step", "free_bodies_of", "step_arrays"]


def _rows(qb, u, u_free, body_a, body_b, point_a, point_b, normal, basis, JA, JB, v_free, v_start):
    """Per contact k: basis[k] (3, 3) rows (n, t1, t2); JA[k], JB[k] (3, 6) the rows on body a's speeds (minus
    the point Jacobian) and body b's; v_free[k], v_start[k] (3,) = J_k u_free, J_k u."""
    R_all = np.empty((qb.shape[0], 3, 3))  # each body's rotation, once
    quaternion_rotations(qb, 3, R_all)
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
            R = R_all[body]
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


def _block(Ti, Ji, Jj, minv, out):
    """out (3, 3) += Ji (3, 6) diag(Iinv, minv 1) Jj^T, with Ti (3, 3) = Ji[:, :3] Iinv given (:func:`_delassus`)."""
    for r in range(3):
        t0, t1, t2 = Ti[r, 0], Ti[r, 1], Ti[r, 2]
        for c in range(3):
            out[r, c] += (t0 * Jj[c, 0] + t1 * Jj[c, 1] + t2 * Jj[c, 2] + minv * (
                Ji[r, 3] * Jj[c, 3] + Ji[r, 4] * Jj[c, 4] + Ji[r, 5] * Jj[c, 5]))


def _delassus(body_a, body_b, JA, JB, Iinv_all, minv, n_bodies):
    """The nonzero 3x3 blocks of W = J M^-1 J^T (contacts that share a body) straight into the sweeps' arrays
    (:func:`kane.switching.cone_solver._blocks` of W without W): per body its contacts, per contact i its
    neighbours j (ascending, i included) ``nbr[ptr[i]:ptr[i+1]]``, ``blocks[jj]`` = W_ji, ``diag[i]`` = W_ii; each
    block of a pair computed once (i <= j, summed over the shared bodies), the other one its transpose. Returns
    (ptr (m+1,), nbr (nnz,), blocks (nnz, 3, 3), diag (m, 3, 3))."""
    m = body_a.shape[0]
    count = np.zeros(n_bodies + 1, np.int64)  # per body its contacts, ascending (CSR: first, members)
    for k in range(m):
        for body in (body_a[k], body_b[k]):
            if body >= 0:
                count[body + 1] += 1
    for n in range(n_bodies):
        count[n + 1] += count[n]
    members, fill = np.empty(count[n_bodies], np.int64), count[:n_bodies].copy()
    for k in range(m):
        for body in (body_a[k], body_b[k]):
            if body >= 0:
                members[fill[body]] = k
                fill[body] += 1
    ptr, size = np.zeros(m + 1, np.int64), m  # at most both bodies' lists per contact
    for k in range(m):
        for body in (body_a[k], body_b[k]):
            if body >= 0:
                size += count[body + 1] - count[body]
    nbr = np.empty(size, np.int64)
    for i in range(m):  # the union of the two bodies' sorted contact lists
        a, b = body_a[i], body_b[i]
        pa, ea = (count[a], count[a + 1]) if a >= 0 else (0, 0)
        pb, eb = (count[b], count[b + 1]) if b >= 0 else (0, 0)
        n = ptr[i]
        if ea == pa and eb == pb:
            nbr[n] = i
            n += 1
        while pa < ea or pb < eb:
            ja = members[pa] if pa < ea else m
            jb = members[pb] if pb < eb else m
            j = min(ja, jb)
            if ja == j:
                pa += 1
            if jb == j:
                pb += 1
            nbr[n] = j
            n += 1
        ptr[i + 1] = n
    blocks, diag = np.empty((ptr[m], 3, 3)), np.empty((m, 3, 3))
    cursor, X = ptr[:m].copy(), np.empty((3, 3))
    T = np.zeros((m, 2, 3, 3))  # per contact and side J[:, :3] Iinv of its body, once
    for i in range(m):
        for side in range(2):
            body = body_a[i] if side == 0 else body_b[i]
            if body < 0:
                continue
            Ji, Iinv = JA[i] if side == 0 else JB[i], Iinv_all[body]
            for r in range(3):
                for c in range(3):
                    T[i, side, r, c] = Ji[r, 0] * Iinv[0, c] + Ji[r, 1] * Iinv[1, c] + Ji[r, 2] * Iinv[2, c]
    for i in range(m):
        for jj in range(ptr[i], ptr[i + 1]):
            j = nbr[jj]
            if j < i:
                continue  # W_ji = X of the pair (j, i), written when column j was built
            for r in range(3):
                for c in range(3):
                    X[r, c] = 0.0
            for si in range(2):
                bi = body_a[i] if si == 0 else body_b[i]
                if bi < 0:
                    continue
                for sj in range(2):
                    if (body_a[j] if sj == 0 else body_b[j]) == bi:
                        _block(T[i, si], JA[i] if si == 0 else JB[i], JA[j] if sj == 0 else JB[j], minv[bi], X)
            for r in range(3):  # element by element: numba's array-to-array assignment checks overlaps and copies
                for c in range(3):
                    if j == i:
                        diag[i, r, c] = X[r, c]
                        blocks[jj, r, c] = X[r, c]
                    else:
                        blocks[jj, r, c] = X[c, r]
                        blocks[cursor[j], r, c] = X[r, c]
            if j != i:
                cursor[j] += 1
    count_nbr = 0  # a pair whose block is exactly zero is no neighbour (cone_solver.block_neighbours)
    for i in range(m):
        start = ptr[i]
        ptr[i] = count_nbr
        for jj in range(start, ptr[i + 1]):
            keep = nbr[jj] == i
            for r in range(3):
                for c in range(3):
                    keep = keep or blocks[jj, r, c] != 0.0
            if keep:
                nbr[count_nbr] = nbr[jj]
                for r in range(3):
                    for c in range(3):
                        blocks[count_nbr, r, c] = blocks[jj, r, c]
                count_nbr += 1
    ptr[m] = count_nbr
    return ptr, nbr[:count_nbr], blocks[:count_nbr], diag


def _response(p, body_a, body_b, JA, JB, Iinv, minv, u_free, u_next, velocity):
    """u_next = u_free + M^-1 J^T p; velocity (m, 3) = J u_next."""
    for c in range(u_free.shape[0]):
        u_next[c] = u_free[c]
    m = body_a.shape[0]
    f = np.empty(6)  # J_k^T p_k on the body's speeds, one buffer for every contact
    for k in range(m):
        for side in range(2):
            body = body_a[k] if side == 0 else body_b[k]
            if body < 0:
                continue
            Jk = JA[k] if side == 0 else JB[k]
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


def _step(qb, u, g, h, inertias, inertias_inv, masses_inv, lookup, body_a, body_b, point_a, point_b, normal,
          distance, restitution, mu_static, mu_kinetic, pair, warm_pair, warm_impulse, slip_tol, max_it, tol, relax,
          q_next, u_next, active, impulse, velocity, mode):
    """The whole step (module docstring) in one call: q_next (N, 7), u_next (6N,), and for the m active contacts
    (the first m rows) their indices into the batch ``active``, ``impulse``, ``velocity`` (m, 3) and ``mode``.
    Returns (m, sweeps, residual); m = -1 when a contact's body is not a free body (``lookup`` maps the batch's
    bodies to FreeBodies indices, -2 for none), -2 when mu < 0 or some W_nn <= 0."""
    m_all = distance.shape[0]
    ia_all, ib_all = np.empty(m_all, np.int64), np.empty(m_all, np.int64)
    for k in range(m_all):
        ia_all[k] = -1 if body_a[k] < 0 else lookup[body_a[k]]
        ib_all[k] = -1 if body_b[k] < 0 else lookup[body_b[k]]
        if ia_all[k] == -2 or ib_all[k] == -2:
            return -1, 0, 0.0
    u_free = np.empty(u.shape[0])
    free_velocities(inertias, u, g, h, u_free)
    basis, JA, JB = np.empty((m_all, 3, 3)), np.empty((m_all, 3, 6)), np.empty((m_all, 3, 6))
    v_free, v_start = np.empty((m_all, 3)), np.empty((m_all, 3))
    _rows(qb, u, u_free, ia_all, ib_all, point_a, point_b, normal, basis, JA, JB, v_free, v_start)
    m = 0
    for k in range(m_all):
        if distance[k] + h * v_free[k, 0] <= 0.0:
            active[m] = k
            m += 1
    if m == 0:
        for c in range(u_free.shape[0]):
            u_next[c] = u_free[c]
        advance_positions(qb, u_free, h, q_next)
        return 0, 0, 0.0
    act = active[:m]
    ia, ib = np.empty(m, np.int64), np.empty(m, np.int64)  # the active contacts' rows (loops: quick to compile)
    JA_all, JB_all = JA, JB
    JA, JB = np.empty((m, 3, 6)), np.empty((m, 3, 6))
    for i in range(m):
        ia[i], ib[i] = ia_all[act[i]], ib_all[act[i]]
        for r in range(3):
            for c in range(6):
                JA[i, r, c], JB[i, r, c] = JA_all[act[i], r, c], JB_all[act[i], r, c]
    mu, mu_k, b = np.empty(m), np.empty(m), np.empty(3 * m)
    for i in range(m):
        k = act[i]
        vn = v_start[k, 0]
        target = -restitution[k] * min(vn, 0.0) if restitution[k] > 0 else -max(distance[k], 0.0) / h
        slip = np.sqrt(v_start[k, 1] * v_start[k, 1] + v_start[k, 2] * v_start[k, 2])
        mu[i] = mu_static[k] if slip <= slip_tol else mu_kinetic[k]
        mu_k[i] = mu_kinetic[k]
        b[3 * i], b[3 * i + 1], b[3 * i + 2] = v_free[k, 0] - target, v_free[k, 1], v_free[k, 2]
    ptr, nbr, blocks, diag = _delassus(ia, ib, JA, JB, inertias_inv, masses_inv, qb.shape[0])
    for i in range(m):
        if mu[i] < 0 or not diag[i, 0, 0] > 0:
            return -2, 0, 0.0
    start = np.zeros((m, 3))  # the previous step's impulse of the same (pair, rank within the pair)
    rank_prev, rank = np.zeros(warm_pair.shape[0], np.int64), np.zeros(m, np.int64)
    for j in range(1, warm_pair.shape[0]):
        rank_prev[j] = rank_prev[j - 1] + 1 if warm_pair[j] == warm_pair[j - 1] else 0
    ordered = True  # both in pair order (a batch's order): one merge, else a scan per contact
    for j in range(1, warm_pair.shape[0]):
        ordered = ordered and warm_pair[j] >= warm_pair[j - 1]
    for i in range(1, m):
        ordered = ordered and pair[act[i]] >= pair[act[i - 1]]
    j0 = 0
    for i in range(m):
        if i > 0 and pair[act[i]] == pair[act[i - 1]]:
            rank[i] = rank[i - 1] + 1
        key = pair[act[i]]
        if ordered:
            while j0 < warm_pair.shape[0] and (warm_pair[j0] < key or (warm_pair[j0] == key
                                                                     and rank_prev[j0] < rank[i])):
                j0 += 1
        for j in range(j0, warm_pair.shape[0]):
            if warm_pair[j] == key and rank_prev[j] == rank[i]:
                start[i, 0], start[i, 1], start[i, 2] = warm_impulse[j, 0], warm_impulse[j, 1], warm_impulse[j, 2]
                break
            if ordered:
                break
    p = np.empty(3 * m)
    sweeps, residual = 0, 0.0
    for _ in range(3):  # a contact that starts to slip in this step slips with kinetic friction
        for i in range(m):  # the start projected onto the cones
            pn = max(start[i, 0], 0.0)
            norm = np.sqrt(start[i, 1] * start[i, 1] + start[i, 2] * start[i, 2])
            scale = mu[i] * pn / norm if norm > mu[i] * pn else 1.0
            p[3 * i], p[3 * i + 1], p[3 * i + 2] = pn, start[i, 1] * scale, start[i, 2] * scale
        _, sweeps, residual = _sweeps(blocks, diag, b, mu, p, ptr, nbr, max_it, tol, relax)
        _response(p, ia, ib, JA, JB, inertias_inv, masses_inv, u_free, u_next, velocity)
        demoted = False
        for i in range(m):
            if np.sqrt(velocity[i, 1] ** 2 + velocity[i, 2] ** 2) > slip_tol and mu[i] != mu_k[i]:
                mu[i] = mu_k[i]
                demoted = True
        if not demoted:
            break
        for i in range(m):
            start[i, 0], start[i, 1], start[i, 2] = p[3 * i], p[3 * i + 1], p[3 * i + 2]
    for i in range(m):
        impulse[i, 0], impulse[i, 1], impulse[i, 2] = p[3 * i], p[3 * i + 1], p[3 * i + 2]
        slip = np.sqrt(velocity[i, 1] ** 2 + velocity[i, 2] ** 2)
        mode[i] = 0 if p[3 * i] <= 0.0 else (1 if slip <= slip_tol else 2)
    advance_positions(qb, u_next, h, q_next)
    return m, sweeps, residual


_COMPILED: dict = {}
_LOCK = threading.Lock()


def _kernels():
    """(rows, delassus, response) compiled by numba once per process (the Python functions without numba)."""
    return _all_kernels()[:3]


def _step_kernel():
    """:func:`_step` compiled by numba once per process (calling the compiled kernels), or the Python function."""
    return _all_kernels()[3]


def _all_kernels():
    """(rows, delassus, response, step), compiled once (:func:`kane.jit.kernel`: cached on disk), the step calling
    the compiled callees."""
    with _LOCK:
        if "k" not in _COMPILED:
            sweeps, _, _ = _cone_parts()
            velocities, positions, _ = _body_kernels()
            if not HAVE_NUMBA:
                _COMPILED["k"] = (_rows, _delassus, _response, with_globals(_step, _sweeps=sweeps))
            else:
                rows, delassus = kernel(_rows), kernel(with_globals(_delassus, _block=kernel(_block)))
                response = kernel(_response)
                step = kernel(with_globals(_step, _rows=rows, _delassus=delassus, _response=response, _sweeps=sweeps,
                                           free_velocities=velocities, advance_positions=positions))
                _COMPILED["k"] = (rows, delassus, response, step)
        return _COMPILED["k"]


def free_bodies_of(dynamics, bodies):
    """The FreeBodies this path steps (``bodies`` or ``dynamics``, when it is the dynamics too), or None."""
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


_NO_PAIR, _NO_IMPULSE = np.zeros(0, np.int64), np.zeros((0, 3))


def batch_step(bodies, batch, t, q, u, h, options, warm: WarmStart | None):
    """One step of :func:`kane.switching.contact_stepping.contact_step` for FreeBodies ``bodies`` and a
    ContactBatch ``batch`` of q (module docstring), one compiled call. Returns (q+, u+, active batch, impulse
    (m, 3), velocity (m, 3), mode (m,), iterations, converged)."""
    q_next, u_next, active, *rest = step_arrays(bodies, batch, t, q, u, h, options, warm)
    return (q_next, u_next, batch.take(active), *rest)


def step_arrays(bodies, batch, t, q, u, h, options, warm: WarmStart | None):
    """:func:`batch_step` with the active contacts as their indices (m,) into ``batch`` instead of a batch."""
    step = _step_kernel()
    lookup = np.array([bodies.index.get(name, -2) for name in batch.body_names], dtype=np.int64)
    m_all, solver = len(batch), options.solver
    q_next, u_next = np.empty((len(bodies.names), 7)), np.empty(bodies.n_u)
    active, mode = np.empty(m_all, np.int64), np.empty(m_all, np.int8)
    impulse, velocity = np.empty((m_all, 3)), np.empty((m_all, 3))
    warm_pair, warm_impulse = (warm.pair, warm.impulse) if warm is not None else (_NO_PAIR, _NO_IMPULSE)
    c = np.ascontiguousarray
    m, sweeps, residual = step(
        c(np.reshape(q, (-1, 7)), dtype=float), c(u, dtype=float), c(bodies.gravity(t), dtype=float), float(h),
        bodies.inertias, bodies.inertias_inv, bodies.masses_inv, lookup, c(batch.body_a, dtype=np.int64),
        c(batch.body_b, dtype=np.int64), c(batch.point_a, dtype=float), c(batch.point_b, dtype=float),
        c(batch.normal, dtype=float), c(batch.distance, dtype=float), c(batch.restitution, dtype=float),
        c(batch.mu_static, dtype=float), c(batch.mu_kinetic, dtype=float), c(batch.pair, dtype=np.int64),
        warm_pair, warm_impulse, float(options.slip_tolerance), int(solver.max_iterations), float(solver.tolerance),
        float(solver.relaxation), q_next, u_next, active, impulse, velocity, mode)
    if m == -1:
        bad = sorted({batch.body_names[k] for k in np.r_[batch.body_a, batch.body_b]
                      if k >= 0 and lookup[k] == -2})
        raise ArgumentError(f"contact batch: bodies {', '.join(map(repr, bad))} are not among the free bodies "
                            f"({', '.join(bodies.names)})")
    if m == -2:
        raise ArgumentError("contact batch: expected mu >= 0 and a positive normal entry W_nn for every contact")
    return (q_next.reshape(-1), u_next, active[:m], impulse[:m], velocity[:m], mode[:m], int(sweeps),
            bool(residual <= solver.tolerance))
