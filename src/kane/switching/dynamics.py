"""``SwitchedDynamics``: equations under switching rules as one :class:`kane.Dynamics`, run by :func:`kane.run`.

A switching run changes its mode (the active transient constraints, the slipping friction) at the rules' events,
so no single right-hand side describes it: its capabilities say ``steps_itself`` and :func:`kane.run` drives the
:class:`kane.switching.SwitchingSimulator` that :meth:`SwitchedDynamics.stepper` builds (the Python loop, recorded
as "python loop: constraint switching runs its rules in Python").

    >>> sd = SwitchedDynamics(kane.derive(system), [Lock("brake", on=[(0.5, 1.0)])])
    >>> traj = kane.run(sd, State(q0, u0), RunOptions(t_end=2.0, rtol=1e-9, atol=1e-11,
    ...                                                  projection=ProjectionMode.DYNAMICS))

The members of the protocol (``udot``, ``constraint_forces``, ...) answer for the mode with no transient constraint
active (the permanent ones embedded); ``qdot`` and ``energy`` do not depend on the mode. State: q (n_q,), u (n_u,)
all the model's speeds.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from ..errors import ArgumentError, NotSupportedError
from ..protocol import Capabilities, model_quaternion_check, unsupported
from ..simulate.run import RunOptions, State
from .online import OnlineDynamics
from .settings import SwitchingSettings
from .simulator import SwitchingSimulator

__all__ = ["SwitchedDynamics", "LOOP_REASON"]

LOOP_REASON = "constraint switching runs its rules in Python"
"""Why a switching run takes the Python loop (recorded in its stats' ``loop_reason``)."""


class SwitchedDynamics:
    """``equations`` (from :func:`kane.derive`, the switched constraints declared ``transient=True``) under
    ``rules`` (:class:`kane.switching.UnilateralContact`, ``Coulomb``, ``Lock`` records) with ``settings`` (a
    :class:`SwitchingSettings`); ``description`` is stored with its runs (default: the model's name). Safe to
    share between threads: each run builds its own :class:`SwitchingSimulator`, and the members of the protocol
    evaluate the shared free mode one caller at a time."""

    def __init__(self, equations, rules=(), settings: SwitchingSettings | None = None, *,
                 description: str | None = None):
        settings = SwitchingSettings() if settings is None else settings
        if not isinstance(settings, SwitchingSettings):
            raise ArgumentError(f"SwitchedDynamics: settings must be a kane.switching.SwitchingSettings, got "
                                f"{type(settings).__name__}")
        self.equations, self.rules, self.settings = equations, tuple(rules), settings
        self.model = equations.model
        self.online = online = OnlineDynamics(equations, cond_max=settings.cond_max, dependent=settings.dependent)
        self._lock = threading.Lock()  # the on-line embedding keeps a one-state cache
        self.n_q, self.n_u = online.n_q, online.n_u
        self.q_names, self.u_names = online.q_names, online.u_names
        self.parameter_names, self.input_names = online.parameter_names, online.input_names
        self.description = description if description is not None else self.model.name
        self.capabilities = Capabilities(energy=bool(equations.has_potential), constraint_forces=True,
                                         motion_constraints=True, projection=True, compiled_loop=False,
                                         compiled_loop_reason=LOOP_REASON, steps_itself=True)

    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (n_q,) = W(q) u + X (every mode's)."""
        with self._lock:
            return self.online.qdot(t, q, u, params, inputs)

    def udot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """u' (n_u,) of all the model's speeds in the mode with no transient constraint active."""
        with self._lock:
            return self.online.udot(t, q, u, params, inputs)

    def energy(self, t, q, u, params=None) -> float:
        """Kinetic + potential energy [J] (every mode's); NotSupportedError where a load has no potential."""
        if not self.capabilities.energy:
            raise NotSupportedError(f"SwitchedDynamics does not provide energy: a load of model "
                                    f"{self.model.name!r} has no known potential")
        with self._lock:
            return self.online.energy(t, q, u, params)

    def kinetic_energy(self, t, q, u, params=None):
        """Kinetic energy [J] at one state, or (N,) at N states q (N, n_q), u (N, n_u) (every mode's)."""
        with self._lock:
            return self.online.kinetic_energy(t, q, u, params=params)

    def constraint_forces(self, t, q, u, params=None, inputs=None) -> dict:
        """Constraint name -> multipliers (m,) [N, N m per row] of the mode with no transient constraint active."""
        with self._lock:
            return self.online.constraint_forces(t, q, u, params, inputs)

    def motion_rows(self, t, q, params=None):
        """(A (m, n_u), b (m,)) of the permanent constraints at q."""
        with self._lock:
            return self.online.motion_rows(t, q, params)

    def make_projection(self, params=None):
        """The hook (t, q, u) -> (q, u) onto the permanent constraints."""
        def projection(t, q, u):
            with self._lock:
                return self.online.projection(t, q, u, params)
        return projection

    mass_matrix = unsupported("mass_matrix", "the embedded M changes with the mode")
    forcing = unsupported("forcing", "the embedded f changes with the mode")
    holonomic_rows = unsupported("holonomic_rows", "its positions are projected by kane.switching.rules")
    loop_function = unsupported("loop_function", LOOP_REASON)
    check_quaternions = model_quaternion_check

    def stepper(self, state: State, options: RunOptions, writer=None, params=None, inputs=None) -> SwitchingSimulator:
        """The :class:`SwitchingSimulator` of one run from ``state`` (u: all n_u speeds; None: zeros) under
        ``options`` (its description, when None, this object's), sending its samples, modes and event records to
        ``writer``; :func:`kane.run` steps it."""
        if options.description is None:
            options = dataclasses.replace(options, description=self.description)
        u0 = np.zeros(self.n_u) if state.u is None else state.u
        return SwitchingSimulator(self.equations, state.q, u0, self.rules, options, self.settings, t0=state.t,
                                  params=params, inputs=inputs, writer=writer)
