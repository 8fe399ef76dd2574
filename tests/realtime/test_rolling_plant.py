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
    assert "status: completed (rolling contacts in absolute coordinates" in res.output
    assert " of 100 periods" in res.output  # [realtime] rate = 100 Hz
    p = load_model(BOWL).parameters
    with h5py.File(out, "r") as f:
        q = f["q"][:]
        x_h, v_h = f["hand_position"][:], f["hand_velocity"][:]
        x_b, v_b, force = f["point_position"][:], f["point_velocity"][:], f["force"][:]
    # the state in the free joint's coordinates: the centre stays R - r from the bowl's centre (0, 0, R)
    gap = np.linalg.norm(q[:, :3] - [0.0, 0.0, p["R"]], axis=1) - (p["R"] - p["r"])
    assert np.max(np.abs(gap)) < 1e-8
    np.testing.assert_allclose(x_b, q[:, :3], rtol=0, atol=1e-12)  # the coupled point: the ball's centre
    # the coupler law with the default gains, K = 1000 N/m and B = K T (below the 20 N limit throughout)
    assert np.max(np.abs(force)) < 20.0
    np.testing.assert_allclose(force, 1000.0 * (x_h - x_b) + 10.0 * (v_h - v_b), rtol=0, atol=1e-9)
    assert np.ptp(q[:, 0]) > 0.01  # it moves
