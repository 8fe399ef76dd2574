"""``kane simulate`` of a model file with [[contacts]] (kane.simulate.rolling_run): the ball rolling in its bowl,
run in absolute coordinates and written in the free joint's, against the exact pendulum it is."""

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.special import ellipk

from kane.cli import main
from kane.io.model_file import load_model
from kane.simulate import load_trajectory

BOWL = Path(__file__).resolve().parents[2] / "examples" / "ball_in_bowl.toml"


def test_the_ball_in_its_bowl_swings_as_the_exact_pendulum_of_length_7_r_over_5(tmp_path):
    """A uniform ball rolling without slip in a spherical bowl: (7/5) (R - r) theta'' = -g sin(theta), a pendulum
    of length 7 (R - r) / 5. Released at rest from theta = a, its centre x = (R - r) sin(theta) first crosses 0 at a
    quarter period K(sin^2(a / 2)) / sqrt(5 g / (7 (R - r))) (K the complete elliptic integral of the first kind)."""
    h5 = tmp_path / "bowl.h5"
    res = CliRunner().invoke(main, ["simulate", str(BOWL), "-o", str(h5), "--t-end", "0.6", "--output-dt", "0.001"])
    assert res.exit_code == 0, res.output
    p = load_model(BOWL).parameters
    R, r, g, a = p["R"], p["r"], p["g"], p["a"]
    quarter = ellipk(math.sin(a / 2) ** 2) / math.sqrt(5 * g / (7 * (R - r)))
    traj = load_trajectory(h5)
    assert traj.q_names == ("x", "y", "z", "e0", "e1", "e2", "e3") and traj.status == "completed"
    x = traj.q[:, 0]
    k = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))[0]
    t_cross = traj.t[k] - x[k] * (traj.t[k + 1] - traj.t[k]) / (x[k + 1] - x[k])
    assert t_cross == pytest.approx(quarter, abs=1e-8)  # 1e-10 seen
    gap = np.linalg.norm(traj.q[:, :3] - [0.0, 0.0, R], axis=1) - (R - r)  # the centre stays R - r from the bowl's
    assert np.max(np.abs(gap)) < 1e-9
    assert np.max(np.abs(traj.energy - traj.energy[0])) < 1e-9 * p["m"] * g * R  # the rolling contact does no work
    assert np.max(traj.residuals["constraint"]) < 1e-9  # the contact points do not slip [m/s]
    out = " ".join(res.output.split())
    assert "max configuration residual [m]" in out and "energy drift (relative)" in out


def test_a_scheduled_push_does_the_work_that_changes_the_balls_energy(tmp_path):
    """The [inputs] schedule F(t) = 2 sin(3 t) N along x on the ball's centre: the energy changes by the work of F,
    which the run's power monitor integrates (the work-energy balance closes)."""
    text = BOWL.read_text().replace("[[bodies]]", '[inputs]\nF = "2*sin(3*t)"\n\n[[bodies]]', 1)
    text += '\n[[loads]]\ntype = "force"\nbody = "ball"\nvector = ["F", 0, 0]\n'
    model = tmp_path / "pushed.toml"
    model.write_text(text)
    res = CliRunner().invoke(main, ["simulate", str(model), "-o", str(tmp_path / "pushed.h5"), "--t-end", "1",
                                    "--output-dt", "0.001"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    work = float(out.split("work of inputs and non-conservative loads │ ")[1].split()[0])
    change = float(out.split("energy change │ ")[1].split()[0])
    residual = float(out.split("work-energy residual (relative) │ ")[1].split()[0])
    assert abs(work) > 0.05 and change == pytest.approx(work, rel=1e-4) and residual < 1e-5
