"""Contact points of coal-backed collision shapes against hand-derived distances, normals and witness points."""

import threading

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

from kane import System
from kane import joints as J
from kane.mechanics.collision import (BroadPhase, CollisionData, CollisionOptions, candidate_pairs,
                                      collision_model, contacts, pair_distance)
from kane.model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere
from kane.model.contact import ContactMaterial


def free_bodies(shapes, ground=True, materials=None):
    """A system of free bodies, one shape each (named s0, s1, ...), plus a ground half-space z <= 0."""
    s = System("scene")
    for k, shape in enumerate(shapes):
        b = s.add_body(f"b{k}", mass=1.0, inertia=(0.1, 0.1, 0.1))
        s.add_joint("ground", b, J.Free(), name=f"j{k}")
        s.add_collision(b, shape, name=f"s{k}", material=None if materials is None else materials[k])
    if ground:
        s.add_collision("ground", HalfSpace((0, 0, 1), 0.0), name="floor")
    return s.compile()


def poses(*pairs):
    R = np.array([np.eye(3) if p[0] is None else p[0] for p in pairs])
    r = np.array([p[1] for p in pairs], dtype=float)
    return R, r


def test_sphere_sphere_distance_normal_witness():
    m = free_bodies([Sphere(0.5), Sphere(0.25)], ground=False)
    ca, cb = np.array([0.1, 0.2, 0.3]), np.array([1.1, -0.4, 0.9])
    d = pair_distance(m, None, poses((None, ca), (None, cb)), "s0", "s1")
    u = (cb - ca) / np.linalg.norm(cb - ca)
    assert d.distance == pytest.approx(np.linalg.norm(cb - ca) - 0.75, abs=1e-9)
    np.testing.assert_allclose(d.normal_world, u, atol=1e-9)
    np.testing.assert_allclose(d.point_a_world, ca + 0.5 * u, atol=1e-9)
    np.testing.assert_allclose(d.point_b_world, cb - 0.25 * u, atol=1e-9)
    assert contacts(m, None, poses((None, ca), (None, cb))) == []
    # overlapping by 0.05: one contact point, distance -0.05, normal a -> b
    cb2 = ca + 0.7 * u
    (c,) = contacts(m, None, poses((None, ca), (None, cb2)))
    assert (c.shape_a, c.shape_b, c.body_a, c.body_b) == ("s0", "s1", "b0", "b1")
    assert c.distance == pytest.approx(-0.05, abs=1e-9)
    np.testing.assert_allclose(c.normal_world, u, atol=1e-9)
    np.testing.assert_allclose(c.point_a_world, ca + 0.5 * u, atol=1e-9)
    np.testing.assert_allclose(c.point_b_world, cb2 - 0.25 * u, atol=1e-9)


def test_sphere_plane_and_margin():
    m = free_bodies([Sphere(0.3)])
    data = CollisionData(m, CollisionOptions(margin=0.01))
    assert contacts(m, None, poses((None, [0.2, -0.1, 0.305]))) == []  # apart, no margin
    (c,) = contacts(m, data, poses((None, [0.2, -0.1, 0.305])))  # within the 0.01 margin
    assert (c.shape_a, c.shape_b) == ("s0", "floor")
    assert c.distance == pytest.approx(0.005, abs=1e-9)
    np.testing.assert_allclose(c.normal_world, [0, 0, -1], atol=1e-9)
    np.testing.assert_allclose(c.point_a_world, [0.2, -0.1, 0.005], atol=1e-9)
    np.testing.assert_allclose(c.point_b_world, [0.2, -0.1, 0.0], atol=1e-9)
    (c,) = contacts(m, data, poses((None, [0.0, 0.0, 0.28])))
    assert c.distance == pytest.approx(-0.02, abs=1e-9)


def test_box_flat_on_plane_gives_four_corners():
    m = free_bodies([Box((0.2, 0.1, 0.05))])
    R = Rotation.from_euler("z", 0.3).as_matrix()
    cs = contacts(m, None, poses((R, [1.0, 2.0, 0.049])))
    assert len(cs) == 4
    corners = np.array([R @ [sx * 0.2, sy * 0.1, -0.05] + [1.0, 2.0, 0.049] for sx in (-1, 1) for sy in (-1, 1)])
    got = np.array(sorted((c.point_a_world for c in cs), key=tuple))
    np.testing.assert_allclose(got, np.array(sorted(corners, key=tuple)), atol=1e-9)
    for c in cs:
        assert c.distance == pytest.approx(-0.001, abs=1e-9)
        np.testing.assert_allclose(c.normal_world, [0, 0, -1], atol=1e-9)
        assert c.point_b_world[2] == pytest.approx(0.0, abs=1e-12)
    # one point only when the patch is turned off
    assert len(contacts(m, CollisionData(m, CollisionOptions(patch=False)), poses((R, [1.0, 2.0, 0.049])))) == 1


def test_box_plane_tilted_lowest_corner():
    h = np.array([0.3, 0.2, 0.1])
    R = Rotation.from_euler("xyz", [0.4, -0.3, 0.7]).as_matrix()
    centre = np.array([0.5, 0.0, 0.25])
    m = free_bodies([Box(h)])
    d = pair_distance(m, None, poses((R, centre)), "s0", "floor")
    # hand: the lowest corner's height is z_c - sum_k |R[2, k]| h_k
    corner = centre - R @ (np.sign(R[2]) * h)
    assert d.distance == pytest.approx(centre[2] - np.abs(R[2]) @ h, abs=1e-9)
    np.testing.assert_allclose(d.point_a_world, corner, atol=1e-9)
    np.testing.assert_allclose(d.normal_world, [0, 0, -1], atol=1e-9)


def test_capsule_capsule_skew_segments():
    # segment a along x at height 0, segment b along y at height 1 through (0.3, 0, 1): common perpendicular z
    Rb = Rotation.from_euler("x", np.pi / 2).as_matrix() @ np.eye(3)
    Ra = Rotation.from_euler("y", np.pi / 2).as_matrix()
    m = free_bodies([Capsule(0.1, 2.0), Capsule(0.2, 1.0)], ground=False)
    d = pair_distance(m, None, poses((Ra, [0, 0, 0]), (Rb, [0.3, 0.1, 1.0])), "s0", "s1")
    assert d.distance == pytest.approx(1.0 - 0.3, abs=1e-9)
    np.testing.assert_allclose(d.point_a_world, [0.3, 0, 0.1], atol=1e-9)
    np.testing.assert_allclose(d.point_b_world, [0.3, 0, 0.8], atol=1e-9)
    np.testing.assert_allclose(d.normal_world, [0, 0, 1], atol=1e-9)


def test_cylinder_plane_rim_point():
    tilt = 0.3
    R = Rotation.from_euler("x", tilt).as_matrix()
    m = free_bodies([Cylinder(0.2, 0.6)])
    d = pair_distance(m, None, poses((R, [0, 0, 1.0])), "s0", "floor")
    # lowest point: the rim of the bottom face, height z_c - (L/2) cos(tilt) - r sin(tilt)
    assert d.distance == pytest.approx(1.0 - 0.3 * np.cos(tilt) - 0.2 * np.sin(tilt), abs=1e-9)


def test_ellipsoid_plane_against_scipy_minimum():
    radii = np.array([0.4, 0.2, 0.1])
    R = Rotation.from_euler("xyz", [0.5, 0.2, -0.4]).as_matrix()
    centre = np.array([0.0, 0.0, 0.6])
    m = free_bodies([Ellipsoid(radii)])
    d = pair_distance(m, None, poses((R, centre)), "s0", "floor")

    def height(ang):  # z of the surface point at spherical angles
        th, ph = ang
        p = radii * [np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)]
        return (R @ p + centre)[2]

    best = min((minimize(height, x0, method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14})
                for x0 in ([0.5, 0.5], [2.5, 1.0], [2.0, -2.0], [1.0, 3.0])), key=lambda r: r.fun)
    assert d.distance == pytest.approx(best.fun, abs=1e-8)
    assert d.distance == pytest.approx(centre[2] - np.linalg.norm(radii * R[2]), abs=1e-9)  # support function


def test_convex_mesh_of_a_box_matches_box():
    h = np.array([0.3, 0.2, 0.1])
    verts = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
    R = Rotation.from_euler("xyz", [0.2, 0.9, -0.3]).as_matrix()
    mb, mm = free_bodies([Box(h)]), free_bodies([ConvexMesh(verts)])
    for centre in ([0, 0, 0.5], [0.1, 0.2, 0.15]):
        db = pair_distance(mb, None, poses((R, centre)), "s0", "floor")
        dm = pair_distance(mm, None, poses((R, centre)), "s0", "floor")
        assert dm.distance == pytest.approx(db.distance, abs=1e-9)
        np.testing.assert_allclose(dm.point_a_world, db.point_a_world, atol=1e-9)


def test_materials_combine_by_maximum():
    mats = [ContactMaterial(0.3, 0.2, 0.5), ContactMaterial(0.6, 0.1, 0.2, torsional=0.01)]
    m = free_bodies([Sphere(0.5), Sphere(0.5)], ground=False, materials=mats)
    (c,) = contacts(m, None, poses((None, [0, 0, 0]), (None, [0.9, 0, 0])))
    assert (c.material.mu_static, c.material.mu_kinetic, c.material.restitution, c.material.torsional) == \
        (0.6, 0.2, 0.5, 0.01)


def test_threads_share_model_and_data():
    rng = np.random.default_rng(3)
    shapes = [Box((0.1, 0.2, 0.15)), Sphere(0.2), Capsule(0.1, 0.3), Cylinder(0.15, 0.2)] * 3
    m = free_bodies(shapes)
    R = Rotation.random(len(shapes), random_state=4).as_matrix()
    r = rng.uniform([-0.4, -0.4, 0.0], [0.4, 0.4, 0.4], (len(shapes), 3))
    data = CollisionData(m, CollisionOptions(margin=0.02))
    reference = [(c.name, c.distance, tuple(c.point_a_world)) for c in contacts(m, data, (R, r))]
    assert len(reference) > 5
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append([(c.name, c.distance, tuple(c.point_a_world)) for c in contacts(m, data, (R, r))])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(results) == 20 and all(res == reference for res in results)
