"""The HDF5 results file survives SIGKILL at any moment (issue 27): a sweep killed inside an append (where HDF5's
own bookkeeping is left torn: "len not positive after adjustment for EOA" on every later write, before the fix)
or shortly after its file first grows resumes, keeps every committed row without running it again, and ends
with the arrays of an uninterrupted sweep."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from kane.sweep import Grid, Metric, Metrics, RunSettings, Sweep, load_sweep, run_sweep

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _pendulum import pendulum  # noqa: E402

# each run logs its point (invocation, m, th0) before its row is appended; KILL_AT_WRITE=N kills the process
# (SIGKILL, no clean-up) at the N-th write into an HDF5 dataset: inside an append, after its resize
_SCRIPT = """
import os, signal, sys, time
import h5py
sys.path.insert(0, {here!r})
from _pendulum import pendulum
from kane.sweep import Grid, Metric, Metrics, RunSettings, Sweep, run_sweep

kill_at, writes = int(os.environ.get("KILL_AT_WRITE", "0")), [0]
setitem = h5py.Dataset.__setitem__

def counted(self, key, value):
    writes[0] += 1
    if writes[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    setitem(self, key, value)

h5py.Dataset.__setitem__ = counted

def last(traj):
    time.sleep(0.02)  # every run lasts at least 20 ms: the kill after the file grows lands before the sweep ends
    with open(os.environ["RUN_LOG"], "a") as log:
        log.write(f"{{os.environ['INVOCATION']}} {{float(traj.params['m'])!r}} {{float(traj.q[0, 0])!r}}\\n")
    return float(traj.q[-1, 0])

sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 6), Grid("q0.th", 0.1, 0.8, 6)), RunSettings((0.0, 0.01)),
              Metrics(functions=(Metric("last", last),)))
r = run_sweep(sweep, sys.argv[1])
print(r.done, r.skipped, r.failed)
"""


def _reference_last(traj):
    return float(traj.q[-1, 0])


def _by_point(table):
    order = np.lexsort((table.column("q0.th"), table.column("m")))
    return table.params[order], table.metrics[order], [table.status[i] for i in order]


def test_a_sweep_killed_inside_appends_and_after_its_file_grows_resumes_with_every_committed_row(tmp_path):
    script, out, log = tmp_path / "sweep.py", tmp_path / "sweep.h5", tmp_path / "runs.log"
    script.write_text(_SCRIPT.format(here=str(HERE)))
    env = {**os.environ, "RUN_LOG": str(log), "OPENBLAS_NUM_THREADS": "1"}
    rng = np.random.default_rng(27)
    # kills: inside the 2nd append (6 writes per append), inside a later one of the next process (after its
    # rewrite of the committed rows), then at a seeded moment after the file has grown
    moments = [("write", 8), ("write", int(rng.integers(13, 30))), ("grown", float(rng.uniform(0.0, 0.2)))]
    committed = []
    for k, (kind, when) in enumerate(moments):
        env.update(INVOCATION=str(k), KILL_AT_WRITE=str(when if kind == "write" else 0))
        proc = subprocess.Popen([sys.executable, str(script), str(out)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        if kind == "grown":
            size = out.stat().st_size
            deadline = time.monotonic() + 120
            while proc.poll() is None and out.stat().st_size <= size and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(when)
            proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == -signal.SIGKILL, err
        committed.append(set(load_sweep(out).keys))  # the committed rows stay readable after each kill
    assert 0 < len(committed[0]) <= len(committed[1]) <= len(committed[2]) < 36
    env.update(INVOCATION="final", KILL_AT_WRITE="0")
    final = subprocess.run([sys.executable, str(script), str(out)], env=env, capture_output=True, text=True)
    assert final.returncode == 0, final.stderr  # before the fix: OSError "len not positive after ... EOA"
    done, skipped, failed = map(int, final.stdout.split())
    assert (done + skipped, skipped, failed) == (36, len(committed[2]), 0)
    table = load_sweep(out)
    assert len(table) == 36 and len(set(table.keys)) == 36 and committed[2] <= set(table.keys)
    # no committed row ran again: every point run after kill k is outside what kill k left committed
    runs = [line.split() for line in log.read_text().splitlines()]
    point_key = {(float(m), float(th)): key for key, m, th in zip(table.keys, table.column("m"),
                                                                  table.column("q0.th"))}
    for k, keys in enumerate(committed):
        later = [point_key[(float(m), float(th))] for inv, m, th in runs if inv != str(k) and
                 (inv == "final" or int(inv) > k)]
        assert not keys & set(later)
    # the same arrays as a sweep never interrupted (compared exactly, point by point)
    reference = run_sweep(Sweep(pendulum(), (Grid("m", 1.0, 2.0, 6), Grid("q0.th", 0.1, 0.8, 6)),
                                RunSettings((0.0, 0.01)), Metrics(functions=(Metric("last", _reference_last),))),
                          tmp_path / "reference.h5").table
    a, b = _by_point(table), _by_point(reference)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]


def test_a_version_1_file_is_read_and_resumed_into_version_2(tmp_path):
    import h5py

    from kane.sweep import describe

    out = tmp_path / "v1.h5"
    run_sweep(Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2),), RunSettings((0.0, 0.05))), out)
    with h5py.File(out, "r+") as f:  # the layout before the warnings column
        del f["warnings"]
        f.attrs["version"] = 1
    old = load_sweep(out)
    assert len(old) == 2 and old.warnings == () and "warnings: not recorded (a version 1 file)" in describe(out)
    result = run_sweep(Sweep(pendulum(), (Grid("m", 1.0, 2.0, 3),), RunSettings((0.0, 0.05))), out)
    assert (result.done, result.skipped) == (1, 2)  # m = 1 and 2 kept from the version 1 file
    with h5py.File(out, "r") as f:
        assert f.attrs["version"] == 2 and list(f["warnings"].asstr()[:]) == ["{}"] * 3
    new = load_sweep(out)
    assert np.array_equal(new.sorted_by(old.keys).params, old.params)
    assert np.array_equal(new.sorted_by(old.keys).metrics, old.metrics)
