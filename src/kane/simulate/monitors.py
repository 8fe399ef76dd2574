"""The quantities ``kane simulate`` records with every sample of a run of Kane's equations (a :class:`kane.Dynamics`):
constraint residuals, unit-quaternion norms, the power of the loads without a potential (for the work-energy
balance) and the conditioning of the dependent-speed block (which warns, then stops a run that nears a
configuration where the dependent speeds cannot be solved for)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kane.errors import KaneError

__all__ = ["standard_monitors", "WorkEnergyBalance", "work_energy_balance"]


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


@dataclass(frozen=True)
class WorkEnergyBalance:
    """The work-energy balance of a run: ``change`` = E(t_end) - E(t0) [J]; ``work`` [J] of the loads without a
    potential (inputs, dampers, forces: the trapezoidal integral of the recorded power; None when a load has no
    known potential); ``jumps`` [J], the energy changes at the instants where the state jumps (the impulses of a
    switching run's mode changes: two samples at one time); ``residual`` |change - work - jumps| relative to the
    largest of |E0|, |work|, |jumps| and the kinetic energy reached (the energy drift when no load works)."""

    change: float
    work: float | None
    residual: float | None
    jumps: float = 0.0

    def rows(self) -> list[tuple[str, str]]:
        """(label, text) lines for a run summary."""
        if self.work is None:
            return [("energy change", f"{self.change:.6g} J (the work of the loads cannot be computed: a load has "
                                      "no known potential)")]
        driven = self.work != 0.0 or self.jumps != 0.0
        return [("energy change", f"{self.change:.6g} J"),
                ("work of inputs and non-conservative loads", f"{self.work:.6g} J" if self.work != 0.0 else ""),
                ("energy change in the jumps (impulses)", f"{self.jumps:.6g} J" if self.jumps != 0.0 else ""),
                ("work-energy residual (relative)" if driven else "energy drift (relative)", f"{self.residual:.3e}")]


def work_energy_balance(dyn, traj, params=None) -> WorkEnergyBalance | None:
    """The balance of a trajectory recorded with :func:`standard_monitors` (its ``power`` residual; a switching
    run's monitors give one too); None for a run without samples or energy."""
    if traj.energy is None or not traj.n_samples:
        return None
    e = traj.energy
    change = float(e[-1] - e[0])
    if "power" not in traj.residuals:
        return WorkEnergyBalance(change, None, None)
    try:
        ke = np.atleast_1d(dyn.kinetic_energy(float(traj.t[0]), traj.q, traj.u, params=params))
    except KaneError:
        ke = np.zeros(1)
    p, dt = traj.residuals["power"], np.diff(traj.t)
    work = float(np.sum(0.5 * (p[1:] + p[:-1]) * dt))
    jumps = float(np.sum(np.diff(e)[dt == 0.0]))
    scale = max(abs(float(e[0])), abs(work), abs(jumps), float(np.max(np.abs(ke))), 1e-300)
    jumps = jumps if abs(jumps) > 1e-13 * scale else 0.0  # below: the rounding of a restart's projection
    return WorkEnergyBalance(change, work, abs(change - work - jumps) / scale, jumps)
