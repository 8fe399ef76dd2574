"""The compiled sphere/box/half-space narrow phase (collision_prims, collision_box) against coal, pair by pair and on
a pile of 20 boxes, and a hand-derived patch (a cube on a cube turned 45 deg: the octagon)."""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kane import System
from kane import joints as J
from kane.mechanics.collision import CollisionData, CollisionOptions, pair_distance
from kane.mechanics.collision_batch import contacts_batch
from kane.model.collision import Box, Capsule, HalfSpace, Sphere

MARGIN = 0.005
COAL = CollisionOptions(margin=MARGIN, narrow_phase="coal")
COMPILED = CollisionOptions(margin=MARGIN, narrow_phase="compiled")


def two_shapes(a, b):
    """Shapes a and b on two free bodies (b None: a against the ground half-space z <= 0)."""
    s = System("pair")
    s.add_body("A", mass=1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "A", J.Free(), name="jA")
    s.add_collision("A", a, name="a")
    if b is None:
        s.add_collision("ground", HalfSpace((0, 0, 1), 0.0), name="floor")
    else:
        s.add_body("B", mass=1.0, inertia=(0.1, 0.1, 0.1))
        s.add_joint("ground", "B", J.Free(), name="jB")
        s.add_collision("B", b, name="b")
    return s.compile()


def same_set(x, y, atol=1e-9):
    """x and y (k, 3) hold the same points (any order)."""
    d = np.linalg.norm(x[:, None] - y[None], axis=2)
    return len(x) == len(y) and d.min(axis=1).max() <= atol and d.min(axis=0).max() <= atol


def compare(m, poses, data_coal, data_fast):
    """(number of points, both found) after asserting the compiled batch equals coal's as point sets per pair."""
    ref, got = contacts_batch(m, data_coal, poses), contacts_batch(m, data_fast, poses)
    assert np.array_equal(np.unique(ref.pair), np.unique(got.pair))
    for p in np.unique(ref.pair):
        r, g = ref.take(ref.pair == p), got.take(got.pair == p)
        assert same_set(r.point_a, g.point_a) and same_set(r.point_b, g.point_b), (r.point_a, g.point_a)
        np.testing.assert_allclose(g.normal, r.normal[:1].repeat(len(g), 0), rtol=0, atol=1e-9)
        np.testing.assert_allclose(np.sort(g.distance), np.sort(r.distance), rtol=0, atol=1e-9)
    return len(ref), len(ref) > 0


PAIRS = {"sphere-sphere": (Sphere(0.2), Sphere(0.3)), "sphere-plane": (Sphere(0.3), None),
         "sphere-box": (Sphere(0.15), Box((0.1, 0.2, 0.3))), "box-sphere": (Box((0.1, 0.2, 0.3)), Sphere(0.15)),
         "box-plane": (Box((0.1, 0.2, 0.3)), None), "box-box": (Box((0.1, 0.2, 0.3)), Box((0.2, 0.1, 0.15))),
         "capsule-plane": (Capsule(0.1, 0.4), None), "sphere-capsule": (Sphere(0.15), Capsule(0.1, 0.4)),
         "capsule-sphere": (Capsule(0.1, 0.4), Sphere(0.15))}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_random_poses_match_coal(name):
    """Seeded random poses (overlapping, touching within the margin, apart): the same pairs, points, normals and
    distances as coal to 1e-9."""
    m = two_shapes(*PAIRS[name])
    n_b = m.n_bodies
    data_coal, data_fast = CollisionData(m, COAL), CollisionData(m, COMPILED)
    rng = np.random.default_rng(7)
    found = 0
    for _ in range(150):
        R = Rotation.random(n_b, random_state=rng).as_matrix().reshape(n_b, 3, 3)
        r = rng.normal(scale=0.2, size=(n_b, 3))
        found += compare(m, (R, r), data_coal, data_fast)[1]
    assert found > 40


def stacked(R_top, r_top, half_bottom=(0.2, 0.15, 0.1), half_top=(0.1, 0.12, 0.08)):
    m = two_shapes(Box(half_bottom), Box(half_top))
    return m, (np.array([np.eye(3), R_top]), np.array([np.zeros(3), r_top]))


@pytest.mark.parametrize("kind", ["face-face", "edge-face", "edge-edge", "apart"])
def test_box_box_patches_match_coal(kind):
    """A box on a box: face on face (the clipped polygon), an edge on a face (2 points), crossing edges, and
    apart within the margin: coal's patch as a point set to 1e-9."""
    rng = np.random.default_rng({"face-face": 1, "edge-face": 2, "edge-edge": 3, "apart": 4}[kind])
    sizes = []
    for _ in range(40):
        yaw = Rotation.from_euler("z", rng.uniform(-np.pi, np.pi))
        gap = rng.uniform(-0.004, 0.0) if kind != "apart" else rng.uniform(0.0005, 0.0045)
        if kind in ("face-face", "apart"):
            R, lift = yaw.as_matrix(), 0.08
        elif kind == "edge-face":
            R, lift = (yaw * Rotation.from_euler("x", np.pi / 4)).as_matrix(), (0.12 + 0.08) / math.sqrt(2)
        else:
            R = (yaw * Rotation.from_euler("y", np.pi / 4)).as_matrix()
            lift = (0.1 + 0.08) / math.sqrt(2)
        r = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.08, 0.08), 0.1 + lift + gap])
        if kind == "edge-edge":  # the bottom box turned edge up (45 deg about x), raised so its edge is the top
            m = two_shapes(Box((0.2, 0.15, 0.1)), Box((0.1, 0.12, 0.08)))
            R_low = Rotation.from_euler("x", np.pi / 4).as_matrix()
            top = (0.15 + 0.1) / math.sqrt(2)
            r[:2] *= 0.3
            r[2] = top + lift + gap
            poses = (np.array([R_low, R]), np.array([np.zeros(3), r]))
        else:
            m, poses = stacked(R, r)
        n, _ = compare(m, poses, CollisionData(m, COAL), CollisionData(m, COMPILED))
        sizes.append(n)
    sizes = np.array(sizes)
    if kind in ("face-face", "apart"):
        assert (sizes >= 3).sum() > 30  # polygons
    elif kind == "edge-face":
        assert (sizes == 2).sum() > 30
    else:  # crossing edges (coal gives 1 or 2 points there; some yaws miss the other edge)
        assert (sizes >= 1).sum() > 30


def test_capsule_lying_on_the_floor_gives_its_two_ends_as_coal():
    """A capsule lying on the floor (tilted by less than coal's patch tolerance over its length: both segment ends;
    tilted more: one point), penetrating or apart within the margin: coal's points to 1e-9."""
    m = two_shapes(Capsule(0.05, 0.3), None)
    rng = np.random.default_rng(8)
    sizes = []
    for _ in range(40):
        tilt = rng.uniform(-0.006, 0.006)  # over the 0.3 m segment: height differences up to 1.8 mm
        R = (Rotation.from_euler("z", rng.uniform(-np.pi, np.pi)) * Rotation.from_euler("x", np.pi / 2 + tilt))
        r = np.r_[rng.uniform(-1, 1, 2), 0.05 + 0.15 * abs(np.sin(tilt)) + rng.uniform(-0.003, 0.004)]
        sizes.append(compare(m, (R.as_matrix()[None], r[None]), CollisionData(m, COAL), CollisionData(m, COMPILED))[0])
    sizes = np.array(sizes)
    assert (sizes == 2).sum() > 10 and (sizes == 1).sum() > 5


def test_box_box_distance_within_margin_matches_coal_distance():
    """Separated boxes near each other: a pair is reported exactly when coal's distance is within the margin, with
    that distance (the nearest features)."""
    m = two_shapes(Box((0.1, 0.05, 0.02)), Box((0.03, 0.08, 0.06)))
    data = CollisionData(m, CollisionOptions(margin=0.01, narrow_phase="compiled", patch=False))
    rng = np.random.default_rng(5)
    near = 0
    for _ in range(200):
        R = Rotation.random(2, random_state=rng).as_matrix()
        r = rng.uniform([-0.15, -0.15, 0.5], [0.15, 0.15, 0.65], size=(2, 3))
        d = pair_distance(m, None, (R, r), "a", "b").distance
        got = contacts_batch(m, data, (R, r))
        if d > 0.01 + 1e-9:
            assert len(got) == 0
        elif d > 0:
            near += 1
            assert len(got) == 1 and got.distance[0] == pytest.approx(d, abs=1e-9)
    assert near > 10


def test_cube_on_cube_turned_45_degrees_gives_the_octagon():
    """Unit cube resting 1 mm into another turned 45 deg about z: the patch is the octagon |x|, |y| <= 1/2,
    |x| + |y| <= sqrt(2)/2 at the mid-plane z = 1/2 - 0.0005, every point at distance -1 mm (hand derivation)."""
    R = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    m = two_shapes(Box((0.5, 0.5, 0.5)), Box((0.5, 0.5, 0.5)))
    poses = (np.array([np.eye(3), R]), np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.999]]))
    c = math.sqrt(2) / 2 - 0.5
    octagon = np.array([[sx * 0.5, sy * c, 0.4995] for sx in (-1, 1) for sy in (-1, 1)]
                       + [[sx * c, sy * 0.5, 0.4995] for sx in (-1, 1) for sy in (-1, 1)])
    for options, atol in ((COMPILED, 1e-15), (COAL, 1e-10)):  # coal's box support inflates by 1 + 1e-10 in ties
        batch = contacts_batch(m, CollisionData(m, options), poses)
        assert len(batch) == 8
        mid = 0.5 * (batch.point_a + batch.point_b)
        assert same_set(mid, octagon, atol=atol)
        np.testing.assert_allclose(batch.normal, [[0, 0, 1.0]] * 8, atol=atol)
        np.testing.assert_allclose(batch.distance, -0.001, atol=atol)


HALF, N_BOXES = np.array([0.1, 0.08, 0.06]), 20


def pile():
    """bench/bench_contact.py's pile (seed 0): kane's model and the same scene as MJCF."""
    rng = np.random.default_rng(0)
    s = System("pile")
    q, bodies = [], []
    for k in range(N_BOXES):
        axis = rng.normal(size=3)
        angle = rng.uniform(0.0, 0.4)
        e = np.r_[math.cos(angle / 2), math.sin(angle / 2) * axis / np.linalg.norm(axis)]
        p = np.r_[0.12 * (k % 2) + rng.uniform(-0.01, 0.01), 0.12 * (k // 2 % 2) + rng.uniform(-0.01, 0.01),
                  HALF.max() + 0.05 + 0.17 * k]
        rng.normal(size=3)
        s.add_body(f"box{k}", 1.0, inertia=(0.01, 0.01, 0.01))
        s.add_joint("ground", f"box{k}", J.Free(), name=f"j{k}")
        s.add_collision(f"box{k}", Box(tuple(HALF)), name=f"box{k}")
        bodies.append(f'<body pos="{p[0]:.17g} {p[1]:.17g} {p[2]:.17g}" quat="{e[0]:.17g} {e[1]:.17g} {e[2]:.17g} '
                      f'{e[3]:.17g}"><freejoint/><geom type="box" size="{HALF[0]} {HALF[1]} {HALF[2]}"/></body>')
    s.add_collision("ground", HalfSpace(), name="plane")
    xml = (f'<mujoco><option timestep="0.001" cone="elliptic"/><worldbody><geom type="plane" size="20 20 0.1"/>'
           f'{"".join(bodies)}</worldbody></mujoco>')
    return s.compile(), xml


def test_pile_compiled_batch_equals_coal_batch_during_a_run():
    """The 20-box pile falling (poses from MuJoCo's run of the same initial poses, every 0.15 s to 1.5 s): the compiled
    batch has coal's pairs, in the same pair order, with the same point sets, normals and distances."""
    mujoco = pytest.importorskip("mujoco")
    m, xml = pile()
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    data_coal, data_fast = CollisionData(m, COAL), CollisionData(m, CollisionOptions(margin=MARGIN))
    total = 0
    for _ in range(10):
        for _ in range(150):
            mujoco.mj_step(mm, md)
        q = md.qpos.reshape(N_BOXES, 7)
        poses = (q[:, 0:3].copy(), q[:, 3:7].copy())
        n, _ = compare(m, poses, data_coal, data_fast)
        ref, got = contacts_batch(m, data_coal, poses), contacts_batch(m, data_fast, poses)
        np.testing.assert_array_equal(got.pair, ref.pair)  # pair order kept: the warm start matches (pair, rank)
        total += n
    assert total > 300


def test_threads_get_the_same_batches():
    """Four threads on one CollisionData (the compiled call releases the GIL, each call its own scratch): the
    batches of a single thread."""
    from concurrent.futures import ThreadPoolExecutor

    m, _ = pile()
    data = CollisionData(m, CollisionOptions(margin=MARGIN))
    rng = np.random.default_rng(3)
    R = Rotation.random(N_BOXES, random_state=rng).as_matrix()
    r = np.c_[rng.uniform(0, 0.3, (N_BOXES, 2)), rng.uniform(0.0, 0.5, N_BOXES)]
    ref = contacts_batch(m, data, (R, r))
    assert len(ref) > 10
    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(lambda _: contacts_batch(m, data, (R, r)), range(16)):
            np.testing.assert_array_equal(got.pair, ref.pair)
            np.testing.assert_array_equal(got.point_a, ref.point_a)
            np.testing.assert_array_equal(got.point_b, ref.point_b)


def test_without_numba_the_same_arithmetic_runs_in_python():
    """numba is optional: with it hidden, AUTO goes through coal and COMPILED runs the kernels as Python, giving
    coal's contacts (a box on a box turned 30 deg, and a sphere on the floor)."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["numba"] = None
import numpy as np
from scipy.spatial.transform import Rotation
from kane import System
from kane import joints as J
from kane.mechanics import collision_box
from kane.mechanics.collision import CollisionData, CollisionOptions
from kane.mechanics.collision_batch import contacts_batch
from kane.model.collision import Box, Capsule, HalfSpace, Sphere
assert not collision_box.HAVE_NUMBA
s = System("p")
for k, shape in enumerate((Box((0.1, 0.1, 0.1)), Box((0.1, 0.1, 0.1)), Sphere(0.05))):
    s.add_body(f"b{k}", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", f"b{k}", J.Free(), name=f"j{k}")
    s.add_collision(f"b{k}", shape, name=f"s{k}")
s.add_collision("ground", HalfSpace(), name="floor")
m = s.compile()
R = np.array([np.eye(3), Rotation.from_euler("z", 30, degrees=True).as_matrix(), np.eye(3)])
r = np.array([[0, 0, 0.0995], [0.02, 0.01, 0.298], [1.0, 0, 0.0499]])
a = contacts_batch(m, CollisionData(m, CollisionOptions(narrow_phase="compiled")), (R, r))
b = contacts_batch(m, CollisionData(m, CollisionOptions(narrow_phase="coal")), (R, r))
c = contacts_batch(m, CollisionData(m, CollisionOptions()), (R, r))
assert a.pair.tolist() == b.pair.tolist() == c.pair.tolist()
for p in set(a.pair.tolist()):
    x, y = a.point_a[a.pair == p], b.point_a[b.pair == p]
    assert np.abs(x[:, None] - y[None]).sum(axis=2).min(axis=1).max() < 1e-9
print(len(a), sorted(np.bincount(a.pair).tolist()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "13"  # 4 corners on the floor, the octagon-like 8 of the turned box, 1 sphere
