"""Composite-rigid-body method, H = S^T X^T M X S (Walker and Orin 1982, method 3; seed 001 §3.1.1, Eq. 3.2),
with forward dynamics by Cholesky factorization of H (seed 001 §3.1, Eq. 3.1: H u' = tau - b).

* inward (tip to base): composite inertias Ic_parent += X_i^T Ic_i X_i, Ic_i starting from the body's own I_i;
* per joint i: F = Ic_i S_i gives the diagonal block H_ii = S_i^T F; walking inward, F = X_j^T F gives the
  off-diagonal blocks H_ji = S_j^T F for every ancestor joint j.

The bias b is inverse dynamics at u' = 0 (:mod:`.rnea`), so the forcing is f = -ID(q, u, 0) and H u' = f. The
factorization is the square-root-free H = L^T D L in reverse order (Featherstone 2008 §6.5), which produces no
fill-in for a tree numbered parent before child: structural zeros of H stay zero in L.
"""

from __future__ import annotations

import sympy as sp

from ..codegen.program import Program
from ..model.system import Model, System
from ..codegen.trace import traced_power
from ..mechanics.composite import composite_pass, joint_space_inertia
from ..mechanics.inertia import body_inertia
from .trace import Trace
from .rnea import trace_rnea

__all__ = ["crba", "trace_crba", "trace_forward_dynamics", "LTDL"]


def trace_crba(tr: Trace) -> sp.Matrix:
    """Trace the joint-space inertia H (n_u x n_u, symmetric) of ``tr``'s model: composite rigid-body inertias,
    each about its own body's origin in its axes (inward pass), then per joint the force that moves the composite
    body at unit speed derivative, projected on each ancestor (:mod:`kane.mechanics.composite`)."""
    model = tr.model
    own = [body_inertia(model, i) for i in range(model.n_bodies)]
    return joint_space_inertia(model, tr.kin, composite_pass(model, tr.kin, own).inertias, traced_power)


class LTDL:
    """H = L^T D L (L unit lower triangular) of a symmetric positive-definite matrix, factored from the last row up
    (Featherstone 2008, Table 6.3), entry by entry; ``solve(f)`` solves H x = f. Written once on any scalar type:
    H (n x n, a sympy Matrix or nested lists) of expressions named by ``b.assign`` (traced), or of floats with an
    ``assign`` that returns its argument. Exact zeros of H that stay zero in L (a tree numbered parent before
    child: no fill-in) are skipped. The one traced factorization: CRBA, ABA's joint blocks, NOC, Kane's matrix."""

    def __init__(self, b, H):
        n = len(H) if isinstance(H, (list, tuple)) else H.shape[0]
        A = [[H[i][j] for j in range(n)] for i in range(n)] if isinstance(H, (list, tuple)) else \
            [[H[i, j] for j in range(n)] for i in range(n)]
        self.b, self.n = b, n
        self.d_inv = [0] * n
        for k in reversed(range(n)):
            self.d_inv[k] = b.assign(1 / A[k][k])
            for i in reversed(range(k)):
                if A[k][i] == 0:
                    continue
                a = b.assign(A[k][i] * self.d_inv[k])
                for j in range(i + 1):
                    if A[k][j] != 0:
                        A[i][j] = b.assign(A[i][j] - a * A[k][j])
                A[k][i] = a
        self.L = A  # strictly lower part: L; the diagonal is D (its inverses in d_inv)

    def solve(self, f) -> list:
        a, n, L = self.b.assign, self.n, self.L
        y = list(f)
        for i in reversed(range(n)):  # L^T y = f
            y[i] = a(y[i] - sum((L[k][i] * y[k] for k in range(i + 1, n)), 0))
        x = [a(y[i] * self.d_inv[i]) for i in range(n)]  # D z = y
        for i in range(n):  # L x = z
            x[i] = a(x[i] - sum((L[i][k] * x[k] for k in range(i)), 0))
        return x


def trace_forward_dynamics(tr: Trace) -> tuple[sp.Matrix, list, list]:
    """Trace CRBA + Cholesky forward dynamics: returns (H, f, udot) with f = -ID(q, u, 0) and H udot = f."""
    H = trace_crba(tr)
    bias, _ = trace_rnea(tr, [sp.S.Zero] * tr.model.n_u)
    f = [tr.b.assign(-e) for e in bias]
    return H, f, LTDL(tr.b, H).solve(f)


def crba(model: Model | System) -> Program:
    """Trace CRBA on ``model``: a Program with outputs ``M`` (H, n_u x n_u), ``f`` (n_u,) and ``udot`` (n_u,).

    Inputs: t, q, u, params and ``inputs`` = (model inputs, tau (n_u), udot (n_u)); see :mod:`.recursive`.
    """
    tr = Trace(model)
    H, f, udot = trace_forward_dynamics(tr)
    tr.outputs.update(M=H, f=f, udot=udot)
    return tr.program(["M", "f", "udot"])
