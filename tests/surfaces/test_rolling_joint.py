"""The surface-surface rolling joint of seed 003 in absolute Cartesian coordinates (issue 16): a NURBS sphere on a
NURBS plane against kane's embedded rolling-sphere equations, the ball in a spherical bowl against the classical
frequency, and its bad input (surfaces apart at the start, a contact leaving its patch)."""

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.algorithms.cartesian_contact import RollingContact, RollingContactDynamics
from kane.errors import ModelError
from kane.surfaces import NurbsSurface, Sphere, Torus, nurbs_cylinder, nurbs_sphere

G = 9.81
R_BALL, MASS, COM, INERTIA = 0.3, 2.0, (0.03, -0.02, 0.04), (0.05, 0.06, 0.07)


def _ball_system(rolling: bool) -> kane.System:
    """An eccentric ball (centre of mass off its geometric centre, the body origin) on a free joint; with
    ``rolling`` its contact point with the plane z = 0 has zero velocity (three rows, embedded by kane.derive)."""
    s = kane.System("ball", gravity=(0, 0, -G))
    s.add_body("ball", mass=MASS, com=COM, inertia=INERTIA)
    s.add_joint("ground", "ball", J.Free(), name="free")
    if rolling:
        w, x, y, z = (sp.Symbol(f"q_free_q{c}") for c in "wxyz")
        down = -R_BALL * sp.Matrix([2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z])
        omega = sp.Matrix([sp.Symbol(f"u_free_{k}") for k in (1, 2, 3)])
        v = sp.Matrix([sp.Symbol(f"u_free_{k}") for k in (4, 5, 6)])
        s.add_motion_constraint("rolling", list(v + omega.cross(down)))  # body axes: v + w x (R^T (-r e_z))
    return s


def _nurbs_ball() -> NurbsSurface:
    """The exact NURBS sphere with its poles along the body x axis (the contact stays on a regular part)."""
    sphere = nurbs_sphere(R_BALL)
    ball = NurbsSurface(sphere.control_points[..., [2, 0, 1]], sphere.weights, sphere.knots_u, sphere.knots_v, 2, 2,
                        name="ball")
    ball.periodic = (True, False)
    return ball


def _nurbs_floor(half: float = 5.0) -> NurbsSurface:
    c = [-half, half]
    return NurbsSurface(np.array([[[a, b, 0.0] for b in c] for a in c]), None, [0, 0, 1, 1], [0, 0, 1, 1], 1, 1,
                        name="floor")


def _rolling_ball(half=5.0, start=(0.5, 0.5, 0.75, 0.5)):
    contact = RollingContact("roll", "ground", _nurbs_floor(half), "ball", _nurbs_ball(), start)
    return RollingContactDynamics(_ball_system(False), [contact], alpha=1.0, beta=1.0)


def test_nurbs_sphere_on_nurbs_plane_reproduces_the_embedded_rolling_sphere():
    omega0 = np.array([1.5, 0.4, 0.7])
    u0 = np.concatenate([omega0, -np.cross(omega0, [0.0, 0.0, -R_BALL])])  # rolling: v = -w x (-r e_z)
    qb0 = np.array([0.0, 0.0, R_BALL, 1.0, 0.0, 0.0, 0.0])
    cd = _rolling_ball()
    q0, uc0 = cd.initial_state(qb0, u0)
    assert np.abs(uc0 - u0).max() < 1e-14 and np.abs(q0[:7] - qb0).max() < 1e-14
    cart = kane.simulate.simulate(cd, (0.0, 2.0), q0, uc0, rtol=2e-10, atol=2e-12, output_dt=0.25,
                                  projection=cd.make_projection(), project_every=5)
    embedded = kane.derive(_ball_system(True)).compile()
    ref = kane.simulate.simulate(embedded, (0.0, 2.0), qb0, u0[:3], rtol=1e-12, atol=1e-13, output_dt=0.25)
    assert np.allclose(cart.t, ref.t)
    assert np.abs(cart.q[:, :7] - ref.q).max() < 1e-8  # the centre (x, y, z) and the quaternion
    assert np.abs(cart.q[-1, :2]).max() > 0.3  # it did roll (and rock: the centre of mass is off centre)
    res = cd.contact_residuals(2.0, cart.q[-1], cart.u[-1])
    assert max(np.abs(res.position).max(), np.abs(res.tangency).max(), np.abs(res.velocity).max()) < 1e-9


def test_ball_in_a_spherical_bowl_oscillates_at_the_classical_frequency():
    """Eigenvalues of the linearized contact dynamics (central differences of q', u' about the resting ball):
    the oscillation pair +-i w with w = sqrt(5 g / (7 (R - r))) (a uniform ball rolling without slip)."""
    R, r, m = 1.0, 0.2, 1.5
    s = kane.System("bowl", gravity=(0, 0, -G))
    s.add_body("ball", mass=m, inertia=[0.4 * m * r * r] * 3)
    s.add_joint("ground", "ball", J.Free(), name="free")
    turn = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])  # local +x (s = t = 0) to world -z
    bowl = Sphere(R, origin=(0.0, 0.0, R), rotation=turn, name="bowl")
    ball = Sphere(r, rotation=turn, name="ball")
    cd = RollingContactDynamics(s, [RollingContact("rim", "ground", bowl, "ball", ball, (0.0, 0.0, 0.0, 0.0))])
    q0, u0 = cd.initial_state([0.0, 0.0, r, 1.0, 0.0, 0.0, 0.0])
    x0, nq = np.concatenate([q0, u0]), cd.n_q

    def f(x):
        return np.concatenate([cd.qdot(0.0, x[:nq], x[nq:]), cd.udot(0.0, x[:nq], x[nq:])])

    h = 1e-6
    A = np.stack([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(x0.size)], axis=1)
    lam = np.linalg.eigvals(A)
    osc = np.sort(lam[(lam.imag > 0.1) & (np.abs(lam.real) < 1e-4)].imag)
    want = np.sqrt(5 * G / (7 * (R - r)))
    assert osc.size == 2  # the two horizontal directions
    assert np.abs(osc / want - 1).max() < 1e-6


E, RC, RHO = 0.03, 0.1, 0.05  # the cam's eccentricity, profile radius and the roller's rolling radius [m]


def _cam(w0=0.7):
    """An eccentric circular cam (the exact NURBS circle extruded, offset E from the shaft) turning freely drives a
    translating follower through a crowned roller (a torus: a point contact, rolling radius RHO) spinning on a pin
    (rotation and axial slide: the contact's third no-slip row holds the slide). Returns (dynamics, q0, u0)."""
    s = kane.System("cam", gravity=(0, 0, 0))
    s.add_body("cam", mass=2.0, inertia=(0.01, 0.01, 0.012))
    s.add_body("slider", mass=0.5, inertia=(1e-4, 1e-4, 1e-4))
    s.add_body("roller", mass=0.1, inertia=(2e-5, 2e-5, 3e-5))
    s.add_joint("ground", "cam", J.Revolute("z"), name="shaft")
    s.add_joint("ground", "slider", J.Prismatic("x"), name="guide")
    s.add_joint("slider", "roller", J.Cylindrical("z"), name="pin")
    profile = nurbs_cylinder(RC, height=(-0.02, 0.02), origin=(E, 0.0, 0.0), name="cam profile")
    roller = Torus(RHO - 0.015, 0.015, rotation=np.diag([-1.0, -1.0, 1.0]), name="roller")  # s = t = 0 faces -x
    contact = RollingContact("cam-roller", "cam", profile, "roller", roller, (0.0, 0.5, 0.0, 0.0))
    cd = RollingContactDynamics(s, [contact], alpha=1.0, beta=1.0)
    qc, uc = cd.from_joint_state([0.0, E + RC + RHO, 0.0, 0.0], [w0, 0.0, -(E + RC) * w0 / RHO, 0.0])
    return (cd, *cd.initial_state(qc, uc))


def test_cam_with_a_crowned_roller_follower_follows_the_profile_conserves_energy_and_stays_on_the_constraints():
    """The roller centre must sit at x(theta) = E cos(theta) + sqrt((RC + RHO)^2 - E^2 sin^2(theta)) (the offset of
    the profile); no load does work, so the kinetic energy is constant."""
    cd, q0, u0 = _cam()
    tr = kane.simulate.simulate(cd, (0.0, 10.0), q0, u0, rtol=1e-8, atol=1e-10, output_dt=0.5,
                                projection=cd.make_projection(), project_every=10)
    theta = np.unwrap(2 * np.arctan2(tr.q[:, 6], tr.q[:, 3]))  # the cam's angle from its quaternion
    assert theta[-1] > 2 * np.pi  # over one revolution
    predicted = E * np.cos(theta) + np.sqrt((RC + RHO) ** 2 - (E * np.sin(theta)) ** 2)
    assert np.abs(tr.q[:, 14] - predicted).max() < 1e-9  # the roller body's x
    assert np.abs(tr.energy - tr.energy[0]).max() < 1e-8 * tr.energy[0]
    worst = [0.0, 0.0, 0.0]
    for t, q, u in zip(tr.t, tr.q, tr.u):
        res = cd.contact_residuals(t, q, u)
        worst = np.maximum(worst, [np.abs(res.position).max(), np.abs(res.tangency).max(),
                                   np.abs(res.velocity).max()])
        worst[0] = max(worst[0], np.abs(cd.configuration_residual(t, q)).max())  # the joints' rows too
        worst[2] = max(worst[2], np.abs(cd.constraint_residual(t, q, u)).max())
    assert max(worst) < 1e-10


def test_the_quaternion_form_jacobian_matches_central_differences():
    """The seed's position and tangency constraints of the cam contact (two moving bodies) at a state off the
    contact: the analytic Jacobian in (p, e, z) against central differences of the constraint values."""
    cd, q0, _ = _cam()
    rng = np.random.default_rng(3)
    q = q0 + np.concatenate([rng.normal(0, 0.01, cd.n_body_q), rng.normal(0, 0.03, 4)])
    got = cd.constraint_jacobian(0.0, q)
    assert np.abs(got.values).max() > 1e-3  # apart and not tangent: a generic point
    h = 1e-6
    fd = np.stack([(cd.constraint_jacobian(0.0, q + h * e).values - cd.constraint_jacobian(0.0, q - h * e).values)
                   / (2 * h) for e in np.eye(cd.n_q)], axis=1)
    assert np.abs(got.jacobian - fd).max() < 1e-7 * max(1.0, np.abs(fd).max())
    assert np.abs(fd[:, :7]).max() > 0.01 and np.abs(fd[:, 14:21]).max() > 0.01  # both bodies move the rows


def test_surfaces_apart_at_the_start_are_a_model_error_naming_the_contact_and_gap():
    cd = _rolling_ball()
    with pytest.raises(ModelError, match=r"rolling contact 'roll': surfaces 'floor' and 'ball' do not touch at the "
                                         r"start: gap = 0\.01\d* m"):
        cd.initial_state([0.0, 0.0, R_BALL + 0.01, 1.0, 0.0, 0.0, 0.0])


def test_a_contact_off_the_patch_at_the_start_is_a_model_error_naming_where_newton_ended():
    cd = _rolling_ball(half=1.0)  # the floor's patch is |x|, |y| <= 1: u1 = (x + 1) / 2
    with pytest.raises(ModelError, match=r"rolling contact 'roll': no common normal of surfaces 'floor' and 'ball' "
                                         r"from \(u1, v1, u2, v2\) = \(0\.5, 0\.5, 0\.75, 0\.5\): Newton ended at "
                                         r"\(1\.0, 0\.5, "):
        cd.initial_state([3.0, 0.0, R_BALL, 1.0, 0.0, 0.0, 0.0])  # the ball is 2 m beyond the edge


def test_a_contact_leaving_its_patch_stops_the_run_naming_surface_parameter_value_and_last_good_state():
    cd = _rolling_ball(half=0.5, start=(0.8, 0.5, 0.75, 0.5))
    omega0 = np.array([0.0, 4.0, 0.0])  # rolls along +x at 1.2 m/s: leaves the floor's patch x <= 0.5 at ~0.17 s
    q0, u0 = cd.initial_state([0.3, 0.0, R_BALL, 1.0, 0.0, 0.0, 0.0],
                              np.concatenate([omega0, -np.cross(omega0, [0.0, 0.0, -R_BALL])]))
    with pytest.raises(kane.SimulationError, match=r"rolling contact 'roll': parameter u1 of surface 'floor' = "
                                                   r"1\.0\d* left the patch \[0\.0, 1\.0\]") as err:
        kane.simulate.simulate(cd, (0.0, 1.0), q0, u0, method="rk4", dt=0.01)
    assert 0.1 < err.value.t_good < 0.2
    good = err.value.q  # the last good state: the contact still on the patch, u1 = x + 0.5 on this floor
    assert 0.45 < good[0] < 0.5 and abs(good[7] - (good[0] + 0.5)) < 1e-8
