"""Running sweeps: metrics against direct runs, failing runs recorded, resuming after a kill, Dask = in-process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kane import derive
from kane.simulate import Event, simulate
from kane.sweep import (Backend, Execution, Grid, Metric, Metrics, RunSettings, SchedulerError, Sweep, load_sweep,
                        load_sweep_trajectory, run_sweep)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _pendulum import pendulum, swing  # noqa: E402

DOWN = Event("down", lambda t, q, u: q[0] + np.pi / 2, direction=-1)  # passes straight down (th = -pi/2)


def _sweep(m_values=(0.5, 2.0), g=(4.0, 9.81, 2)):
    return Sweep(pendulum(), (Grid("m", m_values[0], m_values[1], 2), Grid("g", *g)),
                 RunSettings((0.0, 1.5), rtol=1e-9, atol=1e-11, output_dt=0.01, events=(DOWN,)),
                 Metrics(functions=(Metric("swing", swing),)))


def test_in_process_metrics_equal_direct_runs_and_physics():
    result = run_sweep(_sweep())
    table = result.table
    assert (result.done, result.failed, result.skipped) == (4, 0, 0)
    dyn = derive(pendulum()).compile()
    for i in range(4):
        m, g = table.column("m")[i], table.column("g")[i]
        traj = simulate(dyn, (0.0, 1.5), [0.0], [0.0], rtol=1e-9, atol=1e-11, output_dt=0.01,
                        events=[DOWN], params={"m": m, "g": g})
        assert table.column("final.q.th")[i] == traj.q[-1, 0]
        assert table.column("max.u.w")[i] == np.max(np.abs(traj.u[:, 0]))
        # released horizontal, the point mass at 1 m reaches the bottom with w^2 = 2 g (energy) ...
        assert table.column("max.u.w")[i] == pytest.approx(np.sqrt(2 * g), rel=1e-4)  # sampled every 0.01 s
        # ... and energy is kept: the drift is tiny next to m g (1 m drop)
        assert table.column("energy_drift")[i] < 1e-7 * m * g
    # the time to reach the bottom scales as 1/sqrt(g) and does not depend on the mass
    down = table.column("event.down")
    assert down[0] == pytest.approx(down[2], rel=1e-9) and down[1] == pytest.approx(down[3], rel=1e-9)
    assert down[0] / down[1] == pytest.approx(np.sqrt(9.81 / 4.0), rel=1e-6)


def test_a_failing_point_is_recorded_with_its_message_and_the_others_complete(tmp_path):
    result = run_sweep(_sweep(m_values=(0.0, 1.0)), tmp_path / "s.h5")
    table = load_sweep(tmp_path / "s.h5")
    assert (result.done, result.failed, len(table)) == (2, 2, 4)
    for i in range(4):
        if table.column("m")[i] == 0.0:  # a massless bob: the mass matrix is singular
            assert table.status[i] == "failed"
            assert "cannot be evaluated at the initial state" in table.messages[i]
            assert table.column("t_final")[i] == 0.0 and table.column("final.q.th")[i] == 0.0  # last good state
            assert np.isnan(table.column("swing")[i])
        else:
            assert table.status[i] == "done" and table.messages[i] == ""
            assert table.column("max.u.w")[i] == pytest.approx(np.sqrt(2 * table.column("g")[i]), rel=1e-4)


_SCRIPT = """
import json, os, signal, sys
sys.path.insert(0, {here!r})
from _pendulum import pendulum
from kane.sweep import Grid, Metric, Metrics, RunSettings, Sweep, run_sweep

calls = [0]

def swing_or_die(traj):
    calls[0] += 1
    if calls[0] == int(os.environ.get("KILL_AT_RUN", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
    return float(traj.q[:, 0].max() - traj.q[:, 0].min())

sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2), Grid("q0.th", 0.1, 0.8, 4)), RunSettings((0.0, 0.5)),
              Metrics(functions=(Metric("swing", swing_or_die),)))
r = run_sweep(sweep, sys.argv[1])
print(json.dumps([r.done, r.skipped, r.failed, calls[0]]))
"""


def test_a_killed_sweep_resumes_computing_only_the_missing_runs(tmp_path):
    script, out = tmp_path / "sweep.py", tmp_path / "sweep.h5"
    script.write_text(_SCRIPT.format(here=str(HERE)))
    env = {**os.environ, "KILL_AT_RUN": "4", "OPENBLAS_NUM_THREADS": "1"}
    first = subprocess.run([sys.executable, str(script), str(out)], env=env, capture_output=True, text=True)
    assert first.returncode == -9, first.stderr  # killed during its 4th run
    assert len(load_sweep(out)) == 3
    env["KILL_AT_RUN"] = "0"
    second = subprocess.run([sys.executable, str(script), str(out)], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    done, skipped, failed, calls = json.loads(second.stdout.strip().splitlines()[-1])
    assert (done, skipped, failed, calls) == (5, 3, 0, 5)
    table = load_sweep(out)
    assert len(table) == 8 and len(set(table.keys)) == 8 and set(table.status) == {"done"}
    assert sorted(zip(table.column("m"), table.column("q0.th"))) == sorted(
        (m, th) for m in (1.0, 2.0) for th in np.linspace(0.1, 0.8, 4))


def test_dask_local_cluster_with_two_workers_gives_the_in_process_metrics(tmp_path):
    sweep = _sweep(g=(4.0, 9.81, 3))
    local = run_sweep(sweep, tmp_path / "l.h5", trajectories=True)
    dask = run_sweep(sweep, tmp_path / "d.h5", Execution(Backend.DASK, workers=2, threads_per_worker=1),
                     trajectories=True)
    assert (dask.done, dask.failed) == (6, 0)
    assert dask.table.keys == local.table.keys
    assert np.array_equal(dask.table.params, local.table.params)
    assert np.array_equal(dask.table.metrics, local.table.metrics, equal_nan=True)
    for key in local.table.keys:  # the trajectories the workers sent back, sample for sample
        a, b = load_sweep_trajectory(tmp_path / "l.h5", key), load_sweep_trajectory(tmp_path / "d.h5", key)
        assert len(a.t) == 151 and np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)


def test_an_unreachable_scheduler_fails_with_its_address():
    address = "tcp://127.0.0.1:9"
    with pytest.raises(SchedulerError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s"):
        run_sweep(_sweep(), execution=Execution(Backend.DASK, scheduler=address, connect_timeout=1.0))


def test_a_sweep_point_through_run_equals_simulate_of_the_same_point():
    from kane.sweep.execute import prepare, run_task

    sweep = _sweep()
    plan = prepare(sweep)
    opts = sweep.run.options  # the one RunOptions every run of the sweep goes through
    assert (opts.t_end, opts.rtol, opts.atol, opts.output_dt, opts.events) == (1.5, 1e-9, 1e-11, 0.01, (DOWN,))
    task = plan.tasks[3]
    row = run_task(task, plan.equations, plan.model_hash, sweep.run, sweep.metrics, len(plan.columns), keep=True)
    assert row[1] == "done"
    t, q, u, energy = row[5]
    ref = simulate(derive(pendulum()).compile(), (0.0, 1.5), list(task.q0), list(task.u0), rtol=1e-9,
                   atol=1e-11, output_dt=0.01, events=[DOWN], params=task.params)
    assert task.params == {"m": 2.0, "g": 9.81} and len(t) == len(ref.t) == 151  # the 0.01 s grid to 1.5 s
    for mine, theirs in ((t, ref.t), (q, ref.q), (u, ref.u), (energy, ref.energy)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
