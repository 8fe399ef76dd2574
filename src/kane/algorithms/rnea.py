"""Recursive Newton-Euler inverse dynamics, tau = ID(q, u, u') (Luh, Walker and Paul 1980; seed 001 §2.5).

In the notation of seed 001 §2.5 (Featherstone 2008, Table 5.1), with body i's spatial quantities in its own axes:

* outward (base to tip): a_i = X_i a_parent + S_i u'_i + c_i, a_0 = (0, -g);
  f_i = I_i a_i + v_i x* I_i v_i - f_ext_i (the force body i needs);
* inward (tip to base): f_parent += X_i^T f_i, and tau_i = S_i^T f_i - Q_i.

``tau`` (n_u,) is what must be applied along the speeds, beyond the model's own loads (gravity, forces, springs,
joint loads and the ``tau`` inputs Q), to produce u'. ``f_i`` after the inward pass is the spatial force the parent
exerts on body i through joint i (constraint reaction plus the joint's actuation), reported in the joint's child
frame M as the (moment about M's origin [N m], force [N]) of :func:`trace_rnea`'s ``joint_forces``.
"""

from __future__ import annotations

import sympy as sp

from ..codegen.program import Program
from ..model.system import Model, System
from ..codegen.trace import traced_power
from ..mechanics.composite import composite_pass
from ..mechanics.kinematics import cross, matTvec
from .trace import Trace

__all__ = ["rnea", "trace_rnea"]


def trace_rnea(tr: Trace, udot) -> tuple[list, sp.Matrix]:
    """Trace RNEA for the speed derivatives ``udot`` (n_u expressions). Returns (tau (n_u,), joint_forces
    (n_bodies x 6): row i is joint i's transmitted spatial force in its M frame [N m, N])."""
    model, kin, b = tr.model, tr.kin, tr.b
    nb = model.n_bodies
    a, f = [None] * nb, [None] * nb
    # outward pass: spatial accelerations, then the force each body needs (Newton-Euler)
    for i, pj in enumerate(model.joints):
        a_par = tr.a0 if pj.parent < 0 else a[pj.parent]
        Xa = kin.motion_to_child(i, a_par)
        S, cols = tr.S(i), tr.cols(i)
        a[i] = [b.assign(Xa[r] + sum((S[r, k] * udot[col] for k, col in enumerate(cols)), sp.S.Zero) + tr.c[i][r])
                for r in range(6)]
        f[i] = tr.bias_force(i, a[i])
    # inward pass: each joint carries its subtree's force; project it on the joint's motion subspace
    tau = [sp.S.Zero] * model.n_u
    forces = sp.zeros(nb, 6)

    def project(i, f_i):
        S = tr.S(i)
        for k, col in enumerate(tr.cols(i)):
            tau[col] = b.assign(traced_power(S[:, k], f_i) - tr.Q[col])
        forces[i, :] = sp.Matrix([_force_in_M(tr, i, f_i)])

    composite_pass(model, kin, None, f, on_subtree=project)
    return tau, forces


def _force_in_M(tr: Trace, i: int, f) -> list:
    """A force vector in body i's axes at its origin, re-expressed in joint i's frame M (moment about M's origin)."""
    pj = tr.model.joints[i]
    R, r = sp.Matrix(pj.R_child_M), list(pj.r_child_M)
    n = [f[k] - e for k, e in enumerate(cross(r, f[3:]))]  # moment about M's origin, body axes
    return [tr.b.assign(e) for e in matTvec(R, n) + matTvec(R, f[3:])]


def rnea(model: Model | System) -> Program:
    """Trace RNEA on ``model``: a Program with outputs ``tau`` (n_u,) and ``joint_forces`` (n_bodies x 6).

    Inputs: t, q, u, params and ``inputs`` = (model inputs, tau (n_u), udot (n_u)); see :mod:`.recursive`.
    """
    tr = Trace(model)
    tau, forces = trace_rnea(tr, tr.udot)
    tr.outputs.update(tau=tau, joint_forces=forces)
    return tr.program(["tau", "joint_forces"])
