"""Articulated-body method, u' = FD(q, u, tau) (Featherstone 1983; seed 001 §3.3.1, Eqs. 3.7-3.9), in the
accurate ordering of seed 001 §4.3 and §5.3.1.

With body i's quantities in its own axes (Featherstone 2008, Table 7.1, multi-DOF joints):

* inward (tip to base): articulated inertia I^A_i = I_i + sum over children of X^T I^a X and bias force
  p^A_i = v_i x* I_i v_i - f_ext_i + sum of X^T p^a; then U_i = I^A_i S_i, D_i = S_i^T U_i,
  w_i = tau_i - S_i^T p^A_i, and what the child hands its parent:
  I^a_i = I^A_i - U_i D_i^-1 U_i^T,  p^a_i = p^A_i + I^a_i c_i + U_i D_i^-1 w_i;
* outward (base to tip): a'_i = X_i a_parent + c_i, u'_i = D_i^-1 (w_i - U_i^T a'_i), a_i = a'_i + S_i u'_i.

The accurate ordering (§5.3.1): the projection U D^-1 U^T is subtracted from the child's own articulated inertia,
in the child's axes, *before* it is transformed and added to the parent's; subtracting X^T U D^-1 U^T X from the
already-summed parent inertia instead loses precision on ill-conditioned chains (Fig. 5.7). D_i^-1 is applied by the
traced factorization of the nu_i x nu_i block (:class:`.crba.LTDL`, never a symbolic inverse). A joint with six
speeds transmits no articulated inertia (I^a = 0 exactly, not up to round-off).
"""

from __future__ import annotations

from ..codegen.program import Program
from ..model.system import Model, System
from ..codegen.trace import ZERO, traced_dot, imul
from .crba import LTDL
from .trace import Trace

__all__ = ["aba", "trace_aba", "inertia_to_parent"]


def _mm(A, B):
    """Product of two 3 x 3 nested lists of expressions (unnamed entries)."""
    return [[traced_dot(A[r], [B[0][c], B[1][c], B[2][c]]) for c in range(3)] for r in range(3)]


def _mmT(A, B):
    """A B^T of two 3 x 3 nested lists (unnamed entries)."""
    return [[traced_dot(A[r], B[c]) for c in range(3)] for r in range(3)]


def inertia_to_parent(b, I, R, r) -> list:
    """X^T I X (6 x 6 nested lists): a symmetric spatial inertia (articulated or rigid) given in the child's axes,
    expressed in the parent's axes about the parent's origin. R = R_parent_child (3 x 3), r (3,) = the child's
    origin in parent axes.

    In blocks I = [[A, B], [B^T, C]]: rotate A' = R A R^T, B' = R B R^T, C' = R C R^T, then shift with
    r x: A_p = A' - B' rx - (B' rx)^T - rx C' rx, B_p = B' + rx C', C_p = C'.
    """
    a = b.assign
    R = [[R[i, j] for j in range(3)] for i in range(3)]
    A, B, C = ([[I[i + o1][j + o2] for j in range(3)] for i in range(3)] for o1, o2 in ((0, 0), (0, 3), (3, 3)))
    named = lambda M, sym=False: [[a(M[i][j]) if (not sym or j >= i) else None for j in range(3)] for i in range(3)]
    RA, RB, RC = named(_mm(R, A)), named(_mm(R, B)), named(_mm(R, C))
    Ap, Bp, Cp = named(_mmT(RA, R), True), named(_mmT(RB, R)), named(_mmT(RC, R), True)
    for M in (Ap, Cp):
        for i in range(3):
            for j in range(i):
                M[i][j] = M[j][i]
    z = ZERO
    rx = [[z, -r[2], r[1]], [r[2], z, -r[0]], [-r[1], r[0], z]]
    BX, CX = named(_mm(Bp, rx)), named(_mm(Cp, rx))
    rCX = _mm(rx, CX)
    A2 = [[None] * 3 for _ in range(3)]
    for i in range(3):
        for j in range(i, 3):
            A2[i][j] = A2[j][i] = a(Ap[i][j] - BX[i][j] - BX[j][i] - rCX[i][j])
    rC = _mm(rx, Cp)
    B2 = [[a(Bp[i][j] + rC[i][j]) for j in range(3)] for i in range(3)]
    return [A2[i] + B2[i] for i in range(3)] + [[B2[j][i] for j in range(3)] + Cp[i] for i in range(3)]


def trace_aba(tr: Trace) -> list:
    """Trace the articulated-body method on ``tr``'s model; returns u' (n_u expressions)."""
    model, kin, b = tr.model, tr.kin, tr.b
    a_ = b.assign
    nb = model.n_bodies
    IA = [[[a_(x) for x in row] for row in I] for I in tr.I]  # named, so I - U D^-1 U^T is one difference
    pA = [tr.bias_force(i, [ZERO] * 6) for i in range(nb)]  # v x* I v - f_ext
    U, ldl, w = [None] * nb, [None] * nb, [None] * nb
    # inward pass: articulated-body inertias and bias forces, tip to base
    for i in reversed(range(nb)):
        S, cols, p = tr.S(i), tr.cols(i), model.parent[i]
        nu = len(cols)
        Scols = [list(S[:, k]) for k in range(nu)]
        U[i] = [imul(b, IA[i], s) for s in Scols]  # columns of U = I^A S
        D = [[a_(traced_dot(Scols[r], U[i][k])) for k in range(nu)] for r in range(nu)]
        ldl[i] = LTDL(b, D) if nu else None
        w[i] = [a_(tr.Q[col] - traced_dot(Scols[k], pA[i])) for k, col in enumerate(cols)]
        if p < 0:
            continue
        # what body i's subtree looks like to its parent through joint i, still in body i's axes
        UT = [[U[i][k][m] for k in range(nu)] for m in range(6)]  # rows of U (6 x nu)
        rows = [ldl[i].solve(UT[m]) for m in range(6)] if nu else [[] for _ in range(6)]  # rows of U D^-1
        Ia = [[ZERO] * 6 for _ in range(6)]
        if nu < 6:  # the accurate ordering: project in the child's axes, before the transform (§5.3.1)
            for r in range(6):
                for s in range(r, 6):
                    Ia[r][s] = Ia[s][r] = a_(IA[i][r][s] - traced_dot(rows[r], UT[s]))
        Iac = imul(b, Ia, tr.c[i])
        pa = [a_(pA[i][m] + Iac[m] + traced_dot(rows[m], w[i])) for m in range(6)]
        # hand both to the parent, in its axes about its origin
        Ip = inertia_to_parent(b, Ia, kin.R_pc[i], kin.r_pc[i])
        IA[p] = [[a_(IA[p][r][s] + Ip[r][s]) if s >= r else None for s in range(6)] for r in range(6)]
        for r in range(6):
            for s in range(r):
                IA[p][r][s] = IA[p][s][r]
        pp = kin.force_to_parent(i, pa)
        pA[p] = [a_(x + y) for x, y in zip(pA[p], pp)]
    # outward pass: accelerations, base to tip
    acc = [None] * nb
    udot = [ZERO] * model.n_u
    for i, pj in enumerate(model.joints):
        S, cols = tr.S(i), tr.cols(i)
        a_par = tr.a0 if pj.parent < 0 else acc[pj.parent]
        Xa = kin.motion_to_child(i, a_par)
        ap = [a_(Xa[m] + tr.c[i][m]) for m in range(6)]
        if cols:
            qdd = ldl[i].solve([w[i][k] - traced_dot(U[i][k], ap) for k in range(len(cols))])
            for k, col in enumerate(cols):
                udot[col] = qdd[k]
            acc[i] = [a_(ap[m] + traced_dot(list(S.row(m)), qdd)) for m in range(6)]
        else:
            acc[i] = ap
    return udot


def aba(model: Model | System) -> Program:
    """Trace ABA on ``model``: a Program with the output ``udot`` (n_u,).

    Inputs: t, q, u, params and ``inputs`` = (model inputs, tau (n_u), udot (n_u)); see :mod:`.recursive`.
    """
    tr = Trace(model)
    tr.outputs["udot"] = trace_aba(tr)
    return tr.program(["udot"])
