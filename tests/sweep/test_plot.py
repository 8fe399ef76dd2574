"""``kane plot sweep.h5`` (kane.viz.sweep_plot): the drawn arrays are the file's columns, layout by the axes."""

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import ArgumentError
from kane.sweep import (Backend, Draws, Execution, Grid, Metric, Metrics, Points, RunSettings, Sweep, Uniform,
                        load_sweep, run_sweep)
from kane.viz.sweep_plot import Layout, is_sweep_file, plot_sweep

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pendulum import pendulum, swing  # noqa: E402

RUN = RunSettings((0.0, 0.3), method="rk4", dt=0.01)
METRICS = Metrics(functions=(Metric("swing", swing),))


def _file(tmp_path, axes, name="s.h5"):
    out = tmp_path / name
    run_sweep(Sweep(pendulum(), axes, RUN, METRICS), out, Execution(Backend.BATCH))
    return out, load_sweep(out)


def test_one_parameter_gives_lines_of_the_metrics_against_it(tmp_path):
    out, table = _file(tmp_path, (Points(("q0.th",), [(0.3,), (-0.2,), (0.1,)]),))
    plot = plot_sweep(out, tmp_path / "p.png", metrics=["swing", "max.u.w"])
    assert plot.layout is Layout.LINE and plot.x == "q0.th" and (tmp_path / "p.png").stat().st_size > 0
    order = np.argsort(table.column("q0.th"))
    for ax, name in zip(plot.figure.axes, ("swing", "max.u.w")):
        line = ax.get_lines()[0]
        assert np.array_equal(line.get_xdata(), [-0.2, 0.1, 0.3])
        assert np.array_equal(line.get_ydata(), table.column(name)[order])


def test_a_full_grid_of_two_parameters_is_an_image_blank_where_runs_failed(tmp_path):
    out, table = _file(tmp_path, (Grid("m", 0.0, 2.0, 3), Grid("g", 4.0, 9.0, 2)))
    plot = plot_sweep(out, tmp_path / "p.png", metrics=["swing"])
    assert plot.layout is Layout.IMAGE and (plot.x, plot.y) == ("m", "g")
    cells = np.ma.filled(plot.figure.axes[0].collections[0].get_array(), np.nan).reshape(2, 3)  # (g, m)
    for i in range(len(table)):
        col, row = [0.0, 1.0, 2.0].index(table.column("m")[i]), [4.0, 9.0].index(table.column("g")[i])
        expected = table.column("swing")[i] if table.status[i] == "done" else np.nan
        assert np.array_equal(cells[row, col], expected, equal_nan=True)
    assert np.isnan(cells[:, 0]).all() and np.isfinite(cells[:, 1:]).all()  # m = 0 fails: a blank column


def test_two_parameters_off_a_grid_are_a_scatter(tmp_path):
    out, table = _file(tmp_path, (Points(("m", "g"), [(1.0, 4.0), (2.0, 9.0), (1.5, 6.0)]),))
    plot = plot_sweep(out, tmp_path / "p.png", metrics=["max.u.w"])
    dots = plot.figure.axes[0].collections[0]
    assert plot.layout is Layout.SCATTER
    assert np.array_equal(dots.get_offsets(), np.column_stack([table.column("m"), table.column("g")]))
    assert np.array_equal(dots.get_array(), table.column("max.u.w"))


def test_random_draws_are_histograms_and_the_command_plots_a_sweep_file(tmp_path):
    out, table = _file(tmp_path, (Draws((Uniform("q0.th", -0.5, 0.5),), 40, seed=4),))
    assert is_sweep_file(out) and not is_sweep_file(tmp_path / "missing.h5")
    plot = plot_sweep(out, tmp_path / "p.png", metrics=["swing"])
    assert plot.layout is Layout.HISTOGRAM
    heights = [p.get_height() for p in plot.figure.axes[0].patches]
    counts, _ = np.histogram(table.column("swing"), bins="auto")
    assert np.array_equal(heights, counts) and sum(heights) == 40
    result = CliRunner().invoke(main, ["plot", str(out), "-o", str(tmp_path / "cli.png")])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and (tmp_path / "cli.png").stat().st_size > 0


def test_an_unknown_metric_is_named_with_the_metrics(tmp_path):
    out, _ = _file(tmp_path, (Grid("g", 4.0, 9.0, 2),))
    with pytest.raises(ArgumentError, match=r"no metric 'lean'; the metrics: t_final, final.q.th"):
        plot_sweep(out, metrics=["lean"])
