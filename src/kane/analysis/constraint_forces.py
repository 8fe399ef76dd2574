"""Constraint forces of the embedded constraints as outputs: the multipliers lambda of the unconstrained equations
(Kane & Levinson, *Dynamics: Theory and Applications*, sec. 4.5: noncontributing forces brought into evidence),

    M_full u_full' = f_full + tau_full + A^T lambda,

solved (in least squares) from the accelerations u_full' of the embedded motion (:func:`kane.analysis.speed_rates`),
so the forces are those that make the recorded accelerations happen. M_full, f_full and A are the unconstrained
mass matrix, forcing and constraint rows of :class:`kane.Equations` ``full_program`` in every speed of the model.
A row of a point constraint is the velocity of its point along a direction, so its multiplier is the force on
the (first) body at that point along that direction [N]: for a rolling contact the two tangents and the normal of
the plane, for a loop closure its directions; a row of a joint lock or of a user's motion constraint gives a
generalized force in the units of its speed (N or N m).
"""

from __future__ import annotations

import numpy as np

from ..codegen.numpy_backend import compile_program
from ..errors import ArgumentError
from ..mechanics.arguments import real_array

__all__ = ["ConstraintForces"]


class ConstraintForces:
    """The multipliers of every permanent (embedded) constraint of one :class:`kane.Equations`: ``shapes`` maps
    each constraint's name to the shape (m,) of its force; rows dropped as redundant at derivation are NaN (their
    share of the force is not defined)."""

    def __init__(self, equations):
        layout = equations.constraint_layout
        self._blocks = {name: b.rows for name, b in layout.items() if not b.transient}
        self._rows = [r for rows in self._blocks.values() for r in range(rows.start, rows.stop)]
        self._kept = list(equations.embedding.rows) if self._rows else []
        speeds = [str(s) for s in equations.model.u]
        self._independent = [speeds.index(str(s)) for s in equations.u_independent]
        self.shapes = {name: (rows.stop - rows.start,) for name, rows in self._blocks.items()}
        self._program, self._fn = equations.full_program, None

    def __call__(self, t, q, u_full, u_full_dot, params, inputs, tau=None) -> dict:
        """name -> (m,) multipliers at (t [s], q (n_q,), every speed u_full (n_u,)) moving with the rates
        u_full_dot (n_u,); params and inputs as arrays in model order; ``tau`` (p,) extra generalized forces along
        the independent speeds (as for :func:`kane.analysis.speed_rates`)."""
        if not self._rows:
            return {}
        if self._fn is None:
            self._fn = compile_program(self._program, ["M", "f", "A"])
        M, f, A = self._fn(float(t), q, u_full, params, inputs)
        if tau is not None:
            tau = real_array(tau, "tau").reshape(-1)
            if tau.shape != (len(self._independent),):
                raise ArgumentError(f"tau: expected {len(self._independent)} generalized forces along the "
                                    f"independent speeds, got shape {tau.shape}")
            f = f.copy()
            f[self._independent] += tau
        A_kept = A[[self._rows[k] for k in self._kept]]
        lam = np.full(len(self._rows), np.nan)
        lam[self._kept] = np.linalg.lstsq(A_kept.T, M @ u_full_dot - f, rcond=None)[0]
        out, k = {}, 0
        for name, (size,) in self.shapes.items():
            out[name] = lam[k:k + size]
            k += size
        return out
