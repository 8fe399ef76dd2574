"""``kane realtime`` on a model file with [[contacts]] (kane.realtime.rolling_plant): the ball in its bowl pulled by
the simulated hand, the contact stepped in absolute coordinates and the loop, the coupler and the log in joint
coordinates."""

from pathlib import Path

import h5py
import numpy as np
from click.testing import CliRunner

from kane.cli import main
from kane.io.model_file import load_model

BOWL = Path(__file__).resolve().parents[2] / "examples" / "ball_in_bowl.toml"


def test_the_hand_pulls_the_ball_which_stays_on_its_bowl(tmp_path):
    out = tmp_path / "bowl.h5"
    res = CliRunner().invoke(main, ["realtime", str(BOWL), "--duration", "1", "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert ("status: completed (rolling contacts in absolute coordinates, the dynamics every 10 periods, a step "
            "behind the coupler") in res.output
    assert " of 1000 periods" in res.output  # [realtime] rate = 1000 Hz, dynamics_every = 10
    p = load_model(BOWL).parameters
    with h5py.File(out, "r") as f:
        q = f["q"][:]
        x_h, v_h = f["hand_position"][:], f["hand_velocity"][:]
        x_b, v_b, force = f["point_position"][:], f["point_velocity"][:], f["force"][:]
    # the state the coupler saw, in the free joint's coordinates: the contact's last step (on the bowl: its centre
    # R - r from the bowl's centre (0, 0, R)) extrapolated along its velocity over h <= 2 k T = 20 ms, which
    # leaves the sphere of radius rho = R - r by (v h)^2 / (2 rho) at most
    rho = p["R"] - p["r"]
    gap = np.linalg.norm(q[:, :3] - [0.0, 0.0, p["R"]], axis=1) - rho
    bound = (np.max(np.linalg.norm(v_b, axis=1)) * 0.02) ** 2 / (2 * rho)
    assert 1e-7 < np.max(np.abs(gap)) < bound + 1e-9
    assert np.all(q[:20] == q[0])  # the ball starts at rest: the first step is seen 2 k periods on
    np.testing.assert_allclose(x_b, q[:, :3], rtol=0, atol=1e-12)  # the coupled point: the ball's centre
    # the coupler law with the default gains, K = 1000 N/m and B = K k T (twice the bound at the dynamics' period;
    # below the 20 N limit throughout)
    assert np.max(np.abs(force)) < 20.0
    np.testing.assert_allclose(force, 1000.0 * (x_h - x_b) + 10.0 * (v_h - v_b), rtol=0, atol=1e-9)
    assert np.ptp(q[:, 0]) > 0.01  # it moves


def test_a_stiff_coupler_on_the_rolling_ball_gets_the_stability_warning(tmp_path):
    # the contact adds mass at the ball's centre (rolling: m + J / r^2 = 7 m / 5 along the bowl), so the free
    # ball's m = 1.5 kg bounds the effective mass from below: at k = 10 (h = 10 ms) K = 8000 N/m gives
    # a = K h^2 / m = 0.533, past the delayed step map's limit; the table's default K = 1000 N/m (a = 0.067) passes
    runs = {}
    for stiffness in ("1000", "8000"):
        runs[stiffness] = CliRunner().invoke(main, ["realtime", str(BOWL), "--duration", "0.05", "--virtual-clock",
                                                    "--stiffness", stiffness, "-o", str(tmp_path / "b.h5")])
        assert runs[stiffness].exit_code == 0, runs[stiffness].output
    assert "warning" not in runs["1000"].output
    assert ("a = K h^2 / m = 0.533, b = B h / m = 0.533 with K = 8000 N/m, B = 80 N s/m, h = 0.01 s and the "
            "coupled point's smallest effective mass m = 1.5 kg") in runs["8000"].output
