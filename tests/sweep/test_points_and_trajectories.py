"""Points from a CSV file (bad files named) and trajectories kept in the results file as runs finish."""

import sys
from pathlib import Path

import numpy as np
import pytest

from kane import derive
from kane.errors import ArgumentError
from kane.simulate import simulate
from kane.sweep import (Backend, Execution, Grid, Points, RunSettings, Sweep, SweepFileError, load_sweep,
                        load_sweep_trajectory, run_sweep)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pendulum import pendulum  # noqa: E402


def test_points_from_csv_keep_their_rows_and_names(tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("m, q0.th ,u0.w\n1.5,0.25,-1e-1\n\n2,  0.5, 0\n")
    points = Points.from_csv(csv)
    assert points.names == ("m", "q0.th", "u0.w")
    assert points.values == ((1.5, 0.25, -0.1), (2.0, 0.5, 0.0))
    result = run_sweep(Sweep(pendulum(), (points,), RunSettings((0.0, 0.2))))
    assert result.done == 2 and np.array_equal(result.table.params, [[1.5, 0.25, -0.1], [2.0, 0.5, 0.0]])


@pytest.mark.parametrize("text, message", [
    ("m,g\n1,2\n3,x\n", r"p.csv line 3 column g: expected a number, got 'x'"),
    ("m,g\n1,2\n3\n", r"p.csv line 3: expected 2 values \(m, g\), got 1"),
    ("m,,g\n1,2,3\n", r"p.csv line 1: a column has no name"),
    ("m,g\n", r"p.csv: no rows after the header m, g"),
    ("\n\n", r"p.csv: empty"),
    ("m\nnan\n", r"p.csv line 2 column m: expected a finite number"),
])
def test_bad_points_files_are_named_with_line_and_column(tmp_path, text, message):
    (tmp_path / "p.csv").write_text(text)
    with pytest.raises(ArgumentError, match=message):
        Points.from_csv(tmp_path / "p.csv")


def test_a_missing_points_file_is_named(tmp_path):
    with pytest.raises(ArgumentError, match=r"points file .*nope.csv: cannot be read"):
        Points.from_csv(tmp_path / "nope.csv")


@pytest.mark.parametrize("backend", [Backend.IN_PROCESS, Backend.BATCH])
def test_trajectories_in_the_file_equal_the_runs_made_alone(tmp_path, backend):
    run = RunSettings((0.0, 0.5), method="rk4", dt=0.01, output_dt=0.02)
    sweep = Sweep(pendulum(), (Grid("m", 0.0, 1.0, 2), Grid("q0.th", 0.2, 0.4, 2)), run)
    out = tmp_path / "t.h5"
    result = run_sweep(sweep, out, Execution(backend), trajectories=True)
    assert (result.done, result.failed) == (2, 2)
    table = load_sweep(out)
    dyn = derive(pendulum()).compile()
    for i, key in enumerate(table.keys):
        if table.status[i] == "failed":  # the massless bob: no trajectory
            with pytest.raises(SweepFileError, match="no trajectory of run"):
                load_sweep_trajectory(out, key)
            continue
        traj = load_sweep_trajectory(out, key)
        th0 = table.column("q0.th")[i]
        ref = simulate(dyn, (0.0, 0.5), [th0], [0.0], method="rk4", dt=0.01, output_dt=0.02, params={"m": 1.0})
        assert traj.q_names == ("th",) and traj.u_names == ("w",)
        assert np.array_equal(traj.t, ref.t) and len(traj.t) == 26
        assert np.allclose(traj.q, ref.q, rtol=0, atol=1e-14) and np.allclose(traj.u, ref.u, rtol=0, atol=1e-14)
        assert np.allclose(traj.energy, ref.energy, rtol=1e-14, atol=1e-14)
        assert traj.q[-1, 0] == table.column("final.q.th")[i]  # the metrics come from the same samples


def test_trajectories_need_an_output_file():
    sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2),), RunSettings((0.0, 0.2)))
    with pytest.raises(ArgumentError, match="trajectories are kept in the results file"):
        run_sweep(sweep, trajectories=True)
