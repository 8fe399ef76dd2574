"""Fitting the joints' own coordinates to the bodies' relative poses for :mod:`.cartesian` (Gauss-Newton,
q_J += W S^+ err, warm-started from the previous evaluation), the joints without quaternion coordinates together
through one traced program (:func:`.cartesian_terms.trace_fit`), the others and any failed fit one by one."""

from __future__ import annotations

import numpy as np

from ..errors import KaneError
from ..spatial import quaternion_compose, quaternion_to_rotation, rotation_vector
from .cartesian_terms import trace_fit

__all__ = ["fit", "fit_all", "lsq", "relative_poses", "rotation_vectors"]


def rotation_vectors(D):
    """rotation_vector of each R in D (n, 3, 3), vectorized where Shepperd's trace branch applies."""
    tr = np.trace(D, axis1=1, axis2=2)
    ok = tr >= np.max(np.diagonal(D, axis1=1, axis2=2), axis=1)
    with np.errstate(all="ignore"):
        s = 2.0 * np.sqrt(1.0 + tr)
        e = np.stack([s / 4, (D[:, 2, 1] - D[:, 1, 2]) / s, (D[:, 0, 2] - D[:, 2, 0]) / s,
                      (D[:, 1, 0] - D[:, 0, 1]) / s], axis=1)
        e /= np.linalg.norm(e, axis=1)[:, None]
        n = np.linalg.norm(e[:, 1:], axis=1)
        out = e[:, 1:] * np.where(n > 1e-8, 2.0 * np.arctan2(n, e[:, 0]) / np.where(n > 0, n, 1.0),
                                  2.0 / e[:, 0])[:, None]
    for i in np.flatnonzero(~ok):
        out[i] = rotation_vector(D[i]) if np.all(np.isfinite(D[i])) else np.nan
    return out


def lsq(S, b):
    """The least-squares x of S x = b for S (6, n) of full column rank."""
    if S.shape[1] == 1:
        s = S[:, 0]
        return np.array([s @ b / (s @ s)])
    return np.linalg.solve(S.T @ S, S.T @ b)


def _starts(last, jd, j: int):
    """The last fit, then (only when it fails) four seeded points about the joint's q0 (fixed per joint j)."""
    yield last
    rng = np.random.default_rng(j)
    for _ in range(4):
        yield jd.q0 + rng.normal(0, 0.6, jd.nq)


def fit(cd, j, R_FM, p_FM, t, pvec):
    """Joint j's coordinates best fitting the relative pose: (q_J, err (6,), S, sigma, W). Gauss-Newton from
    the last fit, then (a singular or far start) from a few seeded points about the joint's q0."""
    jd = cd.joints[j]
    for start in _starts(cd._q_cache[j], jd, j):
        q = start.copy()
        with np.errstate(all="ignore"):
            try:
                for _ in range(50):
                    R, pp, S, sig, W, _X = jd.geom(np.concatenate([q, [t], pvec]))
                    err = np.concatenate([rotation_vector(R.T @ R_FM), R.T @ (p_FM - pp[:, 0])])
                    du = lsq(S, err) if jd.nu and jd.nq else np.zeros(0)
                    if not np.all(np.isfinite(err)) or not np.all(np.isfinite(du)):
                        break
                    if not du.size or np.max(np.abs(du)) < 1e-13:
                        cd._q_cache[j] = q
                        return q, err, S, sig[:, 0], W
                    q, e = q + W @ du, q[jd.quat] if jd.quat is not None else None
                    if e is not None:  # the exact retraction: e (x) exp(dtheta / 2), dtheta = du[:3] in M axes
                        q[jd.quat] = quaternion_compose(e / np.linalg.norm(e), du[:3])
            except np.linalg.LinAlgError:
                pass
    raise KaneError(f"joint {jd.pj.name!r}: its coordinates could not be fitted to the bodies' relative pose "
                    "(a singular configuration of its coordinates, or the joint is far off its constraint)")


def relative_poses(cd, c, q):
    """(R_FM (Nb, 3, 3), p_FM (Nb, 3)): every joint's M frame in its F frame, from the bodies' poses."""
    p, R = q[:, :3], quaternion_to_rotation(q[:, 3:])
    RpF, rpF, RcM, rcM = c["stack"]
    Rx, px = np.concatenate([R, np.eye(3)[None]]), np.concatenate([p, np.zeros((1, 3))])
    Rp = Rx[cd._parent_index]
    R0F = Rp @ RpF
    oF = px[cd._parent_index] + np.einsum("bij,bj->bi", Rp, rpF)
    R_FM = np.swapaxes(R0F, -1, -2) @ R @ RcM
    p_FM = np.einsum("bji,bj->bi", R0F, p + np.einsum("bij,bj->bi", R, rcM) - oF)
    return R_FM, p_FM


def fit_all(cd, c, q, t):
    """Every joint's fitted coordinates at the Cartesian q (Nb, 7): (q_J (n_q,), err (Nb, 6), S per joint).
    The joints without quaternion coordinates take Gauss-Newton steps together, one traced-program call per
    step (from the last fit); where a step fails to converge they fall back to :func:`fit`, as do quaternion
    joints."""
    pvec = c["p"]
    nb, model = cd.n_bodies, cd.model
    if cd._fit_fn is None:
        cd._fast = [j for j, jd in enumerate(cd.joints) if jd.quat is None]
        cd._fit_fn = trace_fit(cd, cd._fast) if cd._fast else False
    fast, qJ, err, Ss = cd._fast, np.zeros(model.n_q), np.zeros((nb, 6)), [None] * nb
    done = False
    if fast:
        for j in range(nb):
            qJ[cd.joints[j].pj.q_slice] = cd._q_cache[j]
        qc = q.reshape(-1)
        with np.errstate(all="ignore"):
            for _ in range(50):
                E, P, W, S = cd._fit_fn(t, np.concatenate([qJ, qc]), None, pvec, None)
                E = E.reshape(len(fast), 12)
                err[fast] = np.concatenate([rotation_vectors(E[:, :9].reshape(-1, 3, 3)), E[:, 9:]], axis=1)
                du = P @ err.reshape(-1)
                if not (np.all(np.isfinite(err[fast])) and np.all(np.isfinite(du))):
                    break
                if not du.size or np.max(np.abs(du)) < 1e-13:
                    done = True
                    break
                qJ = qJ + W @ du
        if done:
            for j in fast:
                jd = cd.joints[j]
                cd._q_cache[j] = qJ[jd.pj.q_slice].copy()
                Ss[j] = S[6 * j:6 * j + 6, jd.pj.u_slice]
    slow = [j for j, jd in enumerate(cd.joints) if not done or jd.quat is not None]
    if slow:
        R_FM, p_FM = relative_poses(cd, c, q)
        for j in slow:
            qJ[cd.joints[j].pj.q_slice], err[j], Ss[j] = fit(cd, j, R_FM[j], p_FM[j], t, pvec)[:3]
    return qJ, err, Ss
