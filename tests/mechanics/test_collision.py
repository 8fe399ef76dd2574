"""Contact points of coal-backed collision shapes against hand-derived distances, normals and witness points."""

import threading

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

from kane import System
from kane import joints as J
from kane.mechanics.collision import (BroadPhase, CollisionData, CollisionOptions, body_poses, candidate_pairs,
                                      collision_model, contacts, pair_distance)
from kane.model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere, pair_allowed
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
    local = R.T @ (d.point_a_world - centre)  # the witness point lies on the ellipsoid's surface
    assert np.sum((local / radii) ** 2) == pytest.approx(1.0, abs=1e-8)
    assert d.point_b_world[2] == pytest.approx(0.0, abs=1e-12)


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
    tet = ConvexMesh([[0, 0, 0], [0.3, 0, 0], [0, 0.3, 0], [0, 0, 0.3]])
    shapes = [Box((0.1, 0.2, 0.15)), Sphere(0.2), Capsule(0.1, 0.3), Cylinder(0.15, 0.2), Ellipsoid((0.1, 0.2, 0.1)),
              tet] * 2
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


def aabb_overlaps_brute(cm, R_s, r_s, margin):
    """Every allowed pair whose world AABBs overlap, by testing all n^2 pairs (the independent reference)."""
    lo, hi = [], []
    for k, g in enumerate(cm.geometries):
        if cm.unbounded[k]:
            lo.append(np.full(3, -np.inf))
            hi.append(np.full(3, np.inf))
            continue
        corners = np.array([[x, y, z] for x in (g.aabb_local.min_[0], g.aabb_local.max_[0])
                            for y in (g.aabb_local.min_[1], g.aabb_local.max_[1])
                            for z in (g.aabb_local.min_[2], g.aabb_local.max_[2])]) @ R_s[k].T + r_s[k]
        lo.append(corners.min(axis=0) - margin)
        hi.append(corners.max(axis=0) + margin)
    n = len(lo)
    return [(i, j) for i in range(n) for j in range(i + 1, n)
            if cm.allowed[i, j] and np.all(lo[i] <= hi[j]) and np.all(lo[j] <= hi[i])]


def test_broad_phase_equals_brute_force_for_50_random_bodies():
    rng = np.random.default_rng(50)
    kinds = [lambda: Sphere(rng.uniform(0.05, 0.2)), lambda: Box(rng.uniform(0.03, 0.15, 3)),
             lambda: Capsule(rng.uniform(0.03, 0.1), rng.uniform(0.05, 0.3)),
             lambda: Cylinder(rng.uniform(0.03, 0.1), rng.uniform(0.05, 0.3)),
             lambda: Ellipsoid(rng.uniform(0.05, 0.15, 3))]
    shapes = [kinds[k % 5]() for k in range(50)]
    m = free_bodies(shapes)
    R = Rotation.random(50, random_state=51).as_matrix()
    r = rng.uniform([-1, -1, -0.1], [1, 1, 1], (50, 3))
    cm = collision_model(m)
    R_s, r_s = cm.shape_poses(body_poses(m, (R, r)))
    sweep = candidate_pairs(cm, R_s, r_s, 0.01, BroadPhase.SWEEP)
    assert sweep == aabb_overlaps_brute(cm, R_s, r_s, 0.01)
    assert 60 < len(sweep) < 1275 // 2  # the floor's 50 pairs plus some body pairs; far fewer than all 1275
    every = contacts(m, CollisionData(m, CollisionOptions(margin=0.01, broad_phase=BroadPhase.ALL)), (R, r))
    swept = contacts(m, CollisionData(m, CollisionOptions(margin=0.01)), (R, r))
    key = [(c.name, round(c.distance, 12)) for c in every]
    assert key == [(c.name, round(c.distance, 12)) for c in swept] and len({c.name for c in every}) > 5


def test_pair_filter_parent_child_excludes_and_groups():
    s = System("chain")
    s.add_body("a", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_body("b", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_body("c", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_body("d", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "a", J.Free(), name="ja")
    s.add_joint("a", "b", J.Revolute("z"), name="jb")
    s.add_joint("ground", "c", J.Free(), name="jc")
    s.add_joint("ground", "d", J.Free(), name="jd")
    for body in "abcd":
        s.add_collision(body, Sphere(0.5), name=f"s{body}", group=2 if body == "d" else 1,
                        mask=1 if body == "d" else ~0)
    s.add_collision("ground", HalfSpace(), name="floor")
    s.exclude_collision("a", "c")
    s.exclude_collision("sb", "floor")
    m = s.compile()
    R, r = np.repeat(np.eye(3)[None], 4, axis=0), np.zeros((4, 3))  # every sphere at the origin, on the floor
    names = {c.name for c in contacts(m, None, (R, r))}
    cm = collision_model(m)  # the array filter against the record-by-record rule
    parent_of = {b.name: "ground" if p < 0 else m.bodies[p].name for b, p in zip(m.bodies, m.parent)}
    assert [[pair_allowed(a, b, parent_of, set(m.collision_excludes)) and a is not b for b in m.collisions]
            for a in m.collisions] == cm.allowed.tolist()
    # a-b: parent and child; a-c: excluded by name; d (group 2, mask 1) meets a, b, c (group 1, mask ~0): 1 & 1 and
    # 2 & ~0 are non-zero; the floor is the parent of a, c, d, but the ground is never excluded as a parent
    assert names == {"sa|sd", "sb|sc", "sb|sd", "sc|sd", "sa|floor", "sc|floor", "sd|floor"}  # sb|floor: excluded
    s2 = System("groups")
    for k, (g, mk) in enumerate([(1, 1), (2, 2), (4, ~0)]):
        s2.add_body(f"b{k}", 1.0, inertia=(0.1, 0.1, 0.1))
        s2.add_joint("ground", f"b{k}", J.Free(), name=f"j{k}")
        s2.add_collision(f"b{k}", Sphere(0.5), name=f"g{k}", group=g, mask=mk)
    m2 = s2.compile()
    names = {c.name for c in contacts(m2, None, (np.repeat(np.eye(3)[None], 3, axis=0), np.zeros((3, 3))))}
    # g0-g1: 1 & 2 = 0 -> no; g0-g2: 1 & ~0 and 4 & 1 = 0 -> no; g1-g2: 2 & ~0 and 4 & 2 = 0 -> no
    assert names == set()


def test_poses_from_kane_kinematics():
    import kane
    from kane.analysis.kinematic_outputs import kinematic_outputs
    from kane.viz.scene import poses_at

    s = System("drop")
    s.add_body("box", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "box", J.Free(), name="free")
    s.add_collision("box", Box((0.2, 0.1, 0.05)), (np.eye(3), np.array([0.0, 0.0, -0.01])), name="shell")
    s.add_collision("ground", HalfSpace(), name="floor")
    eqs = kane.derive(s.compile())
    e = Rotation.from_euler("z", 0.5).as_quat(scalar_first=True)
    q = np.concatenate([[0.3, 0.4, 0.059], e])
    pos, wxyz = poses_at(kinematic_outputs(eqs), 0.0, q, np.zeros(6))
    cs = contacts(eqs.model, None, (pos, wxyz))
    assert len(cs) == 4 and all(c.distance == pytest.approx(-0.001, abs=1e-9) for c in cs)
    np.testing.assert_allclose(np.mean([c.point_a_world for c in cs], axis=0), [0.3, 0.4, -0.001], atol=1e-9)


def test_bad_options_and_poses():
    from kane.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"key 'margin': expected a finite distance >= 0"):
        CollisionOptions(margin=-0.1)
    m = free_bodies([Sphere(0.1), Sphere(0.1)])
    with pytest.raises(ArgumentError, match=r"body poses of model 'scene' \(2 bodies\): expected"):
        contacts(m, None, (np.zeros((3, 3, 3)), np.zeros((3, 3))))
    with pytest.raises(ArgumentError, match=r"no collision named 'nope'; collisions: s0, s1, floor"):
        pair_distance(m, None, (np.repeat(np.eye(3)[None], 2, axis=0), np.zeros((2, 3))), "s0", "nope")


def test_face_contacts_of_curved_shapes_and_within_the_margin():
    # a cylinder standing on the floor: coal samples its rim (12 points on the circle of radius r)
    m = free_bodies([Cylinder(0.2, 0.6)])
    cs = contacts(m, None, poses((None, [0.0, 0.0, 0.299])))
    assert len(cs) == 12 and all(c.distance == pytest.approx(-0.001, abs=1e-9) for c in cs)
    np.testing.assert_allclose([np.hypot(*c.point_a_world[:2]) for c in cs], 0.2, atol=1e-9)
    # a capsule lying on the floor: the two ends of its segment, radius below
    m = free_bodies([Capsule(0.1, 0.4)])
    cs = contacts(m, None, poses((Rotation.from_euler("y", np.pi / 2).as_matrix(), [0.0, 0.0, 0.099])))
    np.testing.assert_allclose(sorted(c.point_a_world[0] for c in cs), [-0.2, 0.2], atol=1e-9)
    # a box 5 mm above the floor, margin 1 cm: its 4 corners with distance +0.005
    m = free_bodies([Box((0.2, 0.1, 0.05))])
    cs = contacts(m, CollisionData(m, CollisionOptions(margin=0.01)), poses((None, [0.0, 0.0, 0.055])))
    assert len(cs) == 4 and all(c.distance == pytest.approx(0.005, abs=1e-9) for c in cs)


def test_box_on_a_box_gives_the_corners_of_the_overlap():
    # a 0.2 cube centred at (0.15, 0.05) 1 mm into a 0.4 x 0.4 x 0.2 box at the origin: overlap x in [0.05, 0.2],
    # y in [-0.05, 0.15] (hand clipping of the two squares)
    m = free_bodies([Box((0.2, 0.2, 0.1)), Box((0.1, 0.1, 0.1))], ground=False)
    cs = contacts(m, None, poses((None, [0, 0, 0]), (None, [0.15, 0.05, 0.199])))
    got = sorted(tuple(np.round(c.point_a_world[:2], 9)) for c in cs)
    assert got == [(0.05, -0.05), (0.05, 0.15), (0.2, -0.05), (0.2, 0.15)]
    for c in cs:
        assert c.point_a_world[2] == pytest.approx(0.1, abs=1e-9) and c.point_b_world[2] == pytest.approx(0.099)
        assert c.distance == pytest.approx(-0.001, abs=1e-9)
        np.testing.assert_allclose(c.normal_world, [0, 0, 1], atol=1e-9)


def test_a_static_table_on_the_ground():
    # a table top (a box on the ground, placed at z = 0.75) and a sphere resting 1 mm into it; ground-ground pairs
    # (table and floor) are never tested
    s = System("table")
    s.add_body("ball", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "ball", J.Free(), name="j")
    s.add_collision("ball", Sphere(0.1), name="ball")
    s.add_collision("ground", Box((0.5, 0.5, 0.025)), (np.eye(3), [0.0, 0.0, 0.75]), name="top")
    s.add_collision("ground", HalfSpace(), name="floor")
    m = s.compile()
    (c,) = contacts(m, None, (np.eye(3)[None], np.array([[0.2, 0.1, 0.874]])))
    assert (c.shape_a, c.shape_b, c.body_a, c.body_b) == ("ball", "top", "ball", "ground")
    assert c.distance == pytest.approx(-0.001, abs=1e-9)
    np.testing.assert_allclose(c.normal_world, [0, 0, -1], atol=1e-9)
    np.testing.assert_allclose(c.point_b_world, [0.2, 0.1, 0.775], atol=1e-9)
