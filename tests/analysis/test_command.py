"""``kane linearize``: a sweep of the rolling disk's spin prints the classical stability change, a steady turn is
solved from the command line, and bad options are named."""

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from kane.cli import main

SCRIPT = """
import sys
sys.path.insert(0, {here!r})
from _analysis_models import rolling_disk
system = rolling_disk(r=0.4, g=9.81)
simulation = {{"dependent": ("vx", "vy", "vz")}}
"""


def _script(tmp_path):
    path = tmp_path / "disk.py"
    path.write_text(SCRIPT.format(here=str(Path(__file__).resolve().parent)))
    return str(path)


def test_sweep_prints_the_stability_change_and_writes_the_plot(tmp_path):
    model = _script(tmp_path)
    out = tmp_path / "eig.png"
    res = CliRunner().invoke(main, ["linearize", model, "--at", "z=0.4", "--sweep", "w_spin=0.5:6:12",
                                    "--plot", str(out)])
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("w_spin = "))
    assert abs(float(line.split()[2].rstrip(":")) - np.sqrt(9.81 / 1.2)) < 1e-9 and "stabilizing" in line
    assert out.stat().st_size > 1000


def test_steady_turn_and_errors(tmp_path):
    model = _script(tmp_path)
    res = CliRunner().invoke(main, ["linearize", model, "--at", "z=0.3", "--at", "lean=0.3", "--at", "w_heading=1.2",
                                    "--at", "w_spin=3", "--steady", "w_spin"])
    assert res.exit_code == 0, res.output
    assert "operating point: a steady motion" in res.output and "A =" in res.output
    res = CliRunner().invoke(main, ["linearize", model, "--at", "tilt=3"])
    assert res.exit_code == 2 and "--at tilt: unknown name; known: coordinates x, y, z, heading" in res.output
    res = CliRunner().invoke(main, ["linearize", model, "--sweep", "w_spin=0:1"])
    assert res.exit_code == 2 and "expected NAME=START:STOP:N" in res.output


def test_scheduled_inputs_are_held_at_one_stated_value_at_the_operating_point():
    """The cart's file pushes it with F = F0 exp(-t/T): the linearization holds F at its stated value, 0 unless
    --at sets it; with F = 20 N (the push at t = 0) the basket accelerates at F / (mB + mC) = 0.952 N/kg along its
    axis with the caster straight (q4 = 0) and the cart at rest, so the point is not a steady motion."""
    cart = str(Path(__file__).resolve().parents[2] / "examples" / "shopping_cart.toml")
    res = CliRunner().invoke(main, ["linearize", cart])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0].startswith("inputs at the operating point: F = 0, tau = 0 (the model file "
                                                  "schedules them as functions of time")
    assert "operating point: a steady motion" in res.output
    res = CliRunner().invoke(main, ["linearize", cart, "--at", "F=20", "--at", "q4=0"])
    assert res.output.splitlines()[0].startswith("inputs at the operating point: F = 20, tau = 0")
    assert "not a steady motion: u1' = 0.952381" in res.output
