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

Every method evaluates the same generated code (:mod:`.cartesian_terms`): one traced Program gives every joint's
Gauss-Newton step at once (joints without quaternion coordinates; the others, and any fit that fails, go through
the per-joint fit of :mod:`.cartesian_fit`), and one gives G, gamma, C', C and the body forces, compiled twice from
one trace: with udot's outputs only, and with the pieces the other methods need besides (each joint's complement
T at its rows, actuation, the map v_rel = J nu, the bias kappa, S, S^+, the potential energy). Only the Schur/QR
solve and its rank check stay in numpy.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import block_diag
from scipy.linalg.lapack import dtrtrs

from ..errors import KaneError, ModelError
from ..model.elements import ConstraintKind
from ..model.system import Model, System
from ..protocol import Capabilities, unsupported
from ..spatial import (motion_transform, quaternion_compose, quaternion_to_rotation, rotation_to_quaternion,
                       spatial_inertia)
from .cartesian_fit import fit_all

__all__ = ["CartesianDynamics", "ConstraintRankError"]


class ConstraintRankError(KaneError):
    """The constraint rows G lost rank: attributes ``t`` [s], ``q`` (7 Nb,), ``u`` (6 Nb,), ``ratio`` (smallest
    over largest singular value of G M^-1/2) and ``rows`` (names of the rows that became dependent)."""

    def __init__(self, message, t, q, u, ratio, rows):
        super().__init__(message)
        self.t, self.q, self.u, self.ratio, self.rows = t, q, u, ratio, rows


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
        self._has_potential = all(s.potential is not None for s in model.springs) and all(
            ld.potential is not None for ld in model.joint_loads)
        self.row_names = tuple(f"joint {self.joints[j].pj.name!r} row {k + 1}" for j in range(nb)
                               for k in range(6 - self.joints[j].nu)) + tuple(
            f"loop closure {lc[0]!r} row {k + 1}" for lc in self.loops for k in range(len(lc[3]) + 3 * lc[2]))
        self.n_constraints = len(self.row_names)  # Nc, the rows of G
        self.n_unknowns = self.n_u + self.n_constraints  # 6 Nb + Nc: accelerations and multipliers
        self.n_dof = self.n_u - self.n_constraints  # 6 Nb - Nc: the minimal count when G has full rank
        self._q_cache = [jd.q0.copy() for jd in self.joints]
        self._pcache = {}
        self._parent_index = np.array([nb if pa < 0 else pa for pa in model.parent], dtype=int)
        self._terms_fn = self._full_fn = self._program = None  # the traced terms (cartesian_terms), compiled on use
        self._fit_fn = None  # the traced Gauss-Newton step of the joints without quaternions, likewise
        self._row_joints = [j for j, jd in enumerate(self.joints) if jd.nu < 6]

    def _terms(self, full=False):
        """The compiled terms: udot's outputs, or (``full``) every output of :func:`.cartesian_terms.compile_terms`,
        both from one trace."""
        fn = self._full_fn if full else self._terms_fn
        if fn is None:
            from .cartesian_terms import compile_terms, trace_terms
            if self._program is None:
                self._program = trace_terms(self)[0]
            fn = compile_terms(self, self._program, full=full)
            if full:
                self._full_fn = fn
            else:
                self._terms_fn = fn
        return fn

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
    def _evaluate(self, t, q, u, params, inputs=None, full=False):
        """One evaluation through the traced terms: G, gamma (Baumgarte included), C', C, F (Nb, 6), the fitted
        joint state; with ``full`` also T, act, J, kappa, S, P and V (see :func:`.cartesian_terms.compile_terms`)."""
        c = self._consts(params)
        pvec, nb = c["p"], self.n_bodies
        q = np.asarray(q, dtype=float).reshape(nb, 7)
        u = np.zeros(self.n_u) if u is None else np.asarray(u, dtype=float).reshape(-1)
        qJ, err, Ss = fit_all(self, c, q, t)
        extra = []
        for j in self._row_joints:  # joints with rows: their pose error, and a complement of S where S varies
            extra.append(err[j])
            if self.joints[j].T_const is None:
                extra.append(np.linalg.svd(Ss[j])[0][:, self.joints[j].nu:].reshape(-1))
        qfull = np.concatenate([q.reshape(-1), qJ] + extra)
        out = self._terms(full)(t, qfull, u, pvec, self.model.input_values(inputs))
        G, gam, Cd, C, F, uJ = out[:6]
        ev = {"c": c, "G": G, "gamma": gam - 2 * self.alpha * Cd - self.beta ** 2 * C, "Cdot": Cd, "C": C,
              "F": F.reshape(nb, 6), "q_joint": qJ, "u_joint": uJ, "nu": u.reshape(nb, 6)}
        if full:
            ev.update(zip(("T", "act", "J", "kappa", "S", "P", "V"), out[6:]))
        return ev

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
        w, x, y, z = 0.5 * e.T
        E = np.empty((self.n_bodies, 4, 3))  # E(e) / 2, written in place (stacks of columns cost more here)
        E[:, 0, 0], E[:, 0, 1], E[:, 0, 2] = -x, -y, -z
        E[:, 1, 0], E[:, 1, 1], E[:, 1, 2] = w, -z, y
        E[:, 2, 0], E[:, 2, 1], E[:, 2, 2] = z, w, -x
        E[:, 3, 0], E[:, 3, 1], E[:, 3, 2] = -y, x, w
        edot = np.einsum("bij,bj->bi", E, u[:, :3]) - self.beta * ((e * e).sum(1) - 1.0)[:, None] * e
        pdot = np.einsum("bij,bj->bi", quaternion_to_rotation(e), u[:, 3:])
        return np.hstack([pdot, edot]).reshape(-1)

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """nu' (6 Nb,): every body's spatial acceleration in its axes [rad/s^2, m/s^2]."""
        return self._solve(t, q, u, self._evaluate(t, q, u, params, inputs))[0]

    def rhs(self, t, q, u, params=None, inputs=None):
        """(q', u') in one evaluation."""
        return self.qdot(t, q, u, params, inputs), self.udot(t, q, u, params, inputs)

    def joint_forces(self, t, q, u, params=None, inputs=None) -> dict:
        """The spatial force each joint transmits, joint name -> (6,) (moment about M's origin [N m], force [N]) in
        the joint's M axes, exerted by the parent on the child: constraint wrench T lambda plus actuation (the
        same quantity as RNEA's ``RecursiveDynamics.joint_forces``)."""
        ev = self._evaluate(t, q, u, params, inputs, full=True)
        f = (ev["T"] @ self._solve(t, q, u, ev)[1] + ev["act"]).reshape(self.n_bodies, 6)
        return {jd.pj.name: f[j] for j, jd in enumerate(self.joints)}

    def constraint_residual(self, t, q, u, params=None) -> np.ndarray:
        """C' = G nu (m,): velocity-level constraint errors [rad/s, m/s]."""
        return self._evaluate(t, q, u, params)["Cdot"]

    def configuration_residual(self, t, q, params=None) -> np.ndarray:
        """C (m,): position-level errors [rad, m] of the joint rows and loop closures (zero for frame rows)."""
        return self._evaluate(t, q, None, params)["C"]

    def kinetic_energy(self, t, q, u, params=None) -> float:
        """Sum of 0.5 nu_i^T I_i nu_i [J]."""
        I = self._consts(params)["I"]
        nu = np.asarray(u, dtype=float).reshape(self.n_bodies, 6)
        return 0.5 * float(np.einsum("bi,bij,bj->", nu, I, nu))

    def potential_energy(self, t, q, params=None) -> float:
        """Potential energy [J] of gravity, springs and joint springs (joint coordinates fitted)."""
        if not self._has_potential:
            raise NotImplementedError("a spring or joint load has no known potential: energy is not defined")
        return float(self._evaluate(t, q, None, params, full=True)["V"][0])

    def energy(self, t, q, u, params=None) -> float:
        """Total mechanical energy [J]."""
        return self.kinetic_energy(t, q, u, params) + self.potential_energy(t, q, params)

    def check_quaternions(self, q, what: str = "q0", tol: float = 1e-6) -> None:
        """Refuse a state q (7 Nb, or longer as a contact's) whose body quaternions (q[7 i + 3 : 7 i + 7], body i
        of the model) are not unit quaternions within ``tol``, naming the body and the norm (the model's own
        check indexes its joint coordinates, a different layout)."""
        e = np.asarray(q, dtype=float)[:7 * self.n_bodies].reshape(self.n_bodies, 7)[:, 3:]
        for b, ei in zip(self.model.bodies, e):
            norm = float(np.linalg.norm(ei))
            if not abs(norm - 1.0) <= tol:
                raise ModelError(f"body {b.name!r}: {what} holds the quaternion {np.array2string(ei, precision=6)} "
                                 f"of norm {norm:.6g}; expected a unit quaternion (scalar first, norm 1 to {tol:g})")

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
        ev = self._evaluate(t, q, u, params)
        return ev["q_joint"].copy(), ev["u_joint"].copy()

    def body_accelerations(self, q, u, udot, t: float = 0.0, params=None) -> np.ndarray:
        """nu' (Nb, 6) in body axes from joint-space q (n_q,), u (n_u,), u' (n_u,) (e.g. ABA's), to compare:
        a_M = X_MF a_F + S u'_J + (S' u_J + sigma') + v_M x v_rel."""
        ev = self._evaluate(t, *self.from_joint_state(q, u, t, params), params, full=True)
        rhs = ev["S"] @ np.asarray(udot, dtype=float) + ev["kappa"]  # J nu' = S u' + kappa
        return np.linalg.solve(ev["J"], rhs).reshape(self.n_bodies, 6)

    def joint_accelerations(self, q, u, nudot, t: float = 0.0, params=None) -> np.ndarray:
        """u' (n_u,) of the model's speeds from body accelerations nu' (6 Nb,): S^+ (d/dt v_rel - S' u - sigma')."""
        ev = self._evaluate(t, q, u, params, full=True)
        return ev["P"] @ (ev["J"] @ np.asarray(nudot, dtype=float).reshape(-1) - ev["kappa"])

    # ---- assembly and projection (seed 003) ----------------------------------------------------------------
    def project(self, q, u, t: float = 0.0, params=None, tol: float = 1e-12, max_iter: int = 30):
        """(q, u) moved onto C(q) = 0 by Newton's method with minimum-norm steps through the twists
        (dq = G^+ (-C) applied as body-axis rotations and translations, quaternions renormalized), then u
        projected onto G u = 0 in the mass metric. Raises KaneError when Newton does not converge."""
        q = np.array(q, dtype=float).reshape(self.n_bodies, 7)
        for it in range(max_iter + 1):
            ev = self._evaluate(t, q.reshape(-1), None, params)
            res = float(np.max(np.abs(ev["C"]))) if ev["C"].size else 0.0
            if res <= tol:
                break
            if it == max_iter:
                raise KaneError(f"Cartesian assembly of {self.model.name!r}: max |C| = {res:.3g} after {max_iter} "
                                f"Newton steps at t = {t:g}")
            d = np.linalg.lstsq(ev["G"], -ev["C"], rcond=None)[0].reshape(self.n_bodies, 6)
            R = quaternion_to_rotation(q[:, 3:])
            for i in range(self.n_bodies):
                q[i, :3] += R[i] @ d[i, 3:]
                q[i, 3:] = quaternion_compose(q[i, 3:] / np.linalg.norm(q[i, 3:]), d[i, :3])
        ev = self._evaluate(t, q.reshape(-1), u, params)
        G = ev["G"]
        if G.shape[0]:
            MGt = block_diag(*ev["c"]["Minv"]) @ G.T
            lam = np.linalg.lstsq(G @ MGt, G @ ev["nu"].reshape(-1), rcond=None)[0]
            u = ev["nu"].reshape(-1) - MGt @ lam
        return q.reshape(-1), np.asarray(u, dtype=float).reshape(-1)

    def make_projection(self, params=None, tol: float = 1e-12):
        """A ``projection(t, q, u) -> (q, u)`` hook for kane.simulate (positions and velocities onto C = 0)."""
        return lambda t, q, u: self.project(q, u, t, params, tol)

    # ---- the rest of the kane.protocol.Dynamics interface ------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """Energy where every load has a potential, and its own projection; M, f, constraint rows and forces are
        internal to its multiplier solve (not offered), and it has no compiled loop."""
        return Capabilities(energy=self._has_potential, projection=True,
                            compiled_loop_reason=f"the C loop runs Kane's equations only, not {type(self).__name__}")

    mass_matrix = unsupported("mass_matrix", "absolute coordinates solve for the accelerations with multipliers; "
                              "there is no M of independent speeds")
    forcing = unsupported("forcing", "absolute coordinates solve for the accelerations with multipliers; there is "
                          "no f of independent speeds")
    holonomic_rows = unsupported("holonomic_rows", "its constraint rows are internal (configuration_residual gives C)")
    motion_rows = unsupported("motion_rows", "its constraint rows are internal (constraint_residual gives C')")
    constraint_forces = unsupported("constraint_forces", "it reports the joints' wrenches (joint_forces) instead")
    loop_function = unsupported("loop_function", "the C loop runs Kane's equations only")
