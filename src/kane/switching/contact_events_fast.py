"""The compiled segment integrator of the event-driven contact scheme, for free bodies on ground half-spaces.

:func:`kane.switching.contact_events.simulate_events` takes this path when the scene qualifies (:func:`engine_of`):
the dynamics is a plain :class:`.contact_bodies.FreeBodies` with constant gravity and ``contacts`` a
:class:`PlaneContacts` (box corners and spheres of those bodies against half-spaces of the ground). Between events
one numba call (:func:`_segment`) integrates the mode's equations by Dormand-Prince 5(4) with error control and its
4th-order dense output (the scheme of :mod:`kane.simulate.dopri5`: Hairer's DOPRI5, RMS error norm, PI control),
evaluates the event functions after every accepted step, locates a falling one by Brent's method on the dense
output (as scipy's solve_ivp does: xtol = rtol = 4 eps), and fills the output grid's samples. It returns to Python
only at an event (or the end) with the state, the event's slot and the right-hand sides it evaluated; Python keeps
the mode choice, the impacts and the projection (once per event).

Per feature f (a body-fixed point rho_f, or a sphere's centre, radius r_f >= 0, on body b against the plane
n . x = d of the ground, n the unit outward normal in world axes), with R the body's rotation, omega its body
angular velocity and omega_w = R omega:

* witness point x = c + R rho - r n, gap n . x - d;
* rows (n_ab, t1, t2) of the relative velocity v_b - v_a (:class:`kane.model.contact.ContactPoint`'s convention;
  ``side`` +1 when the point is shape b, -1 when it is shape a), on the body's speeds [R^T ((x - c) x e), e];
* their rate along the motion at constant u, analytic: e . (omega_w x (omega_w x R rho)) (the sphere's -r n term
  has zero rate since d(R omega)/dt = R (omega x omega) = 0 at constant u, and the ground's plane is fixed);
* the mode's bordered system M u' = f + A^T lambda - G N, A u' = -A' u (G the slip columns mu_k J_t^T s/|s|) by
  its Schur complement (A M^-1 (A^T - G)) lambda = -A' u - A M^-1 f in least squares (least-norm multipliers of
  redundant rows, as the Python loop's bordered least squares), M^-1 block-diagonal;
* the event functions of :func:`.contact_events._event_functions`: an open feature's gap, a closed one's normal
  force N, a sticking one's cone margin mu_s N - |f_t|, a slipping one's slip speed along its direction (+ the
  offset of a slip begun at rest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, NotSupportedError
from ..model.contact import ContactMaterial, ContactPoint
from ..model.model import GROUND

try:
    import numba
except ImportError:  # the Python loop runs every scene
    numba = None

__all__ = ["PlaneContacts", "Segment", "compiled_scene", "engine_of", "record_samples", "segment"]

_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
_MOVING = 1e-7  # [m/s] as contact_events: a slip this fast has its own direction


def _jit(function):
    return numba.njit(cache=True, nogil=True)(function) if numba is not None else function


class PlaneContacts:
    """``contacts(q)`` of features of :class:`.contact_bodies.FreeBodies` ``bodies`` against half-spaces of the
    ground: every feature listed at every q, in a fixed order (so a pair's ranks never shift), as
    :class:`~kane.model.contact.ContactPoint` records. A feature is a point ``rho`` (3,) [m] fixed in body
    ``body`` (a box corner; a sphere's centre with ``radius`` > 0), against the plane ``normal . x = offset``
    (world, normal outward), in pair ``(shape_a, shape_b)`` with ``material``; ``point_is_b`` says which side the
    body is (the normal runs a -> b). Build it with :meth:`of_shapes`, or from a model (:func:`model_plane_scene`)."""

    def __init__(self, bodies, features):
        self.bodies = bodies
        rows = list(features)
        if not rows:
            raise ModelError("PlaneContacts: expected at least one feature")
        self.body_names = tuple(r["body"] for r in rows)
        self.body = np.array([bodies.index[r["body"]] for r in rows], dtype=np.int64)
        self.rho = np.array([r["rho"] for r in rows], dtype=float).reshape(-1, 3)
        self.radius = np.array([r.get("radius", 0.0) for r in rows], dtype=float)
        normal = np.array([r["normal"] for r in rows], dtype=float).reshape(-1, 3)
        self.normal = normal / np.linalg.norm(normal, axis=1, keepdims=True)
        self.offset = np.array([r["offset"] for r in rows], dtype=float)
        self.side = np.array([1.0 if r.get("point_is_b", True) else -1.0 for r in rows])
        self.shapes = tuple((r["shape_a"], r["shape_b"]) for r in rows)
        self.materials = tuple(r["material"] for r in rows)
        self.mu_static = np.array([m.mu_static for m in self.materials])
        self.mu_kinetic = np.array([m.mu_kinetic for m in self.materials])
        self.basis = np.empty((len(rows), 3, 3))  # (n_ab, t1, t2) as ContactPoint.tangents_world
        for k in range(len(rows)):
            n = self.side[k] * self.normal[k]
            probe = ContactPoint(GROUND, GROUND, "", "", np.zeros(3), np.zeros(3), n, 0.0, self.materials[k])
            self.basis[k] = np.vstack([n, *probe.tangents_world()])
        for arr in (self.body, self.rho, self.radius, self.normal, self.offset, self.side, self.basis):
            arr.setflags(write=False)

    @classmethod
    def of_shapes(cls, bodies, boxes=(), spheres=(), normal=(0.0, 0.0, 1.0), offset: float = 0.0,
                  material: ContactMaterial = ContactMaterial(), plane: str = "plane") -> PlaneContacts:
        """Boxes {body: half extents (3,)} (8 corners each) and spheres {body: radius} centred on their bodies'
        centres of mass, against the ground plane ``plane`` (normal . x = offset), pairs named
        ``"<plane>|<body>"``."""
        feats = []
        for name, half in dict(boxes).items():
            feats += [{"body": name, "rho": corner, "normal": normal, "offset": offset, "shape_a": plane,
                       "shape_b": name, "material": material} for corner in _CORNERS * np.asarray(half, float)]
        for name, r in dict(spheres).items():
            if not float(r) > 0:
                raise ModelError(f"PlaneContacts: sphere {name!r}: key 'radius': expected > 0 [m], got {r!r}")
            feats.append({"body": name, "rho": np.zeros(3), "radius": float(r), "normal": normal, "offset": offset,
                          "shape_a": plane, "shape_b": name, "material": material})
        return cls(bodies, feats)

    def __call__(self, q) -> list[ContactPoint]:
        out = []
        for k in range(self.body.size):
            c, R = self.bodies.pose(q, self.body_names[k])
            n = self.normal[k]
            x = c + R @ self.rho[k] - self.radius[k] * n
            gap = float(n @ x - self.offset[k])
            y = x - gap * n
            a, b = (y, x) if self.side[k] > 0 else (x, y)
            body_a, body_b = (GROUND, self.body_names[k]) if self.side[k] > 0 else (self.body_names[k], GROUND)
            out.append(ContactPoint(body_a, body_b, *self.shapes[k], a, b, self.side[k] * n, gap,
                                    self.materials[k]))
        return out


# ---- the compiled kernel ----------------------------------------------------------------------------------------

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
        rw = R @ rho[f]
        d = rw - rad[f] * nrm[f]
        gap[f] = nrm[f, 0] * (y[7 * b] + d[0]) + nrm[f, 1] * (y[7 * b + 1] + d[1]) + nrm[f, 2] * (
            y[7 * b + 2] + d[2]) - off[f]
        u = y[n_q + 6 * b:n_q + 6 * b + 6]
        ow = R @ u[0:3]
        a = np.cross(ow, np.cross(ow, rw))
        for r in range(3):
            e = basis[f, r]
            de = np.cross(d, e)
            acc = 0.0
            for c in range(3):
                rows[f, r, c] = side[f] * (R[0, c] * de[0] + R[1, c] * de[1] + R[2, c] * de[2])
                rows[f, r, 3 + c] = side[f] * e[c]
            for c in range(6):
                acc += rows[f, r, c] * u[c]
            vel[f, r] = acc
            rate[f, r] = side[f] * (e[0] * a[0] + e[1] * a[1] + e[2] * a[2])


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
        om = y[n_q + 6 * b:n_q + 6 * b + 3]
        h = I[b] @ om
        force[6 * b:6 * b + 3] = -np.cross(om, h)
        force[6 * b + 3:6 * b + 6] = (1.0 / minv[b]) * grav
    mf = np.empty(n_u)
    _minv(Iinv, minv, force, mf)
    r = 0
    col = np.full(F, -1, dtype=np.int64)
    for f in range(F):
        VT[f, 0], VT[f, 1] = vel[f, 1], vel[f, 2]
        N[f], FT[f, 0], FT[f, 1] = 0.0, 0.0, 0.0
        if mode[f] != 0:
            col[f] = r
            r += 3 if mode[f] == 1 else 1
    if r == 0:
        udot[:] = mf
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
        colv[:] = B[:, c]
        _minv(Iinv, minv, colv, out)
        MB[:, c] = out
    W = A @ MB
    rhs = -rr - A @ mf
    if r == 1:
        lam = rhs / W[0, 0] if W[0, 0] != 0.0 else np.zeros(1)
    else:
        lam = np.linalg.lstsq(W, rhs, 1e-13)[0]
    udot[:] = mf + MB @ lam
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
    out[n_q:] = udot


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


_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = np.zeros((7, 6))
_A[1, :1] = [1 / 5]
_A[2, :2] = [3 / 40, 9 / 40]
_A[3, :3] = [44 / 45, -56 / 15, 32 / 9]
_A[4, :4] = [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729]
_A[5, :5] = [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]
_A[6, :6] = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]
_E = np.array([71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40])
_D = np.array([-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799, -10690763975 / 1880347072,
               701980252875 / 199316789632, -1453857185 / 822651844, 69997945 / 29380423])


@_jit
def _dense(t0, h, x0, R, t, out):
    """Hairer's continuous extension at t of the step from (t0, x0) of size h with R (4, n) = (r1, r2, r3, r4)."""
    s = (t - t0) / h
    s1 = 1.0 - s
    out[:] = x0 + s * (R[0] + s1 * (R[1] + s * (R[2] + s1 * R[3])))


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
def _rms(v):
    big = np.max(np.abs(v)) if v.size else 0.0
    if not (big > 0.0 and math.isfinite(big)):
        return big
    w = v / big
    return big * math.sqrt(np.dot(w, w) / v.size)


@_jit
def _segment(t, y0, grid, k0, rtol, atol, max_step, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir,
             moff, Y, NS, FS, VS, result):
    """Integrate the mode from (t, y0) until an event or grid[-1] (module docstring), sampling grid[k0:] into Y
    (n+1, n_y) and the features' N, f_t, slip velocity into NS, FS, VS; result (n_y + 5,) = (status (0 end, 1
    event, -1 failed), t_stop, event slot, next sample index, right-hand sides, y_stop)."""
    n, F = y0.shape[0], sc_i.shape[0]
    t_end = grid[grid.shape[0] - 1]
    K = np.empty((7, n))
    x = y0.copy()
    stage, buf = np.empty(n), np.empty(n)
    _rhs(x, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, K[0])
    nfev = 1
    scale = atol + rtol * np.abs(x)  # Hairer's starting step
    d0, d1 = _rms(x / scale), _rms(K[0] / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, max_step, t_end - t)
    _rhs(x + h0 * K[0], sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, stage)
    nfev += 1
    dm = max(d1, _rms((stage - K[0]) / scale) / h0)
    h = min(100 * h0, max(1e-6, h0 * 1e-3) if not dm > 1e-15 else (0.01 / dm) ** 0.2)
    g_old, g_new = np.empty(3 * F), np.empty(3 * F)
    _events(x, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, moff, g_old)
    err_old, rejected = 1e-4, False
    R = np.empty((4, n))
    k, N1, F1, V1, G1 = k0, np.empty(F), np.empty((F, 2)), np.empty((F, 2)), np.empty(F)
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
            for i in range(1, 6):
                stage[:] = x
                for j in range(i):
                    stage += hs * _A[i, j] * K[j]
                _rhs(stage, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, K[i])
            t_new = t_end if clipped else t + hs
            x_new = x.copy()
            for j in range(6):
                x_new += hs * _A[6, j] * K[j]
            _rhs(x_new, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, K[6])
            nfev += 6
            err_vec = np.zeros(n)
            for j in range(7):
                err_vec += hs * _E[j] * K[j]
            err_vec /= atol + rtol * np.maximum(np.abs(x_new), np.abs(x))
            err = math.sqrt(np.dot(err_vec, err_vec) / n)
            if err <= 1.0:
                break
            rejected = True
            h = hs * (max(0.2, 0.9 * err ** -0.2) if math.isfinite(err) else 0.1)
        fac = min(10.0, max(0.2, 0.9 * max(err, 1e-10) ** (-0.2 + 0.75 * 0.04) * err_old ** 0.04))
        if rejected:
            fac = min(fac, 1.0)
        err_old, rejected, h = max(err, 1e-4), False, hs * fac
        R[0] = x_new - x
        R[1] = hs * K[0] - R[0]
        R[2] = R[0] - hs * K[6] - R[1]
        R[3] = np.zeros(n)
        for j in range(7):
            R[3] += hs * _D[j] * K[j]
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
            _dense(t, hs, x, R, grid[k], buf)
            Y[k] = buf
            _solve(buf, sc_i, sc_f, I, Iinv, minv, grav, mu_s, mu_k, mode, mdir, np.empty(n - 7 * minv.shape[0]),
                   N1, F1, V1, G1)
            NS[k], FS[k], VS[k] = N1, F1, V1
            k += 1
        if slot >= 0:
            _dense(t, hs, x, R, t_ev, buf)
            result[0], result[1], result[2], result[3], result[4] = 1.0, t_ev, slot, k, nfev
            result[5:] = buf
            return
        t, x = t_new, x_new
        K[0] = K[6]
        g_old[:] = g_new
        if clipped:
            result[0], result[1], result[2], result[3], result[4] = 0.0, t, -1, k, nfev
            result[5:] = x
            return


# ---- the Python side ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Segment:
    """What :func:`segment` returns: ``done`` (reached the end), ``t`` [s] where it stopped, ``y`` (n_q + n_u,)
    there, ``kind`` and ``key`` of the event (the Python loop's meaning), ``k_next`` the next sample index,
    ``calls`` the right-hand sides evaluated."""

    done: bool
    t: float
    y: np.ndarray
    kind: str
    key: tuple | None
    k_next: int
    calls: int


class _Scene:
    """The arrays of one qualifying run (FreeBodies ``bodies``, PlaneContacts ``contacts``) and its sample buffers."""

    def __init__(self, bodies, contacts: PlaneContacts, grid):
        self.bodies, self.contacts, self.grid = bodies, contacts, np.ascontiguousarray(grid, dtype=float)
        c = contacts
        F = c.body.size
        self.sc_i = np.ascontiguousarray(c.body)
        self.sc_f = (np.ascontiguousarray(c.rho.reshape(-1)), np.ascontiguousarray(c.radius),
                     np.ascontiguousarray(c.normal.reshape(-1)), np.ascontiguousarray(c.offset),
                     np.ascontiguousarray(c.side), np.ascontiguousarray(c.basis.reshape(-1)))
        self.I = np.ascontiguousarray(bodies.inertias)
        self.Iinv, self.minv = np.ascontiguousarray(bodies.inertias_inv), np.ascontiguousarray(bodies.masses_inv)
        self.grav = np.ascontiguousarray(bodies.gravity_constant, dtype=float)
        n = self.grid.size
        self.Y = np.zeros((n, bodies.n_q + bodies.n_u))
        self.NS, self.FS, self.VS = np.zeros((n, F)), np.zeros((n, F, 2)), np.zeros((n, F, 2))
        self.keys = []
        seen: dict = {}
        for shapes in c.shapes:
            name = f"{shapes[0]}|{shapes[1]}"
            self.keys.append((name, seen.get(name, 0)))
            seen[name] = seen.get(name, 0) + 1


def segment(scene: _Scene, t: float, y, modes: dict, k_next: int, options, slip_tolerance: float) -> Segment:
    """One segment of the mode ``modes`` ({key: contact_events._Mode}) from (t, y) (module docstring)."""
    F = len(scene.keys)
    mode, mdir, moff = np.zeros(F, dtype=np.int64), np.zeros((F, 2)), np.zeros(F)
    for f, key in enumerate(scene.keys):
        m = modes.get(key)
        if m is not None:
            mode[f] = m.kind
            if m.direction is not None:
                mdir[f] = m.direction
            moff[f] = slip_tolerance if m.from_rest else 0.0
    n_y = scene.Y.shape[1]
    result = np.zeros(n_y + 5)
    _segment(float(t), np.ascontiguousarray(y, dtype=float), scene.grid, int(k_next), float(options.rtol),
             float(options.atol), float(options.max_step), scene.sc_i, scene.sc_f, scene.I, scene.Iinv, scene.minv,
             scene.grav, scene.contacts.mu_static, scene.contacts.mu_kinetic, mode, mdir, moff, scene.Y, scene.NS,
             scene.FS, scene.VS, result)
    status, t_stop, slot, k_end, calls = result[0], float(result[1]), int(result[2]), int(result[3]), int(result[4])
    if status < 0:
        from ..errors import KaneError
        raise KaneError(f"event-driven contact (compiled): the step size fell below its minimum at t = "
                        f"{t_stop:.12g} s")
    kind, key = "", None
    if status > 0:
        f, s = divmod(slot, 3)
        kind, key = (("impact", None) if s == 0 else ("open", scene.keys[f]) if s == 1 else
                     ("stick->slip", scene.keys[f]) if mode[f] == 1 else ("slip->stick", scene.keys[f]))
    return Segment(status == 0, t_stop, result[5:].copy(), kind, key, k_end, calls)


def record_samples(scene, modes: dict, k0: int, k1: int, Q, U, n_q: int, rec: dict) -> None:
    """Copy the compiled segment's samples k0..k1-1 into Q, U and the closed features' records into ``rec``."""
    Q[k0:k1], U[k0:k1] = scene.Y[k0:k1, :n_q], scene.Y[k0:k1, n_q:]
    closed = [(f, key, m) for f, key in enumerate(scene.keys) if (m := modes.get(key)) is not None]
    for k in range(k0, k1):
        for f, key, m in closed:
            rec["step"].append(k)
            rec["name"].append(key[0])
            rec["n"].append(scene.contacts.side[f] * scene.contacts.normal[f])
            rec["pn"].append(scene.NS[k, f])
            rec["pt"].append(scene.FS[k, f])
            rec["slip"].append(scene.VS[k, f])
            rec["mode"].append(m.kind)


def engine_of(dynamics, contacts, bodies, params):
    """(True, "") when the run qualifies for the compiled path (module docstring), else (False, why not)."""
    from .contact_bodies import FreeBodies

    b = dynamics if bodies is None else bodies
    if numba is None:
        return False, "numba is not installed"
    if not isinstance(contacts, PlaneContacts):
        return False, (f"contacts is a {type(contacts).__name__}, not a PlaneContacts (box corners and spheres "
                       f"against half-spaces of the ground)")
    if not isinstance(dynamics, FreeBodies) or b is not dynamics or contacts.bodies is not dynamics:
        return False, "the dynamics is not the FreeBodies of the contacts"
    for name in ("forcing", "qdot", "mass_matrix", "udot"):
        if getattr(type(dynamics), name) is not getattr(FreeBodies, name):
            return False, f"{type(dynamics).__name__} overrides FreeBodies.{name}"
    if dynamics.gravity_constant is None:
        return False, "gravity varies with time"
    if params:
        return False, "FreeBodies take no parameters"
    return True, ""


def compiled_scene(dynamics, contacts, grid) -> _Scene:
    """The arrays of a qualifying run (:func:`engine_of`), for :func:`segment`."""
    if numba is None:
        raise NotSupportedError("event-driven contact: the compiled path needs numba")
    return _Scene(dynamics, contacts, grid)
