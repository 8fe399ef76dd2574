"""The browser viewer's state read in Python (kane.viz.viewer, kane.viz.readable): up follows gravity (the scene's
and the initial camera's), the energy chart shows its spread, and the monitors of a run are charted one kind per
chart with its unit."""

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.simulate.run import RunOptions, State, run
from kane.viz.readable import monitor_panels, spread_of
from kane.viz.scene import build_scene, state_scene
from kane.viz.viewer import Viewer, ViewOptions

M, A, W = 1.0, 1.0, 0.1  # the bar's mass [kg], length and width [m]
I_PIN = M * (A**2 + W**2) / 12 + M * (A / 2) ** 2  # its moment about the pin [kg m^2]
ENERGY = 4.689  # [J]


def bar(gravity):
    s = kane.System("bar", gravity=gravity)
    s.add_body("bar", mass=M, com=(A / 2, 0, 0), inertia=(M * W**2 / 12, M * A**2 / 12, M * (A**2 + W**2) / 12))
    s.add_joint("ground", "bar", J.Revolute("z"), name="pin", coordinates=["th"], speeds=["w"])
    return s


@pytest.mark.parametrize("gravity, up", [((0, -9.81, 0), (0, 1, 0)), ((0, 0, -9.81), (0, 0, 1)),
                                         ((0, 0, 0), (0, 0, 1)), ((-9.81, 0, 0), (1, 0, 0))])
def test_up_is_against_gravity_in_the_scene_and_the_camera(gravity, up):
    eqs = kane.derive(bar(gravity))
    scene = state_scene(eqs, 0.0, [0.3], [0.0])
    viewer = Viewer(scene, ViewOptions(port=8760))
    try:
        camera_up = np.asarray(viewer.server.initial_camera.up)
        camera_at, look_at = (np.asarray(viewer.server.initial_camera.position),
                              np.asarray(viewer.server.initial_camera.look_at))
    finally:
        viewer.close()
    np.testing.assert_allclose(scene.up, up, atol=1e-15)
    np.testing.assert_allclose(camera_up, up, atol=1e-15)
    assert (camera_at - look_at) @ np.asarray(up) > 0  # the camera looks down on the scene, from the up side


@pytest.fixture(scope="module")
def bar_run():
    eqs = kane.derive(bar((0, -9.81, 0)))  # starts horizontal (V = 0) turning at u0: E = I_pin u0^2 / 2
    traj = run(eqs.compile(), State([0.0], [np.sqrt(2 * ENERGY / I_PIN)]),
               RunOptions(t_end=0.5, rtol=1e-8, atol=1e-10, output_dt=0.01))
    return eqs, traj


def test_the_energy_chart_shows_the_spread_of_a_conserved_energy(bar_run):
    eqs, traj = bar_run
    assert traj.energy[0] == pytest.approx(ENERGY, rel=1e-12)
    assert 1e-10 < np.ptp(traj.energy) / ENERGY < 1e-7  # conserved: 4.689 to the fourth digit all along
    viewer = Viewer(build_scene(eqs, traj), ViewOptions(port=8761))
    try:
        chart = viewer.charts["energy"]
        t, values = (np.asarray(a) for a in chart.data)
        title = chart.title
    finally:
        viewer.close()
    spread = spread_of(traj.energy, "energy", "J")
    apart = np.max(np.abs(traj.energy - traj.energy[0]))  # the start rounded to the digit where the values part
    digit = 10.0 ** np.floor(np.log10(apart))
    assert abs(spread.offset - traj.energy[0]) <= digit / 2 and spread.exponent in (-9, -12)
    assert abs(spread.offset - ENERGY) < 1e-6 and f"{spread.offset:.15g}".startswith("4.689")
    np.testing.assert_allclose(values * 10.0 ** spread.exponent + spread.offset, traj.energy, rtol=1e-14, atol=0)
    assert 0.5 < np.ptp(values) < 1000  # three-digit ticks tell the values apart
    assert title == f"energy - {spread.offset:.15g} J [1e{spread.exponent} J]"
    assert len(f"{spread.offset:.15g}") <= len("4.689") + 3  # a short offset: digits down to where they part
    np.testing.assert_allclose(t, traj.t)


def test_spread_of_values_that_read_well_is_left_alone():
    s = spread_of(np.array([4.689 + 1e-9, 4.689 + 3e-9, 4.689 + 6e-9]), "energy", "J")
    # they part at the ninth decimal: the offset is the start to that digit, the deviations in nanojoules
    assert s.offset == 4.689000001 and s.exponent == -9 and s.label == "energy - 4.689000001 J [1e-9 J]"
    np.testing.assert_allclose(s.values, [0.0, 2.0, 5.0], atol=1e-6)
    v = np.array([1.0, 2.5, 4.0])
    s = spread_of(v, "energy", "J")
    assert (s.offset, s.exponent, s.label) == (0.0, 0, "energy [J]") and np.array_equal(s.values, v)
    s = spread_of(np.array([0.0, 2e-13, -3e-13]), "energy", "J")  # around zero: "0, 0, -0" no more
    assert s.offset == 0.0 and s.exponent == -15 and s.label == "energy [1e-15 J]"
    np.testing.assert_allclose(s.values, [0.0, 200.0, -300.0])


def test_monitors_are_charted_one_kind_per_chart_with_units(cart_monitored_run):
    lm, traj = cart_monitored_run
    viewer = Viewer(build_scene(lm.derive(), traj), ViewOptions(port=8762))
    try:
        charts = {title: (h.title, [s["label"] for s in h.series[1:]], [np.asarray(d) for d in h.data[1:]],
                          (h.scales or {}).get("y")) for title, h in viewer.charts.items()}
        axis_labels = [[a["label"] for a in h.axes] for h in viewer.charts.values()]
    finally:
        viewer.close()
    power = charts["power of the non-conservative loads"]
    assert power[0].endswith("power [W]") and power[1] == ["power"] and power[3] is None  # linear: it has a sign
    np.testing.assert_allclose(power[2][0], traj.residuals["power"])
    cond = charts["dependent-block condition number"]
    assert cond[0].endswith("condition number [-]") and cond[1] == ["dependent_block_condition"]
    assert cond[3]["distr"] == 3 and np.all(cond[2][0] >= 1.0)  # log axis; a condition number is >= 1
    motion = charts["motion-constraint residual"]
    assert motion[0].endswith("[m/s, rad/s]") and motion[1] == ["constraint"]
    labels = [label for title, (_, names, _, _) in charts.items() if title != "energy" for label in names]
    assert sorted(labels) == sorted(set(labels)) and set(labels) == set(traj.residuals)  # each monitor once
    assert all(x == "time t [s]" and y.endswith("]") for x, y in axis_labels)  # units on every axis
    assert [p.title for p in monitor_panels(traj.residuals)] == [k for k in charts if k != "energy"]
