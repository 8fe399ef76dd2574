"""The live viewer on a model with [[switching]] tables (kane.viz.live_switching): the rules follow the parameter
sliders, and a latch that closes keeps the blocks' momentum (a physics identity of an internal impulse)."""

import sys
from pathlib import Path

import numpy as np

from kane.io.model_file import parse_model
from kane.viz.live import LiveSimulation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _switching_files import BLOCKS  # noqa: E402


def test_the_rules_follow_the_parameter_sliders_and_the_latch_keeps_the_momentum():
    live = LiveSimulation(parse_model(BLOCKS.replace("t_on = 0.5", "t_on = 5.0"), "blocks.toml"))
    assert live.port.body == "B" and live.mode == "free"  # the heavier block is coupled to the gizmo
    live.advance(40)  # 0.2 s at 200 Hz: t_on = 5 s is far off
    t, q, u = live._raw()
    assert live.mode == "free" and abs(u[0] - 1.5) < 1e-12  # A coasts
    momentum = 2.0 * u[0] + 3.0 * u[1]
    live.set_parameter("t_on", 0.1)  # the slider moves the latch's interval to [0.1, 0.85] s: closed now
    t_after, q_after, u_after = live._raw()
    assert live.mode == "latch" and t_after == t and np.array_equal(q_after, q)
    assert abs(u_after[0] - u_after[1]) < 1e-12  # the blocks move together
    assert abs(2.0 * u_after[0] + 3.0 * u_after[1] - momentum) < 1e-12  # an internal impulse: momentum kept
    live.advance(20)
    t, q, u = live._raw()
    assert live.mode == "latch" and abs(u[0] - u[1]) < 1e-12
