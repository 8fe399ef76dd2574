"""A ball or a wheel rolling without slip on NURBS terrain in the embedded Kane formulation (issue 16 item 3,
kane.simulate.terrain): against kane's embedded rolling sphere and rolling disk on the ground plane, against the
Cartesian rolling joint (RollingContactDynamics) on a bicubic rational bump, the classical frequency in a spherical
bowl, and the bad input (a start apart from the terrain, a run leaving the patch)."""

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.algorithms.cartesian_contact import RollingContact, RollingContactDynamics
from kane.simulate import SimulationError
from kane.simulate.terrain import RollingSphereOnTerrain, RollingWheelOnTerrain, TerrainContactError
from kane.spatial import quaternion_to_rotation
from kane.surfaces import NurbsSurface, Sphere, Torus, nurbs_sphere

G = 9.81
R_BALL, MASS, COM, INERTIA = 0.3, 2.0, (0.03, -0.02, 0.04), (0.05, 0.06, 0.07)


def _floor(half=5.0) -> NurbsSurface:
    c = [-half, half]
    return NurbsSurface(np.array([[[a, b, 0.0] for b in c] for a in c]), None, [0, 0, 1, 1], [0, 0, 1, 1], 1, 1,
                        name="floor")


def _bump() -> NurbsSurface:
    """A bicubic rational patch over [-2, 2]^2 with a 0.3 m bump (two raised weights make it truly rational)."""
    x = np.linspace(-2.0, 2.0, 6)
    z = 5.0 * np.outer([0, 0.05, 0.25, 0.3, 0.05, 0], [0, 0.1, 0.3, 0.2, 0.05, 0])
    P = np.stack(np.broadcast_arrays(x[:, None], x[None, :], z), axis=-1)
    W = np.ones((6, 6))
    W[2, 3], W[3, 2] = 1.6, 0.7
    knots = [0, 0, 0, 0, 1 / 3, 2 / 3, 1, 1, 1, 1]
    return NurbsSurface(P, W, knots, knots, 3, 3, name="bump")


def _reference_ball() -> kane.System:
    """kane's embedded rolling sphere on the plane z = 0: v + w x (R^T (-r e_z)) = 0 in body axes, R^T e_z written
    out from the quaternion."""
    s = kane.System("ball", gravity=(0, 0, -G))
    s.add_body("ball", mass=MASS, com=COM, inertia=INERTIA)
    s.add_joint("ground", "ball", J.Free(), name="free")
    w, x, y, z = (sp.Symbol(f"q_free_q{c}") for c in "wxyz")
    down = -R_BALL * sp.Matrix([2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z])
    omega = sp.Matrix([sp.Symbol(f"u_free_{k}") for k in (1, 2, 3)])
    v = sp.Matrix([sp.Symbol(f"u_free_{k}") for k in (4, 5, 6)])
    s.add_motion_constraint("rolling", list(v + omega.cross(down)))
    return s


def test_ball_on_a_nurbs_plane_reproduces_the_embedded_rolling_sphere_on_the_ground():
    ball = RollingSphereOnTerrain(_floor(), R_BALL, MASS, com=COM, inertia=INERTIA, gravity=(0, 0, -G), name="b")
    q0, u0 = ball.initial_state([0.0, 0.0, R_BALL], 0.5, 0.5, omega=[1.5, 0.4, 0.7])
    got = kane.simulate.simulate(ball, (0.0, 2.0), q0, u0, rtol=1e-10, atol=1e-12, output_dt=0.25)
    ref = kane.simulate.simulate(kane.derive(_reference_ball()).compile(), (0.0, 2.0), q0, u0, rtol=1e-10, atol=1e-12,
                                 output_dt=0.25)
    assert np.allclose(got.t, ref.t) and got.t[-1] == 2.0
    assert np.abs(got.q - ref.q).max() < 1e-8 and np.abs(got.u - ref.u).max() < 1e-8
    assert np.abs(got.q[-1, :2]).max() > 0.3  # it rolled (and rocked: the centre of mass is off centre)
    assert np.abs(got.energy - got.energy[0]).max() < 1e-9 * abs(got.energy[0])


def _cartesian(terrain, start, shape, mass=MASS, com=COM, inertia=INERTIA):
    """The same body as a Cartesian rolling joint of ``terrain`` and the body's surface ``shape``."""
    s = kane.System("body", gravity=(0, 0, -G))
    s.add_body("body", mass=mass, com=com, inertia=inertia)
    s.add_joint("ground", "body", J.Free(), name="free")
    contact = RollingContact("roll", "ground", terrain, "body", shape, (*start, 0.0, 0.0))
    return RollingContactDynamics(s, [contact], alpha=1.0, beta=1.0)


def test_ball_on_a_rational_bicubic_bump_agrees_with_the_cartesian_rolling_joint():
    """Two formulations of the same contact: embedded (3 speeds, the normal as inputs) and absolute Cartesian
    coordinates with multipliers and the contact coordinates of both surfaces (6 speeds, 3 rows)."""
    terrain, start = _bump(), (0.3, 0.45)
    ball = RollingSphereOnTerrain(terrain, R_BALL, MASS, com=COM, inertia=INERTIA, gravity=(0, 0, -G))
    centre = ball.touching_centre(*start)
    omega = np.array([0.3, -2.0, 0.5])
    q0, u0 = ball.initial_state(centre, *start, omega=omega)
    got = kane.simulate.simulate(ball, (0.0, 1.0), q0, u0, rtol=1e-10, atol=1e-12, output_dt=0.25)
    n = terrain.normal(*start)
    turn = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])  # local +x (s = t = 0) to world -z
    cd = _cartesian(terrain, start, Sphere(R_BALL, rotation=turn, name="shell"))
    qc, uc = cd.initial_state(q0, np.concatenate([u0, R_BALL * np.cross(omega, n)]))
    assert np.abs(uc[3:] - ball.full_speeds(0.0, q0, u0)[3:]).max() < 1e-12  # the same rolling start
    cart = kane.simulate.simulate(cd, (0.0, 1.0), qc, uc, rtol=1e-10, atol=1e-12, output_dt=0.25,
                                  projection=cd.make_projection(), project_every=5)
    assert np.abs(cart.q[:, :7] - got.q).max() < 1e-8
    assert np.linalg.norm(got.q[-1, :2] - got.q[0, :2]) > 0.3  # it rolled over the bump's slope
    normals = np.array([ball.contact(t, q).normal for t, q in zip(got.t, got.q)])
    assert np.abs(normals[:, :2]).max() > 0.1  # on curved ground: the normal turned
    assert np.abs(got.energy - got.energy[0]).max() < 1e-9 * abs(got.energy[0])
    drift = max(abs(ball.contact(t, q).gap) for t, q in zip(got.t, got.q))
    assert drift < 1e-10  # the height kept at velocity level, without projection


RW, MW, IW, COMW = 0.3, 1.2, (0.03, 0.055, 0.03), (0.01, 0.0, 0.02)  # a wheel about its body y axis


def test_thin_disk_on_a_nurbs_plane_reproduces_kanes_embedded_rolling_disk():
    disk = RollingWheelOnTerrain(_floor(), RW, MW, IW, com=COMW, gravity=(0, 0, -G))
    lean = np.array([np.cos(0.075), np.sin(0.075), 0.0, 0.0])  # 0.15 rad about x
    spin = 6.0 * quaternion_to_rotation(lean) @ [0.0, 1.0, 0.0] + [0.0, 0.0, 0.8]
    q0, u0 = disk.initial_state(disk.touching_centre(0.5, 0.5, lean), 0.5, 0.5, lean, omega=spin)
    got = kane.simulate.simulate(disk, (0.0, 2.0), q0, u0, rtol=1e-10, atol=1e-12, output_dt=0.25)
    s = kane.System("disk", gravity=(0, 0, -G))
    s.add_body("wheel", mass=MW, com=COMW, inertia=IW)
    s.add_joint("ground", "wheel", J.Free(), name="free")
    s.add_rolling_disk("roll", "wheel", RW, axis=(0, 1, 0))
    ref = kane.simulate.simulate(kane.derive(s, dependent=["u_free_4", "u_free_5", "u_free_6"]).compile(), (0.0, 2.0),
                                 q0, u0, rtol=1e-10, atol=1e-12, output_dt=0.25)
    assert np.abs(got.q - ref.q).max() < 1e-8 and np.abs(got.u - ref.u).max() < 1e-8
    assert np.linalg.norm(got.q[-1, :2]) > 2.0  # it rolled (and turned: the path curves)


def test_torus_wheel_on_the_bump_agrees_with_the_cartesian_rolling_joint():
    terrain, start, upright = _bump(), (0.3, 0.45), np.array([1.0, 0.0, 0.0, 0.0])
    wheel = RollingWheelOnTerrain(terrain, 0.25, MW, IW, tube_radius=0.05, com=COMW, gravity=(0, 0, -G))
    q0, u0 = wheel.initial_state(wheel.touching_centre(*start, upright), *start, upright, omega=[0.0, 6.0, 0.5])
    got = kane.simulate.simulate(wheel, (0.0, 0.5), q0, u0, rtol=1e-11, atol=1e-12, output_dt=0.25)
    turn = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])  # local z to body y, (0, 0) to -z
    cd = _cartesian(terrain, start, Torus(0.25, 0.05, rotation=turn, name="tyre"), MW, COMW, IW)
    qc, uc = cd.initial_state(q0, wheel.full_speeds(0.0, q0, u0))
    assert np.abs(uc - wheel.full_speeds(0.0, q0, u0)).max() < 1e-12  # already rolling
    cart = kane.simulate.simulate(cd, (0.0, 0.5), qc, uc, rtol=1e-11, atol=1e-12, output_dt=0.25,
                                  projection=cd.make_projection(), project_every=5)
    assert np.abs(cart.q[:, :7] - got.q).max() < 1e-8
    assert np.linalg.norm(got.q[-1, :2] - got.q[0, :2]) > 0.5
    assert np.abs(got.energy - got.energy[0]).max() < 1e-8 * abs(got.energy[0])


def test_projection_puts_a_drifted_centre_back_on_the_offset_surface():
    terrain, start = _bump(), (0.3, 0.45)
    ball = RollingSphereOnTerrain(terrain, R_BALL, MASS, gap_tol=1e-3)
    q0, _ = ball.initial_state(ball.touching_centre(*start), *start)
    q = q0 + np.array([2e-4, -1e-4, 3e-4, 0.01, 0.0, -0.02, 0.0])
    assert abs(ball.contact(0.0, q).gap) > 1e-4
    p, _ = ball.project(0.0, q, np.zeros(3))
    assert abs(ball.contact(0.0, p).gap) < 1e-14 and abs(np.linalg.norm(p[3:]) - 1.0) < 1e-15


def test_ball_in_a_nurbs_spherical_bowl_oscillates_at_the_classical_frequency():
    """Eigenvalues of a central-difference Jacobian of (q', u') about the ball at rest at the bottom of a NURBS
    sphere of radius R (poles turned horizontal): the pairs +-i w, w = sqrt(5 g / (7 (R - r)))."""
    R, r, m = 1.0, 0.2, 1.5
    sphere = nurbs_sphere(R)
    bowl = NurbsSurface(sphere.control_points[..., [2, 0, 1]] + [0.0, 0.0, R], sphere.weights, sphere.knots_u,
                        sphere.knots_v, 2, 2, name="bowl")  # its bottom (0, 0, 0) at (s, t) = (0.75, 0.5)
    ball = RollingSphereOnTerrain(bowl, r, m, gravity=(0, 0, -G), gap_tol=1e-3)
    q0, u0 = ball.initial_state([0.0, 0.0, r], 0.7, 0.45)
    assert ball.side == -1.0  # inside: against the outward normal
    x0, nq = np.concatenate([q0, u0]), ball.n_q

    def f(x):
        return np.concatenate([ball.qdot(0.0, x[:nq], x[nq:]), ball.udot(0.0, x[:nq], x[nq:])])

    assert np.abs(f(x0)).max() < 1e-12  # at rest
    h = 1e-6
    A = np.stack([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(x0.size)], axis=1)
    lam = np.linalg.eigvals(A)
    osc = np.sort(lam[(lam.imag > 0.1) & (np.abs(lam.real) < 1e-4)].imag)
    assert osc.size == 2  # the two horizontal directions
    assert np.abs(osc / np.sqrt(5 * G / (7 * (R - r))) - 1).max() < 1e-6


def test_a_ball_apart_from_the_terrain_is_refused_naming_the_surface_and_the_gap():
    ball = RollingSphereOnTerrain(_floor(), R_BALL, MASS)
    with pytest.raises(TerrainContactError, match=r"rolling sphere 'ball': it does not touch surface 'floor' at "
                                                  r"the start: .* \(gap 0\.01 m") as info:
        ball.initial_state([0.0, 0.0, R_BALL + 0.01], 0.5, 0.5)
    assert isinstance(info.value, kane.ModelError) and info.value.parameter == "gap"
    assert info.value.value == pytest.approx(0.01, abs=1e-12)


def test_leaving_the_patch_stops_the_run_naming_the_surface_parameter_and_value():
    ball = RollingSphereOnTerrain(_floor(half=0.5), R_BALL, MASS)
    q0, u0 = ball.initial_state([0.0, 0.0, R_BALL], 0.5, 0.5, omega=[0.0, 2.0, 0.0])  # rolls along +x at 0.6 m/s
    with pytest.raises(SimulationError, match=r"surface 'floor' .* left the patch: parameter s = 1\.0 reached its "
                                              r"bound \(0\.0, 1\.0\)") as info:
        kane.simulate.simulate(ball, (0.0, 2.0), q0, u0, output_dt=0.1)
    assert 0.5 < info.value.t_good < 0.84 and 0.3 < info.value.q[0] <= 0.5  # the last good state, on the patch


def test_a_wheel_rolling_off_the_patch_or_lying_flat_is_named():
    disk = RollingWheelOnTerrain(_floor(half=0.5), RW, MW, IW)
    up = np.array([1.0, 0.0, 0.0, 0.0])
    q0, u0 = disk.initial_state(disk.touching_centre(0.5, 0.5, up), 0.5, 0.5, up, omega=[0.0, 3.0, 0.0])  # +x
    message = r"wheel 'wheel' on surface 'floor' .* left the patch: Newton's estimate of parameter s = 1\.0\d* is "
    with pytest.raises(SimulationError, match=message + r"outside \[0\.0, 1\.0\]") as info:
        kane.simulate.simulate(disk, (0.0, 1.0), q0, u0, output_dt=0.1)
    cause = info.value.__cause__
    assert isinstance(cause, TerrainContactError) and (cause.surface, cause.parameter) == ("floor", "s")
    assert 1.0 < cause.value < 1.1 and 0.3 < info.value.q[0] <= 0.5  # the last good state is on the patch
    flat = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0])  # the axis y turned onto z, the normal
    with pytest.raises(TerrainContactError, match=r"rolling wheel 'wheel': it lies flat on surface 'floor' at "
                                                  r"\(s, t\) = \(0\.5, 0\.5\)"):
        disk.initial_state([0.0, 0.0, 0.0], 0.5, 0.5, flat)


def test_a_nurbs_bowl_with_its_pole_turned_away_rolls_through_the_bottom_as_the_analytic_sphere():
    """The ball released 0.2 rad up a NURBS spherical bowl rolls through its bottom (the exact pendulum's quarter
    period is 0.53 s). With the bowl's pole at the bottom, where the contact goes, the run stops there ("left the
    patch", issue 26); turned by nurbs_sphere's rotation (poles along y, the contact on the equator) it runs on, and
    its centre and contact point are the analytic sphere's (kane.surfaces.Sphere, placed alike) and the contact the
    point of the bowl on the ray from its centre through the ball's."""
    R, r, m, a = 1.0, 0.2, 1.5, 0.2
    o = np.array([0.0, 0.0, R])
    turn = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # -90 deg about x: the pole along +y
    centre = o + (R - r) * np.array([np.sin(a), 0.0, -np.cos(a)])
    pole_down = RollingSphereOnTerrain(nurbs_sphere(R, o, name="bowl"), r, m, gravity=(0, 0, -G), gap_tol=1e-3)
    q0, u0 = pole_down.initial_state(centre, 0.0, 0.1)  # local (sin a, 0, -cos a): s = 0, near the south pole
    with pytest.raises(SimulationError, match="surface 'bowl' .* left the patch: parameter t = 0.0 reached its "
                                              "bound") as info:
        kane.simulate.simulate(pole_down, (0.0, 1.2), q0, u0, rtol=1e-10, atol=1e-12, output_dt=0.05)
    assert 0.4 < info.value.t_good < 0.53
    runs = {}
    for surface, (s0, t0) in ((nurbs_sphere(R, o, name="bowl", rotation=turn), (0.2, 0.5)),
                              (Sphere(R, o, turn, name="bowl"), (np.pi / 2 - a, 0.0))):
        ball = RollingSphereOnTerrain(surface, r, m, gravity=(0, 0, -G), gap_tol=1e-3)
        q0, u0 = ball.initial_state(centre, s0, t0)  # local (sin a, cos a, 0): on the equator
        sim = kane.simulate.simulate(ball, (0.0, 1.2), q0, u0, rtol=1e-10, atol=1e-12, output_dt=0.05)
        assert sim.status == "completed" and sim.t[-1] == pytest.approx(1.2)
        ball.initial_state(centre, s0, t0)
        points = np.array([ball.contact(t, q).point for t, q in zip(sim.t, sim.q)])
        runs[type(surface).__name__] = sim.q, points
    (q_nurbs, p_nurbs), (q_exact, p_exact) = runs["NurbsSurface"], runs["Sphere"]
    assert np.min(q_nurbs[:, 0]) < -0.1  # through the bottom and up the other side
    np.testing.assert_allclose(q_nurbs, q_exact, rtol=0, atol=1e-10)  # 2e-12 seen
    np.testing.assert_allclose(p_nurbs, p_exact, rtol=0, atol=1e-10)  # 7e-13 seen
    ray = o + R * (q_nurbs[:, :3] - o) / np.linalg.norm(q_nurbs[:, :3] - o, axis=1)[:, None]
    np.testing.assert_allclose(p_nurbs, ray, rtol=0, atol=1e-12)  # 7e-14 seen
