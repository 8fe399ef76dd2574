"""``kane simulate`` on model files with [[switching]] tables: two blocks latched by a plastic lock, a block that
slides, sticks and slips again under Coulomb friction (both against hand derivations), and a run interrupted or
stopped with its samples and mode changes kept in the file."""

import math
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.io import load_model
from kane.io.model_file import parse_model
from kane.io.trajectory import TrajectoryWriter
from kane.io.trajectory import load_trajectory
from kane.simulate import SimulationError
from kane.switching import SwitchingSettings, SwitchingSimulator, switching_rules
from kane.switching.settings import switching_run_options

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _switching_files import BLOCKS, SLIDER  # noqa: E402


def _run(tmp_path, text, *options):
    model = tmp_path / "model.toml"
    model.write_text(text)
    h5 = tmp_path / "run.h5"
    res = CliRunner().invoke(main, ["simulate", str(model), "-o", str(h5), *options])
    return res, h5


def test_two_blocks_latched_by_a_plastic_lock_keep_their_momentum(tmp_path):
    """Hand derivation: the latch makes the speeds equal, v = (mA vA + mB vB) / (mA + mB), and takes the kinetic
    energy mu (vA - vB)^2 / 2 (mu = mA mB / (mA + mB)); the blocks then move together, also after it opens."""
    res, h5 = _run(tmp_path, BLOCKS)
    assert res.exit_code == 0, res.output
    mA, mB, vA, vB = 2.0, 3.0, 1.5, -0.5
    v = (mA * vA + mB * vB) / (mA + mB)
    lost = 0.5 * mA * mB / (mA + mB) * (vA - vB) ** 2
    traj = load_trajectory(h5)
    assert traj.status == "completed"
    assert [(e.kind, e.t) for e in traj.events] == [("lock", 0.5), ("unlock", 1.25)]
    assert traj.events[0].data["delta_kinetic"] == pytest.approx(-lost, rel=1e-12)
    assert [m for _, _, m in traj.modes] == ["free", "latch", "free"]
    np.testing.assert_allclose(traj.u[-1], [v, v], rtol=1e-12)
    np.testing.assert_allclose(traj.q[-1], [vA * 0.5 + v * 1.5, 1.0 + vB * 0.5 + v * 1.5], rtol=1e-10)
    k = np.flatnonzero(traj.t == 0.5)  # two samples at the lock: before and after the impulse
    assert len(k) == 2 and traj.energy[k[0]] - traj.energy[k[1]] == pytest.approx(lost, rel=1e-12)
    out = " ".join(res.output.split())
    assert "2: lock 1, unlock 1" in out and f"{lost:.6g} J" in out and "energy change in the jumps" in out


def test_a_pushed_block_slides_sticks_and_slips_where_the_hand_derivation_says(tmp_path):
    """Hand derivation, m v' = c t - mu_k m g while sliding: v = v0 + c t^2 / (2 m) - mu_k g t reaches 0 at t1;
    the grip then holds while c t <= mu_s m g, so it slips at t2 = mu_s m g / c and v = c (t^2 - t2^2) / (2 m)
    - mu_k g (t - t2) after. The power recorded is (c t - mu_k m g) v, and the energy change is its integral."""
    res, h5 = _run(tmp_path, SLIDER)
    assert res.exit_code == 0, res.output
    m, g, c, v0, mu_s, mu_k = 2.0, 9.81, 1.0, 2.0, 0.3, 0.25
    a = c / (2 * m)
    t1 = (mu_k * g - math.sqrt((mu_k * g) ** 2 - 4 * a * v0)) / (2 * a)
    t2 = mu_s * m * g / c
    traj = load_trajectory(h5)
    (stick, slip) = traj.events
    assert (stick.kind, slip.kind) == ("stick", "slip")
    assert stick.t == pytest.approx(t1, abs=1e-9) and slip.t == pytest.approx(t2, abs=1e-9)
    assert slip.data["multiplier"] == pytest.approx(-mu_s * m * g, rel=1e-9)  # the grip pulls back with mu_s N
    x1 = v0 * t1 + c * t1 ** 3 / (6 * m) - mu_k * g * t1 ** 2 / 2
    T = 7.0
    x_end = x1 + c * (T ** 3 - t2 ** 3) / (6 * m) - c * t2 ** 2 * (T - t2) / (2 * m) - mu_k * g * (T - t2) ** 2 / 2
    assert traj.u[-1, 0] == pytest.approx(c * (T ** 2 - t2 ** 2) / (2 * m) - mu_k * g * (T - t2), rel=1e-8)
    assert traj.q[-1, 0] == pytest.approx(x_end, rel=1e-8)
    held = (traj.t > t1 + 1e-6) & (traj.t < t2 - 1e-6)
    assert np.all(traj.u[held, 0] == 0.0) and np.ptp(traj.q[held, 0]) == 0.0
    sliding = traj.t < t1 - 1e-6
    np.testing.assert_allclose(traj.residuals["power"][sliding],
                               (c * traj.t[sliding] - mu_k * m * g) * traj.u[sliding, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(traj.residuals["lambda_grip"][held], -c * traj.t[held], rtol=1e-9)
    change = 0.5 * m * (traj.u[-1, 0] ** 2 - v0 ** 2)
    out = " ".join(res.output.split())
    assert f"energy change │ {change:.6g} J" in out and "mode changes │ 2: stick 1, slip 1" in out
    residual = float(out.split("work-energy residual (relative) │ ")[1].split()[0])
    assert residual < 1e-4  # 7e-6: the trapezoidal rule on 0.01 s samples; 1.6 without the friction's power


def test_the_held_disk_example_rolls_by_eq_42_from_release_to_catch(tmp_path):
    """examples/disk_on_ramp_held.toml (seed 000, Example 1): held to 0.5 s, then u1' = -m g sin(theta) /
    (m + J / r^2) (Eq. 42) with u2 = -u1 (the rolling constraint), caught at 1.5 s by a plastic impulse that takes
    all of (m + J / r^2) u1^2 / 2."""
    path = Path(__file__).resolve().parents[2] / "examples" / "disk_on_ramp_held.toml"
    h5 = tmp_path / "disk.h5"
    res = CliRunner().invoke(main, ["simulate", str(path), "-o", str(h5)])
    assert res.exit_code == 0, res.output
    p = load_model(path).parameters
    m_eff = p["m"] + p["J"] / p["r"] ** 2
    a = p["m"] * p["g"] * math.sin(p["theta"]) / m_eff
    traj = load_trajectory(h5)
    assert [(e.kind, e.t) for e in traj.events] == [("unlock", 0.5), ("lock", 1.5)]
    assert traj.events[1].data["delta_kinetic"] == pytest.approx(-0.5 * m_eff * (a * 1.0) ** 2, rel=1e-9)
    rolling = (traj.t > 0.5) & (traj.t < 1.5)
    np.testing.assert_allclose(traj.u[rolling, 0], -a * (traj.t[rolling] - 0.5), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(traj.u[rolling, 1], -traj.u[rolling, 0], rtol=1e-12)
    np.testing.assert_allclose(traj.q[rolling, 0], 1.0 - 0.5 * a * (traj.t[rolling] - 0.5) ** 2, rtol=1e-9)
    held = (traj.t < 0.5) | (traj.t > 1.5)
    assert np.all(traj.u[held] == 0.0) and traj.q[-1, 0] == pytest.approx(1.0 - 0.5 * a, rel=1e-9)


def test_ctrl_c_keeps_the_samples_and_the_mode_changes_so_far(tmp_path, monkeypatch):
    step = SwitchingSimulator.step

    def step_then_ctrl_c(self):
        step(self)
        if self.t >= 0.5:  # the lock has happened
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(SwitchingSimulator, "step", step_then_ctrl_c)
    res, h5 = _run(tmp_path, BLOCKS)
    assert res.exit_code == 130, res.output
    traj = load_trajectory(h5)
    assert traj.status == "interrupted: SIGINT" and traj.t[-1] == 0.5
    assert [(e.kind, e.t) for e in traj.events] == [("lock", 0.5)]
    assert [m for _, _, m in traj.modes] == ["free", "latch"]
    assert f"saved in {h5}" in res.output.strip().splitlines()[-1]


def test_the_step_limit_stops_a_switching_run_and_keeps_it(tmp_path):
    res, h5 = _run(tmp_path, SLIDER, "--max-steps", "5")
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "the step limit was reached: 5 steps" in out and f"saved to {h5}" in out
    traj = load_trajectory(h5)
    assert traj.status.startswith("failed: the step limit") and traj.stats.n_steps == 5
    assert [e.kind for e in traj.events] == ["stick", "slip"] and traj.t[-1] == traj.events[-1].t
    assert len(traj.modes) == 3 and traj.modes[1][2] == "grip"  # sliding, held, sliding


def test_a_failed_mode_change_closes_the_file_with_the_reason_and_the_records_so_far(tmp_path):
    lm = parse_model(BLOCKS, "blocks.toml")
    writer = TrajectoryWriter(tmp_path / "run.h5")
    sim = SwitchingSimulator(lm.derive(), [0.0, 1.0], [1.5, -0.5], switching_rules(lm),
                             switching_run_options(t_end=2.0), SwitchingSettings(max_switches=1), writer=writer)
    with pytest.raises(SimulationError, match="more than 1 mode changes") as info:
        sim.run(2.0)
    assert info.value.t == 1.25 and not writer.is_open
    traj = load_trajectory(tmp_path / "run.h5")
    assert traj.status == "failed: more than 1 mode changes (Zeno behaviour?)" and traj.t[-1] == 1.25
    assert [(e.kind, e.t) for e in traj.events] == [("lock", 0.5)]


@pytest.mark.parametrize("command", [["simulate"], ["view", "--live"]])
def test_contacts_and_switching_in_one_model_are_refused_not_half_run(tmp_path, command):
    """The ball in its bowl with a lock on a transient constraint: each command would run one of the two and drop
    the other; it says so instead."""
    text = (Path(__file__).resolve().parents[2] / "examples" / "ball_in_bowl.toml").read_text()
    text += ('\n[[constraints]]\nname = "hold"\ntype = "joint_lock"\njoint = "float"\ntransient = true\n'
             '\n[[switching]]\ntype = "lock"\nconstraint = "hold"\non = [[0.0, 0.5]]\n')
    model = tmp_path / "both.toml"
    model.write_text(text)
    out = ["-o", str(tmp_path / "out.h5")] if command[0] == "simulate" else []
    res = CliRunner().invoke(main, [command[0], str(model), *command[1:], *out])
    assert res.exit_code == 2, res.output
    assert "[[contacts]] and [[switching]] in one model are not run together" in " ".join(res.output.split())
