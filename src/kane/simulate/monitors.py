"""The quantities ``kane simulate`` records with every sample of a run of Kane's equations (a :class:`kane.Dynamics`):
constraint residuals, unit-quaternion norms, the power of the loads without a potential (for the work-energy
balance) and the conditioning of the dependent-speed block (which warns, then stops a run that nears a
configuration where the dependent speeds cannot be solved for)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kane.errors import KaneError

__all__ = ["BatchMonitor", "standard_monitors", "WorkEnergyBalance", "work_energy_balance"]


class BatchMonitor:
    """A monitor f(t [s], q (n_q,), u (n_u,)) -> float that also evaluates many samples at once:
    ``batch(t (k,), q (k, n_q), u (k, n_u)) -> (k,)``, equal to calling it at each sample (the compiled loop
    evaluates the samples of a stretch in one call)."""

    def __init__(self, one, many):
        self._one, self._many = one, many

    def __call__(self, t, q, u) -> float:
        return float(self._one(t, q, u))

    def batch(self, t, q, u) -> np.ndarray:
        return np.asarray(self._many(t, q, u), dtype=float).reshape(len(t))


def _rowwise_max(rows):
    return lambda values: np.max(np.abs(values[..., rows]), axis=-1)


def _condition_monitor(dyn) -> BatchMonitor:
    """The dependent-block condition (:meth:`kane.Dynamics.dependent_block_monitor`): at many samples the condition
    numbers in one batch, the one-sample monitor (its warning and its stop) called only past its threshold."""
    one = dyn.dependent_block_monitor()
    choice, layout = dyn.equations.embedding, dyn.equations.constraint_layout
    rows = [r for b in layout.values() if not b.transient for r in range(b.rows.start, b.rows.stop)]
    kept, dep = [rows[k] for k in choice.rows], list(choice.dependent)

    def many(t, q, u):
        A = dyn.constraints(t, q)[0][:, kept]
        largest = np.linalg.svd(A, compute_uv=False)[:, 0]
        smallest = np.linalg.svd(A[:, :, dep], compute_uv=False)[:, -1]
        with np.errstate(divide="ignore"):
            cond = np.where(smallest > 0, largest / np.where(smallest > 0, smallest, 1.0), np.inf)
        for i in np.flatnonzero(cond > 1e6):  # warn_at of dependent_block_monitor: its own message and stop
            cond[i] = one(t[i], q[i], u[i])
        return cond

    return BatchMonitor(one, many)


def standard_monitors(dyn, params=None, inputs=None) -> dict:
    """Monitors name -> f(t, q, u) for :class:`kane.simulate.Simulator`, for ``dyn`` with ``params`` and ``inputs``
    (a mapping or a callable inputs(t, q, u) -> mapping): the residuals of the permanent constraints as their
    largest absolute value (motion constraints A u + b [m/s or rad/s], configuration constraints C(q) [m]), the
    unit-quaternion norm errors, the power [W] of the loads without a potential (when the potential is known) and
    the condition of the dependent-speed block (see :meth:`kane.Dynamics.dependent_block_monitor`). Each is a
    :class:`BatchMonitor` (many samples in one call) where the inputs are constants."""
    model, eqs, out = dyn.model, dyn.equations, {}
    if dyn.u_dependent_names:  # warns, then stops the run, where the dependent speeds cannot be solved for
        out["dependent_block_condition"] = _condition_monitor(dyn)
    if eqs.has_potential:
        if callable(inputs):
            out["power"] = lambda t, q, u: float(dyn.power(t, q, u, params, inputs(t, q, u)))
        else:
            out["power"] = BatchMonitor(lambda t, q, u: dyn.power(t, q, u, params, inputs),
                                        lambda t, q, u: dyn.power(t, q, u, params, inputs))
    n_a, n_c = len(eqs.program.outputs["constraint_residual"]), len(eqs.program.outputs["C"])
    rows_a, rows_c = np.zeros(n_a, dtype=bool), np.zeros(n_c, dtype=bool)
    for block in eqs.constraint_layout.values():
        if not block.transient:
            rows_a[block.rows] = True
            if block.holonomic is not None:
                rows_c[block.holonomic] = True
    if rows_a.any():
        worst = _rowwise_max(rows_a)
        out["constraint"] = BatchMonitor(lambda t, q, u: worst(dyn.constraint_residual(t, q, u)),
                                         lambda t, q, u: worst(dyn.constraint_residual(t, q, u)))
    if rows_c.any():
        worst_c = _rowwise_max(rows_c)
        out["configuration"] = BatchMonitor(lambda t, q, u: worst_c(dyn.configuration_residual(t, q)),
                                            lambda t, q, u: worst_c(dyn.configuration_residual(t, q)))
    quats = [idx for _, idx in model.quaternion_indices()]
    if quats:
        def norm_error(t, q, u):
            q = np.asarray(q, dtype=float)
            return np.max([np.abs(np.linalg.norm(q[..., i], axis=-1) - 1.0) for i in quats], axis=0)

        out["quaternion_norm"] = BatchMonitor(norm_error, norm_error)
    return out


@dataclass(frozen=True)
class WorkEnergyBalance:
    """The work-energy balance of a run: ``change`` = E(t_end) - E(t0) [J]; ``work`` [J] of the loads without a
    potential (inputs, dampers, forces: the trapezoidal integral of the recorded power; None when a load has no
    known potential); ``jumps`` [J], the energy changes at the instants where the state jumps (the impulses of a
    switching run's mode changes: two samples at one time); ``residual`` |change - work - jumps| relative to the
    largest of |E0|, |work|, |jumps| and the kinetic energy reached (the energy drift when no load works);
    ``unknown_work`` says why the work is None."""

    change: float
    work: float | None
    residual: float | None
    jumps: float = 0.0
    unknown_work: str = "the work of the loads cannot be computed: a load has no known potential"

    def rows(self) -> list[tuple[str, str]]:
        """(label, text) lines for a run summary."""
        if self.work is None:
            return [("energy change", f"{self.change:.6g} J ({self.unknown_work})")]
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
        if str(getattr(traj.stats, "method", "") or "").startswith("contact "):  # a contact run records no power
            return WorkEnergyBalance(change, None, None, unknown_work="a contact run: the contacts' dissipation "
                                     "and the work of any load without a potential")
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
