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
from kane.io.trajectory import load_trajectory

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


_ARM = '''[[bodies]]
name = "arm"
mass = 1.0
com = [0.5, 0, 0]
inertia = [0.01, 0.1, 0.1]

[[joints]]
name = "hinge"
parent = "ground"
child = "arm"
type = "revolute"
axis = "y"
coordinates = ["th"]
speed_names = ["om"]
q0 = [0.3]
u0 = [-1.0]

'''


def _pair_run(tmp_path, first):
    """The run (q by name, t) of the ball in its bowl beside the arm, the arm's hinge declared ``first`` or after."""
    text = BOWL.read_text()
    text = (text.replace("[[joints]]", _ARM + "[[joints]]", 1) if first else
            text.replace("[[surfaces]]", _ARM + "[[surfaces]]", 1))
    model = tmp_path / f"pair_{first}.toml"
    model.write_text(text.split("[realtime]")[0])
    h5 = tmp_path / f"pair_{first}.h5"
    res = CliRunner().invoke(main, ["simulate", str(model), "-o", str(h5), "--t-end", "0.6", "--output-dt", "0.01"])
    assert res.exit_code == 0, res.output
    traj = load_trajectory(h5)
    ball = ("x", "y", "z", "e0", "e1", "e2", "e3")
    assert traj.q_names == (("th", *ball) if first else (*ball, "th")) and traj.status == "completed"
    return {n: traj.q[:, k] for k, n in enumerate(traj.q_names)}, traj.t


def test_the_joint_order_does_not_change_what_a_state_means(tmp_path):
    """The ball in its bowl beside a pendulum (an arm on a hinge, swinging on its own): with the hinge declared
    before the ball's free joint (the free joint's q no longer first; it was refused, "q0 holds the quaternion
    [0 0 0.149 0.159]") the run is the one with it declared after, coordinate by name; the ball is the exact bowl
    pendulum of the test above and the arm the pendulum 0.35 th'' = 9.81 * 0.5 cos th integrated by scipy."""
    from scipy.integrate import solve_ivp

    (q, t), (q_first, t_first) = _pair_run(tmp_path, False), _pair_run(tmp_path, True)
    np.testing.assert_array_equal(t, t_first)
    for name, values in q.items():
        np.testing.assert_allclose(q_first[name], values, rtol=0, atol=1e-9, err_msg=name)
    p = load_model(BOWL).parameters
    R, r, g, a = p["R"], p["r"], p["g"], p["a"]
    # the ball: its centre on the sphere of radius R - r about the bowl's centre, the exact pendulum's quarter period
    assert np.max(np.abs(np.sqrt(q["x"] ** 2 + q["y"] ** 2 + (q["z"] - R) ** 2) - (R - r))) < 1e-9
    quarter = ellipk(math.sin(a / 2) ** 2) / math.sqrt(5 * g / (7 * (R - r)))
    x = q["x"]
    k = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))[0]
    assert t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k]) == pytest.approx(quarter, abs=2e-4)  # linear interp
    # the arm: about the hinge I_yy + m l^2 = 0.35 kg m^2; a turn th about +y takes the com (0.5, 0, 0) to
    # (0.5 cos th, 0, -0.5 sin th), V = -9.81 * 0.5 sin th: 0.35 th'' = 9.81 * 0.5 cos th
    ref = solve_ivp(lambda _, y: [y[1], g * 0.5 * math.cos(y[0]) / 0.35], (0, 0.6), [0.3, -1.0], t_eval=t,
                    rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(q["th"], ref.y[0], rtol=0, atol=1e-7)
