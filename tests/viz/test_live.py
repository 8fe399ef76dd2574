"""Live mode (kane.viz.live): moving the gizmo (through its Device) pulls the coupled body point; for a puck
sliding on a table the motion matches the exact sampled-data response of a mass on the coupler's spring and
damper with the force held over each period; parameters change without re-deriving; reset; recording."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.linalg import expm

import kane
from kane import joints as J
from kane.cli import main
from kane.errors import ArgumentError
from kane.io.model_file import LoadedModel, load_model
from kane.realtime import Device, spectral_radius
from kane.viz.live import GizmoDevice, LiveOptions, LiveSimulation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MASS = 2.0  # [kg]


def puck(with_tip: bool = False):
    """A box of mass m on a planar joint in the table's (x, y) plane (gravity along -z does no work)."""
    s = kane.System("puck", gravity=(0, 0, -9.81))
    m = s.parameter("m", MASS, lower=0.0)
    s.add_body("puck", mass=m, inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", "puck", J.Planar(), name="table", coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    return LoadedModel.from_system(s)


def sampled_response(mass, k, b, period, n, start, goal):
    """The point's position after n periods of m x'' = f, f = K (goal - x_k) - B v_k held over each period:
    the exact zero-order-hold step of the double integrator, per axis."""
    a = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0 / mass], [0.0, 0.0, 0.0]])
    phi = expm(a * period)
    x, v = np.array(start, dtype=float), np.zeros(3)
    for _ in range(n):
        f = k * (np.asarray(goal) - x) - b * v
        x, v = phi[0, 0] * x + phi[0, 1] * v + phi[0, 2] * f, phi[1, 1] * v + phi[1, 2] * f
    return x


def test_the_gizmo_is_a_realtime_device_and_refuses_a_bad_position():
    dev = GizmoDevice((0, 0, 0), max_force=10.0, workspace=kane.realtime.Workspace())
    assert isinstance(dev, Device)
    dev.move_to((0.1, 0.2, 0.3))
    np.testing.assert_array_equal(dev.read(1.5).position, [0.1, 0.2, 0.3])
    with pytest.raises(ArgumentError, match="three finite numbers"):
        dev.move_to((0.1, np.nan, 0.0))


def test_moving_the_gizmo_pulls_the_body_as_a_sampled_spring_damper():
    live = LiveSimulation(puck())
    assert live.port.body == "puck"
    x0 = live.point()
    goal = x0 + np.array([0.3, -0.2, 0.0])
    live.device.move_to(goal)
    n = 60  # 0.3 s at 200 Hz
    live.advance(n)
    x = live.point()
    k, b = live.gains.stiffness, live.gains.damping
    np.testing.assert_allclose(x, sampled_response(MASS, k, b, live.period, n, x0, goal), atol=1e-7)
    assert np.linalg.norm(goal - x) < 0.5 * np.linalg.norm(goal - x0)  # it went a good way toward the gizmo
    np.testing.assert_allclose(live.device.force, -(k * (goal - x) - b * live.coupler.point_state(
        *live.state)[1]), rtol=0.2)  # the device feels the pull back, -F (F from the last period's start)


def test_a_parameter_slider_changes_the_response_without_re_deriving():
    live = LiveSimulation(puck())
    equations = live.equations
    live.set_parameter("m", 4 * MASS)
    x0 = live.point()
    goal = x0 + np.array([0.0, 0.25, 0.0])
    live.device.move_to(goal)
    live.advance(40)
    assert live.equations is equations
    k, b = live.gains.stiffness, live.gains.damping
    np.testing.assert_allclose(live.point(), sampled_response(4 * MASS, k, b, live.period, 40, x0, goal), atol=1e-7)
    with pytest.raises(ArgumentError, match="no parameter 'mass'.*parameters: m"):
        live.set_parameter("mass", 1.0)


def test_reset_and_recording(tmp_path):
    live = LiveSimulation(puck())
    live.device.move_to(live.home + [0.2, 0.0, 0.0])
    live.advance(10)
    live.start_recording(tmp_path / "live.h5")
    live.advance(20)
    t, q, _ = live.state
    assert live.stop_recording() == tmp_path / "live.h5"
    run = kane.load_trajectory(tmp_path / "live.h5")
    assert run.n_samples == 21 and run.t[0] == pytest.approx(0.05) and run.t[-1] == pytest.approx(t)
    np.testing.assert_allclose(run.q[-1], q, atol=1e-12)
    assert np.ptp(run.q[:, 0]) > 0.01  # it recorded the motion
    live.reset()
    t, q, u = live.state
    assert t == 0.0 and not q.any() and not u.any()
    np.testing.assert_array_equal(live.device.position, live.home)


def test_a_wrong_coupled_body_is_one_line_and_status_2():
    result = CliRunner().invoke(main, ["view", str(EXAMPLES / "planar_chain.toml"), "--live", "--couple", "nobody"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "nobody" in lines[0], result.output


def test_live_options_are_checked():
    with pytest.raises(ArgumentError, match="substeps must be an integer >= 1"):
        LiveOptions(substeps=0)


def test_a_live_trace_follows_the_body_point(tmp_path):
    from kane.viz.live_view import LiveViewer
    from kane.viz.viewer import ViewOptions

    live = LiveSimulation(puck())
    viewer = LiveViewer(live, ViewOptions(port=8740, traces=(("puck", (0.1, 0.0, 0.0)),)), record=tmp_path / "l.h5")
    try:
        viewer.pause.value = True  # the test steps the model itself
        live.device.move_to(live.home + [0.2, 0.1, 0.0])
        shown = []
        for _ in range(5):
            live.advance(10)
            viewer.show()
            x, y, th = live.state[1]
            shown.append([x + 0.1 * np.cos(th), y + 0.1 * np.sin(th), 0.0])  # the planar joint's pose, by hand
        trail, line = np.array(viewer.trails[0]), viewer._trail_lines[0].points
    finally:
        viewer.close()
    np.testing.assert_allclose(trail[-5:], shown, atol=1e-12)
    np.testing.assert_allclose(trail[0], [0.1, 0.0, 0.0], atol=1e-12)  # where it started
    np.testing.assert_allclose(line[:, 1], trail[1:], atol=1e-6)  # the drawn segments join the trail's points
    assert np.linalg.norm(trail[-1] - trail[0]) > 0.05


def test_a_live_trace_on_a_missing_body_is_one_line_and_status_2():
    result = CliRunner().invoke(main, ["view", str(EXAMPLES / "planar_chain.toml"), "--live",
                                       "--trace", "nobody:0,0,0"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "no body named 'nobody'" in lines[0], result.output


def test_the_model_files_realtime_coupling_point_is_the_live_default():
    """examples/shopping_cart.toml names its handle in [realtime]: body B, 0.3 m behind the rear axle, which
    starts at the origin with the basket along ground x, so the gizmo pulls the point (-0.3, 0, 0)."""
    live = LiveSimulation(load_model(Path(__file__).resolve().parents[2] / "examples" / "shopping_cart.toml"))
    assert (live.port.body, live.port.point) == ("B", (-0.3, 0.0, 0.0))
    np.testing.assert_allclose(live.point(), [-0.3, 0.0, 0.0], atol=1e-12)


def cart_arm():
    """A 0.01 kg particle on a 0.5 m arm pinned to a 100 kg cart sliding along x."""
    s = kane.System("cart_arm")
    s.add_body("cart", mass=100.0, inertia=(1.0, 1.0, 1.0))
    s.add_joint("ground", "cart", J.Prismatic("x"), name="rail", coordinates=["x"], speeds=["v"])
    s.add_particle("bob", 0.01)
    s.add_joint("cart", "bob", J.Revolute("z"), name="pin", coordinates=["th"], speeds=["w"], child_point=(-0.5, 0, 0))
    return LoadedModel.from_system(s)


def test_default_gains_stay_stable_on_a_light_point_of_a_heavy_model():
    # at the arm's angle 0 a force along y turns the arm alone (the cart cannot move along y), so the tip's
    # smallest effective mass is the particle's, m l^2 / l^2 = 0.01 kg (along x it is the whole 100.01 kg)
    live = LiveSimulation(cart_arm(), LiveOptions(couple="bob"))
    assert live.point_mass == pytest.approx(0.01, rel=1e-9)
    T, m = live.period, 100.01
    # a 1 Hz spring of the whole mass, as before, would be far outside the sampled coupler's stable region here
    k_old = m * (2 * np.pi) ** 2
    assert spectral_radius(k_old * T ** 2 / 0.01, 1.4 * np.sqrt(k_old * m) * T / 0.01) > 10
    # the defaults: K T^2 / m_p = 0.5 and B T / m_p = 1.5, inside it
    assert live.gains.stiffness == pytest.approx(0.5 * 0.01 / T ** 2, rel=1e-12)
    assert live.gains.damping == pytest.approx(1.5 * 0.01 / T, rel=1e-12)
    assert spectral_radius(0.5, 1.5) < 1
    x0 = live.point()
    goal = x0 + np.array([0.0, 0.05, 0.0])
    live.device.move_to(goal)
    live.advance(200)  # 1 s
    assert np.linalg.norm(live.point() - goal) < 0.1 * 0.05
    with pytest.warns(kane.realtime.PassivityWarning, match="unstable on the coupled point with the force held"):
        LiveSimulation(cart_arm(), LiveOptions(couple="bob", stiffness=k_old, damping=1.4 * np.sqrt(k_old * m)))
