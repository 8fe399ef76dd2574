"""contacts_batch against contacts (same contacts, pair by pair) and against hand-derived sphere contacts."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kane import System
from kane import joints as J
from kane.mechanics.collision import CollisionData, CollisionOptions, contacts
from kane.mechanics.collision_batch import ContactBatch, contacts_batch
from kane.model.collision import Box, Capsule, HalfSpace, Sphere
from kane.model.contact import ContactMaterial


def scene(shapes, materials=None):
    s = System("batch_scene")
    for k, shape in enumerate(shapes):
        b = s.add_body(f"b{k}", mass=1.0, inertia=(0.1, 0.1, 0.1))
        s.add_joint("ground", b, J.Free(), name=f"j{k}")
        s.add_collision(b, shape, name=f"s{k}", material=None if materials is None else materials[k])
    s.add_collision("ground", HalfSpace((0, 0, 1), 0.0), name="floor")
    return s.compile()


def assert_same(batch: ContactBatch, points, atol=1e-12):
    got = batch.points()
    assert len(got) == len(points) == len(batch)
    for a, b in zip(got, points):
        assert (a.body_a, a.body_b, a.shape_a, a.shape_b, a.material) == (b.body_a, b.body_b, b.shape_a, b.shape_b,
                                                                          b.material)
        np.testing.assert_allclose(a.point_a_world, b.point_a_world, rtol=0, atol=atol)
        np.testing.assert_allclose(a.point_b_world, b.point_b_world, rtol=0, atol=atol)
        np.testing.assert_allclose(a.normal_world, b.normal_world, rtol=0, atol=atol)
        assert a.distance == pytest.approx(b.distance, abs=atol)
    assert batch.pair_names() == tuple(p.name for p in points)


@pytest.mark.parametrize("seed, narrow, atol", [(0, "coal", 1e-12), (0, "auto", 1e-9), (1, "auto", 1e-9),
                                               (2, "auto", 1e-9)])
def test_batch_equals_contacts_on_random_piles(seed, narrow, atol):
    """Through coal the very same numbers; compiled (boxes, spheres, the floor; the capsule's pairs through coal)
    coal's EPA/GJK round-off apart (its witness points are iterates, the compiled ones closed forms)."""
    rng = np.random.default_rng(seed)
    shapes = [Sphere(0.1), Sphere(0.07), Box((0.1, 0.08, 0.06)), Box((0.05, 0.05, 0.05)), Capsule(0.05, 0.2),
              Sphere(0.12), Box((0.12, 0.04, 0.08)), Sphere(0.05)]
    materials = [ContactMaterial(0.3 + 0.1 * k, restitution=0.05 * k) for k in range(len(shapes))]
    m = scene(shapes, materials)
    data = CollisionData(m, CollisionOptions(margin=0.01, narrow_phase=narrow))
    total = 0
    for _ in range(20):  # shapes packed in a 0.4 m cube just above the floor: many overlaps of every kind
        R = Rotation.random(len(shapes), random_state=rng).as_matrix()
        r = rng.uniform([0, 0, 0.0], [0.4, 0.4, 0.3], size=(len(shapes), 3))
        ref = contacts(m, data, (R, r))
        batch = contacts_batch(m, data, (R, r))
        assert_same(batch, ref, atol)
        total += len(ref)
    assert total > 100


def test_sphere_contacts_match_the_closed_forms():
    m = scene([Sphere(0.3), Sphere(0.2)])
    ca, cb = np.array([0.0, 0.0, 0.28]), np.array([0.1, 0.2, 0.7])
    batch = contacts_batch(m, None, (np.array([np.eye(3)] * 2), np.array([ca, cb])))
    assert batch.pair_names() == ("s0|s1", "s0|floor")
    u = (cb - ca) / np.linalg.norm(cb - ca)
    np.testing.assert_allclose(batch.distance, [np.linalg.norm(cb - ca) - 0.5, -0.02], atol=1e-15)
    np.testing.assert_allclose(batch.normal, [u, [0, 0, -1]], atol=1e-15)
    np.testing.assert_allclose(batch.point_a, [ca + 0.3 * u, [0, 0, -0.02]], atol=1e-15)
    np.testing.assert_allclose(batch.point_b, [cb - 0.2 * u, [0, 0, 0]], atol=1e-15)
    assert batch.body_a.tolist() == [0, 0] and batch.body_b.tolist() == [1, -1]
    np.testing.assert_array_equal(batch.mu_static, [0.5, 0.5])


def test_no_contacts_gives_an_empty_batch():
    m = scene([Sphere(0.1)])
    batch = contacts_batch(m, None, (np.eye(3)[None], np.array([[0.0, 0.0, 1.0]])))
    assert len(batch) == 0 and batch.points() == [] and batch.point_a.shape == (0, 3)
