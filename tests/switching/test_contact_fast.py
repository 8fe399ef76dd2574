"""The compiled free-body path of the contact time stepping (kane.switching.contact_fast) against the general path
(contact_stepping with ContactPoint lists, scipy.sparse rows, the cone solver), step by step on the time-stepping
tests' scenes and on a pile of boxes through kane's coal geometry."""

import pathlib
import sys

import numpy as np
import pytest

from kane import System
from kane import joints as J
from kane.errors import ArgumentError
from kane.mechanics.collision import CollisionData, CollisionOptions, contacts
from kane.mechanics.collision_batch import ContactBatch, contacts_batch
from kane.model.collision import Box, HalfSpace, Sphere
from kane.model.contact import ContactMaterial
from kane.switching.contact_bodies import FreeBodies
from kane.switching.contact_fast import WarmStart
from kane.switching.contact_stepping import contact_step, simulate_contacts

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _contact_scenes import G, box_inertia, plane_contacts, sphere_inertia, state  # noqa: E402
from test_contact_stepping import random_scene  # noqa: E402


def as_batch(points, body_names):
    """A ContactBatch of a ContactPoint list (the contacts of a pair consecutive, as the scenes give them)."""
    shapes = sorted({s for cp in points for s in (cp.shape_a, cp.shape_b)})
    index = {name: k for k, name in enumerate(body_names)} | {"ground": -1}
    ia = np.array([shapes.index(cp.shape_a) for cp in points], dtype=np.int64)
    ib = np.array([shapes.index(cp.shape_b) for cp in points], dtype=np.int64)
    pair = ia * len(shapes) + ib
    arr = lambda f: np.array([f(cp) for cp in points], dtype=float).reshape(len(points), -1)  # noqa: E731
    return ContactBatch(tuple(body_names), tuple(shapes), np.array([index[cp.body_a] for cp in points], np.int64),
                        np.array([index[cp.body_b] for cp in points], np.int64), ia, ib,
                        arr(lambda cp: cp.point_a_world), arr(lambda cp: cp.point_b_world),
                        arr(lambda cp: cp.normal_world), arr(lambda cp: cp.distance).reshape(-1),
                        arr(lambda cp: cp.material.mu_static).reshape(-1),
                        arr(lambda cp: cp.material.mu_kinetic).reshape(-1),
                        arr(lambda cp: cp.material.restitution).reshape(-1), pair,
                        {int(p): cp.material for p, cp in zip(pair, points)})


def compare_step_by_step(bodies, general, batched, q0, u0, h, steps, impulse_tol=1e-12):
    """Run the general path; from each of its states take one step on both paths (same warm start): equal to
    1e-12 (the impulses to ``impulse_tol``: where contacts are redundant, a box on four corners, their split is
    not unique and amplifies round-off). Returns the number of active contacts seen."""
    q, u, warm, seen = q0, u0, {}, 0
    for k in range(steps):
        ref = contact_step(bodies, general, k * h, q, u, h, bodies=bodies, warm_start=warm)
        fast = contact_step(bodies, batched, k * h, q, u, h, bodies=bodies, warm_start=warm)
        assert isinstance(fast.points, ContactBatch) and len(fast.points) == len(ref.points)
        assert fast.points.pair_names() == tuple(cp.name for cp in ref.points)
        scale = max(1.0, np.abs(ref.u).max())
        np.testing.assert_allclose(fast.u, ref.u, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(fast.q, ref.q, rtol=0, atol=1e-12)
        big = max(1.0, np.abs(ref.impulse).max(initial=0.0))
        np.testing.assert_allclose(fast.impulse, ref.impulse, rtol=0, atol=impulse_tol * big)
        np.testing.assert_allclose(fast.velocity, ref.velocity, rtol=0, atol=1e-12 * scale)
        # a contact's mode where its impulse is above that tolerance; below it (a redundant point left with no share
        # of the split) open and slipping at zero impulse are the same step, told apart by round-off
        carries = np.maximum(np.linalg.norm(fast.impulse, axis=1), np.linalg.norm(ref.impulse, axis=1)) > \
            impulse_tol * big
        np.testing.assert_array_equal(fast.mode[carries], ref.mode[carries])
        assert (fast.iterations, fast.converged) == (ref.iterations, ref.converged)
        q, u, warm = ref.q, ref.u, {}
        for i, cp in enumerate(ref.points):
            warm.setdefault(cp.name, []).append(ref.impulse[i])
        seen += len(ref.points)
    return seen


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_equals_the_general_path_on_the_random_scenes(seed):
    bodies, general, (q0, u0), _ = random_scene(seed)
    batched = lambda q: as_batch(general(q), bodies.names)  # noqa: E731
    assert compare_step_by_step(bodies, general, batched, q0, u0, 2e-3, 200) > 60


def test_fast_path_equals_the_general_path_for_a_block_on_a_ramped_incline():
    half = np.array([0.2, 0.1, 0.05])
    gravity = lambda t: G * np.array([np.sin(0.4 + 2 * t), 0.0, -np.cos(0.4 + 2 * t)])  # noqa: E731
    bodies = FreeBodies(["block"], [2.0], [box_inertia(2.0, half)], gravity)
    general = plane_contacts(bodies, boxes={"block": half}, material=ContactMaterial(0.6, 0.4))
    q0, u0 = state(((0.0, 0.0, half[2]), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
    assert compare_step_by_step(bodies, general, lambda q: as_batch(general(q), bodies.names), q0, u0, 1e-3,
                                150) == 4 * 150


def pile(n=6, seed=0):
    """n boxes and a sphere dropped into a heap through kane's coal geometry: (model, bodies, q0, u0)."""
    rng = np.random.default_rng(seed)
    s = System("heap")
    names, masses, inertias, parts = [], [], [], []
    for k in range(n + 1):
        name = f"b{k}"
        b = s.add_body(name, mass=1.0, inertia=(0.1, 0.1, 0.1))
        s.add_joint("ground", b, J.Free(), name=f"j{k}")
        if k < n:
            half = rng.uniform(0.03, 0.08, size=3)
            s.add_collision(b, Box(tuple(half)), name=f"box{k}",
                            material=ContactMaterial(0.5, restitution=0.1 * (k % 2)))
            inertias.append(box_inertia(1.0, half))
        else:
            s.add_collision(b, Sphere(0.05), name="ball")
            inertias.append(sphere_inertia(1.0, 0.05))
        names.append(name)
        masses.append(1.0)
        e = rng.normal(size=4)
        parts.append((np.r_[rng.uniform(-0.06, 0.06, 2), 0.09 + 0.13 * k], e / np.linalg.norm(e),
                      rng.normal(size=3), np.zeros(3)))
    s.add_collision("ground", HalfSpace((0, 0, 1), 0.0), name="floor")
    q0, u0 = state(*parts)
    return s.compile(), FreeBodies(names, masses, inertias), q0, u0


def test_fast_path_equals_the_general_path_on_a_coal_heap():
    model, bodies, q0, u0 = pile()
    # coal for the batch too: the same geometry on both paths (the compiled narrow phase is compared with coal in
    # tests/mechanics/test_collision_prims.py)
    data = CollisionData(model, CollisionOptions(margin=0.01, narrow_phase="coal"))
    poses = lambda q: (q.reshape(-1, 7)[:, 0:3], q.reshape(-1, 7)[:, 3:7])  # noqa: E731
    general = lambda q: contacts(model, data, poses(q))  # noqa: E731
    batched = lambda q: contacts_batch(model, data, poses(q))  # noqa: E731
    run = simulate_contacts(bodies, general, q0, u0, 1e-3, 0.35)
    between = np.array(["floor" not in name for name in run.contacts.name])
    assert between.sum() > 50  # the boxes land on each other
    fast = simulate_contacts(bodies, batched, q0, u0, 1e-3, 0.35)
    assert fast.contacts.name[:200] == run.contacts.name[:200]
    # step by step from the heap's states: velocities to 1e-12; the split of the impulses among the redundant
    # points of face-on-face patches is not unique (W singular there): 1e-9
    assert compare_step_by_step(bodies, general, batched, run.q[250], run.u[250], 1e-3, 30, 1e-9) > 30
    assert np.diff(fast.energy).max() < 1e-9 * np.abs(fast.energy).max()


def test_warm_start_round_trip_and_foreign_bodies_are_named():
    batch = as_batch(plane_contacts(FreeBodies(["a"], [1.0], [np.eye(3)]), boxes={"a": np.full(3, 0.1)})(
        np.r_[0, 0, 0.1, 1, 0, 0, 0]), ["a"])
    warm = WarmStart.from_names(batch, {"plane|a": [np.ones(3), 2 * np.ones(3)]})
    assert warm.pair.tolist() == [batch.pair[0]] * 2 and warm.names()["plane|a"][1].tolist() == [2.0] * 3
    other = FreeBodies(["z"], [1.0], [np.eye(3)])
    with pytest.raises(ArgumentError, match="'a' are not among the free bodies"):
        contact_step(other, lambda q: batch, 0.0, np.r_[0, 0, 0.1, 1, 0, 0, 0], np.zeros(6), 1e-3, bodies=other)


class Wrapped:
    """A dynamics that is not a FreeBodies (delegates to one): the batch falls back to its ContactPoints."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_other_dynamics_take_the_general_path_with_the_batch_points():
    half = np.array([0.2, 0.1, 0.05])
    bodies = FreeBodies(["block"], [2.0], [box_inertia(2.0, half)])
    general = plane_contacts(bodies, boxes={"block": half}, material=ContactMaterial(0.6, 0.4))
    q, u = state(((0.0, 0.0, half[2] - 1e-4), (1.0, 0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.5, 0.0, -0.2)))
    ref = contact_step(bodies, general, 0.0, q, u, 1e-3, bodies=bodies)
    other = contact_step(Wrapped(bodies), lambda q: as_batch(general(q), bodies.names), 0.0, q, u, 1e-3,
                         bodies=bodies, warm_start=WarmStart([], np.zeros((0, 3)), ("block", "plane")))
    assert isinstance(other.points, tuple) and [cp.name for cp in other.points] == [cp.name for cp in ref.points]
    np.testing.assert_array_equal(other.u, ref.u)
    np.testing.assert_array_equal(other.impulse, ref.impulse)
    assert len(ref.points) == 4 and ref.impulse[:, 0].sum() > 0


def test_the_compiled_path_written_in_blocks_gives_the_whole_run_and_its_records():
    # the blocks a run hands its sink as it goes (kane simulate writes them to the file) put back together are the
    # run: samples, energy and every contact record (names made from the batch's pair ids), block after block
    model, bodies, q0, u0 = pile(n=3)
    data = CollisionData(model, CollisionOptions(margin=0.01))
    batched = lambda q: contacts_batch(model, data, (q.reshape(-1, 7)[:, 0:3], q.reshape(-1, 7)[:, 3:7]))  # noqa: E731
    blocks = []
    run = simulate_contacts(bodies, batched, q0, u0, 1e-3, 0.25, sink=blocks.append, every=40)
    assert [b.start for b in blocks] == list(range(0, 251, 40)) and len(run.contacts.name) > 100
    np.testing.assert_array_equal(np.concatenate([b.q for b in blocks]), run.q)
    np.testing.assert_array_equal(np.concatenate([b.energy for b in blocks]), run.energy)
    assert sum((b.contacts.name for b in blocks), ()) == run.contacts.name
    np.testing.assert_array_equal(np.concatenate([b.contacts.step for b in blocks]), run.contacts.step)
    np.testing.assert_array_equal(np.concatenate([b.contacts.normal_force for b in blocks]),
                                  run.contacts.normal_force)
    assert sum(b.evaluations for b in blocks) == 250
    assert all(m in ("stick", "slip") for _, m in blocks[-1].modes) and blocks[-1].modes
