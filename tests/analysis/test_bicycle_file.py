"""examples/bicycle.toml, the benchmark Whipple bicycle as a model file: ``kane linearize`` on a short sweep of
the forward speed prints the weave and capsize speeds of Meijaard et al. (2007) and writes the eigenvalue plot;
the file's model has the test builder's eigenvalues."""

import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner

import kane

from kane.cli import main
from kane.io import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _analysis_models import BICYCLE_DEPENDENT, whipple_bicycle  # noqa: E402

BICYCLE = Path(__file__).resolve().parents[2] / "examples" / "bicycle.toml"
WEAVE, CAPSIZE = 4.292382, 6.024262  # [m/s], Meijaard et al. (2007), Table 2


def test_linearize_sweep_prints_weave_and_capsize_speeds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the plot goes to the current directory by default
    res = CliRunner().invoke(main, ["linearize", str(BICYCLE), "--sweep", "v=3:7:5"])
    assert res.exit_code == 0, res.output
    plot = Path("whipple_benchmark_v_eigenvalues.png")
    assert plot.stat().st_size > 5000 and f"wrote the eigenvalue plot to {plot}" in res.output
    lines = [x for x in res.output.splitlines() if x.startswith("v = ")]
    assert len(lines) == 2 and "stabilizing" in lines[0] and "destabilizing" in lines[1]
    weave, capsize = (float(x.split()[2].rstrip(":")) for x in lines)
    assert abs(weave - WEAVE) < 1e-6 and abs(capsize - CAPSIZE) < 1e-6


def test_the_file_is_the_builders_bicycle():
    """The same accelerations as the test builder's bicycle (whose rear wheel speed is the rate v / rR)."""
    from_file = load_model(BICYCLE).derive().compile("numpy")
    built = kane.derive(whipple_bicycle(), dependent=BICYCLE_DEPENDENT).compile("numpy")
    assert from_file.u_names == ("w_roll", "v", "w_steer") and built.u_names == ("w_roll", "w_rear", "w_steer")
    q = np.zeros(9)
    q[2], q[4], q[7] = 0.3 * np.cos(0.05), 0.05, 0.1  # z, roll, steer (pitch is not on the constraint here)
    u = np.array([0.2, 4.0, -0.3])
    scale = np.array([1.0, 0.3, 1.0])  # v = rR * w_rear
    a = from_file.udot(0.0, q, u)
    b = built.udot(0.0, q, u / scale)
    np.testing.assert_allclose(a, b * scale, rtol=1e-10, atol=1e-10)
