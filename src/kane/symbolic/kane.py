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

from ..mechanics.inertia import body_inertias
from ..mechanics.kinematics import TreeKinematics, sum_products, crf, dot
from ..mechanics.loads import applied_body_forces, joint_generalized_forces
from ..model.model import Model

__all__ = ["recursive_mass_forcing", "explicit_generalized_forces", "body_partial_velocities"]


def sdot(m, f):
    """The scalar product of a motion vector and a force vector (power), 6 components each."""
    return sum_products([(m[k], f[k]) for k in range(6)])


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
    inertias = body_inertias(model, kin)
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
    inertias = body_inertias(model, kin)
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


