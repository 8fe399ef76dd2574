"""The batch backend (one numpy batch of RK4 runs, no Dask): the metrics of the one-by-one runs, failures alike."""

import sys
from pathlib import Path

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.sweep import Backend, Execution, Grid, Metric, Metrics, Points, RunSettings, Sweep, load_sweep, run_sweep

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _pendulum import pendulum, swing  # noqa: E402

DISK = HERE.parents[1] / "examples" / "rolling_disk.toml"
BATCH = Execution(Backend.BATCH, batch_size=4)


def test_batch_metrics_equal_one_by_one_runs_of_the_rolling_disk_to_round_off():
    # nonholonomic, quaternions, dependent speeds: 6 points in batches of 4 and 2
    sweep = Sweep(DISK, (Points(("r", "q0.z"), [(0.3, 0.3), (0.5, 0.5)]), Grid("u0.w2", 3.0, 9.0, 3)),
                  RunSettings((0.0, 0.6), method="rk4", dt=0.004, output_dt=0.015))
    alone, batch = run_sweep(sweep), run_sweep(sweep, execution=BATCH)
    assert (batch.done, batch.failed) == (6, 0)
    assert batch.table.keys == alone.table.keys and np.array_equal(batch.table.params, alone.table.params)
    a, b = alone.table.metrics, batch.table.metrics
    scale = np.max(np.abs(a), axis=0)
    # not bitwise: the runs alone evaluate the equations in C, the batch in numpy (other groupings of the sums)
    assert np.all(np.abs(a - b) <= 1e-12 * np.maximum(scale, 1.0))
    assert np.array_equal(alone.table.column("t_final"), np.full(6, 0.6))
    # the spin changes the run: the metrics are the point's own (no row mixed up with another)
    assert len(set(np.round(b[:, alone.table.metric_names.index("max.u.w2")], 9))) == 6


def test_a_point_that_cannot_be_evaluated_leaves_the_batch_with_its_message(tmp_path):
    sweep = Sweep(pendulum(), (Grid("m", 0.0, 2.0, 3), Grid("q0.th", 0.1, 1.0, 2)),
                  RunSettings((0.0, 1.0), method="rk4", dt=0.01, output_dt=0.05),
                  Metrics(functions=(Metric("swing", swing),)))
    alone = run_sweep(sweep)
    batch = run_sweep(sweep, tmp_path / "b.h5", BATCH)
    assert (batch.done, batch.failed) == (4, 2) == (alone.done, alone.failed)
    table = load_sweep(tmp_path / "b.h5").sorted_by(alone.table.keys)
    assert table.status == alone.table.status and table.messages == alone.table.messages
    assert "cannot be evaluated at the initial state" in table.messages[0]
    assert np.allclose(table.metrics, alone.table.metrics, rtol=1e-13, atol=1e-13, equal_nan=True)
    rerun = run_sweep(sweep, tmp_path / "b.h5", BATCH)
    assert (rerun.done, rerun.failed, rerun.skipped) == (0, 0, 6)


def test_the_batch_refuses_adaptive_methods_and_events():
    sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2),), RunSettings((0.0, 1.0)))
    with pytest.raises(ArgumentError, match="the batch backend runs fixed-step RK4 .* got method dopri5"):
        run_sweep(sweep, execution=BATCH)
