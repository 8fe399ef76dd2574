"""Constraint forces drawn as arrows (kane.viz.forces): the rolling disk at rest carries m g upward at its contact
point; along a run the contact force is what Newton's law on the disk needs (m a_cm = m g + F, a_cm from the
recorded centre by central differences); the cart's wheel forces and the push balance the momentum rate of the
basket and caster; a run that recorded the forces is drawn from its records."""

from pathlib import Path

import numpy as np
import pytest

import kane
from kane.io.model_file import load_model
from kane.viz.forces import constraint_arrows
from kane.viz.scene import body_poses, build_scene, scene_size
from kane.viz.viewer import Viewer, ViewOptions, open_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def disk():
    lm = load_model(EXAMPLES / "rolling_disk.toml")
    return lm, lm.derive(["v1", "v2", "v3"])


def _run(eq, q, u, t, **extra):
    return kane.Trajectory(t, q, u, q_names=[str(s) for s in eq.model.q],
                           u_names=[str(s) for s in eq.u_independent], **extra)


def test_the_disk_at_rest_carries_m_g_up_at_its_contact_point(disk):
    lm, eq = disk
    m, g, r = lm.parameters["m"], lm.parameters["g"], lm.parameters["r"]
    run = _run(eq, np.array([[0.3, -0.2, r, 1, 0, 0, 0]] * 2, float), np.zeros((2, 3)), np.array([0.0, 1.0]))
    scene = build_scene(eq, run)
    f = scene.forces
    assert f.names == ("contact",) and f.bodies == ("disk",)
    np.testing.assert_allclose(f.point[:, 0], [[0.3, -0.2, 0.0]] * 2, atol=1e-9)  # under the centre, on the floor
    np.testing.assert_allclose(f.force[:, 0], [[0.0, 0.0, m * g]] * 2, atol=1e-9)
    viewer = Viewer(scene, ViewOptions(port=8750))
    try:  # the arrow drawn: from the contact point straight up, the run's largest force 1.5 x the model's size
        arrows, drawn = viewer.force_points(1), np.array(viewer.forces.points)
        see_through = [s.opacity for s in viewer.shapes]
        viewer.arrow_gain.value = 3.0  # the user lengthens the arrows
        longer = np.array(viewer.forces.points)
    finally:
        viewer.close()
    size = scene_size(scene)
    # the thin disk's equivalent box: in-plane sides a^2 = 6 (m r^2/4 + m r^2/2 - m r^2/4) / m = 3 r^2
    assert size == pytest.approx(np.sqrt(3) * r, rel=1e-12)
    np.testing.assert_allclose(arrows, [[[0.3, -0.2, 0.0], [0.3, -0.2, 1.5 * size]]], atol=1e-6)
    np.testing.assert_allclose(drawn, arrows, atol=1e-6)
    np.testing.assert_allclose(longer[0, 1] - longer[0, 0], [0.0, 0.0, 4.5 * size], atol=1e-6)
    assert see_through == [0.5] * len(scene.shapes)  # an arrow inside a body shows


def test_the_contact_force_is_what_newtons_law_on_the_disk_needs(disk):
    lm, eq = disk
    dyn = eq.compile()
    q0, _ = lm.initial_state(dyn)
    dt, u0 = 1e-3, np.array([1.5, 4.0, 0.5])  # leaning over fast while it spins: the forces change by newtons
    traj = kane.simulate.simulate(dyn, (0.0, 0.4), q0, u0, method="dopri5", rtol=1e-11, atol=1e-12, output_dt=dt)
    position, wxyz = body_poses(eq, traj)
    f = constraint_arrows(eq, traj, position, wxyz)
    m, g, r = lm.parameters["m"], lm.parameters["g"], lm.parameters["r"]
    centre = position[:, 0]  # the disk's frame origin is its centre of mass
    a = (centre[2:] - 2 * centre[1:-1] + centre[:-2]) / dt ** 2
    newton = m * a - m * np.array([0.0, 0.0, -g])
    assert np.all(np.ptp(f.force[:, 0], axis=0) > 2.0)
    np.testing.assert_allclose(f.force[1:-1, 0], newton, atol=1e-5 * m * g)  # central differences: O(dt^2)
    # the contact point is on the floor, on the rim
    np.testing.assert_allclose(f.point[:, 0, 2], 0.0, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(f.point[:, 0] - centre, axis=1), r, rtol=1e-9)


def test_the_carts_wheel_forces_and_push_give_its_momentum_rate(make_cart_run):
    run = make_cart_run(1.0, 1e-3)
    opened = open_run(run)
    scene = opened.scene()
    f = scene.forces
    assert f.names == ("back_wheels", "caster_wheel") and f.bodies == ("B", "C")
    lm = opened.loaded
    p = lm.parameters
    traj, dt = opened.trajectory, 1e-3
    i_b, i_c = scene.bodies.index("B"), scene.bodies.index("C")
    R = kane.spatial.quaternion_to_rotation(scene.wxyz[:, i_b])
    com_b = scene.position[:, i_b] + R @ np.array([p["L1"], 0.0, 0.0])
    Rc = kane.spatial.quaternion_to_rotation(scene.wxyz[:, i_c])
    com_c = scene.position[:, i_c] + Rc @ np.array([-p["L3"], 0.0, 0.0])
    momentum_rate = sum(m * (x[2:] - 2 * x[1:-1] + x[:-2]) / dt ** 2 for m, x in ((p["mB"], com_b), (p["mC"], com_c)))
    push = p["F0"] * np.exp(-traj.t / p["T"])[:, None] * R[:, :, 0]  # F0 exp(-t/T) along b1
    total = (f.force.sum(axis=1) + push)[1:-1]
    assert np.max(np.abs(f.force[:, 0, 1])) > 0.5  # the back wheels hold a real sideways force
    np.testing.assert_allclose(total[:, :2], momentum_rate[:, :2], atol=2e-3 * p["F0"])
    np.testing.assert_allclose(f.force[..., 2], 0.0, atol=1e-12)  # the no-slip forces are horizontal


def test_a_run_that_recorded_the_forces_is_drawn_from_its_records(disk):
    lm, eq = disk
    r = lm.parameters["r"]
    lam = np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, 6.0]])  # along the floor's tangents x, y and its normal z
    run = _run(eq, np.array([[0, 0, r, 1, 0, 0, 0]] * 2, float), np.zeros((2, 3)), np.array([0.0, 1.0]),
               residuals={f"contact.force.{k + 1}": lam[:, k] for k in range(3)})
    f = build_scene(eq, run).forces
    np.testing.assert_allclose(f.force[:, 0], lam, atol=1e-15)


def test_a_loop_closure_to_the_ground_holds_a_hanging_body_up_at_its_pin():
    from kane import joints as J

    s = kane.System("hanging", gravity=(0, -9.81, 0))
    s.add_body("bar", mass=2.0, com=(0.3, 0.0, 0.0), inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "bar", J.Planar(), name="plane", coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_loop_closure("pin", "ground", (0.3, 0.5, 0.0), "bar", (0.3, 0.5, 0.0),
                       directions=[[1, 0, 0], [0, 1, 0]])  # hung at rest 0.5 m above its centre of mass
    eq = kane.derive(s, dependent=["vx", "vy"])
    run = _run(eq, np.zeros((2, 3)), np.zeros((2, 1)), np.array([0.0, 1.0]))
    f = build_scene(eq, run).forces
    assert f.names == ("pin",) and f.bodies == ("bar",)  # the ground is the first body: the force on the bar
    np.testing.assert_allclose(f.point[:, 0], [[0.3, 0.5, 0.0]] * 2, atol=1e-12)
    np.testing.assert_allclose(f.force[:, 0], [[0.0, 2.0 * 9.81, 0.0]] * 2, atol=1e-9)


def test_a_scene_draws_from_the_equations_or_the_dynamics_compiled_from_them(disk):
    """body_poses of the compiled dynamics = of its equations (the disk at rest, centre at height r, identity
    rotation); a dynamics not made from kane.Equations is refused by its type."""
    lm, eq = disk
    r = lm.parameters["r"]
    run = _run(eq, np.array([[0.3, -0.2, r, 1, 0, 0, 0]] * 2, float), np.zeros((2, 3)), np.array([0.0, 1.0]))
    (p_eq, w_eq), (p_dyn, w_dyn) = body_poses(eq, run), body_poses(eq.compile("numpy"), run)
    np.testing.assert_array_equal(p_dyn, p_eq)
    np.testing.assert_array_equal(w_dyn, w_eq)
    np.testing.assert_allclose(p_eq[:, 0], [[0.3, -0.2, r]] * 2, atol=1e-12)
    np.testing.assert_allclose(w_eq[:, 0], [[1.0, 0.0, 0.0, 0.0]] * 2, atol=1e-12)
    with pytest.raises(kane.errors.ArgumentError, match="scene: expected kane.Equations .* got str"):
        body_poses("rolling_disk.toml", run)
