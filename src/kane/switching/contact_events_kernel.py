"""The numba kernel of the compiled event-driven contact path (:mod:`.contact_events_fast`): per feature the rows,
their analytic rate and gap (:func:`_kinematics`), the mode's u' and contact forces (:func:`_solve`, least-norm
multipliers by a one-sided Jacobi SVD, :func:`_least_norm`), the event functions (:func:`_events`), and one
segment between events (:func:`_segment`: DOPRI5 with error control and dense output as
:mod:`kane.simulate.dopri5`, Brent's method on the dense output for the event, the grid's samples).
The equations are those of :mod:`.contact_events_fast`'s docstring; without numba these are plain Python
functions (the scheme then runs the Python loop instead).
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import HAVE_NUMBA, kernel
from ..simulate.dopri5 import _C, _D, _E, _TABLEAU


__all__ = ["numba_available", "run_segment"]

_MOVING = 1e-7  # [m/s] as contact_events: a slip this fast has its own direction


def numba_available() -> bool:
    """True when numba is installed (the kernel compiled)."""
    return HAVE_NUMBA


def _jit(function):
    return kernel(function)



@_jit
def _kinematics(y, n_q, fb, rho, rad, nrm, off, side, basis, rows, rate, gap, vel):
    """Per feature: rows[f] (3, 6) on its body's speeds, rate[f] (3,) = A' u, gap[f], vel[f] (3,) = rows u."""
    for f in range(fb.shape[0]):
        b = fb[f]
        w, x, yq, z = y[7 * b + 3], y[7 * b + 4], y[7 * b + 5], y[7 * b + 6]
        s = math.sqrt(w * w + x * x + yq * yq + z * z)
        w, x, yq, z = w / s, x / s, yq / s, z / s
        R = np.empty((3, 3))
        R[0, 0], R[0, 1], R[0, 2] = 1 - 2 * (yq * yq + z * z), 2 * (x * yq - w * z), 2 * (x * z + w * yq)
        R[1, 0], R[1, 1], R[1, 2] = 2 * (x * yq + w * z), 1 - 2 * (x * x + z * z), 2 * (yq * z - w * x)
        R[2, 0], R[2, 1], R[2, 2] = 2 * (x * z - w * yq), 2 * (yq * z + w * x), 1 - 2 * (x * x + yq * yq)
        rw, d, ow, a = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
        u = y[n_q + 6 * b:n_q + 6 * b + 6]
        g = -off[f]
        for i in range(3):
            rw[i] = R[i, 0] * rho[f, 0] + R[i, 1] * rho[f, 1] + R[i, 2] * rho[f, 2]
            d[i] = rw[i] - rad[f] * nrm[f, i]
            ow[i] = R[i, 0] * u[0] + R[i, 1] * u[1] + R[i, 2] * u[2]
            g += nrm[f, i] * (y[7 * b + i] + d[i])
        gap[f] = g
        wr0, wr1, wr2 = ow[1] * rw[2] - ow[2] * rw[1], ow[2] * rw[0] - ow[0] * rw[2], ow[0] * rw[1] - ow[1] * rw[0]
        a[0], a[1], a[2] = ow[1] * wr2 - ow[2] * wr1, ow[2] * wr0 - ow[0] * wr2, ow[0] * wr1 - ow[1] * wr0
        for r in range(3):
            e0, e1, e2 = basis[f, r, 0], basis[f, r, 1], basis[f, r, 2]
            de0, de1, de2 = d[1] * e2 - d[2] * e1, d[2] * e0 - d[0] * e2, d[0] * e1 - d[1] * e0
            acc = 0.0
            for c in range(3):
                rows[f, r, c] = side[f] * (R[0, c] * de0 + R[1, c] * de1 + R[2, c] * de2)
                rows[f, r, 3 + c] = side[f] * basis[f, r, c]
            for c in range(6):
                acc += rows[f, r, c] * u[c]
            vel[f, r] = acc
            rate[f, r] = side[f] * (e0 * a[0] + e1 * a[1] + e2 * a[2])


@_jit
def _minv(Iinv, minv, x, out):
    """out = M^-1 x for x (n_u,) (block diagonal)."""
    for b in range(minv.shape[0]):
        for r in range(3):
            out[6 * b + r] = Iinv[b, r, 0] * x[6 * b] + Iinv[b, r, 1] * x[6 * b + 1] + Iinv[b, r, 2] * x[6 * b + 2]
            out[6 * b + 3 + r] = minv[b] * x[6 * b + 3 + r]


@_jit
def _solve(y, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, udot, N, FT, VT, gap):
    """u' (n_u,) of the mode; per feature N, FT (2,) (zero when open), VT (2,) the slip velocity, gap."""
    fb, rho, rad, nrm, off, side, basis = sc_i, sc_f[0], sc_f[1], sc_f[2], sc_f[3], sc_f[4], sc_f[5]
    nb = minv.shape[0]
    n_q, n_u, F = 7 * nb, 6 * nb, fb.shape[0]
    rows, rate, vel = np.empty((F, 3, 6)), np.empty((F, 3)), np.empty((F, 3))
    _kinematics(y, n_q, fb, rho.reshape(F, 3), rad, nrm.reshape(F, 3), off, side, basis.reshape(F, 3, 3), rows,
                rate, gap, vel)
    force = np.empty(n_u)
    for b in range(nb):
        o0, o1, o2 = y[n_q + 6 * b], y[n_q + 6 * b + 1], y[n_q + 6 * b + 2]
        h0 = I[b, 0, 0] * o0 + I[b, 0, 1] * o1 + I[b, 0, 2] * o2
        h1 = I[b, 1, 0] * o0 + I[b, 1, 1] * o1 + I[b, 1, 2] * o2
        h2 = I[b, 2, 0] * o0 + I[b, 2, 1] * o1 + I[b, 2, 2] * o2
        force[6 * b], force[6 * b + 1], force[6 * b + 2] = o2 * h1 - o1 * h2, o0 * h2 - o2 * h0, o1 * h0 - o0 * h1
        for i in range(3):
            force[6 * b + 3 + i] = grav[i] / minv[b]
    mf = np.empty(n_u)
    _minv(Iinv, minv, force, mf)
    r = 0
    col = np.empty(F, dtype=np.int64)
    for f in range(F):
        VT[f, 0], VT[f, 1] = vel[f, 1], vel[f, 2]
        N[f], FT[f, 0], FT[f, 1], col[f] = 0.0, 0.0, 0.0, -1
        if mode[f] != 0:
            col[f] = r
            r += 3 if mode[f] == 1 else 1
    if r == 0:
        for j in range(n_u):
            udot[j] = mf[j]
        return
    A, rr, B = np.zeros((r, n_u)), np.empty(r), np.zeros((n_u, r))
    dirs = np.zeros((F, 2))
    for f in range(F):
        if mode[f] == 0:
            continue
        b, c = fb[f], col[f]
        for k in range(3 if mode[f] == 1 else 1):
            rr[c + k] = rate[f, k]
            for j in range(6):
                A[c + k, 6 * b + j] = rows[f, k, j]
                B[6 * b + j, c + k] = rows[f, k, j]
        if mode[f] == 2:
            sp = math.hypot(vel[f, 1], vel[f, 2])
            if sp > _MOVING:
                dirs[f, 0], dirs[f, 1] = vel[f, 1] / sp, vel[f, 2] / sp
            else:
                dirs[f, 0], dirs[f, 1] = mdir[f, 0], mdir[f, 1]
            for j in range(6):
                B[6 * b + j, c] -= mu_k[f] * (rows[f, 1, j] * dirs[f, 0] + rows[f, 2, j] * dirs[f, 1])
    MB = np.empty((n_u, r))
    colv, out = np.empty(n_u), np.empty(n_u)
    for c in range(r):
        for j in range(n_u):
            colv[j] = B[j, c]
        _minv(Iinv, minv, colv, out)
        for j in range(n_u):
            MB[j, c] = out[j]
    W, rhs = np.zeros((r, r)), np.empty(r)
    for i in range(r):
        acc = -rr[i]
        for j in range(n_u):
            acc -= A[i, j] * mf[j]
        rhs[i] = acc
        for c in range(r):
            acc = 0.0
            for j in range(n_u):
                acc += A[i, j] * MB[j, c]
            W[i, c] = acc
    lam = _least_norm(W, rhs)
    for j in range(n_u):
        acc = mf[j]
        for c in range(r):
            acc += MB[j, c] * lam[c]
        udot[j] = acc
    for f in range(F):
        c = col[f]
        if c < 0:
            continue
        N[f] = lam[c]
        if mode[f] == 1:
            FT[f, 0], FT[f, 1] = lam[c + 1], lam[c + 2]
        else:
            FT[f, 0], FT[f, 1] = -dirs[f, 0] * mu_k[f] * lam[c], -dirs[f, 1] * mu_k[f] * lam[c]


@_jit
def _least_norm(W, b):
    """The least-norm least-squares solution of W x = b (r, r) by a one-sided Jacobi SVD (Hestenes), singular
    values below 1e-13 of the largest dropped (numpy's lstsq with rcond = 1e-13)."""
    r = b.shape[0]
    U, V = np.empty((r, r)), np.zeros((r, r))
    for i in range(r):
        V[i, i] = 1.0
        for k in range(r):
            U[i, k] = W[i, k]
    for _ in range(60):
        rotated = False
        for i in range(r - 1):
            for j in range(i + 1, r):
                a = bb = c = 0.0
                for k in range(r):
                    a += U[k, i] * U[k, i]
                    bb += U[k, j] * U[k, j]
                    c += U[k, i] * U[k, j]
                if c == 0.0 or abs(c) <= 1e-15 * math.sqrt(a * bb):
                    continue
                rotated = True
                zeta = (bb - a) / (2.0 * c)
                t = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                cs = 1.0 / math.sqrt(1.0 + t * t)
                sn = cs * t
                for k in range(r):
                    ui, uj = U[k, i], U[k, j]
                    U[k, i], U[k, j] = cs * ui - sn * uj, sn * ui + cs * uj
                    vi, vj = V[k, i], V[k, j]
                    V[k, i], V[k, j] = cs * vi - sn * vj, sn * vi + cs * vj
        if not rotated:
            break
    sigma = np.empty(r)
    for i in range(r):
        acc = 0.0
        for k in range(r):
            acc += U[k, i] * U[k, i]
        sigma[i] = math.sqrt(acc)
    cut = 0.0
    for i in range(r):
        cut = max(cut, 1e-13 * sigma[i])
    x = np.zeros(r)
    for i in range(r):
        if sigma[i] <= cut:
            continue
        acc = 0.0
        for k in range(r):
            acc += U[k, i] * b[k]
        acc /= sigma[i] * sigma[i]
        for k in range(r):
            x[k] += V[k, i] * acc
    return x


@_jit
def _rhs(y, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, out):
    """y' = (q', u') of the mode."""
    nb = minv.shape[0]
    n_q, F = 7 * nb, sc_i.shape[0]
    for b in range(nb):
        q, u = y[7 * b:7 * b + 7], y[n_q + 6 * b:n_q + 6 * b + 6]
        w, x, yq, z, ox, oy, oz = q[3], q[4], q[5], q[6], u[0], u[1], u[2]
        out[7 * b], out[7 * b + 1], out[7 * b + 2] = u[3], u[4], u[5]
        out[7 * b + 3] = 0.5 * (-x * ox - yq * oy - z * oz)
        out[7 * b + 4] = 0.5 * (w * ox + yq * oz - z * oy)
        out[7 * b + 5] = 0.5 * (w * oy + z * ox - x * oz)
        out[7 * b + 6] = 0.5 * (w * oz + x * oy - yq * ox)
    udot = np.empty(6 * nb)
    _solve(y, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, udot, np.empty(F), np.empty((F, 2)),
           np.empty((F, 2)), np.empty(F))
    for j in range(6 * nb):
        out[n_q + j] = udot[j]


@_jit
def _events(y, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff, g):
    """g (3F,): slot 3f gap of an open feature, 3f + 1 its normal force and 3f + 2 its cone margin (stick) or slip
    speed along its direction plus offset (slip) when closed; NaN where unused."""
    F = sc_i.shape[0]
    N, FT, VT, gap = np.empty(F), np.empty((F, 2)), np.empty((F, 2)), np.empty(F)
    _solve(y, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, np.empty(6 * minv.shape[0]), N, FT, VT, gap)
    for f in range(F):
        g[3 * f], g[3 * f + 1], g[3 * f + 2] = np.nan, np.nan, np.nan
        if mode[f] == 0:
            g[3 * f] = gap[f]
        else:
            g[3 * f + 1] = N[f]
            if mode[f] == 1:
                g[3 * f + 2] = mu_s[f] * N[f] - math.hypot(FT[f, 0], FT[f, 1])
            else:
                g[3 * f + 2] = VT[f, 0] * mdir[f, 0] + VT[f, 1] * mdir[f, 1] + moff[f]


_A = _TABLEAU  # Dormand-Prince 5(4): the one tableau, kane.simulate.dopri5's (c, a, error and dense weights)


@_jit
def _dense(t0, h, x0, R, t, out):
    """Hairer's continuous extension at t of the step from (t0, x0) of size h with R (4, n) = (r1, r2, r3, r4)."""
    s = (t - t0) / h
    s1 = 1.0 - s
    for i in range(x0.shape[0]):
        out[i] = x0[i] + s * (R[0, i] + s1 * (R[1, i] + s * (R[2, i] + s1 * R[3, i])))


@_jit
def _event_at(t, slot, t0, h, x0, R, buf, g, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff):
    _dense(t0, h, x0, R, t, buf)
    _events(buf, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff, g)
    return g[slot]


@_jit
def _brent(slot, xa, xb, t0, h, x0, R, buf, g, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff):
    """The root of the event ``slot`` on [xa, xb] by Brent's method (scipy's brentq, xtol = rtol = 4 eps)."""
    xtol = rtol = 4 * 2.220446049250313e-16
    xpre, xcur, xblk, fblk, spre, scur = xa, xb, 0.0, 0.0, 0.0, 0.0
    fpre = _event_at(xpre, slot, t0, h, x0, R, buf, g, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode,
                     mdir, moff)
    fcur = _event_at(xcur, slot, t0, h, x0, R, buf, g, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode,
                     mdir, moff)
    if fpre == 0.0:
        return xpre
    if fcur == 0.0:
        return xcur
    for _ in range(200):
        if fpre != 0.0 and fcur != 0.0 and (fpre < 0.0) != (fcur < 0.0):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):
                spre, scur = scur, stry
            else:
                spre, scur = sbis, sbis
        else:
            spre, scur = sbis, sbis
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = _event_at(xcur, slot, t0, h, x0, R, buf, g, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode,
                     mdir, moff)
    return xcur


@_jit
def _rms(a, b, h, scale):
    """RMS of (a - b) / h / scale, scaled by its largest entry (dopri5._rms)."""
    n, big = a.shape[0], 0.0
    for i in range(n):
        big = max(big, abs((a[i] - b[i]) / h / scale[i]))
    if not (big > 0.0 and math.isfinite(big)):
        return big
    acc = 0.0
    for i in range(n):
        w = (a[i] - b[i]) / h / scale[i] / big
        acc += w * w
    return big * math.sqrt(acc / n)


@_jit
def _segment(t, y0, grid, k0, rtol, atol, max_step, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir,
             moff, Y, NS, FS, VS, result):
    """Integrate the mode from (t, y0) until an event or grid[-1] (module docstring), sampling grid[k0:] into Y
    (n+1, n_y) and the features' N, f_t, slip velocity into NS, FS, VS; result (n_y + 5,) = (status (0 end, 1
    event, -1 failed), t_stop, event slot, next sample index, right-hand sides, y_stop)."""
    n, F = y0.shape[0], sc_i.shape[0]
    t_end = grid[grid.shape[0] - 1]
    K, R = np.empty((7, n)), np.empty((4, n))
    x, x_new, stage, buf, scale, zero = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.zeros(n)
    for i in range(n):
        x[i] = y0[i]
        scale[i] = atol + rtol * abs(x[i])  # Hairer's starting step
    k, G1, scratch = k0, np.empty(F), np.empty(6 * minv.shape[0])
    if not t_end > t:  # an event at the end: the last samples are the state after it
        while k < grid.shape[0]:
            for c in range(n):
                Y[k, c] = x[c]
            _solve(Y[k], sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, scratch, NS[k], FS[k], VS[k], G1)
            k += 1
        result[0], result[1], result[2], result[3], result[4] = 0.0, t, -1, k, 0
        for c in range(n):
            result[5 + c] = x[c]
        return
    _rhs(x, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, K[0])
    nfev = 1
    d0, d1 = _rms(x, zero, 1.0, scale), _rms(K[0], zero, 1.0, scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, max_step, t_end - t)
    for i in range(n):
        stage[i] = x[i] + h0 * K[0, i]
    _rhs(stage, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, K[1])
    nfev += 1
    dm = max(d1, _rms(K[1], K[0], h0, scale))
    h = min(100 * h0, max(1e-6, h0 * 1e-3) if not dm > 1e-15 else (0.01 / dm) ** 0.2)
    g_old, g_new = np.empty(3 * F), np.empty(3 * F)
    _events(x, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff, g_old)
    err_old, rejected = 1e-4, False
    while True:
        h_floor = 16 * 2.220446049250313e-16 * max(abs(t), 1.0)
        while True:
            hs = min(h, max_step)
            room = t_end - t
            clipped = hs >= 0.99 * room
            if clipped:
                hs = room
            if hs < h_floor and not clipped:
                result[0], result[1], result[4] = -1.0, t, nfev
                return
            for i in range(1, 7):  # stage 6 is the new state (FSAL)
                for c in range(n):
                    acc = x[c]
                    for j in range(i):
                        acc += hs * _A[i, j] * K[j, c]
                    stage[c] = acc
                _rhs(stage, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, K[i])
            t_new = t_end if clipped else t + hs
            nfev += 6
            err = 0.0
            for c in range(n):
                x_new[c] = stage[c]
                e = 0.0
                for j in range(7):
                    e += hs * _E[j] * K[j, c]
                e /= atol + rtol * max(abs(x_new[c]), abs(x[c]))
                err += e * e
            err = math.sqrt(err / n)
            if err <= 1.0:
                break
            rejected = True
            h = hs * (max(0.2, 0.9 * err ** -0.2) if math.isfinite(err) else 0.1)
        fac = min(10.0, max(0.2, 0.9 * max(err, 1e-10) ** (-0.2 + 0.75 * 0.04) * err_old ** 0.04))
        if rejected:
            fac = min(fac, 1.0)
        err_old, rejected, h = max(err, 1e-4), False, hs * fac
        for c in range(n):
            R[0, c] = x_new[c] - x[c]
            R[1, c] = hs * K[0, c] - R[0, c]
            R[2, c] = R[0, c] - hs * K[6, c] - R[1, c]
            acc = 0.0
            for j in range(7):
                acc += hs * _D[j] * K[j, c]
            R[3, c] = acc
        _events(x_new, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff, g_new)
        slot, t_ev, rank = -1, t_new, 1 << 60
        for s in range(3 * F):
            if not (g_old[s] >= 0.0 and g_new[s] <= 0.0):  # falling through 0 (NaN: unused)
                continue
            root = _brent(s, t, t_new, t, hs, x, R, buf, np.empty(3 * F), sc_i, sc_f, I, Iinv, minv, grav, mu_s,
                          mu_k, mode, mdir, moff)
            rk = s // 3 if s % 3 == 0 else F + 2 * (s // 3) + s % 3 - 1  # the Python loop's order of events
            if slot < 0 or root < t_ev or (root == t_ev and rk < rank):
                slot, t_ev, rank = s, root, rk
        last = grid.shape[0]
        while k < last and (grid[k] < t_ev or (slot < 0 and grid[k] <= t_new)):
            _dense(t, hs, x, R, grid[k], Y[k])
            _solve(Y[k], sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, scratch,
                   NS[k], FS[k], VS[k], G1)
            k += 1
        if slot >= 0:
            _dense(t, hs, x, R, t_ev, buf)
            result[0], result[1], result[2], result[3], result[4] = 1.0, t_ev, slot, k, nfev
            for c in range(n):
                result[5 + c] = buf[c]
            return
        t = t_new
        for c in range(n):
            x[c] = x_new[c]
            K[0, c] = K[6, c]
        for c in range(3 * F):
            g_old[c] = g_new[c]
        if clipped:
            result[0], result[1], result[2], result[3], result[4] = 0.0, t, -1, k, nfev
            for c in range(n):
                result[5 + c] = x[c]
            return


def run_segment(*args) -> None:
    """:func:`_segment` (its arguments and outputs)."""
    _segment(*args)
