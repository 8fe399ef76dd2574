"""The compiled multi-step loop (kane.switching.contact_loop) against the per-step path of simulate_contacts."""

import pathlib
import sys

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.mechanics.collision import CollisionData, CollisionOptions, NarrowPhase
from kane.mechanics.collision_batch import contacts_batch
from kane.switching import contact_loop
from kane.switching.contact_bodies import FreeBodies
from kane.switching.contact_loop import BatchContacts
from kane.switching.contact_stepping import simulate_contacts

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_contact_fast import pile  # noqa: E402

OPTIONS = CollisionOptions(margin=0.01)
FIELDS = ("step", "normal_force", "friction_force", "normal_world", "slip_velocity", "mode")


def per_step(model, bodies, q0, u0, steps, **kw):
    """The per-step path: simulate_contacts with a plain contacts_batch callable."""
    data = CollisionData(model, OPTIONS)
    batched = lambda q: contacts_batch(model, data, (q.reshape(-1, 7)[:, 0:3], q.reshape(-1, 7)[:, 3:7]))  # noqa: E731
    return simulate_contacts(bodies, batched, q0, u0, 1e-3, steps * 1e-3, **kw)


def assert_same_run(a, b):
    for name in ("t", "q", "u", "energy", "iterations", "converged"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.contacts.name == b.contacts.name
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a.contacts, name), getattr(b.contacts, name), err_msg=name)


@pytest.mark.parametrize("rows_per_step", [16, 0])
def test_the_compiled_loop_is_the_per_step_path(monkeypatch, rows_per_step):
    # three boxes and a sphere into a heap, 200 steps: the loop (one compiled call; with 0 rows per step the record
    # buffer fills and grows many times) gives the per-step path's samples, energy, sweeps and records bit for bit
    monkeypatch.setattr(contact_loop, "_ROWS_PER_STEP", rows_per_step)
    model, bodies, q0, u0 = pile(n=3)
    ref = per_step(model, bodies, q0, u0, 200)
    calls = []
    contacts = BatchContacts(model, bodies, OPTIONS)
    assert contacts.loop_for(bodies)
    run = simulate_contacts(bodies, contacts, q0, u0, 1e-3, 0.2, watch=lambda k, t: calls.append(k))
    assert calls == [0]  # one chunk: the compiled loop ran the whole run
    assert len(ref.contacts.name) > 100 and ref.iterations.max() > 1
    assert_same_run(run, ref)
    qb = ref.q[150].reshape(-1, 7)  # called as contacts(q), it is contacts_batch at those poses
    expected = contacts_batch(model, CollisionData(model, OPTIONS), (qb[:, 0:3], qb[:, 3:7]))
    assert len(expected) > 3
    np.testing.assert_array_equal(contacts(ref.q[150]).point_b, expected.point_b)


def test_the_compiled_loop_in_blocks_sends_the_per_step_paths_blocks():
    # with a sink: chunks of 'every' steps, the same blocks (samples, records, modes, step counts) as the per-step
    # path; watch is called before each chunk
    model, bodies, q0, u0 = pile(n=3)
    ref_blocks, blocks, calls = [], [], []
    ref = per_step(model, bodies, q0, u0, 250, sink=ref_blocks.append, every=40)
    run = simulate_contacts(bodies, BatchContacts(model, bodies, OPTIONS), q0, u0, 1e-3, 0.25, sink=blocks.append,
                            every=40, watch=lambda k, t: calls.append(k))
    assert_same_run(run, ref)
    assert calls == [0, 39, 79, 119, 159, 199, 239]
    assert [b.start for b in blocks] == [b.start for b in ref_blocks] == list(range(0, 251, 40))
    for a, b in zip(blocks, ref_blocks):
        np.testing.assert_array_equal(a.q, b.q)
        assert (a.contacts.name, a.modes, a.evaluations) == (b.contacts.name, b.modes, b.evaluations)
    assert blocks[-1].modes and all(m in ("stick", "slip") for _, m in blocks[-1].modes)


def test_what_takes_the_compiled_loop():
    model, bodies, q0, u0 = pile(n=2)
    assert BatchContacts(model, bodies, OPTIONS).loop_for(bodies)
    assert not BatchContacts(model, bodies, OPTIONS).loop_for(FreeBodies(bodies.names, bodies.masses,
                                                                         bodies.inertias))
    ramp = FreeBodies(bodies.names, bodies.masses, bodies.inertias, lambda t: (0.0, 0.0, -9.81))
    assert not BatchContacts(model, ramp, OPTIONS).loop_for(ramp)  # gravity a function of t: the per-step path
    coal = CollisionOptions(margin=0.01, narrow_phase=NarrowPhase.COAL)
    assert not BatchContacts(model, bodies, coal).loop_for(bodies)
    with pytest.raises(ArgumentError, match="'b0', 'b1', 'b2'|b0, b1, b2"):
        BatchContacts(model, FreeBodies(["b1", "b0", "b2"], bodies.masses, bodies.inertias), OPTIONS)
