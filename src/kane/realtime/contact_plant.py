"""The real-time loop on a model with collision shapes (``[[collision]]``): the haptic hand pushes a body that
touches others (a box across a table), the contacts handled by velocity-level time stepping on Coulomb cones
(:func:`kane.switching.contact_stepping.contact_step`) at the dynamics' step (the loop's period x
``dynamics_every`` / substeps), the coupler's force held on the model's coupler inputs over each step.

    >>> dyn = ContactRealtime(loaded.derive().compile(), params)        # after add_coupler
    >>> loop = RealtimeLoop(VirtualCoupler(dyn, port, gains), device, q0, u0, options=...)

:class:`ContactRealtime` follows :class:`kane.realtime.plants.PlantMaker`; its plant follows the plant protocol
(``state``, ``advance``, ``w``, ``kind``). A contact step costs milliseconds in Python (the coal queries and the
cone solver), so behind a 1 kHz coupler the contacts run every ``dynamics_every`` periods.
"""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..switching.contact_run import model_contact_problem
from ..switching.contact_stepping import ContactOptions, contact_step

__all__ = ["ContactRealtime", "ContactPlant"]


class _HeldInputs:
    """``dynamics`` (a compiled kane Dynamics) with its inputs read from ``w`` (the plant's, written in place by
    the coupler each period): the protocol :func:`contact_step` calls, without an inputs argument."""

    def __init__(self, dynamics, w):
        self.dynamics, self.w = dynamics, w
        self.n_q, self.n_u, self.capabilities = dynamics.n_q, dynamics.n_u, dynamics.capabilities

    def mass_matrix(self, t, q, params=None):
        return self.dynamics.mass_matrix(t, q, params)

    def forcing(self, t, q, u, params=None):
        return self.dynamics.forcing(t, q, u, params, self.w)

    def qdot(self, t, q, u, params=None):
        return self.dynamics.qdot(t, q, u, params, self.w)

    def energy(self, t, q, u, params=None):
        return self.dynamics.energy(t, q, u, params)


class ContactRealtime:
    """A model with collision shapes as the real-time loop and the coupler see it: ``dynamics``, the model's
    compiled Dynamics (with the coupler's inputs: build it after :func:`kane.realtime.coupler.add_coupler`),
    gives the names, the kinematics and the energy [J]; :meth:`make_plant` steps its contacts. ``params``: the
    parameter values the contact geometry uses; ``options``: the :class:`ContactOptions` of each step."""

    def __init__(self, dynamics, params=None, options: ContactOptions = ContactOptions()):
        self.dynamics, self.params, self.options = dynamics, params, options
        self.model, self.equations = dynamics.model, dynamics.equations
        self.n_q, self.n_u = dynamics.n_q, dynamics.n_u
        self.q_names, self.u_names, self.input_names = dynamics.q_names, dynamics.u_names, dynamics.input_names
        self.u_dependent_names = getattr(dynamics, "u_dependent_names", ())
        self.backend = "numpy"
        self.bodies, self.contacts = model_contact_problem(dynamics.equations, params)

    def free_mode(self):
        """The bodies free of their contacts: contacts only add mass at a point (:mod:`.coupler_stability`)."""
        return self.dynamics

    def full_speeds(self, t, q, u, params=None):
        return self.dynamics.full_speeds(t, q, u, params)

    def qdot(self, t, q, u, params=None, inputs=None):
        return self.dynamics.qdot(t, q, u, params, inputs)

    def energy(self, t, q, u, params=None):
        return self.dynamics.energy(t, q, u, params)

    def make_plant(self, t0: float, q0, u0, params, force_inputs, dt: float):
        """The plant from (t0 [s], q0 (n_q,), u0 (n_u,)); the coupler force enters as the inputs
        ``force_inputs`` (3,); one contact step per ``dt`` [s]."""
        return ContactPlant(self, t0, q0, u0, params, force_inputs, dt)


class ContactPlant:
    """One period at a time of a :class:`ContactRealtime` (the plant protocol of kane.realtime.loop): ``state()``
    -> (t [s], q (n_q,), u (n_u,)); ``advance(period [s], n, force (3,) [N])`` in n contact steps; ``w`` the
    inputs in the model's order; ``contacts_touching`` the number of contact points that pressed in the last
    step."""

    kind = "contacts by time stepping"

    def __init__(self, dynamics: ContactRealtime, t0, q0, u0, params, force_inputs, dt: float):
        if not (np.isfinite(dt) and dt > 0):
            raise ArgumentError(f"contact plant: the step dt must be a finite time > 0 s, got {dt!r}")
        names = dynamics.input_names
        missing = [n for n in force_inputs if n not in names]
        if missing:
            raise ArgumentError(f"contact plant: the model has no input {', '.join(missing)}; inputs: "
                                f"{', '.join(names) or 'none'}")
        self.source, self.params = dynamics, params
        self.w = np.array(dynamics.model.input_values(), dtype=float)
        self.index = tuple(names.index(n) for n in force_inputs)
        self.held = _HeldInputs(dynamics.dynamics, self.w)
        self.t, self.q = float(t0), np.array(q0, dtype=float)
        self.u = np.array(u0, dtype=float)
        self.contacts_touching = 0
        self._warm: dict = {}

    def state(self):
        return self.t, self.q, self.u

    def advance(self, period: float, n: int, force) -> None:
        """Hold ``force`` (3,) [N] on the coupler's inputs over ``period`` [s] in ``n`` contact steps."""
        for i, f in zip(self.index, force):
            self.w[i] = float(f)
        h = float(period) / int(n)
        src = self.source
        for _ in range(int(n)):
            s = contact_step(self.held, src.contacts, self.t, self.q, self.u, h, src.options, src.bodies,
                             self.params, self._warm if src.options.warm_start else None)
            self.q, self.u, self.t = s.q, s.u, self.t + h
            self._warm = {}
            for i, cp in enumerate(s.points):
                self._warm.setdefault(cp.name, []).append(s.impulse[i])
            self.contacts_touching = int(np.count_nonzero(s.mode))
