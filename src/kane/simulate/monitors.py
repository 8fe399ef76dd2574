"""The quantities ``kane simulate`` records with every sample of a run of Kane's equations (a :class:`kane.Dynamics`):
constraint residuals, unit-quaternion norms, the power of the loads without a potential (for the work-energy
balance) and the conditioning of the dependent-speed block (which warns, then stops a run that nears a
configuration where the dependent speeds cannot be solved for)."""

from __future__ import annotations

import numpy as np

__all__ = ["standard_monitors"]


def standard_monitors(dyn, params=None, inputs=None) -> dict:
    """Monitors name -> f(t, q, u) for :class:`kane.simulate.Simulator`, for ``dyn`` with ``params`` and ``inputs``
    (a mapping or a callable inputs(t, q, u) -> mapping): the residuals of the permanent constraints as their
    largest absolute value (motion constraints A u + b [m/s or rad/s], configuration constraints C(q) [m]), the
    unit-quaternion norm errors, the power [W] of the loads without a potential (when the potential is known) and
    the condition of the dependent-speed block (see :meth:`kane.Dynamics.dependent_block_monitor`)."""
    model, eqs, out = dyn.model, dyn.equations, {}
    if dyn.u_dependent_names:  # warns, then stops the run, where the dependent speeds cannot be solved for
        out["dependent_block_condition"] = dyn.dependent_block_monitor()
    if eqs.has_potential:
        out["power"] = lambda t, q, u: float(dyn.power(t, q, u, params, inputs(t, q, u) if callable(inputs)
                                                       else inputs))
    n_a, n_c = len(eqs.program.outputs["constraint_residual"]), len(eqs.program.outputs["C"])
    rows_a, rows_c = np.zeros(n_a, dtype=bool), np.zeros(n_c, dtype=bool)
    for block in eqs.constraint_layout.values():
        if not block.transient:
            rows_a[block.rows] = True
            if block.holonomic is not None:
                rows_c[block.holonomic] = True
    if rows_a.any():
        out["constraint"] = lambda t, q, u: float(np.max(np.abs(dyn.constraint_residual(t, q, u)[rows_a])))
    if rows_c.any():
        out["configuration"] = lambda t, q, u: float(np.max(np.abs(dyn.configuration_residual(t, q)[rows_c])))
    quats = [idx for _, idx in model.quaternion_indices()]
    if quats:
        out["quaternion_norm"] = lambda t, q, u: max(abs(float(np.linalg.norm(q[i])) - 1.0) for i in quats)
    return out
