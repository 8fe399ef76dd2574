"""``kane simulate`` for a model file with ``[[switching]]`` tables: seed 000 Figure 2's loop
(:class:`kane.switching.SwitchingSimulator`) from the file's initial state and ``[simulation]`` settings, written
to HDF5 as it goes, with the monitors that close a switched run's work-energy balance.

    >>> sim = switching_simulation(loaded, loaded.simulation, TrajectoryWriter("cart.h5"))
    >>> sim.run(loaded.simulation.t_end); traj = sim.finish()
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .model_table import switching_rules
from .simulator import SwitchingSimulator

__all__ = ["switching_simulation", "mode_change_rows"]


def switching_simulation(loaded, settings, writer=None, *, dependent=None, project: bool = True,
                         max_steps: int | None = None, max_wall_time: float | None = None) -> SwitchingSimulator:
    """A :class:`SwitchingSimulator` for ``loaded`` (a :class:`kane.io.LoadedModel` with ``[[switching]]`` tables)
    under ``settings`` (a :class:`kane.io.SimulationSettings`, overrides applied), from the file's q0 and u0 (a
    speed the file does not give starts at 0; the start is projected onto the active constraints), recording the
    constraint forces, the power and the constraint residual, and sending samples, modes and event records to
    ``writer`` (a :class:`kane.io.TrajectoryWriter`). ``dependent``: preferred dependent speeds (names), as
    ``--dependent``. Raises ValueError for a file without such tables."""
    rules = switching_rules(loaded)
    if not rules:
        raise ValueError(f"{loaded.path or loaded.name} has no [[switching]] tables; simulate it with kane.simulate")
    dependent = list(dependent or settings.dependent or ()) or None
    equations = loaded.derive(dependent)
    model = equations.model
    q0 = np.array([loaded.q0.get(str(q), 0.0) for q in model.q], dtype=float)
    u0 = np.array([loaded.u0.get(str(u), 0.0) for u in model.u], dtype=float)
    return SwitchingSimulator(equations, q0, u0, rules, t0=settings.t_start, params=dict(loaded.parameters),
                              inputs=loaded.input_function(), method=settings.method, rtol=settings.rtol,
                              atol=settings.atol, dt=settings.dt, max_step=settings.max_step,
                              output_dt=settings.output_dt, project=project, dependent=dependent,
                              record_balance=True, writer=writer, t_end=settings.t_end, max_steps=max_steps,
                              max_wall_time=max_wall_time,
                              description=f"{loaded.name} ({loaded.path or loaded.name})")


def mode_change_rows(traj) -> list[tuple[str, str]]:
    """(label, text) summary lines of a switching run: its mode changes by kind ("lock 2, unlock 2") and the
    kinetic energy the impulses took out [J]; [] for a run without event records."""
    if not traj.events:
        return []
    kinds = Counter(e.kind for e in traj.events)
    lost = -sum(float(e.data.get("delta_kinetic", 0.0)) for e in traj.events)
    rows = [("mode changes", f"{len(traj.events)}: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))]
    if lost:
        rows.append(("kinetic energy taken by the impulses", f"{lost:.6g} J"))
    return rows
