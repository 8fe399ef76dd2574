"""Results in a Zarr store (``-o NAME.zarr``): the content of the HDF5 file, resumable the same way."""

import sys
from pathlib import Path

import numpy as np
import pytest
import zarr
from click.testing import CliRunner

from kane.cli import main
from kane.sweep import (Backend, Execution, Grid, Points, RunSettings, Sweep, SweepFileError, is_sweep_file,
                        load_sweep, load_sweep_trajectory, run_sweep)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _pendulum import pendulum  # noqa: E402

RUN = RunSettings((0.0, 0.4), method="rk4", dt=0.01, output_dt=0.05)
DISK = str(HERE.parents[1] / "examples" / "rolling_disk.toml")


def _sweep(axes=(Grid("m", 0.0, 2.0, 3), Grid("q0.th", 0.1, 0.3, 2))):
    return Sweep(pendulum(), axes, RUN)


def test_a_zarr_store_holds_what_the_hdf5_file_holds(tmp_path):
    h5, zr = tmp_path / "s.h5", tmp_path / "s.zarr"
    a = run_sweep(_sweep(), h5, Execution(Backend.BATCH), trajectories=True)
    b = run_sweep(_sweep(), zr, Execution(Backend.BATCH), trajectories=True)
    assert (a.done, a.failed) == (b.done, b.failed) == (4, 2)
    ta, tb = load_sweep(h5), load_sweep(zr)
    assert is_sweep_file(zr) and not is_sweep_file(tmp_path / "other.zarr")
    for field in ("param_names", "metric_names", "keys", "status", "messages", "axes"):
        assert getattr(ta, field) == getattr(tb, field)
    assert "cannot be evaluated at the initial state" in tb.messages[0]
    assert np.array_equal(ta.params, tb.params) and np.array_equal(ta.metrics, tb.metrics, equal_nan=True)
    for i, key in enumerate(ta.keys):
        if ta.status[i] == "failed":
            with pytest.raises(SweepFileError, match="no trajectory of run"):
                load_sweep_trajectory(zr, key)
            continue
        x, y = load_sweep_trajectory(h5, key), load_sweep_trajectory(zr, key)
        assert len(x.t) == 9 and np.array_equal(x.t, y.t) and np.array_equal(x.x, y.x)
        assert np.array_equal(x.energy, y.energy) and x.q_names == y.q_names == ("th",)


def test_a_zarr_store_resumes_and_an_append_cut_short_is_redone_once(tmp_path):
    zr = tmp_path / "s.zarr"
    first = run_sweep(_sweep((Points(("m", "q0.th"), [(1.0, 0.1), (2.0, 0.2)]),)), zr, Execution(Backend.BATCH))
    assert (first.done, first.skipped) == (2, 0)
    # an append whose rows were written but never committed (killed before n_committed): they do not count
    root = zarr.open_group(str(zr), mode="r+")
    root["metrics"].resize((3, root["metrics"].shape[1]))
    root["key"].resize((3,))
    root["key"][2:3] = np.array(["x" * 64], dtype=object)
    assert len(load_sweep(zr)) == 2
    grid = (Grid("m", 1.0, 2.0, 2), Grid("q0.th", 0.1, 0.2, 2))  # holds both points above, and two new
    second = run_sweep(_sweep(grid), zr, Execution(Backend.BATCH))
    assert (second.done, second.skipped, second.failed) == (2, 2, 0)
    table = load_sweep(zr)
    assert len(table) == 4 and len(set(table.keys)) == 4 and "x" * 64 not in table.keys
    assert sorted(zip(table.column("m"), table.column("q0.th"))) == [(1.0, 0.1), (1.0, 0.2), (2.0, 0.1), (2.0, 0.2)]
    with pytest.raises(SweepFileError, match="holds another sweep's columns"):
        run_sweep(Sweep(pendulum(), (Grid("g", 1.0, 2.0, 2),), RUN), zr)


def test_kane_sweep_writes_zarr_and_kane_plot_reads_it(tmp_path):
    zr = str(tmp_path / "d.zarr")
    args = ["sweep", DISK, "--grid", "u0.w2=3:6:2", "--t-end", "0.1", "--in-process", "-o", zr]
    assert CliRunner().invoke(main, args).output.strip().splitlines()[-1] == "runs: 2 done, 0 skipped, 0 failed"
    assert CliRunner().invoke(main, args).output.strip().splitlines()[-1] == "runs: 0 done, 2 skipped, 0 failed"
    plot = CliRunner().invoke(main, ["plot", zr, "-o", str(tmp_path / "d.png")])
    assert plot.exit_code == 0, plot.output
    assert (tmp_path / "d.png").stat().st_size > 0
