"""Embedding of motion constraints: u_dep = D u_ind + E (seed 000 Eq. 5), solved by elimination with named
intermediates (never a symbolic inverse); the unconstrained equations are then recombined,
F~r = Fr + sum_s D_sr Fs (Eqs. 44-45), in :mod:`kane.symbolic.derive`.
"""

from __future__ import annotations

import sympy as sp

from ..errors import DerivationError
from ..mechanics.kinematics import exact_zero, sum_products

__all__ = ["solve_dependent"]


def solve_dependent(builder, A_dep: sp.Matrix, rhs: sp.Matrix, pivots) -> tuple[sp.Matrix, list]:
    """Solve A_dep X = rhs by Gaussian elimination in the given pivot order, naming every intermediate; returns X
    and the m pivots (expressions of q): one of them near zero is a configuration where the block is singular."""
    a = builder.assign
    m = A_dep.shape[0]
    Ab = sp.Matrix.hstack(A_dep, rhs)
    Ab = Ab.extract(list(pivots), list(range(Ab.shape[1])))
    for k in range(m):
        piv = Ab[k, k]
        if piv == 0:
            raise DerivationError("zero pivot while solving for the dependent speeds")
        inv = a(1 / piv)
        for r in range(k + 1, m):
            if Ab[r, k] == 0:
                continue
            factor = a(Ab[r, k] * inv)
            for c in range(k, Ab.shape[1]):
                if c == k:
                    Ab[r, c] = sp.S.Zero
                elif not exact_zero(Ab[k, c]):
                    Ab[r, c] = a(Ab[r, c] - factor * Ab[k, c])
    X = sp.zeros(m, rhs.shape[1])
    used = [Ab[k, k] for k in range(m)]
    for k in reversed(range(m)):
        inv = a(1 / Ab[k, k])
        for c in range(rhs.shape[1]):
            acc = Ab[k, m + c] - sum_products([(Ab[k, j], X[j, c]) for j in range(k + 1, m)])
            X[k, c] = a(acc * inv)
    return X, used
