"""Plots of a real-time log (kane.viz.realtime_plot, ``kane plot LOG.h5``, ``kane info LOG.h5``): the panels draw the
log's own numbers (a log written row by row with known values), long series keep every extreme, and a partial log
plots too."""

import sys
from pathlib import Path

import h5py
import numpy as np
from click.testing import CliRunner

from kane.cli import main
from kane.realtime.log_reader import load_realtime_log
from kane.viz.realtime_plot import ENVELOPE_BINS, envelope, plot_realtime_log

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realtime"))
from test_log_reader import LATE, N, T, write_log  # noqa: E402


def _line(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def test_the_panels_draw_the_logs_numbers(tmp_path):
    write_log(tmp_path / "run.h5")
    rec = load_realtime_log(tmp_path / "run.h5")
    plot = plot_realtime_log(tmp_path / "run.h5")
    assert plot.path == tmp_path / "run.png" and plot.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = plot.axes
    np.testing.assert_array_equal(_line(ax["force"], "Fx").get_ydata(), rec.force[:, 0])
    np.testing.assert_array_equal(_line(ax["force"], "Fy").get_ydata(), rec.force[:, 1])
    assert "Fz" not in [ln.get_label() for ln in ax["force"].get_lines()]  # a constant 0.5 N: not a moving axis
    np.testing.assert_array_equal(_line(ax["position"], "hand z").get_ydata(), 3e-3 * np.arange(N))  # from the start
    port = _line(ax["energy"], "into the coupler from the device")
    np.testing.assert_array_equal(port.get_ydata(), 0.01 * np.arange(N))
    np.testing.assert_allclose(_line(ax["timing"], "compute time").get_ydata(), rec.compute_time * 1e6, rtol=1e-15)
    missed = _line(ax["timing"], "missed (2)")
    np.testing.assert_array_equal(missed.get_xdata(), [k * T for k in sorted(LATE)])
    np.testing.assert_allclose(missed.get_ydata(), [sum(LATE[k]) * 1e6 for k in sorted(LATE)], rtol=1e-12)
    assert plot.missed == 2
    # the sample refused every third period, marked under the positions; the lock at its time on every panel
    np.testing.assert_array_equal(_line(ax["position"], "sample refused").get_xdata(), rec.t[2::3])
    for name in ("position", "force", "energy", "timing"):
        assert 0.0205 in [ln.get_xdata()[0] for ln in ax[name].get_lines() if ln.get_linestyle() == "--"]
    bars = [p.get_width() for p in ax["jitter"].patches]
    assert bars == list(rec.deadlines.jitter_counts) and sum(bars) == N
    assert "missed deadlines: 2 of 50 periods" in plot.figure.get_suptitle()


def test_a_long_series_keeps_its_extremes():
    rng = np.random.default_rng(3)
    t, y = np.arange(100_000) * 1e-4, rng.normal(size=100_000)
    y[77_777] = 50.0
    tt, yy = envelope(t, y, bins=1000)
    assert tt.shape == yy.shape == (2000,) and yy.max() == 50.0 and yy.min() == y.min()
    blocks = y.reshape(1000, 100)
    np.testing.assert_array_equal(yy[0::2], blocks.min(1))
    np.testing.assert_array_equal(yy[1::2], blocks.max(1))
    np.testing.assert_array_equal(tt[0::2], t[::100])
    short = np.arange(2 * ENVELOPE_BINS, dtype=float)
    assert envelope(short, short)[1] is short


def test_a_partial_log_plots_with_its_status(tmp_path):
    log, _ = write_log(tmp_path / "run.h5", close=False)
    plot = plot_realtime_log(log.partial, tmp_path / "partial.svg")
    assert plot.path.read_text().startswith("<?xml")
    assert "unfinished: the run did not close its log" in plot.figure.get_suptitle()
    assert "missed deadlines: 2 of 48 periods" in plot.figure.get_suptitle()


def test_kane_realtime_names_the_commands_that_plot_and_describe_its_log(tmp_path):
    out = tmp_path / "chain.h5"
    res = CliRunner().invoke(main, ["realtime", str(EXAMPLES / "planar_chain.toml"), "--duration", "0.05",
                                    "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0 and f"plot it: kane plot {out}; describe it: kane info {out}" in res.output
    assert "virtual clock: the periods ran back to back, nothing waited" in res.output


def test_kane_plot_and_info_read_a_realtime_log(tmp_path):
    write_log(tmp_path / "run.h5")
    res = CliRunner().invoke(main, ["plot", str(tmp_path / "run.h5"), "-o", str(tmp_path / "out.png")])
    assert res.exit_code == 0 and "wrote" in res.output and (tmp_path / "out.png").stat().st_size > 10_000
    res = CliRunner().invoke(main, ["info", str(tmp_path / "run.h5")], terminal_width=200)
    assert res.exit_code == 0, res.output
    for text in ("missed deadlines", "2 of 50 periods", "saturated periods", "free, caster"):
        assert text in res.output


def test_a_multi_rate_logs_energy_is_drawn_at_the_plants_own_steps(tmp_path):
    write_log(tmp_path / "run.h5")
    with h5py.File(tmp_path / "run.h5", "a") as f:  # what a run with dynamics_every = 10 adds at its close
        g = f.create_group("dynamics")
        g["t"], g["q"], g["u"] = 10 * T * np.arange(6), np.zeros((6, 2)), np.zeros((6, 1))
        g["energy"] = np.array([1.0, 1.5, 1.25, 2.0, 2.5, 3.0])
    plot = plot_realtime_log(tmp_path / "run.h5")
    line = _line(plot.axes["energy"], "virtual system at its steps, change")
    np.testing.assert_array_equal(line.get_xdata(), 10 * T * np.arange(6))
    np.testing.assert_array_equal(line.get_ydata(), [0.0, 0.5, 0.25, 1.0, 1.5, 2.0])
