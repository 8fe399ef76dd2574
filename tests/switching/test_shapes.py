"""Collision detection for simple shapes (kane.switching.shapes): gap functions against independent geometry, and
the contacts they declare driven by the switching loop, checked against analytic impact mechanics: a ball and a
disk dropped on the plane, two spheres colliding head-on, a sliding ball that starts to roll, a rough landing."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import kane
from kane import joints as J
from kane.switching.shapes import Disk, Plane, Point, Sphere, contact
from kane.switching import simulate_switching

G = 9.81
Q_NAMES = ("x", "y", "z", "e0", "e1", "e2", "e3")
U_NAMES = ("wx", "wy", "wz", "vx", "vy", "vz")  # body-axis angular and linear velocity (Free joint)


def free(s, body):
    s.add_joint("ground", body, J.Free(), coordinates=[f"{body}_{k}" for k in Q_NAMES],
                speeds=[f"{body}_{k}" for k in U_NAMES])


def rot(e):
    """R_ground_body of a scalar-first unit quaternion."""
    w, x, y, z = e
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def ground_velocities(q, u):
    """(omega, v) in ground axes of a free body with state q (7,), u (6,)."""
    R = rot(q[3:7])
    return R @ u[0:3], R @ u[3:6]


def sample(traj, t):
    """The state just after the last sample at time t (after a jump: the post-jump one)."""
    k = np.flatnonzero(traj.t == t)[-1]
    return traj.q[k], traj.u[k]


def before(traj, t):
    k = np.flatnonzero(traj.t == t)[0]
    return traj.q[k], traj.u[k]


# ---- a ball dropped on the plane ---------------------------------------------------------------------------
M_BALL, R_BALL, I_BALL = 0.5, 0.1, 0.4 * 0.5 * 0.1**2  # a solid sphere


def ball_system(**options):
    s = kane.System("ball", gravity=(0, 0, -G))
    s.add_body("ball", mass=M_BALL, inertia=(I_BALL,) * 3)
    free(s, "ball")
    c = contact(s, Sphere("ball", radius=R_BALL), Plane(), "floor", **options)
    return s, c


def test_ball_dropped_on_the_plane_bounces_with_restitution_at_the_analytic_times():
    s, c = ball_system()
    eqs = kane.derive(s)
    z0, e = 1.0, 0.6
    q0 = np.array([0.0, 0.0, z0, 1.0, 0.0, 0.0, 0.0])
    u0 = np.array([1.0, -2.0, 3.0, 0.5, 0.2, 0.0])  # spinning, drifting sideways
    assert c.gap(0.0, q0) == pytest.approx(z0 - R_BALL, abs=1e-15)
    assert np.allclose(c.gap.points(0.0, q0), [[0, 0, z0 - R_BALL], [0, 0, 0]], atol=1e-15)
    traj = simulate_switching(eqs, (0.0, 1.4), q0, u0, [c.unilateral(e, v_min=0.05)], output_dt=0.01)
    v1 = math.sqrt(2 * G * (z0 - R_BALL))
    t1 = v1 / G
    t2 = t1 + 2 * e * v1 / G  # the flight after a rebound at e v1
    first, second = traj.events[:2]
    assert (first.kind, second.kind) == ("impact", "impact")
    assert first.t == pytest.approx(t1, abs=1e-9) and second.t == pytest.approx(t2, abs=1e-8)
    assert first.data["approach_speed"] == pytest.approx(-v1, rel=1e-9)
    assert second.data["approach_speed"] == pytest.approx(-e * v1, rel=1e-8)
    assert first.data["delta_kinetic"] == pytest.approx(-(1 - e**2) / 2 * M_BALL * v1**2, rel=1e-9)
    assert first.data["impulse"][0] == pytest.approx((1 + e) * M_BALL * v1, rel=1e-9)  # N s, pushing up
    q_m, u_m = before(traj, first.t)
    q_p, u_p = sample(traj, first.t)
    w_m, (w_p, v_p) = ground_velocities(q_m, u_m)[0], ground_velocities(q_p, u_p)
    assert c.gap(first.t, q_p) == pytest.approx(0.0, abs=1e-10)
    assert v_p[2] == pytest.approx(e * v1, rel=1e-9)
    assert np.allclose(v_p[:2], u0[3:5], atol=1e-9) and np.allclose(w_p, w_m, atol=1e-12)  # frictionless
    assert np.allclose(w_p, u0[0:3], atol=1e-9)  # a sphere's spin is constant in flight


# ---- a disk dropped on the plane ---------------------------------------------------------------------------
M_DISK, R_DISK = 1.2, 0.2
I_DISK = np.diag([M_DISK * R_DISK**2 / 4, M_DISK * R_DISK**2 / 4, M_DISK * R_DISK**2 / 2])


@pytest.fixture(scope="module")
def disk():
    s = kane.System("disk", gravity=(0, 0, -G))
    s.add_body("disk", mass=M_DISK, inertia=tuple(np.diag(I_DISK)))
    free(s, "disk")
    c = contact(s, Disk("disk", axis=(0, 0, 2), radius=R_DISK), Plane(), "floor")
    return kane.derive(s), c


def test_disk_gap_is_the_height_of_the_lowest_rim_point(disk):
    _, c = disk
    rng = np.random.default_rng(5)
    for _ in range(5):
        e = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), e / np.linalg.norm(e)])
        R, centre = rot(q[3:7]), q[0:3]

        def height(th, centre=centre, R=R):
            return (centre + R @ (R_DISK * np.array([math.cos(th), math.sin(th), 0.0])))[2]

        best = min((minimize_scalar(height, bracket=(a, a + 0.5), tol=1e-12) for a in np.linspace(0, 6, 7)),
                   key=lambda r: r.fun)
        assert c.gap(0.0, q) == pytest.approx(best.fun, abs=1e-12)
        p, foot = c.gap.points(0.0, q)
        assert np.allclose(p, centre + R @ (R_DISK * np.array([math.cos(best.x), math.sin(best.x), 0.0])),
                           atol=1e-6)
        assert np.allclose(foot, [p[0], p[1], 0.0], atol=1e-15)


@pytest.mark.parametrize("tilt", [0.0, 0.4])
def test_disk_dropped_first_touches_at_the_lowest_rim_point_at_the_analytic_time(disk, tilt):
    eqs, c = disk
    z0, e = 0.8, 0.5
    q0 = np.array([0.1, -0.2, z0, math.cos(tilt / 2), math.sin(tilt / 2), 0.0, 0.0])  # axis tilted about x
    t_hit = math.sqrt(2 * (z0 - R_DISK * math.sin(tilt)) / G)
    traj = simulate_switching(eqs, (0.0, t_hit + 0.02), q0, np.zeros(6), [c.unilateral(e, v_min=0.05)],
                              output_dt=0.01)
    hit = traj.events[0]
    assert hit.kind == "impact" and hit.t == pytest.approx(t_hit, abs=1e-9)
    q_m, u_m = before(traj, hit.t)
    q_p, u_p = sample(traj, hit.t)
    P = c.gap.points(hit.t, q_m)[0]
    # the lowest rim point of the disk tilted by `tilt` about x: below the centre, towards -y
    lowest = q0[0:3] + np.array([0.0, 0.0, -0.5 * G * t_hit**2]) + R_DISK * np.array(
        [0.0, -math.cos(tilt), -math.sin(tilt)])
    if tilt == 0.0:
        lowest = q_m[0:3]  # flat: the contact is taken at the centre of the touching face
    assert np.allclose(P, lowest, atol=1e-9) and P[2] == pytest.approx(0.0, abs=1e-9)
    (w_m, v_m), (w_p, v_p) = ground_velocities(q_m, u_m), ground_velocities(q_p, u_p)
    assert np.allclose(w_m, 0.0) and v_m[2] == pytest.approx(-G * t_hit, rel=1e-9)
    # the contact point's normal velocity is reversed times e; a frictionless impulse is vertical at P, so the
    # horizontal momentum and the angular momentum about P are kept
    assert (v_p + np.cross(w_p, P - q_p[0:3]))[2] == pytest.approx(e * G * t_hit, rel=1e-9)
    assert np.allclose(v_p[:2], v_m[:2], atol=1e-12)
    R = rot(q_p[3:7])
    I_g = R @ I_DISK @ R.T

    def H(w, v, centre):
        return I_g @ w + M_DISK * np.cross(centre - P, v)

    assert np.allclose(H(w_p, v_p, q_p[0:3]), H(w_m, v_m, q_m[0:3]), atol=1e-10)
    if tilt == 0.0:
        assert np.allclose(w_p, 0.0, atol=1e-12)  # landing flat: no spin
    else:
        assert abs(w_p[0]) > 1.0  # landing on an edge: it starts to turn about x


# ---- two spheres colliding head-on -------------------------------------------------------------------------
def test_two_spheres_collide_head_on_with_momentum_kept_and_the_right_energy_loss():
    ma, mb, ra, rb, e = 1.0, 2.0, 0.1, 0.15, 0.6
    s = kane.System("two_spheres")
    s.add_body("a", mass=ma, inertia=(0.01,) * 3)
    s.add_body("b", mass=mb, inertia=(0.02,) * 3)
    free(s, "a")
    free(s, "b")
    c = contact(s, Sphere("a", radius=ra), Sphere("b", radius=rb), "hit")
    eqs = kane.derive(s)
    va, vb, d0 = 2.0, -1.0, 1.0
    q0 = np.array([0, 0, 0, 1, 0, 0, 0, d0, 0, 0, 1, 0, 0, 0], dtype=float)
    u0 = np.array([0, 0, 1.0, va, 0, 0, 0, 1.0, 0, vb, 0, 0])  # spinning about the line of motion's normals
    assert c.gap(0.0, q0) == pytest.approx(d0 - ra - rb, abs=1e-15)
    assert np.allclose(c.gap.points(0.0, q0), [[ra, 0, 0], [d0 - rb, 0, 0]], atol=1e-15)
    traj = simulate_switching(eqs, (0.0, 0.5), q0, u0, [c.unilateral(e)], output_dt=0.01)
    (hit,) = traj.events
    v_rel = va - vb
    assert hit.kind == "impact" and hit.t == pytest.approx((d0 - ra - rb) / v_rel, abs=1e-10)
    mu = ma * mb / (ma + mb)
    assert hit.data["delta_kinetic"] == pytest.approx(-(1 - e**2) / 2 * mu * v_rel**2, rel=1e-9)
    assert hit.data["approach_speed"] == pytest.approx(-v_rel, rel=1e-10)
    q_p, u_p = sample(traj, hit.t)
    (wa, va_p), (wb, vb_p) = ground_velocities(q_p[:7], u_p[:6]), ground_velocities(q_p[7:], u_p[6:])
    assert ma * va_p + mb * vb_p == pytest.approx(np.array([ma * va + mb * vb, 0, 0]), abs=1e-10)
    assert vb_p[0] - va_p[0] == pytest.approx(e * v_rel, rel=1e-10)
    assert np.allclose(wa, [0, 0, 1.0], atol=1e-12) and np.allclose(wb, [0, 1.0, 0], atol=1e-12)
    assert c.gap(traj.t[-1], traj.q[-1]) > 0.1  # flying apart


# ---- friction and rolling at a sphere's contact point ------------------------------------------------------
def test_a_sliding_ball_starts_to_roll_at_the_analytic_time_with_five_sevenths_of_its_speed():
    s, c = ball_system(stick_direction=(1, 0, 0))
    eqs = kane.derive(s)
    mu, v0 = 0.2, 3.0
    q0 = np.array([0.0, 0.0, R_BALL, 1.0, 0.0, 0.0, 0.0])  # resting on the floor
    traj = simulate_switching(eqs, (0.0, 1.5), q0, [0, 0, 0, v0, 0, 0], [c.unilateral(0.5), c.coulomb(mu, mu)],
                              output_dt=0.01)
    assert traj.modes[0][2] == "floor+slip(floor_stick+)"
    (stick,) = traj.events
    t_roll = 2 * v0 / (7 * mu * G)  # slip speed v0 - mu g t - r (5 mu g / 2 r) t reaches zero
    assert stick.kind == "stick" and stick.t == pytest.approx(t_roll, abs=1e-8)
    assert np.allclose(traj["lambda_floor"], M_BALL * G, rtol=1e-9, atol=1e-9)
    for q, u in zip(traj.q[traj.t > t_roll], traj.u[traj.t > t_roll]):
        w, v = ground_velocities(q, u)
        assert v == pytest.approx([5 * v0 / 7, 0, 0], abs=1e-8) and w[1] == pytest.approx(v[0] / R_BALL)
        assert q[2] == pytest.approx(R_BALL, abs=1e-9)


def test_a_spinning_ball_landing_on_a_rough_floor_rolls_off_with_the_angular_momentum_about_the_contact():
    s, c = ball_system(no_slip=True)
    eqs = kane.derive(s)
    vx, wy, z0 = 1.0, -20.0, 0.3  # backspin
    q0 = np.array([0.0, 0.0, z0, 1.0, 0.0, 0.0, 0.0])
    traj = simulate_switching(eqs, (0.0, 0.6), q0, [0, wy, 0, vx, 0, 0], [c.unilateral(0.0)], output_dt=0.01)
    (land,) = traj.events
    assert land.kind == "impose" and land.t == pytest.approx(math.sqrt(2 * (z0 - R_BALL) / G), abs=1e-9)
    v_roll = (5 * vx + 2 * R_BALL * wy) / 7  # I w + m r v about the contact point, I = 2/5 m r^2
    for q, u in zip(traj.q[traj.t > land.t], traj.u[traj.t > land.t]):
        w, v = ground_velocities(q, u)
        assert v == pytest.approx([v_roll, 0, 0], abs=1e-8) and w[1] == pytest.approx(v_roll / R_BALL)


def test_a_point_on_a_tilted_plane_and_bad_input():
    s = kane.System("rod", gravity=(0, -G, 0))
    s.add_body("rod", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
    s.add_joint("ground", "rod", J.Revolute("z"), coordinates=["th"], speeds=["w"])
    wall = Plane(normal=(-1, 1, 0), offset=-0.5)  # the free side is up and to the left
    c = contact(s, wall, Point("rod", (1.0, 0, 0)), "tip")
    for th in (0.0, -0.7, 1.2):
        tip = np.array([math.cos(th), math.sin(th), 0.0])
        assert c.gap(0.0, [th]) == pytest.approx(tip @ np.array([-1, 1, 0]) / math.sqrt(2) + 0.5, abs=1e-14)
    with pytest.raises(kane.ModelError, match="nonzero"):
        Plane(normal=(0, 0, 0))
    with pytest.raises(kane.ModelError, match="radius > 0"):
        Sphere("rod", radius=-1.0)
    with pytest.raises(kane.ModelError, match="two planes"):
        contact(s, Plane(), Plane(), "x")
    with pytest.raises(kane.ModelError, match="frictionless"):
        contact(s, Sphere("rod"), Sphere("ground"), "x", no_slip=True)
    with pytest.raises(kane.ModelError, match="unsupported pair"):
        contact(s, Disk("rod"), Sphere("ground"), "x")
    with pytest.raises(kane.ModelError, match="no body named"):
        contact(s, Sphere("cart"), Plane(), "x")
    with pytest.raises(kane.ModelError, match="stick constraint"):
        c.coulomb(0.3, 0.2)
