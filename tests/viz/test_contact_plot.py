"""Contact outputs drawn (kane.viz.contact_plot): the plot's normal-force and mode panels carry the run's values,
and the viewer's contact arrow is the force on the slope that Newton's law on the sliding box needs."""

import math
from pathlib import Path

import numpy as np
import pytest

import kane
from kane.io import load_model
from kane.switching.contact_run import ContactRunOptions, run_contacts, write_contact_run
from kane.viz.contact_plot import contact_arrows
from kane.viz.plots import trajectory_figure
from kane.viz.scene import build_scene
from kane.viz.viewer import Viewer, ViewOptions

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
G, THETA, MASS, MU_K = 9.81, math.radians(30.0), 2.0, 0.25


@pytest.fixture(scope="module")
def incline(tmp_path_factory):
    lm = load_model(EXAMPLES / "box_on_incline.toml")
    result = run_contacts(lm, ContactRunOptions(dt=0.002, t_end=0.02))
    path = write_contact_run(result, tmp_path_factory.mktemp("contact") / "incline.h5")
    return lm, result, kane.load_trajectory(path)


def test_the_plot_has_a_normal_force_panel_and_a_mode_panel(incline):
    _, _, traj = incline
    fig = trajectory_figure(traj)
    labels = [ax.get_ylabel() for ax in fig.axes]
    # q, u, energy, then the contact panels; the pair outputs are not drawn again as monitors
    assert labels == ["coordinates q [m, rad]", "speeds u [m/s, rad/s]", "energy [J]", "contact normal force [N]",
                      "contact mode"]
    (force,) = fig.axes[3].get_lines()
    assert force.get_label() == "block|slope"
    y = np.asarray(force.get_ydata(), dtype=float)
    assert np.isnan(y[0]) and np.abs(y[1:] - MASS * G * math.cos(THETA)).max() < 1e-9
    (mode,) = fig.axes[4].get_lines()
    assert np.asarray(mode.get_ydata())[1:].tolist() == [2.0] * (traj.n_samples - 1)  # slip
    assert [t.get_text() for t in fig.axes[4].get_yticklabels()] == ["open", "stick", "slip"]


def test_the_contact_arrow_is_the_force_newtons_law_on_the_box_needs(incline):
    lm, result, traj = incline
    scene = build_scene(result.dynamics.equations, traj)
    f = scene.forces
    assert f.names == ("block|slope",) and f.bodies == ("ground",)
    # on the box: m a = m g + F_box, a = g (sin th - mu_k cos th) down the slope; the slope gets -F_box
    down = np.array([math.cos(THETA), 0.0, -math.sin(THETA)])
    a = G * (math.sin(THETA) - MU_K * math.cos(THETA)) * down
    on_slope = -(MASS * a - MASS * np.array([0.0, 0.0, -G]))
    np.testing.assert_allclose(f.force[1:, 0], np.broadcast_to(on_slope, (traj.n_samples - 1, 3)), atol=1e-9)
    assert np.all(np.isnan(f.force[0, 0]))  # no step has acted at sample 0: no arrow
    n = np.array([math.sin(THETA), 0.0, math.cos(THETA)])
    assert np.abs(f.point[1:, 0] @ n).max() < 1e-12  # on the slope's surface
    assert contact_arrows(kane.Trajectory(traj.t, traj.q, traj.u, q_names=traj.q_names,
                                          u_names=traj.u_names)) is None
    viewer = Viewer(scene, ViewOptions(port=8761))
    try:
        arrows = viewer.force_points(3)
        empty = viewer.force_points(0)
    finally:
        viewer.close()
    np.testing.assert_allclose(arrows[0, 1] - arrows[0, 0], viewer.force_scale * on_slope, rtol=1e-6, atol=1e-7)
    assert viewer.force_scale > 0 and np.all(empty[0, 1] == empty[0, 0])


def test_kane_info_describes_the_contact_pairs(incline):
    from kane.viz.file_info import describe_file

    _, _, traj = incline
    rows = dict(describe_file(traj.source).rows)
    assert rows["contact scheme"] == "time-stepping"
    assert rows["contact pairs (1)"] == "block|slope"
    assert rows["contact block|slope"] == (f"open 1, stick 0, slip {traj.n_samples - 1} samples; largest normal "
                                           f"force {MASS * G * math.cos(THETA):.6g} N")
    assert rows["residuals"] == "(none)"
