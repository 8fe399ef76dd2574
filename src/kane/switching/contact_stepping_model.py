"""Model files on the compiled time-stepping path: :func:`model_stepping` runs a model whose bodies are free bodies
under gravity (:func:`.contact_events_model.free_model`: FreeBodies built from the model's masses, inertias and
gravity, checked on a probe state against the model's own equations and body poses) on the compiled multi-step
loop (:mod:`.contact_loop`: collision and steps in one compiled call, when every pair is spheres, boxes and
half-spaces) or else the compiled step per time step (:mod:`.contact_fast`, contacts from
:func:`kane.mechanics.collision_batch.contacts_batch`, coal for the other pairs), the free joints' body-axis
linear velocities mapped to world axes and back; any other model runs the general loop on its own equations
(:class:`.system_bodies.SystemBodies`, coal's contact points) with the reason recorded.
:func:`.contact_run.run_contacts` and :class:`.contact_run.ContactJob` call it for ``--contact-scheme
time-stepping`` (the default).

The two paths step the same contact problem but not the same free motion: the FreeBodies step takes the
gyroscopic term by the implicit midpoint rule (no kinetic energy gained, :mod:`.contact_bodies`), the general one
takes u + h M^-1 f of the model's speeds; they agree to O(h) (tests/switching/test_contact_stepping_model.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..jit import HAVE_NUMBA
from .contact_events_model import free_model, to_free, to_model
from .contact_loop import BatchContacts
from .contact_stepping import simulate_contacts
from .contact_stream import STREAM_EVERY

__all__ = ["ModelStepping", "model_stepping"]


class ModelStepping:
    """How a model's contact time stepping runs: ``dynamics`` and ``contacts`` (q -> contacts) to step, ``records``
    (q -> the :class:`~kane.model.contact.ContactPoint` list of the run's records), ``free`` (the FreeBodies, or
    None on the general path), ``loop`` and ``reason`` (what the run file records: ``"compiled loop"`` (collision
    and steps in one compiled call, :mod:`.contact_loop`) or ``"compiled step"`` and "", or ``"python"`` and why:
    the model is not free bodies, or numba is not installed); ``step_loop`` the loop of a watched run (a watch is
    called at every step, so such a run takes the compiled step, not the loop)."""

    def __init__(self, dynamics, contacts, records, free, reason: str):
        self.dynamics, self.contacts, self.records, self.free = dynamics, contacts, records, free
        self.step_loop = "compiled step" if free is not None and HAVE_NUMBA else "python"
        looped = free is not None and isinstance(contacts, BatchContacts) and contacts.loop_for(free)
        self.loop = "compiled loop" if looped else self.step_loop
        self.reason = reason if free is None or HAVE_NUMBA else "numba is not installed (the free-body step in Python)"

    def run(self, q0, u0, h: float, t_end: float, options, bodies, params, *, sink=None, every: int = STREAM_EVERY,
            watch=None):
        """:func:`.contact_stepping.simulate_contacts` of the model from q0, u0 (the model's coordinates and
        speeds) in steps of h [s] to t_end [s]: the run, its blocks to ``sink`` and its failures in the model's
        speeds."""
        free = self.free
        if free is None:
            run = simulate_contacts(self.dynamics, self.contacts, q0, u0, h, t_end, options, bodies, params,
                                    sink=sink, every=every, watch=watch)
            return replace(run, engine_reason=self.reason)
        from ..simulate.simulator import SimulationError

        raised = []  # set when sink or watch raised (their states are the model's already)

        def outer(call):
            def wrapped(*args):
                try:
                    return call(*args)
                except BaseException:
                    raised.append(True)
                    raise
            return None if call is None else wrapped

        contacts = self.contacts
        if watch is not None:  # watched at every step (limits, progress, signals): the compiled step per step
            contacts = contacts.__call__
        forward = outer(None if sink is None else (lambda block: sink(replace(block, u=to_model(free, block.q,
                                                                                               block.u)))))
        try:
            run = simulate_contacts(free, contacts, q0, to_free(free, q0, u0), h, t_end, options, sink=forward,
                                    every=every, watch=outer(watch))
        except SimulationError as exc:  # a failed step: its last good state in the model's speeds
            if not raised and exc.q is not None and exc.u is not None:
                exc.u = to_model(free, np.reshape(exc.q, (1, -1)), np.reshape(exc.u, (1, -1)))[0]
            raise
        return replace(run, u=to_model(free, run.q, run.u), engine=self.loop if watch is None else self.step_loop,
                       engine_reason=self.reason)


def model_stepping(dynamics, params, bodies, contacts) -> ModelStepping:
    """The :class:`ModelStepping` of the model of ``dynamics`` (compiled, with ``params``): the compiled step when
    it is free bodies under gravity, else ``dynamics`` with ``bodies`` (its SystemBodies) and ``contacts`` (its
    coal contact points)."""
    free, why = free_model(dynamics, params, bodies)
    if free is None:
        return ModelStepping(dynamics, contacts, contacts, None, why)
    batch = BatchContacts(dynamics.equations.model, free)
    return ModelStepping(free, batch, lambda q: batch(q).points(), free, "")
