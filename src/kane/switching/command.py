"""``kane simulate`` for a model file with ``[[switching]]`` tables: seed 000 Figure 2's loop run by
:func:`kane.run` (a :class:`kane.switching.SwitchedDynamics`, the Python loop) from the file's initial state and
``[simulation]`` settings, written to HDF5 as it goes, with the monitors that close a switched run's work-energy
balance.

    >>> request = switching_simulation(loaded, loaded.simulation)
    >>> traj = request.start(TrajectoryWriter("cart.h5"), progress)
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..simulate.run import Loop, ProjectionMode, RunOptions, RunRequest, State
from .dynamics import SwitchedDynamics
from .model_table import switching_rules
from .settings import SwitchingSettings

__all__ = ["switching_simulation", "mode_change_rows"]


def switching_simulation(loaded, settings, *, dependent=None,
                         project: bool = True, max_steps: int | None = None, max_wall_time: float | None = None,
                         loop: Loop | str = Loop.AUTO) -> RunRequest:
    """``kane simulate`` of ``loaded`` (a :class:`kane.io.LoadedModel` with ``[[switching]]`` tables) under
    ``settings`` (a :class:`kane.io.SimulationSettings`, overrides applied): a :class:`kane.simulate.run.RunRequest`
    of the :class:`~kane.switching.SwitchedDynamics` of its equations and rules (``request.dynamics``) from the
    file's q0 and u0 (a speed the file does not give starts at 0; the start is projected onto the active
    constraints), recording the constraint forces, the power and the constraint residual;
    ``request.start(writer, progress)`` runs it, sending samples, modes and event records to the writer as it
    goes. ``dependent``: preferred dependent speeds (names), as ``--dependent``; ``project``: put the state back
    on the active constraints after every step; ``loop`` as ``--loop`` (compiled is refused: the rules run in
    Python). Raises ValueError for a file without such tables."""
    rules = switching_rules(loaded)
    if not rules:
        raise ValueError(f"{loaded.path or loaded.name} has no [[switching]] tables; simulate it with kane.simulate")
    dependent = list(dependent or settings.dependent or ()) or None
    equations = loaded.derive(dependent)
    model = equations.model
    q0 = np.array([loaded.q0.get(str(q), 0.0) for q in model.q], dtype=float)
    u0 = np.array([loaded.u0.get(str(u), 0.0) for u in model.u], dtype=float)
    description = f"{loaded.name} ({loaded.path or loaded.name})"
    dynamics = SwitchedDynamics(equations, rules, SwitchingSettings(dependent=dependent), description=description)
    options = RunOptions(t_end=settings.t_end, method=settings.method, rtol=settings.rtol, atol=settings.atol,
                         dt=settings.dt, max_step=settings.max_step, output_dt=settings.output_dt,
                         projection=ProjectionMode.DYNAMICS if project else ProjectionMode.NONE,
                         standard_monitors=True, max_steps=max_steps, max_wall_time=max_wall_time,
                         description=description, loop=loop)
    return RunRequest(dynamics, State(q0, u0, settings.t_start), options, dict(loaded.parameters),
                      loaded.input_function())


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
