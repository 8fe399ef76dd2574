"""Kane's method, Fr + Fr* = 0 (Gillespie 2003, seed 000 Eqs. 13-17 and 32-34), with named intermediates.

For a tree, the partial velocity of every body outboard of joint j with respect to joint j's speeds is joint j's
motion subspace carried outboard, so the sums of Eqs. (32)-(33) over bodies are gathered joint by joint: a
backward pass accumulates each subtree's inertia and applied forces (F*), and Fr + Fr* is their projection on the
joint's motion subspace. The coefficient of u' in -Fr* is the generalized inertia (mass matrix) M, formed from
composite inertias; everything else is the forcing f, so that Fr + Fr* = 0 reads M u' = f. The explicit sum over
bodies with a table of partial velocities (``explicit_generalized_forces``) is kept as a second formulation; it
is what constraint embedding by substitution uses (seed 000 Eqs. 41-42).
"""

from __future__ import annotations

import sympy as sp

from ..codegen.program import ProgramBuilder
from ..model.system import Model, stretch, stretch_rate
from .kinematics import TreeKinematics, cross, crf, dot, matvec

__all__ = ["SpatialInertia", "body_inertia", "applied_body_forces", "recursive_mass_forcing",
           "explicit_generalized_forces", "energy_expressions", "joint_generalized_forces",
           "body_partial_velocities"]


def sdot(m, f):
    """The scalar product of a motion vector and a force vector (power), 6 components each."""
    return sum((m[k] * f[k] for k in range(6)), sp.S.Zero)


class SpatialInertia:
    """Spatial inertia about a frame origin, stored as mass m, first moment h = m c (3,) and rotational inertia
    about the origin Ibar (3x3 symmetric)."""

    def __init__(self, m, h, Ibar):
        self.m, self.h, self.Ibar = m, list(h), sp.Matrix(Ibar)

    def apply(self, b: ProgramBuilder, s):
        """I s for a motion vector s = (omega, v): (Ibar omega + h x v, m v - h x omega)."""
        w, v = s[:3], s[3:]
        hv, hw = cross(self.h, v), cross(self.h, w)
        Iw = matvec(self.Ibar, w)
        return [b.assign(Iw[k] + hv[k]) for k in range(3)] + [b.assign(self.m * v[k] - hw[k]) for k in range(3)]

    def to_parent(self, b: ProgramBuilder, R, r) -> "SpatialInertia":
        """The same inertia expressed in the parent's axes about the parent's origin (X^T I X)."""
        a = b.assign
        h1 = [a(e) for e in matvec(R, self.h)]
        RI = R * self.Ibar
        Ir = sp.zeros(3, 3)
        for i in range(3):
            for j in range(i, 3):
                Ir[i, j] = Ir[j, i] = sum((RI[i, k] * R[j, k] for k in range(3)), sp.S.Zero)
        rh = 2 * dot(r, h1) + self.m * dot(r, r)
        Ip = sp.zeros(3, 3)
        for i in range(3):
            for j in range(i, 3):
                e = Ir[i, j] - (h1[i] * r[j] + r[i] * h1[j] + self.m * r[i] * r[j])
                if i == j:
                    e += rh
                Ip[i, j] = Ip[j, i] = a(e)
        return SpatialInertia(self.m, [a(h1[k] + self.m * r[k]) for k in range(3)], Ip)

    def plus(self, b: ProgramBuilder, other: "SpatialInertia") -> "SpatialInertia":
        a = b.assign
        return SpatialInertia(a(self.m + other.m), [a(x + y) for x, y in zip(self.h, other.h)],
                              (self.Ibar + other.Ibar).applyfunc(a))


def body_inertia(model: Model, i: int) -> SpatialInertia:
    """Spatial inertia of body i about its origin in its axes (constants and parameters only)."""
    body = model.bodies[i]
    m, c = body.mass, list(body.com)
    Ibar = sp.Matrix(body.inertia) + m * (dot(c, c) * sp.eye(3) - sp.Matrix(c) * sp.Matrix(c).T)
    return SpatialInertia(m, [m * ck for ck in c], Ibar.applyfunc(sp.expand))


def applied_body_forces(model: Model, kin: TreeKinematics):
    """Applied forces (excluding gravity) as spatial forces on each body, in body axes at the body origin."""
    b = kin.b
    f = [[sp.S.Zero] * 6 for _ in model.bodies]

    def add(i, point, vec_body, couple=False):
        if i < 0:
            return
        if couple:
            for k in range(3):
                f[i][k] += vec_body[k]
            return
        moment = cross(list(point), vec_body)
        for k in range(3):
            f[i][k] += moment[k]
            f[i][3 + k] += vec_body[k]

    for F in model.forces:
        add(F.body, F.point, kin.vector_in_body(F.vector, F.frame, F.body))
    for T in model.torques:
        add(T.body, None, kin.vector_in_body(T.vector, T.frame, T.body), couple=True)
    for sp_ in model.springs:
        pa = kin.point_in_ground(sp_.body_a, sp_.point_a)
        pb = kin.point_in_ground(sp_.body_b, sp_.point_b)
        d = [b.assign(y - x) for x, y in zip(pa, pb)]
        length = b.assign(sp.sqrt(dot(d, d)))
        e = [b.assign(dk / length) for dk in d]
        va = kin.point_velocity_in_ground(sp_.body_a, sp_.point_a)
        vb = kin.point_velocity_in_ground(sp_.body_b, sp_.point_b)
        rate = b.assign(dot(e, [y - x for x, y in zip(va, vb)]))
        tension = b.assign(sp_.tension.xreplace({stretch: length - sp_.rest_length, stretch_rate: rate}))
        on_a = [b.assign(tension * ek) for ek in e]
        for body, point, sign in ((sp_.body_a, sp_.point_a, 1), (sp_.body_b, sp_.point_b, -1)):
            if body >= 0:
                add(body, point, kin.vector_in_body([sign * x for x in on_a], -1, body))
    return [[b.assign(x) for x in fi] for fi in f]


def joint_generalized_forces(model: Model, kin: TreeKinematics):
    """Generalized active forces from joint springs, dampers and actuators: W^T Q per joint (n_u,)."""
    out = [sp.S.Zero] * model.n_u
    for load in model.joint_loads:
        pj = model.joints[load.joint]
        W = pj.joint.kinematics(sp.Matrix(model.q[pj.q_slice]), model.t).W
        gen = W.T * sp.Matrix(load.Q)
        for k, idx in enumerate(range(model.n_u)[pj.u_slice]):
            out[idx] += gen[k]
    return [kin.b.assign(e) for e in out]


def _bias_forces(model, kin, inertias, f_applied):
    """Per body: I a + v x* I v - f_applied (the inertia force at u' = 0, negated, minus applied loads)."""
    out = []
    for i in range(model.n_bodies):
        I = inertias[i]
        Ia = I.apply(kin.b, kin.acc[i])
        Iv = I.apply(kin.b, kin.vel[i])
        vIv = crf(kin.vel[i], Iv)
        out.append([kin.b.assign(Ia[k] + vIv[k] - f_applied[i][k]) for k in range(6)])
    return out


def recursive_mass_forcing(model: Model, kin: TreeKinematics):
    """M (n_u x n_u) and f (n_u,) of the unconstrained system, M u' = f, by recursive gathering of Kane's sums.

    Backward pass: the subtree force F_i = f_i + sum over children of X^T F_c; joint i's rows of f are
    -S_i^T F_i plus joint loads. Composite inertias Ic_i give M[i, i] = S_i^T Ic_i S_i and, carried inward,
    the off-diagonal blocks M[j, i] = S_j^T X^T ... Ic_i S_i for every ancestor joint j.
    """
    b = kin.b
    n, nb = model.n_u, model.n_bodies
    inertias = [body_inertia(model, i) for i in range(nb)]
    f_bias = _bias_forces(model, kin, inertias, applied_body_forces(model, kin))
    Q = joint_generalized_forces(model, kin)
    # backward pass: subtree forces and composite inertias
    F = [list(fi) for fi in f_bias]
    Ic = list(inertias)
    for i in reversed(range(nb)):
        p = model.parent[i]
        if p >= 0:
            Fp = kin.force_to_parent(i, F[i])
            F[p] = [b.assign(x + y) for x, y in zip(F[p], Fp)]
            Ic[p] = Ic[p].plus(b, Ic[i].to_parent(b, kin.R_pc[i], kin.r_pc[i]))
    forcing = [sp.S.Zero] * n
    M = sp.zeros(n, n)
    for i, pj in enumerate(model.joints):
        cols = range(n)[pj.u_slice]
        for k, col in enumerate(cols):
            forcing[col] = b.assign(Q[col] - sdot(kin.S[i][:, k], F[i]))
        for k, col in enumerate(cols):
            force = Ic[i].apply(b, list(kin.S[i][:, k]))
            body = i
            while body >= 0:  # walk inward, projecting on each joint's subspace
                pjb = model.joints[body]
                for kk, row in enumerate(range(n)[pjb.u_slice]):
                    if row <= col or body != i:
                        M[row, col] = M[col, row] = b.assign(sdot(kin.S[body][:, kk], force))
                parent = model.parent[body]
                if parent >= 0:
                    force = kin.force_to_parent(body, force)
                body = parent
    return M, sp.Matrix(forcing)


def body_partial_velocities(model: Model, kin: TreeKinematics):
    """Table of partial velocities: per body a 6 x n_u matrix (body axes) whose column r is the partial
    spatial velocity (partial angular velocity; partial velocity of the origin) with respect to u_r."""
    return [kin.body_partials(i)[0] for i in range(model.n_bodies)]


def explicit_generalized_forces(model: Model, kin: TreeKinematics, C, c_acc):
    """Kane's equations summed body by body with a table of (constrained) partial velocities.

    C (n_u x p) maps independent speed derivatives to all of them and c_acc (n_u,) is the remainder,
    u' = C u'_ind + c_acc. Returns (M~, f~) with M~ u'_ind = f~, i.e. F~r + F~r* = 0 (seed 000 Eqs. 41-42).
    """
    b = kin.b
    p = C.shape[1]
    inertias = [body_inertia(model, i) for i in range(model.n_bodies)]
    f_bias = _bias_forces(model, kin, inertias, applied_body_forces(model, kin))
    Q = sp.Matrix(joint_generalized_forces(model, kin))
    partials = body_partial_velocities(model, kin)
    M = sp.zeros(p, p)
    f = (C.T * Q).applyfunc(b.assign)
    for i in range(model.n_bodies):
        Pt = (partials[i] * C).applyfunc(b.assign)  # constrained partial velocities, 6 x p
        extra = (partials[i] * sp.Matrix(c_acc)).applyfunc(b.assign)
        I_extra = inertias[i].apply(b, list(extra))
        for r in range(p):
            col = list(Pt[:, r])
            if all(e == 0 for e in col):
                continue
            f[r] = b.assign(f[r] - dot(col[:3], [x + y for x, y in zip(f_bias[i][:3], I_extra[:3])])
                            - dot(col[3:], [x + y for x, y in zip(f_bias[i][3:], I_extra[3:])]))
            Icol = inertias[i].apply(b, col)
            for s in range(r, p):
                term = dot(list(Pt[:3, s]), Icol[:3]) + dot(list(Pt[3:, s]), Icol[3:])
                M[r, s] = M[s, r] = b.assign(M[r, s] + term)
    return M, f


def energy_expressions(model: Model, kin: TreeKinematics):
    """(kinetic, potential) energy [J]: kinetic from the body velocities, potential from gravity, linear
    springs and joint springs; potential is None when a load's potential is unknown."""
    b = kin.b
    ke = sp.S.Zero
    pe = sp.S.Zero
    complete = True
    for i in range(model.n_bodies):
        I = body_inertia(model, i)
        v = kin.vel[i]
        h = I.apply(b, v)
        ke += dot(v[:3], h[:3]) + dot(v[3:], h[3:])
        body = model.bodies[i]
        if any(gk != 0 for gk in model.gravity):
            com0 = kin.point_in_ground(i, body.com)
            pe -= body.mass * dot(list(model.gravity), com0)
    for s in model.springs:
        if s.potential is None:
            complete = False
            continue
        pa, pb = kin.point_in_ground(s.body_a, s.point_a), kin.point_in_ground(s.body_b, s.point_b)
        length = sp.sqrt(dot([y - x for x, y in zip(pa, pb)], [y - x for x, y in zip(pa, pb)]))
        pe += s.potential.xreplace({stretch: length - s.rest_length})
    for load in model.joint_loads:
        if load.potential is None:
            complete = False
        else:
            pe += load.potential
    return b.assign(ke / 2), (b.assign(pe) if complete else None)

