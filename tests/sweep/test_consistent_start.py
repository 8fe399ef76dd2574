"""Each run of a sweep starts on its constraints at its own parameters; warnings made on workers reach the
client's summary and the file; ``kane info`` describes a sweep file (issue 26 item 9)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane import joints as J
from kane.cli import main
from kane.io.model_file import load_model
from kane.sweep import (Backend, Execution, Grid, Metric, Metrics, RunSettings, Sweep, SweepResult, describe,
                        load_sweep, load_sweep_trajectory, run_sweep)
from kane.sweep import command as sweep_command_module

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _pendulum import pendulum, warn_when_heavy  # noqa: E402

DISK = str(HERE.parents[1] / "examples" / "rolling_disk.toml")


def test_the_radius_sweep_starts_on_the_floor_at_every_radius(tmp_path):
    out = tmp_path / "disk.h5"
    run = CliRunner().invoke(main, ["sweep", DISK, "--grid", "r=0.2:0.6:3", "--t-end", "0.05", "--in-process",
                                    "--trajectories", "-o", str(out)])
    assert run.exit_code == 0, run.output
    # the file's q0 (the centre at the default r = 0.4) started off the floor with an InconsistentStartWarning
    assert run.output.strip().splitlines()[-1] == "runs: 3 done, 0 skipped, 0 failed"
    assert "warnings" not in run.output
    table = load_sweep(out)
    assert table.warning_counts() == {} and len(table.warnings) == 3
    lm = load_model(DISK)
    dyn = lm.derive().compile()
    given = np.array([float(lm.q0[n]) for n in dyn.q_names])
    for key, r in zip(table.keys, table.column("r")):
        traj = load_sweep_trajectory(out, key)
        params = {**{k: float(v) for k, v in lm.parameters.items()}, "r": r}
        assert abs(traj.q[0, 2] - r) < 1e-10  # the centre at height r: the disk upright on the floor
        assert np.max(np.abs(dyn.holonomic_rows(0.0, traj.q[0], params)[0])) < 1e-10
        assert np.array_equal(np.delete(traj.q[0], 2), np.delete(given, 2))  # only the height moved
    assert sorted(table.column("r")) == pytest.approx([0.2, 0.4, 0.6], abs=1e-15)
    info = CliRunner().invoke(main, ["info", str(out)])
    assert info.exit_code == 0, info.output
    text = " ".join(info.output.replace("│", " ").split())  # the table's rows: name, then value
    assert "points 3 (3 done, 0 failed)" in text and "parameters (1) r" in text
    assert "warnings none" in text


def _four_bar():
    """Crank 1, coupler 2, rocker 1.5 [m] hinged about z, the rocker's tip closed on the ground at (d, 0, 0)."""
    s = kane.System("four_bar")
    d = s.parameter("d", 2.0)
    parent, point = "ground", (0, 0, 0)
    for i, (length, q0) in enumerate(((1.0, 1.2), (2.0, -0.6), (1.5, -1.8))):
        s.add_body(f"l{i}", mass=1.0, com=(length / 2, 0, 0), inertia=(1e-3, length**2 / 12, length**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"], q0=q0)
        parent, point = f"l{i}", (length, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (d, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return s


@pytest.mark.parametrize("backend", [Backend.IN_PROCESS, Backend.BATCH])
def test_a_start_that_cannot_be_assembled_is_a_failed_run_with_the_reason(tmp_path, backend):
    # d = 10 m is beyond the 4.5 m the links reach: no configuration closes the loop
    sweep = Sweep(_four_bar(), (Grid("d", 2.0, 10.0, 2),), RunSettings((0.0, 0.05), "rk4", dt=0.01, output_dt=0.01),
                  dependent=("u2", "u3"))
    result = run_sweep(sweep, tmp_path / "fb.h5", Execution(backend), trajectories=True)
    table = result.table
    assert (result.done, result.failed) == (1, 1) and table.status == ("done", "failed")
    assert table.messages[1].startswith("AssemblyError: the start q0 cannot be made consistent with the "
                                        "constraints at this run's parameters (d=10)")
    # the run at d = 2 closed its loop at the start: the rocker's tip on the ground pivot
    q1, q2, q3 = load_sweep_trajectory(tmp_path / "fb.h5", table.keys[0]).q[0]
    tip = (np.cos(q1) + 2 * np.cos(q1 + q2) + 1.5 * np.cos(q1 + q2 + q3),
           np.sin(q1) + 2 * np.sin(q1 + q2) + 1.5 * np.sin(q1 + q2 + q3))
    assert tip == pytest.approx((2.0, 0.0), abs=1e-10) and q1 == 1.2  # the crank (independent) kept
    text = describe(tmp_path / "fb.h5")
    assert "points: 2 (1 done, 1 failed)" in text
    assert "1 x AssemblyError: the start q0 cannot be made consistent" in text


def test_a_warning_on_a_worker_reaches_the_summary_the_file_and_kane_info(tmp_path):
    out = tmp_path / "w.h5"
    # m = 1, 4/3, 5/3, 2 [kg]: the metric warns (on the Dask worker process) in the runs of 5/3 and 2
    sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 4),), RunSettings((0.0, 0.2)),
                  Metrics(functions=(Metric("swing", warn_when_heavy),)))
    result = run_sweep(sweep, out, Execution(Backend.DASK, workers=1, threads_per_worker=1))
    assert (result.done, result.warnings) == (4, {"RuntimeWarning": 2})
    table = load_sweep(out)
    assert [w for w in table.warnings] == [{}, {}, {"RuntimeWarning": 1}, {"RuntimeWarning": 1}]
    assert table.column("m")[2:].min() > 1.5 and table.column("m")[:2].max() < 1.5
    info = CliRunner().invoke(main, ["info", str(out)])
    assert info.exit_code == 0, info.output
    text = " ".join(info.output.replace("│", " ").split())  # the table's rows: name, then value
    assert "warnings RuntimeWarning 2 (in 2 runs)" in text and "points 4 (4 done, 0 failed)" in text


def test_in_process_and_in_memory_the_warnings_are_counted_per_run():
    sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 4),), RunSettings((0.0, 0.2)),
                  Metrics(functions=(Metric("swing", warn_when_heavy),)))
    result = run_sweep(sweep)
    assert result.warnings == {"RuntimeWarning": 2} and result.table.warning_counts() == {"RuntimeWarning": 2}
    assert result.table.warnings == ({}, {}, {"RuntimeWarning": 1}, {"RuntimeWarning": 1})
    again = run_sweep(sweep)  # the same warnings again: none is lost to Python's once-per-location registry
    assert again.warnings == {"RuntimeWarning": 2}


def test_the_closing_lines_count_the_warnings_per_kind(tmp_path, monkeypatch):
    def fake_run_sweep(*args, **kwargs):
        return SweepResult(None, 3, 1, 2, tmp_path / "s.h5", {"InconsistentStartWarning": 3, "RuntimeWarning": 1})

    monkeypatch.setattr(sweep_command_module, "run_sweep", fake_run_sweep)
    text = sweep_command_module.sweep_command(load_model(DISK), str(tmp_path / "s.h5"), grids=("r=0.2:0.6:3",),
                                              in_process=True)
    assert text.splitlines() == ["warnings raised by the runs: InconsistentStartWarning 3, RuntimeWarning 1",
                                 "runs: 3 done, 2 skipped, 1 failed"]
