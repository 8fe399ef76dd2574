"""Absolute Cartesian coordinates with quaternions, Lagrange multipliers and Baumgarte stabilization (Nelson and
Cohen, seed 003): the classic baseline Kane's method is measured against (seed 004: 6 Nb + Nc unknowns instead of
the 6 Nb - Nc degrees of freedom).

Every body i is free in space. Its state is the position p_i (3,) [m] of its frame's origin in ground and its
scalar-first unit quaternion e_i (4,) (R_ground_body), then its twist nu_i = (omega_i, v_i) (6,) [rad/s, m/s]: the
angular velocity and the velocity of the origin, both in body axes (the speeds of a ``Free`` joint), so that
p' = R v, e' = E(e) omega / 2 and nu_i' is the spatial acceleration in body axes (Featherstone 2008 §2.11).

Each joint of the model's tree becomes 6 - nu algebraic rows between its two bodies, written once from the joint
contract: with v_rel = X_MC nu_child - X_MF X_FP nu_parent the relative twist of M in F (M axes), the rows are
T^T v_rel = 0 where T (6 x (6 - nu)) spans the orthogonal complement of the motion subspace S(q_J). At acceleration
level T^T (d/dt v_rel - S' u_J - sigma') = 0 with d/dt v_rel = a_M - X_MF a_F + v_rel x (X_MF v_F). The joint's
own coordinates q_J are fitted to the bodies' relative pose by Gauss-Newton (q_J += W S^+ err, warm-started from
the previous evaluation), which gives S(q_J), the position error err (6,) = (rotation vector, translation) of the
actual relative pose from X_J(q_J), and the joint coordinates that joint loads and ``joint_coordinates`` need.
Permanent ``LOOP_CLOSURE`` constraints add d . (v_A - v_B) rows (and omega_A - omega_B rows with frames=True).

With M = diag(I_i) (spatial inertias about the body origins) and G the stacked rows (m x 6 Nb), the equations are

    M nu' = F(t, x) + G^T lambda,   G nu' = gamma - 2 alpha C' - beta^2 C      (Baumgarte, alpha and beta [1/s])

solved through the Schur complement G M^-1 G^T, whose rank is checked on every evaluation: a configuration where
the rows lose rank raises :class:`ConstraintRankError` with the time and the state, never a NaN.

The hot path of ``udot`` is generated code (:mod:`.cartesian_terms`): one traced Program gives every joint's
Gauss-Newton step at once (joints without quaternion coordinates; the others, and any fit that fails, go through
the per-joint fit), and one gives G, gamma, C', C and the body forces; only the Schur/QR solve and its rank check
stay in numpy.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import block_diag
from scipy.linalg.lapack import dtrtrs

from ..errors import KaneError, ModelError
from ..model.elements import ConstraintKind
from ..model.system import Model, System, stretch, stretch_rate
from ..spatial import (crf, crm, motion_transform, quaternion_compose, quaternion_to_rotation, rotation_to_quaternion,
                       rotation_vector, skew, spatial_inertia)

__all__ = ["CartesianDynamics", "ConstraintRankError"]


class ConstraintRankError(KaneError):
    """The constraint rows G lost rank: attributes ``t`` [s], ``q`` (7 Nb,), ``u`` (6 Nb,), ``ratio`` (smallest
    over largest singular value of G M^-1/2) and ``rows`` (names of the rows that became dependent)."""

    def __init__(self, message, t, q, u, ratio, rows):
        super().__init__(message)
        self.t, self.q, self.u, self.ratio, self.rows = t, q, u, ratio, rows


def _cross(a, b):
    """a x b of two 3-vectors (plain floats; faster than np.cross on small arrays)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _rotation_vectors(D):
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


def _lsq(S, b):
    """The least-squares x of S x = b for S (6, n) of full column rank."""
    if S.shape[1] == 1:
        s = S[:, 0]
        return np.array([s @ b / (s @ s)])
    return np.linalg.solve(S.T @ S, S.T @ b)


def _lambdify(args, exprs):
    """fn(z) -> list of float arrays shaped as ``exprs`` (sympy matrices), for z the values of ``args``."""
    mats = [sp.Matrix(e) for e in exprs]
    flat = [sp.sympify(x) for m in mats for x in m]
    cuts = np.cumsum([0] + [len(m) for m in mats])
    shapes = [m.shape for m in mats]

    def split(v):
        return [v[a:b].reshape(s) for a, b, s in zip(cuts[:-1], cuts[1:], shapes)]

    if not any(x.free_symbols for x in flat):
        const = np.array([float(x) for x in flat])
        return lambda z: split(const.copy())
    f = sp.lambdify(list(args), flat, modules="numpy", cse=True)
    return lambda z: split(np.array(f(*z), dtype=float).reshape(-1))


class _Joint:
    """Numeric form of one placed joint: geometry (R_FM, p_FM, S, sigma, W, X) and bias S' u + sigma'."""

    def __init__(self, model: Model, j: int, params):
        pj = model.joints[j]
        self.pj, self.nq, self.nu = pj, pj.joint.nq, pj.joint.nu
        qs, us = sp.Matrix(model.q[pj.q_slice]), sp.Matrix(model.u[pj.u_slice])
        jk = pj.joint.kinematics(qs, model.t)
        R, p = pj.joint.transform(qs)
        args = list(qs) + [model.t] + list(params)
        self.geom = _lambdify(args, [R, p, jk.S_M, jk.sigma_M, jk.W, jk.X])
        rel = (jk.S_M * us if self.nu else sp.zeros(6, 1)) + jk.sigma_M
        qdot = jk.W * us + jk.X if self.nq else sp.zeros(0, 1)
        bias = sum((rel.diff(qk) * qdot[k] for k, qk in enumerate(qs)), sp.zeros(6, 1)) + rel.diff(model.t)
        self.bias = _lambdify(list(qs) + list(us) + [model.t] + list(params), [bias])
        self.sym = (qs, us, jk, bias, R, p)
        self.quat = {"spherical": slice(0, 4), "free": slice(3, 7)}.get(pj.joint.kind)
        self.q0 = np.array(model.q0[pj.q_slice], dtype=float)
        # the complement of span S; where S varies with q, its SVD at every evaluation (any orthonormal basis of the
        # complement gives the same solution: the rows' span is what counts)
        S0 = np.array(jk.S_M.evalf(), dtype=float) if not jk.S_M.free_symbols else None
        self.T_const = None if S0 is None else (np.linalg.svd(S0)[0][:, self.nu:] if self.nu else np.eye(6))


class CartesianDynamics:
    """Absolute-coordinate equations of ``model`` (a System or a Model; see the module docstring).

    State q (7 Nb,) = per body (x, y, z, qw, qx, qy, qz) and u (6 Nb,) = per body (wx, wy, wz, vx, vy, vz), body
    order of the model. ``alpha``, ``beta`` [1/s]: Baumgarte gains (C'' + 2 alpha C' + beta^2 C = 0; zero: no
    stabilization); beta also pulls the quaternion norms back to 1. ``rank_tol``: smallest singular value ratio of
    G M^-1/2 accepted. Transient constraints are not imposed; permanent ones other than loop closures raise.
    """

    def __init__(self, model: Model | System, *, alpha: float = 5.0, beta: float = 5.0, rank_tol: float = 1e-9):
        if isinstance(model, System):
            model = model.compile()
        if not isinstance(model, Model):
            raise ModelError(f"CartesianDynamics: expected a kane.System or kane.Model, got {type(model).__name__}")
        self.model, self.alpha, self.beta, self.rank_tol = model, float(alpha), float(beta), float(rank_tol)
        nb = self.n_bodies = model.n_bodies
        self.n_q, self.n_u = 7 * nb, 6 * nb
        names = [b.name for b in model.bodies]
        self.q_names = tuple(f"{n}_{c}" for n in names for c in ("x", "y", "z", "qw", "qx", "qy", "qz"))
        self.u_names = tuple(f"{n}_{c}" for n in names for c in ("wx", "wy", "wz", "vx", "vy", "vz"))
        self.parameter_names = tuple(str(s) for s in model.parameters)
        self.input_names = tuple(str(s) for s in model.inputs)
        self.description = f"{model.name} (absolute coordinates, Lagrange multipliers, Baumgarte)"
        for b in model.bodies:
            if b.is_particle:
                raise ModelError(f"body {b.name!r}: absolute coordinates need a rotational inertia; a particle has "
                                 "none (use kane.derive or the recursive algorithms)")
        self.loops = []
        for c in model.constraints:
            if c.transient:
                continue
            if c.kind is not ConstraintKind.LOOP_CLOSURE:
                raise ModelError(f"constraint {c.name!r}: the Cartesian formulation imposes loop closures only, not "
                                 f"{c.kind.value}; declare it transient=True or use kane.derive")
            ba, pa, bb, pb, frames, dirs = c.data
            if any(e.free_symbols for v in (pa, pb, *dirs) for e in v):
                raise ModelError(f"constraint {c.name!r}: the Cartesian formulation needs numeric points and "
                                 "directions in its loop closures")
            num = lambda v: np.array([float(x) for x in v])
            self.loops.append((c.name, ((ba, num(pa), 1.0), (bb, num(pb), -1.0)), bool(frames),
                               np.array([num(d) for d in dirs])))
        P = list(model.parameters)
        self.joints = [_Joint(model, j, P) for j in range(nb)]
        self._place = _lambdify(P, [m for pj in model.joints for m in (pj.R_parent_F, pj.r_parent_F, pj.R_child_M,
                                                                         pj.r_child_M)])
        self._mass = _lambdify(P, [m for b in model.bodies for m in (sp.Matrix([b.mass]), b.com, b.inertia)])
        self._zargs = [model.t, *model.q, *model.u, *P, *model.inputs, stretch, stretch_rate]
        self._loads = _lambdify(self._zargs, [model.gravity] + [m for f in model.forces for m in (f.vector, f.point)]
                                + [tq.vector for tq in model.torques]
                                + [m for s in model.springs for m in (s.point_a, s.point_b, sp.Matrix([s.rest_length]))]
                                + [ld.Q for ld in model.joint_loads])
        self._tension = _lambdify(self._zargs, [sp.Matrix([s.tension for s in model.springs])])
        self._has_potential = all(s.potential is not None for s in model.springs) and all(
            ld.potential is not None for ld in model.joint_loads)
        if self._has_potential:
            self._potential = _lambdify(self._zargs, [sp.Matrix([s.potential for s in model.springs]),
                                                       sp.Matrix([sum((ld.potential for ld in model.joint_loads),
                                                                      sp.S.Zero)])])
        self.row_names = tuple(f"joint {self.joints[j].pj.name!r} row {k + 1}" for j in range(nb)
                               for k in range(6 - self.joints[j].nu)) + tuple(
            f"loop closure {lc[0]!r} row {k + 1}" for lc in self.loops for k in range(len(lc[3]) + 3 * lc[2]))
        self.n_constraints = len(self.row_names)  # Nc, the rows of G
        self.n_unknowns = self.n_u + self.n_constraints  # 6 Nb + Nc: accelerations and multipliers
        self.n_dof = self.n_u - self.n_constraints  # 6 Nb - Nc: the minimal count when G has full rank
        self._q_cache = [jd.q0.copy() for jd in self.joints]
        self._pcache = {}
        self._parent_index = np.array([nb if pa < 0 else pa for pa in model.parent], dtype=int)
        self._terms_fn = None  # the traced terms (cartesian_terms), compiled on the first udot
        self._fit_fn = None  # the traced Gauss-Newton step of the joints without quaternions, likewise
        self._row_joints = [j for j, jd in enumerate(self.joints) if jd.nu < 6]

    def _terms(self):
        if self._terms_fn is None:
            from .cartesian_terms import compile_terms
            self._terms_fn = compile_terms(self)
        return self._terms_fn

    # ---- constants per parameter vector ---------------------------------------------------------------------
    def _consts(self, params):
        p = self.model.parameter_values(params)
        key = p.tobytes()
        c = self._pcache.get(key)
        if c is None:
            pl = self._place(p)
            mp = self._mass(p)
            place = []
            for j in range(self.n_bodies):
                RpF, rpF, RcM, rcM = (pl[4 * j + k] for k in range(4))
                place.append((RpF, rpF[:, 0], RcM, rcM[:, 0], motion_transform(RpF, rpF[:, 0]),
                              motion_transform(RcM, rcM[:, 0])))
            I = np.array([spatial_inertia(float(mp[3 * i][0, 0]), mp[3 * i + 1][:, 0], mp[3 * i + 2])
                          for i in range(self.n_bodies)])
            mass = [(float(mp[3 * i][0, 0]), mp[3 * i + 1][:, 0]) for i in range(self.n_bodies)]
            try:
                L = np.linalg.cholesky(I)
            except np.linalg.LinAlgError:
                raise ModelError(f"model {self.model.name!r}: absolute coordinates need every body's spatial inertia "
                                 "positive definite (mass > 0 and a positive-definite inertia tensor)") from None
            Linv_T = np.swapaxes(np.linalg.inv(L), -1, -2)
            c = self._pcache[key] = {"p": p, "place": place, "I": I, "mass": mass, "Linv_T": Linv_T,
                                     "Minv": Linv_T @ np.swapaxes(Linv_T, -1, -2),
                                     "stack": tuple(np.array([pl[k] for pl in place]) for k in range(4))}
        return c

    # ---- kinematics --------------------------------------------------------------------------------------------
    def _fit(self, j, R_FM, p_FM, t, pvec):
        """Joint j's coordinates best fitting the relative pose: (q_J, err (6,), S, sigma, W). Gauss-Newton from
        the last fit, then (a singular or far start) from a few seeded points about the joint's q0."""
        jd = self.joints[j]
        rng = np.random.default_rng(j)
        for start in [self._q_cache[j]] + [jd.q0 + rng.normal(0, 0.6, jd.nq) for _ in range(4)]:
            q = start.copy()
            with np.errstate(all="ignore"):
                try:
                    for _ in range(50):
                        R, pp, S, sig, W, _X = jd.geom(np.concatenate([q, [t], pvec]))
                        err = np.concatenate([rotation_vector(R.T @ R_FM), R.T @ (p_FM - pp[:, 0])])
                        du = _lsq(S, err) if jd.nu and jd.nq else np.zeros(0)
                        if not np.all(np.isfinite(err)) or not np.all(np.isfinite(du)):
                            break
                        if not du.size or np.max(np.abs(du)) < 1e-13:
                            self._q_cache[j] = q
                            return q, err, S, sig[:, 0], W
                        q, e = q + W @ du, q[jd.quat] if jd.quat is not None else None
                        if e is not None:  # the exact retraction: e (x) exp(dtheta / 2), dtheta = du[:3] in M axes
                            q[jd.quat] = quaternion_compose(e / np.linalg.norm(e), du[:3])
                except np.linalg.LinAlgError:
                    pass
        raise KaneError(f"joint {jd.pj.name!r}: its coordinates could not be fitted to the bodies' relative pose "
                        "(a singular configuration of its coordinates, or the joint is far off its constraint)")

    def _relative_poses(self, c, q):
        """(R_FM (Nb, 3, 3), p_FM (Nb, 3)): every joint's M frame in its F frame, from the bodies' poses."""
        p, R = q[:, :3], quaternion_to_rotation(q[:, 3:])
        RpF, rpF, RcM, rcM = c["stack"]
        Rx, px = np.concatenate([R, np.eye(3)[None]]), np.concatenate([p, np.zeros((1, 3))])
        Rp = Rx[self._parent_index]
        R0F = Rp @ RpF
        oF = px[self._parent_index] + np.einsum("bij,bj->bi", Rp, rpF)
        R_FM = np.swapaxes(R0F, -1, -2) @ R @ RcM
        p_FM = np.einsum("bji,bj->bi", R0F, p + np.einsum("bij,bj->bi", R, rcM) - oF)
        return R_FM, p_FM

    def _fit_all(self, c, q, t):
        """Every joint's fitted coordinates at the Cartesian q (Nb, 7): (q_J (n_q,), err (Nb, 6), S per joint).
        The joints without quaternion coordinates take Gauss-Newton steps together, one traced-program call per
        step (from the last fit); where a step fails to converge they fall back to :meth:`_fit`, as do quaternion
        joints."""
        pvec = c["p"]
        nb, model = self.n_bodies, self.model
        if self._fit_fn is None:
            from .cartesian_terms import trace_fit
            self._fast = [j for j, jd in enumerate(self.joints) if jd.quat is None]
            self._fit_fn = trace_fit(self, self._fast) if self._fast else False
        fast, qJ, err, Ss = self._fast, np.zeros(model.n_q), np.zeros((nb, 6)), [None] * nb
        done = False
        if fast:
            for j in range(nb):
                qJ[self.joints[j].pj.q_slice] = self._q_cache[j]
            qc = q.reshape(-1)
            with np.errstate(all="ignore"):
                for _ in range(50):
                    E, P, W, S = self._fit_fn(t, np.concatenate([qJ, qc]), None, pvec, None)
                    E = E.reshape(len(fast), 12)
                    err[fast] = np.concatenate([_rotation_vectors(E[:, :9].reshape(-1, 3, 3)), E[:, 9:]], axis=1)
                    du = P @ err.reshape(-1)
                    if not (np.all(np.isfinite(err[fast])) and np.all(np.isfinite(du))):
                        break
                    if not du.size or np.max(np.abs(du)) < 1e-13:
                        done = True
                        break
                    qJ = qJ + W @ du
            if done:
                for j in fast:
                    jd = self.joints[j]
                    self._q_cache[j] = qJ[jd.pj.q_slice].copy()
                    Ss[j] = S[6 * j:6 * j + 6, jd.pj.u_slice]
        slow = [j for j, jd in enumerate(self.joints) if not done or jd.quat is not None]
        if slow:
            R_FM, p_FM = self._relative_poses(c, q)
            for j in slow:
                qJ[self.joints[j].pj.q_slice], err[j], Ss[j] = self._fit(j, R_FM[j], p_FM[j], t, pvec)[:3]
        return qJ, err, Ss

    def _evaluate_fast(self, t, q, u, params, inputs=None):
        """G, gamma (Baumgarte included), F (Nb, 6) of one evaluation through the traced terms."""
        c = self._consts(params)
        pvec, nb = c["p"], self.n_bodies
        q = np.asarray(q, dtype=float).reshape(nb, 7)
        qJ, err, Ss = self._fit_all(c, q, t)
        extra = []
        for j in self._row_joints:  # joints with rows: their pose error, and a complement of S where S varies
            extra.append(err[j])
            if self.joints[j].T_const is None:
                extra.append(np.linalg.svd(Ss[j])[0][:, self.joints[j].nu:].reshape(-1))
        qfull = np.concatenate([q.reshape(-1), qJ] + extra)
        G, gam, Cd, C, F, uJ = self._terms()(t, qfull, np.asarray(u, dtype=float).reshape(-1), pvec,
                                              self.model.input_values(inputs))
        return {"c": c, "G": G, "gamma": gam - 2 * self.alpha * Cd - self.beta ** 2 * C, "Cdot": Cd, "C": C,
                "F": F.reshape(nb, 6), "q_joint": qJ, "u_joint": uJ}

    def _evaluate(self, t, q, u, params, inputs=None, need_loads=True):
        """Everything one evaluation needs: rows G (m, 6 Nb), gamma (m,), velocity and position errors, the body
        forces F (Nb, 6), the fitted joint state, the joint-actuation wrenches."""
        c = self._consts(params)
        pvec, nb = c["p"], self.n_bodies
        q = np.asarray(q, dtype=float).reshape(nb, 7)
        nu = np.zeros((nb, 6)) if u is None else np.asarray(u, dtype=float).reshape(nb, 6)
        p, R = q[:, :3], quaternion_to_rotation(q[:, 3:])
        m = self.n_constraints
        G, gam, Cd, C = np.zeros((m, 6 * nb)), np.zeros(m), np.zeros(m), np.zeros(m)
        qJ, uJ, info, row = np.zeros(self.model.n_q), np.zeros(self.model.n_u), [], 0
        for j, jd in enumerate(self.joints):
            pj, par = jd.pj, self.model.parent[j]
            RpF, rpF, RcM, rcM, X_Fp, X_Mc = c["place"][j]
            R0F, oF = (RpF, rpF) if par < 0 else (R[par] @ RpF, p[par] + R[par] @ rpF)
            R_FM, p_FM = R0F.T @ R[j] @ RcM, R0F.T @ (p[j] + R[j] @ rcM - oF)
            qj, err, S, sig, W = self._fit(j, R_FM, p_FM, t, pvec)
            X_MF = motion_transform(R_FM, p_FM)
            vF = X_Fp @ nu[par] if par >= 0 else np.zeros(6)
            XvF = X_MF @ vF
            v_rel = X_Mc @ nu[j] - XvF
            uj = _lsq(S, v_rel - sig) if jd.nu else np.zeros(0)
            qJ[pj.q_slice], uJ[pj.u_slice] = qj, uj
            T = jd.T_const if jd.T_const is not None else np.linalg.svd(S)[0][:, jd.nu:]
            b, k = jd.bias(np.concatenate([qj, uj, [t], pvec]))[0][:, 0], 6 - jd.nu
            if k:
                rows = slice(row, row + k)
                G[rows, 6 * j:6 * j + 6] = T.T @ X_Mc
                if par >= 0:
                    G[rows, 6 * par:6 * par + 6] = -T.T @ X_MF @ X_Fp
                gam[rows] = T.T @ (b - crm(v_rel) @ XvF)
                Cd[rows], C[rows] = T.T @ v_rel, T.T @ err
                row += k
            info.append((T, S, W, X_MF, X_Mc, X_Fp, v_rel, XvF, b))
        for lc in self.loops:
            row = self._loop_rows(lc, row, p, R, nu, G, gam, Cd, C)
        gam -= 2 * self.alpha * Cd + self.beta ** 2 * C
        out = {"c": c, "G": G, "gamma": gam, "Cdot": Cd, "C": C, "q_joint": qJ, "u_joint": uJ, "info": info, "R": R,
               "p": p, "nu": nu}
        if need_loads:
            out["F"], out["actuation"] = self._forces(t, c, p, R, nu, qJ, uJ, inputs, info)
        return out

    def _loop_rows(self, lc, row, p, R, nu, G, gam, Cd, C):
        _, sides, frames, D = lc
        n = len(D)
        for body, r, sign in sides:
            if body < 0:
                C[row:row + n] += sign * D @ r
                continue
            w = nu[body, :3]
            vP = nu[body, 3:] + _cross(w, r)
            C[row:row + n] += sign * D @ (p[body] + R[body] @ r)
            Cd[row:row + n] += sign * D @ (R[body] @ vP)
            gam[row:row + n] -= sign * D @ (R[body] @ _cross(w, vP))
            G[row:row + n, 6 * body:6 * body + 6] += sign * D @ R[body] @ np.hstack([-skew(r), np.eye(3)])
            if frames:
                G[row + n:row + n + 3, 6 * body:6 * body + 3] += sign * R[body]
                Cd[row + n:row + n + 3] += sign * R[body] @ w
        return row + n + (3 if frames else 0)

    def _load_values(self, t, c, qJ, uJ, inputs):
        """(z, values): the load expressions at the fitted joint state, grouped as gravity (3,), forces
        [(vector, point)], torques [vector], springs [(point_a, point_b, rest length)], joint loads [Q]."""
        m = self.model
        z = np.concatenate([[t], qJ, uJ, c["p"], m.input_values(inputs), [0.0, 0.0]])
        v = [x.reshape(-1) for x in self._loads(z)]
        nf, nt, ns = len(m.forces), len(m.torques), len(m.springs)
        k = 1 + 2 * nf + nt
        return z, {"g": v[0], "forces": [(v[1 + 2 * i], v[2 + 2 * i]) for i in range(nf)], "torques": v[1 + 2 * nf:k],
                   "springs": [(v[k + 3 * i], v[k + 3 * i + 1], float(v[k + 3 * i + 2][0])) for i in range(ns)],
                   "Q": v[k + 3 * ns:]}

    def _springs(self, vals, p, R, nu):
        """Per spring: ((body, point, position, velocity) of both ends, unit vector a -> b, stretch, rate)."""
        out = []
        for s, (pa, pb, L0) in zip(self.model.springs, vals["springs"]):
            ends = [(b, pt, pt, np.zeros(3)) if b < 0 else
                    (b, pt, p[b] + R[b] @ pt, R[b] @ (nu[b, 3:] + _cross(nu[b, :3], pt)))
                    for b, pt in ((s.body_a, pa), (s.body_b, pb))]
            d = ends[1][2] - ends[0][2]
            length = float(np.linalg.norm(d))
            out.append((ends, d / length, length - L0, float(d @ (ends[1][3] - ends[0][3])) / length))
        return out

    def _forces(self, t, c, p, R, nu, qJ, uJ, inputs, info):
        """F (Nb, 6): applied forces minus v x* I v, in body axes at the origins; and the joints' actuation
        wrenches (Nb, 6) in M axes (S (S^T S)^-1 W^T Q of the joint loads, so that S^T w = W^T Q)."""
        model, nb = self.model, self.n_bodies
        z, vals = self._load_values(t, c, qJ, uJ, inputs)
        F = -np.einsum("bij,bj->bi", crf(nu), np.einsum("bij,bj->bi", c["I"], nu))

        def add(body, point, vec, frame):
            if body >= 0:
                f = R[body].T @ (vec if frame < 0 else R[frame] @ vec)
                F[body] += np.concatenate([_cross(point, f) if point is not None else np.zeros(3), f])
        for i, (m, com) in enumerate(c["mass"]):
            add(i, com, m * vals["g"], -1)
        for f, (vec, point) in zip(model.forces, vals["forces"]):
            add(f.body, point, vec, f.frame)
        for tq, vec in zip(model.torques, vals["torques"]):
            if tq.body >= 0:
                F[tq.body, :3] += R[tq.body].T @ (vec if tq.frame < 0 else R[tq.frame] @ vec)
        for n, (ends, e, st, rate) in enumerate(self._springs(vals, p, R, nu)):
            z[-2:] = st, rate
            tension = self._tension(z)[0][n, 0]
            for (body, point, _, _), sign in zip(ends, (1.0, -1.0)):
                add(body, point, sign * tension * e, -1)
        act = np.zeros((nb, 6))
        for ld, Q in zip(model.joint_loads, vals["Q"]):
            S, W = info[ld.joint][1:3]
            act[ld.joint] += S @ np.linalg.solve(S.T @ S, W.T @ Q)
        for j in np.flatnonzero(np.any(act, axis=1)):
            X_MF, X_Mc, X_Fp = info[j][3:6]
            F[j] += X_Mc.T @ act[j]
            if model.parent[j] >= 0:
                F[model.parent[j]] -= X_Fp.T @ X_MF.T @ act[j]
        return F, act

    # ---- the solve -----------------------------------------------------------------------------------------
    def _solve(self, t, q, u, ev):
        """(nu' (6 Nb,), lambda (m,)) from M nu' = F + G^T lambda, G nu' = gamma."""
        c, G, nb = ev["c"], ev["G"], self.n_bodies
        Minv, F = c["Minv"], ev["F"]
        a0 = np.einsum("bij,bj->bi", Minv, F).reshape(-1)
        if not G.shape[0]:
            return a0, np.zeros(0)
        Gw = np.einsum("mbi,bij->mbj", G.reshape(-1, nb, 6), c["Linv_T"]).reshape(G.shape)  # G M^-1/2
        Rf = np.linalg.qr(Gw.T, mode="r")  # G M^-1 G^T = Rf^T Rf; Rf has the singular values of G M^-1/2
        s = np.linalg.svd(Rf, compute_uv=False)
        ratio = s[-1] / s[0] if s[0] > 0 else 0.0
        if not (ratio > self.rank_tol) or not np.all(np.isfinite(s)):
            U = np.linalg.svd(Gw)[0] if np.all(np.isfinite(Gw)) else np.zeros((len(G), 1))
            rows = [self.row_names[k] for k in np.flatnonzero(np.abs(U[:, -1]) > 0.1)]
            qs, us, fmt = np.array(q, float), np.array(u, float), ", ".join
            state = "; ".join(fmt(f"{n}={v:.12g}" for n, v in zip(names, x))
                              for names, x in ((self.q_names, qs), (self.u_names, us)))
            raise ConstraintRankError(
                f"Cartesian formulation of {self.model.name!r}: the constraint Jacobian lost rank at t = {t!r} s "
                f"(smallest/largest singular value {ratio:.3g} <= {self.rank_tol:g}); dependent rows: "
                f"{fmt(rows) or '?'}. A structurally redundant closure (a planar loop closed with three point rows) "
                f"needs directions= of its plane. State: {state}", t, qs, us, ratio, rows)
        # LAPACK's triangular solves directly (scipy's solve_triangular wraps the same with more overhead)
        lam = dtrtrs(Rf, dtrtrs(Rf, ev["gamma"] - G @ a0, lower=0, trans=1)[0], lower=0, trans=0)[0]
        acc = a0 + np.einsum("bij,bj->bi", Minv, (G.T @ lam).reshape(nb, 6)).reshape(-1)
        return acc, lam

    # ---- the Dynamics interface ----------------------------------------------------------------------------
    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (7 Nb,): p' = R v, e' = E(e) omega / 2 - beta (|e|^2 - 1) e."""
        q = np.asarray(q, dtype=float).reshape(self.n_bodies, 7)
        u = np.asarray(u, dtype=float).reshape(self.n_bodies, 6)
        e = q[:, 3:]
        w, x, y, z = e.T
        E = 0.5 * np.stack([np.stack([-x, -y, -z], -1), np.stack([w, -z, y], -1), np.stack([z, w, -x], -1),
                            np.stack([-y, x, w], -1)], -2)
        edot = np.einsum("bij,bj->bi", E, u[:, :3]) - self.beta * ((e * e).sum(1) - 1.0)[:, None] * e
        pdot = np.einsum("bij,bj->bi", quaternion_to_rotation(e), u[:, 3:])
        return np.hstack([pdot, edot]).reshape(-1)

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """nu' (6 Nb,): every body's spatial acceleration in its axes [rad/s^2, m/s^2]."""
        return self._solve(t, q, u, self._evaluate_fast(t, q, u, params, inputs))[0]

    def rhs(self, t, q, u, params=None, inputs=None):
        """(q', u') in one evaluation."""
        return self.qdot(t, q, u, params, inputs), self.udot(t, q, u, params, inputs)

    def joint_forces(self, t, q, u, params=None, inputs=None) -> dict:
        """The spatial force each joint transmits, joint name -> (6,) (moment about M's origin [N m], force [N]) in
        the joint's M axes, exerted by the parent on the child: constraint wrench T lambda plus actuation (the
        same quantity as RNEA's ``RecursiveDynamics.joint_forces``)."""
        ev = self._evaluate(t, q, u, params, inputs)
        lam, out, row = self._solve(t, q, u, ev)[1], {}, 0
        for j, jd in enumerate(self.joints):
            T, k = ev["info"][j][0], 6 - jd.nu
            out[jd.pj.name] = T @ lam[row:row + k] + ev["actuation"][j]
            row += k
        return out

    def constraint_residual(self, t, q, u, params=None) -> np.ndarray:
        """C' = G nu (m,): velocity-level constraint errors [rad/s, m/s]."""
        return self._evaluate(t, q, u, params, need_loads=False)["Cdot"]

    def configuration_residual(self, t, q, params=None) -> np.ndarray:
        """C (m,): position-level errors [rad, m] of the joint rows and loop closures (zero for frame rows)."""
        return self._evaluate(t, q, None, params, need_loads=False)["C"]

    def kinetic_energy(self, t, q, u, params=None) -> float:
        """Sum of 0.5 nu_i^T I_i nu_i [J]."""
        I = self._consts(params)["I"]
        nu = np.asarray(u, dtype=float).reshape(self.n_bodies, 6)
        return 0.5 * float(np.einsum("bi,bij,bj->", nu, I, nu))

    def potential_energy(self, t, q, params=None) -> float:
        """Potential energy [J] of gravity, springs and joint springs (joint coordinates fitted)."""
        if not self._has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        ev = self._evaluate(t, q, None, params, need_loads=False)
        c, p, R = ev["c"], ev["p"], ev["R"]
        z, vals = self._load_values(t, c, ev["q_joint"], ev["u_joint"], None)
        pe = -sum(m * vals["g"] @ (p[i] + R[i] @ com) for i, (m, com) in enumerate(c["mass"]))
        for n, (_, _, st, _) in enumerate(self._springs(vals, p, R, ev["nu"])):
            z[-2] = st
            pe += self._potential(z)[0][n, 0]
        return float(pe + self._potential(z)[1][0, 0])

    def energy(self, t, q, u, params=None) -> float:
        """Total mechanical energy [J]."""
        return self.kinetic_energy(t, q, u, params) + self.potential_energy(t, q, params)

    # ---- joint space -------------------------------------------------------------------------------------------
    def from_joint_state(self, q, u=None, t: float = 0.0, params=None):
        """(q_cart (7 Nb,), u_cart (6 Nb,)) of the model's joint state q (n_q,), u (n_u,) by forward kinematics;
        the joints' fitted coordinates are seeded with q."""
        c, model = self._consts(params), self.model
        q = np.asarray(q, dtype=float)
        u = np.zeros(model.n_u) if u is None else np.asarray(u, dtype=float)
        nb = self.n_bodies
        p, R, nu = np.zeros((nb, 3)), np.zeros((nb, 3, 3)), np.zeros((nb, 6))
        for j, jd in enumerate(self.joints):
            pj, par = jd.pj, model.parent[j]
            qj = q[pj.q_slice]
            RFM, pFM, S, sig = jd.geom(np.concatenate([qj, [t], c["p"]]))[:4]
            RpF, rpF, RcM, rcM, X_Fp, X_Mc = c["place"][j]
            R0F, oF = (RpF, rpF) if par < 0 else (R[par] @ RpF, p[par] + R[par] @ rpF)
            R[j] = R0F @ RFM @ RcM.T
            p[j] = oF + R0F @ pFM[:, 0] - R[j] @ rcM
            vF = X_Fp @ nu[par] if par >= 0 else np.zeros(6)
            vM = motion_transform(RFM, pFM[:, 0]) @ vF + S @ u[pj.u_slice] + sig[:, 0]
            nu[j] = np.linalg.solve(X_Mc, vM)
            self._q_cache[j] = qj.copy()
        e = np.array([rotation_to_quaternion(Ri) for Ri in R])
        return np.hstack([p, e]).reshape(-1), nu.reshape(-1)

    def joint_coordinates(self, q, u=None, t: float = 0.0, params=None):
        """The model's joint state (q (n_q,), u (n_u,)) fitted to a Cartesian state (any joint kind; revolute
        angles continue from the last evaluation)."""
        ev = self._evaluate(t, q, u, params, need_loads=False)
        return ev["q_joint"].copy(), ev["u_joint"].copy()

    def body_accelerations(self, q, u, udot, t: float = 0.0, params=None) -> np.ndarray:
        """nu' (Nb, 6) in body axes from joint-space q (n_q,), u (n_u,), u' (n_u,) (e.g. ABA's), to compare:
        a_M = X_MF a_F + S u'_J + (S' u_J + sigma') + v_M x v_rel."""
        ev = self._evaluate(t, *self.from_joint_state(q, u, t, params), params, need_loads=False)
        acc, udot = np.zeros((self.n_bodies, 6)), np.asarray(udot, dtype=float)
        for j, jd in enumerate(self.joints):
            pj, par = jd.pj, self.model.parent[j]
            _, S, _, X_MF, X_Mc, X_Fp, v_rel, _, b = ev["info"][j]
            aF = X_Fp @ acc[par] if par >= 0 else np.zeros(6)
            aM = X_MF @ aF + S @ udot[pj.u_slice] + b + crm(X_Mc @ ev["nu"][j]) @ v_rel
            acc[j] = np.linalg.solve(X_Mc, aM)
        return acc

    def joint_accelerations(self, q, u, nudot, t: float = 0.0, params=None) -> np.ndarray:
        """u' (n_u,) of the model's speeds from body accelerations nu' (6 Nb,): S^+ (d/dt v_rel - S' u - sigma')."""
        ev = self._evaluate(t, q, u, params, need_loads=False)
        a, out = np.asarray(nudot, dtype=float).reshape(self.n_bodies, 6), np.zeros(self.model.n_u)
        for j, jd in enumerate(self.joints):
            _, S, _, X_MF, X_Mc, X_Fp, v_rel, XvF, b = ev["info"][j]
            par = self.model.parent[j]
            if jd.nu:
                aF = X_MF @ X_Fp @ a[par] if par >= 0 else np.zeros(6)
                out[jd.pj.u_slice] = _lsq(S, X_Mc @ a[j] - aF + crm(v_rel) @ XvF - b)
        return out

    # ---- assembly and projection (seed 003) ----------------------------------------------------------------
    def project(self, q, u, t: float = 0.0, params=None, tol: float = 1e-12, max_iter: int = 30):
        """(q, u) moved onto C(q) = 0 by Newton's method with minimum-norm steps through the twists
        (dq = G^+ (-C) applied as body-axis rotations and translations, quaternions renormalized), then u
        projected onto G u = 0 in the mass metric. Raises KaneError when Newton does not converge."""
        q = np.array(q, dtype=float).reshape(self.n_bodies, 7)
        for it in range(max_iter + 1):
            ev = self._evaluate(t, q.reshape(-1), None, params, need_loads=False)
            res = float(np.max(np.abs(ev["C"]))) if ev["C"].size else 0.0
            if res <= tol:
                break
            if it == max_iter:
                raise KaneError(f"Cartesian assembly of {self.model.name!r}: max |C| = {res:.3g} after {max_iter} "
                                f"Newton steps at t = {t:g}")
            d = np.linalg.lstsq(ev["G"], -ev["C"], rcond=None)[0].reshape(self.n_bodies, 6)
            for i in range(self.n_bodies):
                q[i, :3] += ev["R"][i] @ d[i, 3:]
                q[i, 3:] = quaternion_compose(q[i, 3:] / np.linalg.norm(q[i, 3:]), d[i, :3])
        ev = self._evaluate(t, q.reshape(-1), u, params, need_loads=False)
        G = ev["G"]
        if G.shape[0]:
            MGt = block_diag(*ev["c"]["Minv"]) @ G.T
            lam = np.linalg.lstsq(G @ MGt, G @ ev["nu"].reshape(-1), rcond=None)[0]
            u = ev["nu"].reshape(-1) - MGt @ lam
        return q.reshape(-1), np.asarray(u, dtype=float).reshape(-1)

    def make_projection(self, params=None, tol: float = 1e-12):
        """A ``projection(t, q, u) -> (q, u)`` hook for kane.simulate (positions and velocities onto C = 0)."""
        return lambda t, q, u: self.project(q, u, t, params, tol)
