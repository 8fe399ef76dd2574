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

from ..mechanics.composite import composite_pass, joint_inertia_columns, newton_euler_force
from ..mechanics.inertia import body_inertias
from ..mechanics.kinematics import TreeKinematics, sum_products, dot3
from ..mechanics.loads import applied_body_forces, joint_generalized_forces
from ..model.model import Model

__all__ = ["recursive_mass_forcing", "explicit_generalized_forces", "body_partial_velocities"]


def power(m, f):
    """The scalar product of a motion vector and a force vector (power), 6 components each."""
    return sum_products([(m[k], f[k]) for k in range(6)])


def _bias_forces(model, kin, inertias, f_applied):
    """Per body: I a + v x* I v - f_applied (the inertia force at u' = 0, negated, minus applied loads)."""
    return [newton_euler_force(kin.b, lambda s, I=inertias[i]: I.apply(kin.b, s), kin.vel[i], kin.acc[i],
                               f_applied[i]) for i in range(model.n_bodies)]


def recursive_mass_forcing(model: Model, kin: TreeKinematics):
    """M (n_u x n_u) and f (n_u,) of the unconstrained system, M u' = f, by recursive gathering of Kane's sums.

    Backward pass (:func:`kane.mechanics.composite.composite_pass`): the subtree force F_i = f_i + sum over
    children of X^T F_c and the composite inertias Ic_i; joint i's rows of f are -S_i^T F_i plus joint loads, and
    M is formed from the Ic_i joint by joint (:func:`kane.mechanics.composite.joint_inertia_columns`).
    """
    b = kin.b
    n = model.n_u
    inertias = body_inertias(model, kin)
    f_bias = _bias_forces(model, kin, inertias, applied_body_forces(model, kin))
    Q = joint_generalized_forces(model, kin)
    gathered = composite_pass(model, kin, inertias, f_bias)
    forcing = [sp.S.Zero] * n
    M = sp.zeros(n, n)
    for i, pj in enumerate(model.joints):
        for k, col in enumerate(range(n)[pj.u_slice]):
            forcing[col] = b.assign(Q[col] - power(kin.S[i][:, k], gathered.forces[i]))
        joint_inertia_columns(model, kin, gathered.inertias, power, i, M)
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
            f[r] = b.assign(f[r] - dot3(col[:3], [x + y for x, y in zip(f_bias[i][:3], I_extra[:3])])
                            - dot3(col[3:], [x + y for x, y in zip(f_bias[i][3:], I_extra[3:])]))
            Icol = inertias[i].apply(b, col)
            for s in range(r, p):
                term = dot3(list(Pt[:3, s]), Icol[:3]) + dot3(list(Pt[3:, s]), Icol[3:])
                M[r, s] = M[s, r] = b.assign(M[r, s] + term)
    return M, f


