"""Model files on the compiled time-stepping path: :func:`model_stepping_run` runs a model whose bodies are free
bodies under gravity (:func:`.contact_events_model.free_model`: FreeBodies built from the model's masses, inertias
and gravity, checked on a probe state against the model's own equations and body poses) on
:mod:`.contact_fast` (one compiled step per time step) with its contacts from
:func:`kane.mechanics.collision_batch.contacts_batch` (one compiled call for spheres, boxes, capsules and
half-spaces; coal for the other pairs), the free joints' body-axis linear velocities mapped to world axes and
back; any other model runs the general loop on its own equations (:class:`.system_bodies.SystemBodies`, coal's
contact points) with the reason recorded. :func:`.contact_run.run_contacts` and :class:`.contact_run.ContactJob`
call it for ``--contact-scheme time-stepping`` (the default).

The two paths step the same contact problem but not the same free motion: the FreeBodies step takes the
gyroscopic term by the implicit midpoint rule (no kinetic energy gained, :mod:`.contact_bodies`), the general one
takes u + h M^-1 f of the model's speeds; they agree to O(h) (tests/switching/test_contact_stepping_model.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..jit import HAVE_NUMBA
from .contact_events_model import free_model, to_free, to_model
from .contact_stepping import simulate_contacts
from .contact_stream import STREAM_EVERY

__all__ = ["ModelStepping", "model_stepping"]


class ModelStepping:
    """How a model's contact time stepping runs: ``dynamics`` and ``contacts`` (q -> contacts) to step, ``records``
    (q -> the :class:`~kane.model.contact.ContactPoint` list of the run's records), ``free`` (the FreeBodies, or
    None on the general path), ``loop`` and ``reason`` (what the run file records: ``"compiled step"`` and "", or
    ``"python"`` and why: the model is not free bodies, or numba is not installed)."""

    def __init__(self, dynamics, contacts, records, free, reason: str):
        self.dynamics, self.contacts, self.records, self.free = dynamics, contacts, records, free
        self.loop = "compiled step" if free is not None and HAVE_NUMBA else "python"
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

        forward = outer(None if sink is None else (lambda block: sink(replace(block, u=to_model(free, block.q,
                                                                                               block.u)))))
        try:
            run = simulate_contacts(free, self.contacts, q0, to_free(free, q0, u0), h, t_end, options, sink=forward,
                                    every=every, watch=outer(watch))
        except SimulationError as exc:  # a failed step: its last good state in the model's speeds
            if not raised and exc.q is not None and exc.u is not None:
                exc.u = to_model(free, np.reshape(exc.q, (1, -1)), np.reshape(exc.u, (1, -1)))[0]
            raise
        return replace(run, u=to_model(free, run.q, run.u), engine=self.loop, engine_reason=self.reason)


def model_stepping(dynamics, params, bodies, contacts) -> ModelStepping:
    """The :class:`ModelStepping` of the model of ``dynamics`` (compiled, with ``params``): the compiled step when
    it is free bodies under gravity, else ``dynamics`` with ``bodies`` (its SystemBodies) and ``contacts`` (its
    coal contact points)."""
    free, why = free_model(dynamics, params, bodies)
    if free is None:
        return ModelStepping(dynamics, contacts, contacts, None, why)
    from ..mechanics.collision import CollisionData
    from ..mechanics.collision_batch import contacts_batch

    model = dynamics.equations.model
    data = CollisionData(model)

    def batch(q):
        qb = np.reshape(q, (-1, 7))
        return contacts_batch(model, data, (qb[:, 0:3], qb[:, 3:7]))

    return ModelStepping(free, batch, lambda q: batch(q).points(), free, "")
