"""The live viewer's run of a model file with ``[[switching]]`` tables (``kane view MODEL.toml --live``): the
switching plant of ``kane realtime`` (:class:`kane.realtime.SwitchingDynamics`, every mode compiled to C, the rules
run inside each period) and its recording to an HDF5 run file, one sample per period with the mode changes.

    >>> dyn = switching_live_dynamics(loaded)           # None for a model without [[switching]] tables
    >>> plant = dyn.make_plant(t, q, u, params, port.inputs, dt)
    >>> recorder = PlantRecorder(TrajectoryWriter("live.h5"), plant, dyn, params, "cart live")
"""

from __future__ import annotations

import numpy as np

from ..io.trajectory import Stats
from ..realtime.switching_plant import SwitchingDynamics
from ..switching.model_table import switching_rules

__all__ = ["switching_live_dynamics", "PlantRecorder"]


def switching_live_dynamics(loaded) -> SwitchingDynamics | None:
    """The switched system of ``loaded`` (a :class:`kane.io.LoadedModel` whose system already carries the coupler's
    inputs) under its ``[[switching]]`` rules, its modes compiled to C on the first plant; None without rules."""
    rules = switching_rules(loaded)
    if not rules:
        return None
    return SwitchingDynamics(loaded.derive(), rules, system=loaded.system)


class PlantRecorder:
    """Writes the run of ``plant`` (a switching plant: ``state()`` -> (t [s], q (n_q,), u (all n_u,)), ``mode``,
    ``events``) of ``dynamics`` (its :class:`SwitchingDynamics`) to ``writer`` (a :class:`kane.io.TrajectoryWriter`,
    opened here): a sample now and at every :meth:`sample` (t, q, u, the energy [J] when the potential is known),
    the mode intervals (from the events' times) and the event records (lock, unlock, impact, stick, slip...)."""

    def __init__(self, writer, plant, dynamics: SwitchingDynamics, params, description: str):
        self.writer, self.plant, self.dynamics, self.params = writer, plant, dynamics, params
        self.has_energy = bool(dynamics.equations.has_potential)
        writer.open(q_names=dynamics.q_names, u_names=dynamics.u_names, has_energy=self.has_energy,
                    description=description, params=params, method="rk4")
        t = plant.state()[0]
        self._mode, self._n_events = plant.mode, len(plant.events)
        writer.start_mode(t, self._mode)
        self.sample()

    def sample(self) -> None:
        """Write the mode changes since the last sample and the plant's state now."""
        events = self.plant.events
        for e in events[self._n_events:]:
            self.writer.add_event(e)
            mode = e.data.get("mode")
            if mode is not None and mode != self._mode:
                self.writer.start_mode(e.t, mode)
                self._mode = mode
        self._n_events = len(events)
        t, q, u = self.plant.state()
        energy = float(self.dynamics.energy(t, q, u, self.params)) if self.has_energy else None
        self.writer.append(t, np.array(q), np.array(u), energy, ())

    def close(self, status: str = "stopped"):
        """Close the file with ``status``; returns its path."""
        return self.writer.close(status, Stats(method="rk4"))
