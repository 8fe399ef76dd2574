"""`kane plot`'s figure (kane.viz.plots): energy tick labels that differ for an energy conserved to 1e-9, and the
monitors of a run in separate panels whose y labels carry their units."""

import numpy as np
import pytest

from kane.io.model_file import load_model
from kane.simulate.run import RunOptions, State, run
from kane.viz.plots import plot_trajectory, trajectory_figure

# one uniform bar (1 kg, 1 m x 0.1 m) on a revolute joint about z, gravity along -y; it starts horizontal (V = 0)
# turning at u0 = sqrt(2 E / I_pin), I_pin = m (l^2 + w^2) / 12 + m (l/2)^2, so its energy is E = 4.689 J
PENDULUM = """
[model]
name = "rod"
gravity = [0, "-g", 0]
[parameters]
g = 9.81
m = 1.0
l = 1.0
w = 0.1
[[bodies]]
name = "rod"
mass = "m"
com = ["l/2", 0, 0]
inertia = ["m*w**2/12", "m*l**2/12", "m*(l**2 + w**2)/12"]
[[joints]]
name = "pin"
parent = "ground"
child = "rod"
type = "revolute"
axis = "z"
coordinates = ["q"]
speed_names = ["u"]
"""
ENERGY = 4.689  # [J]


def _labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text()]


@pytest.fixture(scope="module")
def pendulum_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("plots") / "rod.toml"
    path.write_text(PENDULUM)
    lm = load_model(path)
    dyn = lm.derive().compile()
    u0 = np.sqrt(2 * ENERGY / ((1.0 + 0.01) / 12 + 0.25))
    return run(dyn, State([0.0], [u0]), RunOptions(t_end=0.5, rtol=1e-8, atol=1e-10, output_dt=0.01),
               params=dict(lm.parameters))


def test_energy_ticks_differ_for_an_energy_conserved_to_1e_9(pendulum_run, tmp_path):
    e = pendulum_run.energy
    assert e[0] == pytest.approx(ENERGY, rel=1e-12)  # (1/2) I_pin u0^2 by hand
    spread = np.ptp(e) / ENERGY
    assert 1e-10 < spread < 1e-8  # a conserved energy: the labels of a plain axis would all read 4.689
    fig = trajectory_figure(pendulum_run)
    ax = next(a for a in fig.axes if a.get_ylabel() == "energy [J]")
    fig.canvas.draw()
    labels = _labels(ax)
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    offset = ax.yaxis.get_major_formatter().get_offset()
    assert "4.689" in offset and "10^{" in offset  # the common part and the power of ten, once, at the axis's end
    assert all(len(label) <= len(r"$\mathdefault{-0.5}$") for label in labels)  # short labels: the spread alone

    assert plot_trajectory(pendulum_run, tmp_path / "rod.png").stat().st_size > 0


def test_monitors_are_in_separate_panels_with_their_units(cart_monitored_run):
    _, traj = cart_monitored_run
    assert {"power", "dependent_block_condition", "constraint"} <= set(traj.residuals)
    fig = trajectory_figure(traj)
    fig.canvas.draw()
    drawn = {ax.get_ylabel(): {ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")}
             for ax in fig.axes}
    assert drawn["power [W]"] == {"power"}
    assert drawn["condition number [-]"] == {"dependent_block_condition"}
    assert drawn["|A u + b| [m/s, rad/s]"] == {"constraint"}
    by_axes = [name for names in drawn.values() for name in names]
    assert sorted(by_axes) == sorted(set(by_axes))  # each curve on one axes only
    power_ax = next(a for a in fig.axes if a.get_ylabel() == "power [W]")
    assert power_ax.get_yscale() == "linear"  # power has a sign: never |power| on a log axis
    assert np.allclose(power_ax.get_lines()[0].get_ydata(), traj.residuals["power"])
    cond_ax = next(a for a in fig.axes if a.get_ylabel() == "condition number [-]")
    assert cond_ax.get_ylim()[0] == 0.5 and cond_ax.get_yscale() == "log"  # a condition number is >= 1
    assert all(ax.get_ylabel() for ax in fig.axes) and "[s]" in fig.axes[-1].get_xlabel()
