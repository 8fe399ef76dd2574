"""Kinematics of a tree, body to body in local axes, emitted as named intermediate quantities.

Spatial vectors are in body axes at the body frame's origin (Featherstone's body coordinates): a motion vector
is (omega, v) with v the velocity of the body-fixed point at the origin; a force vector is (n, f) with n the
moment about the origin. ``R_pc[i]`` takes body i's axes to its parent's; ``r_pc[i]`` locates body i's origin in
parent axes. Gravity enters as a fictitious acceleration -g of the ground (so accelerations include it).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.add import _addsort
from sympy.core.basic import _args_sortkey

from ..codegen.program import ProgramBuilder
from ..model.model import Model

__all__ = ["TreeKinematics", "cross", "dot3", "matvec", "matTvec", "matmul3", "sum_products", "product", "add",
           "exact_zero", "crm", "crf"]

_ZERO = sp.S.Zero
_ONE = sp.S.One


def exact_zero(x) -> bool:
    """x is sympy's exact zero or the integer 0 (a product with it is 0 and can be left out)."""
    return x is _ZERO or (type(x) is int and x == 0)


def _monomial(x):
    """(coefficient, symbols) of a sympy number, symbol or product of a leading number and distinct symbols (the
    canonical form sympy gives them: symbols sorted by ``Basic.compare``); None for anything else."""
    if x.is_Symbol:
        return _ONE, (x,)
    if x.is_Number:
        return x, ()
    if x.is_Mul:
        args = x.args
        c, syms = (args[0], args[1:]) if args[0].is_Number else (_ONE, args)
        if all(a.is_Symbol for a in syms):
            return c, syms
    return None


def product(x, y):
    """x y, equal (the same arguments in the same order) to sympy's ``x * y``: products of numbers and symbols
    (the most frequent ones in the kinematics) are put together as sympy's ``Mul.flatten`` would (coefficients
    multiplied, symbols merged in ``Basic.compare`` order) without its general machinery; everything else, and
    a repeated symbol (a power), a zero coefficient or a plain Python number, is left to sympy."""
    if isinstance(x, sp.Basic) and isinstance(y, sp.Basic):
        mx, my = _monomial(x), _monomial(y)
        if mx is not None and my is not None:
            c, syms = mx[0] * my[0], mx[1] + my[1]
            if c.is_Number and c != 0 and len(set(syms)) == len(syms):
                if not syms:
                    return c
                if len(mx[1]) and len(my[1]):
                    syms = sorted(syms, key=_args_sortkey)
                if c is _ONE:
                    return syms[0] if len(syms) == 1 else sp.Mul._from_args(tuple(syms))
                return sp.Mul._from_args((c, *syms))
    return x * y


def sum_products(pairs, signs=None):
    """sum of s x y over the pairs (x, y) and signs s (default all +1), formed as one sympy Add with the products
    that have an exact zero factor left out: the same expression as the chained arithmetic, without its
    intermediate sums."""
    if signs is None:
        terms = [product(x, y) for x, y in pairs if not (exact_zero(x) or exact_zero(y))]
    else:
        terms = [product(x, y) if s > 0 else -product(x, y) for (x, y), s in zip(pairs, signs)
                 if not (exact_zero(x) or exact_zero(y))]
    if len(terms) < 2:
        return terms[0] if terms else _ZERO
    if any(isinstance(t, sp.Basic) for t in terms):
        return add(terms)
    return sum(terms[1:], terms[0])  # plain numbers stay plain numbers


def add(terms):
    """The sum of sympy ``terms``, equal (the same arguments in the same order) to ``sp.Add(*terms)``: when every
    term is a number or a monomial (see :func:`product`), like terms are collected, zero coefficients dropped
    and the rest sorted as sympy's ``Add.flatten`` does, without its general machinery; else sympy's Add."""
    number, collected = _ZERO, {}
    for t in terms:
        m = _monomial(t) if isinstance(t, sp.Basic) else None
        if m is None:
            return sp.Add(*terms)
        c, syms = m
        if not syms:
            number = number + c
        elif syms in collected:
            collected[syms] = collected[syms] + c
        else:
            collected[syms] = c
    out = []
    for syms, c in collected.items():
        if c == 0:
            continue
        if c is _ONE:
            out.append(syms[0] if len(syms) == 1 else sp.Mul._from_args(syms))
        else:
            out.append(sp.Mul._from_args((c, *syms)))
    _addsort(out)
    if number is not _ZERO:
        out.insert(0, number)
    if len(out) < 2:
        return out[0] if out else _ZERO
    return sp.Add._from_args(out)


def matmul3(A, B) -> sp.Matrix:
    """A B of two 3 x 3 matrices, exact zeros skipped."""
    return sp.Matrix(3, 3, [sum_products(((A[i, 0], B[0, j]), (A[i, 1], B[1, j]), (A[i, 2], B[2, j])))
                            for i in range(3) for j in range(3)])


def cross(a, b):
    m = (1, -1)
    return [sum_products(((a[1], b[2]), (a[2], b[1])), m), sum_products(((a[2], b[0]), (a[0], b[2])), m),
            sum_products(((a[0], b[1]), (a[1], b[0])), m)]


def dot3(a, b):
    """a . b of two 3-vectors (their first three entries), formed as sympy's canonical sum (:func:`sum_products`);
    the traced, non-canonical scalar product of any length is :func:`kane.codegen.trace.traced_dot`."""
    return sum_products(((a[0], b[0]), (a[1], b[1]), (a[2], b[2])))


def matvec(R, v):
    return [sum_products(((R[i, 0], v[0]), (R[i, 1], v[1]), (R[i, 2], v[2]))) for i in range(3)]


def matTvec(R, v):
    return [sum_products(((R[0, i], v[0]), (R[1, i], v[1]), (R[2, i], v[2]))) for i in range(3)]


class TreeKinematics:
    """Forward kinematics of ``model`` with speeds ``u`` (symbols), emitted into ``builder``.

    Per body i (parent-before-child order): ``R_pc[i]`` (3x3), ``r_pc[i]`` (3,), ``S[i]`` (6 x nu_i) the motion
    subspace in body axes, ``vel[i]`` (6,) the spatial velocity, ``acc[i]`` (6,) the acceleration at u' = 0
    (velocity-product terms and gravity), ``W[i]``/``X[i]`` the kinematic map of its joint.
    """

    def __init__(self, model: Model, builder: ProgramBuilder):
        self.model, self.b = model, builder
        a = builder.assign
        self.qdot = [None] * model.n_q
        self.R_pc, self.r_pc, self.S, self.sigma, self.vel, self.acc = [], [], [], [], [], []
        self._R0, self._r0, self._partials = {}, {}, {}
        self.memo = {}  # quantities other modules form once from these kinematics (the body inertias)
        self.W_full = sp.zeros(model.n_q, model.n_u)  # q' = W_full u + X
        joint_kin = []
        for pj in model.joints:  # kinematic differential equations first: time derivatives need them
            q_j = sp.Matrix(model.q[pj.q_slice])
            jk = pj.joint.kinematics(q_j, model.t)
            joint_kin.append(jk)
            if pj.joint.nq:
                W_j = builder.assign_matrix(jk.W)
                self.W_full[pj.q_slice, pj.u_slice] = W_j
                u_j = list(model.u[pj.u_slice])
                rates = [sum_products([(W_j[r, c], u_j[c]) for c in range(len(u_j))]) + jk.X[r]
                         for r in range(W_j.shape[0])]
            else:
                rates = sp.zeros(0, 1)
            for k, idx in enumerate(range(model.n_q)[pj.q_slice]):
                self.qdot[idx] = a(rates[k])
                builder.rates[model.q[idx]] = self.qdot[idx]
        g0 = [-gk for gk in model.gravity]
        for i, pj in enumerate(model.joints):
            q_j = sp.Matrix(model.q[pj.q_slice])
            jk = joint_kin[i]
            R_FM, p_FM = pj.joint.transform(q_j)
            R_FM = builder.assign_matrix(R_FM)
            R_pF, R_cM = sp.Matrix(pj.R_parent_F), sp.Matrix(pj.R_child_M)
            R_pc = builder.assign_matrix(matmul3(matmul3(R_pF, R_FM), R_cM.T))
            r_F, r_M = matvec(R_pF, list(p_FM)), matvec(R_pc, list(pj.r_child_M))
            r_pc = [a(pj.r_parent_F[k] + r_F[k] - r_M[k]) for k in range(3)]
            self.R_pc.append(R_pc)
            self.r_pc.append(r_pc)
            # motion subspace and velocity bias of the joint, moved from frame M to body axes
            S_M = builder.assign_matrix(jk.S_M)
            S_c = sp.zeros(6, pj.joint.nu)
            for k in range(pj.joint.nu):
                S_c[:, k] = self._from_M(pj, S_M[:, k])
            sig_c = self._from_M(pj, jk.sigma_M)
            self.S.append(S_c)
            self.sigma.append(sig_c)
            u_j = list(model.u[pj.u_slice])
            rel = [a(sum((S_c[r, k] * u_j[k] for k in range(len(u_j))), sp.S.Zero) + sig_c[r]) for r in range(6)]
            # spatial velocity: parent's, carried into body axes, plus the joint's relative twist
            if pj.parent < 0:
                v_par = [sp.S.Zero] * 6
                a_par = [sp.S.Zero] * 3 + list(g0)
            else:
                v_par, a_par = self.vel[pj.parent], self.acc[pj.parent]
            v = [a(x + y) for x, y in zip(self.motion_to_child(i, v_par), rel)]
            self.vel.append(v)
            # acceleration at u' = 0: carried parent's + S' u + sigma' + v x (relative twist)
            rel_M = [sum((S_M[r, k] * u_j[k] for k in range(len(u_j))), sp.S.Zero) + jk.sigma_M[r]
                     for r in range(6)]
            rel_dot_M = sp.Matrix([builder.time_derivative(e) for e in rel_M])
            rel_dot = self._from_M(pj, rel_dot_M)
            cr = crm(v, rel)
            acc = [a(x + y + z) for x, y, z in zip(self.motion_to_child(i, a_par), rel_dot, cr)]
            self.acc.append(acc)

    def _from_M(self, pj, m):
        """A motion vector in the joint's M axes, expressed in the child body's axes at its origin."""
        R = sp.Matrix(pj.R_child_M)
        w = [self.b.assign(e) for e in matvec(R, [m[0], m[1], m[2]])]
        v = matvec(R, [m[3], m[4], m[5]])
        r = [-c for c in pj.r_child_M]
        wxr = cross(w, r)
        return [w[0], w[1], w[2]] + [self.b.assign(v[k] + wxr[k]) for k in range(3)]

    def motion_to_child(self, i, m):
        """Carry a motion vector from the parent's axes to body i's axes (X_child_parent m)."""
        R, r = self.R_pc[i], self.r_pc[i]
        a = self.b.assign
        w, v = list(m[:3]), list(m[3:])
        wc = [a(e) for e in matTvec(R, w)]
        vs = [a(v[k] + e) for k, e in enumerate(cross(w, r))]
        return wc + [a(e) for e in matTvec(R, vs)]

    def force_to_parent(self, i, f):
        """Carry a force vector from body i's axes to its parent's (X_child_parent^T f)."""
        R, r = self.R_pc[i], self.r_pc[i]
        a = self.b.assign
        fp = [a(e) for e in matvec(R, f[3:])]
        n = matvec(R, f[:3])
        rxf = cross(r, fp)
        return [a(n[k] + rxf[k]) for k in range(3)] + fp

    def body_partials(self, i):
        """(P, p_t): body i's partial spatial velocities (6 x n_u, body axes; column r is the partial angular
        velocity and the partial velocity of the origin for u_r) and the remainder (6,), v_i = P u + p_t."""
        if i in self._partials:
            return self._partials[i]
        pj = self.model.joints[i]
        P = sp.zeros(6, self.model.n_u)
        rem = [sp.S.Zero] * 6
        if pj.parent >= 0:
            Pp, rem_p = self.body_partials(pj.parent)
            for r in range(self.model.n_u):
                if any(e != 0 for e in Pp[:, r]):
                    P[:, r] = sp.Matrix(self.motion_to_child(i, list(Pp[:, r])))
            if any(e != 0 for e in rem_p):
                rem = self.motion_to_child(i, rem_p)
        for k, col in enumerate(range(self.model.n_u)[pj.u_slice]):
            P[:, col] = self.S[i][:, k]
        rem = [self.b.assign(x + y) for x, y in zip(rem, self.sigma[i])]
        self._partials[i] = (P, rem)
        return P, rem

    def point_partials_in_body(self, i, point):
        """Partial velocities (3 x n_u) and remainder (3,) of the point ``point`` of body i, in body i's axes."""
        P, rem = self.body_partials(i)
        V = sp.zeros(3, self.model.n_u)
        for r in range(self.model.n_u):
            col = P[:, r]
            if any(e != 0 for e in col):
                wxp = cross([col[0], col[1], col[2]], list(point))
                V[:, r] = sp.Matrix([self.b.assign(col[3 + j] + wxp[j]) for j in range(3)])
        wxp = cross(rem[:3], list(point))
        return V, [self.b.assign(rem[3 + j] + wxp[j]) for j in range(3)]

    # ---- absolute quantities (emitted only when asked for) -------------------------------------------------
    def rotation_to_ground(self, i):
        """R_0_i (3x3): body i's axes to ground axes; the identity for ground (i = -1)."""
        if i < 0:
            return sp.eye(3)
        if i not in self._R0:
            p = self.model.parent[i]
            self._R0[i] = self.R_pc[i] if p < 0 else self.b.assign_matrix(matmul3(self.rotation_to_ground(p),
                                                                                  self.R_pc[i]))
        return self._R0[i]

    def origin_in_ground(self, i):
        """Position of body i's origin in ground axes (3,)."""
        if i < 0:
            return [sp.S.Zero] * 3
        if i not in self._r0:
            p = self.model.parent[i]
            if p < 0:
                self._r0[i] = list(self.r_pc[i])
            else:
                rp = matvec(self.rotation_to_ground(p), self.r_pc[i])
                self._r0[i] = [self.b.assign(x + y) for x, y in zip(self.origin_in_ground(p), rp)]
        return self._r0[i]

    def point_in_ground(self, i, point):
        """Position in ground axes of a point given in body i's axes."""
        o = self.origin_in_ground(i)
        Rp = matvec(self.rotation_to_ground(i), list(point))
        return [self.b.assign(x + y) for x, y in zip(o, Rp)]

    def vector_in_body(self, vec, frame, i):
        """Components in body i's axes of a vector given in ``frame`` (a body index, -1 for ground)."""
        if frame == i:
            return list(vec)
        ground = matvec(self.rotation_to_ground(frame), list(vec)) if frame >= 0 else list(vec)
        return [self.b.assign(e) for e in matTvec(self.rotation_to_ground(i), ground)]

    def point_velocity_in_ground(self, i, point):
        """Velocity in ground axes of the body-fixed point ``point`` (body i's axes) of body i."""
        if i < 0:
            return [sp.S.Zero] * 3
        w, v = self.vel[i][:3], self.vel[i][3:]
        vp = [v[k] + e for k, e in enumerate(cross(w, list(point)))]
        return [self.b.assign(e) for e in matvec(self.rotation_to_ground(i), vp)]

    def angular_velocity_in_ground(self, i):
        """Angular velocity of body i in ground axes (3,); zero for ground (i = -1)."""
        if i < 0:
            return [sp.S.Zero] * 3
        return [self.b.assign(e) for e in matvec(self.rotation_to_ground(i), list(self.vel[i][:3]))]

    def point_velocity_rate(self, i, point, ground: bool = True):
        """The velocity-product part (at u' = 0) of d/dt of the velocity of body i's body-fixed point at ``point``
        (3,) (body axes; it may move over the body with q, as a rolling contact does): in ground axes, the rate
        of v_P = R0 (v + w x p); with ``ground=False`` the rate of its body-axis components v + w x p. It reuses
        the bodies' accelerations ``acc`` (gravity removed), so the rates of constraint rows A u + b cost a few
        operations instead of the chain rule through their partial velocities [m/s^2]."""
        a = self.b.assign
        w, v, wd = self.vel[i][:3], self.vel[i][3:], self.acc[i][:3]
        g0 = [-gk for gk in self.model.gravity]
        g_body = matTvec(self.rotation_to_ground(i), g0) if any(gk != 0 for gk in g0) else [0, 0, 0]
        p = list(point)
        pd = [self.b.time_derivative(e) for e in p]
        wxp, wdxp, wxpd = cross(w, p), cross(wd, p), cross(w, pd)
        rate = [a(self.acc[i][3 + k] - g_body[k] + wdxp[k] + wxpd[k]) for k in range(3)]
        if not ground:
            return rate
        vp = [a(v[k] + wxp[k]) for k in range(3)]
        wxvp = cross(w, vp)
        return [a(e) for e in matvec(self.rotation_to_ground(i), [a(x + y) for x, y in zip(rate, wxvp)])]

    def ancestors(self, i):
        """Joint indices from body i up to the ground (body i's own joint first)."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.model.parent[i]
        return out

    def point_partials(self, i, point):
        """Partial velocities (3 x n_u, ground axes) and remainder (3,) of the point of body i at ``point`` (body
        i's axes): v = V u + v_t. Lever arms are carried inward through the relative placements, never through
        absolute positions, so no large coordinates cancel."""
        n = self.model.n_u
        V = sp.zeros(3, n)
        rem = [sp.S.Zero] * 3
        arm = list(point)
        k = i
        while k >= 0:
            pj = self.model.joints[k]
            R0 = self.rotation_to_ground(k)
            cols = [(c, self.S[k][:, c - pj.u_slice.start]) for c in range(n)[pj.u_slice]]
            for col, s in cols + [(None, self.sigma[k])]:
                if all(e == 0 for e in s):
                    continue
                w_x_arm = cross([s[0], s[1], s[2]], arm)
                vb = [s[3 + j] + w_x_arm[j] for j in range(3)]
                vp = [self.b.assign(e) for e in matvec(R0, vb)]
                if col is None:
                    rem = [rem[j] + vp[j] for j in range(3)]
                else:
                    V[:, col] = sp.Matrix(vp)
            if self.model.parent[k] >= 0:
                moved = matvec(self.R_pc[k], arm)
                arm = [self.b.assign(moved[j] + self.r_pc[k][j]) for j in range(3)]
            k = self.model.parent[k]
        return V, rem

    def angular_partials_in_ground(self, i):
        """Partial angular velocities (3 x n_u, ground axes) and remainder of body i."""
        n = self.model.n_u
        W = sp.zeros(3, n)
        rem = [sp.S.Zero] * 3
        for j in self.ancestors(i):
            pj = self.model.joints[j]
            R0 = self.rotation_to_ground(j)
            for c in range(n)[pj.u_slice]:
                s = self.S[j][:, c - pj.u_slice.start]
                W[:, c] = sp.Matrix([self.b.assign(e) for e in matvec(R0, [s[0], s[1], s[2]])])
            w_sig = matvec(R0, [self.sigma[j][k] for k in range(3)])
            rem = [rem[k] + w_sig[k] for k in range(3)]
        return W, rem


def crm(v, m):
    """Spatial cross product of motion vectors, v x m."""
    w, vl = v[:3], v[3:]
    a = cross(w, m[:3])
    b = cross(w, m[3:])
    c = cross(vl, m[:3])
    return a + [b[k] + c[k] for k in range(3)]


def crf(v, f):
    """Spatial cross product for forces, v x* f."""
    w, vl = v[:3], v[3:]
    a = cross(w, f[:3])
    b = cross(vl, f[3:])
    c = cross(w, f[3:])
    return [a[k] + b[k] for k in range(3)] + c
