"""One writer per output path, and interrupted or killed writers (issue 27, item 9).

Two ``kane simulate`` runs on the same path: the second refuses at start naming the first's process, the first's
file is complete. A writer killed with SIGKILL leaves its lock to the kernel (the next run takes the path) and its
partial file as the one read, whatever the clock says of the older complete file set aside at its start. SIGINT
in the first second of ``kane simulate`` (while it loads and derives) ends with one line and status 130.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.io.output_path import OutputBusyError, OutputLock, claim
from kane.io.trajectory import Trajectory, TrajectoryWriter, load_trajectory

ROOT = Path(__file__).resolve().parents[2]
WRIST = ROOT / "examples" / "spherical_wrist.toml"  # t_end 5 s, output_dt 0.01 s
KANE = Path(sys.executable).with_name("kane")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def _wait_for(predicate, timeout=120.0, proc=None):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc is None or proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_second_writer_of_the_same_path_refuses_in_this_process(tmp_path):
    path = tmp_path / "run.h5"
    first = TrajectoryWriter(path)
    first.open(q_names=("x",), u_names=("v",))
    second = TrajectoryWriter(tmp_path / "." / "run.h5")  # the same file by another spelling
    with pytest.raises(OutputBusyError, match=r"run\.h5 is being written by another kane run \(process "):
        second.open(q_names=("x",), u_names=("v",))
    first.append(0.0, np.array([1.0]), np.array([2.0]))
    first.close()
    assert load_trajectory(path).q[0, 0] == 1.0 and not Path(f"{path}.lock").exists()
    with claim(path):  # the kane command's claim is adopted by its own writer, once
        Trajectory(t=[0.0, 1.0], q=[[0.0], [1.0]], u=[[1.0], [1.0]]).save(path)
    assert load_trajectory(path).n_samples == 2
    nested = tmp_path / "new" / "dir" / "run.h5"  # the command claims a path whose directory is not there yet
    with claim(nested):
        Trajectory(t=[0.0], q=[[0.0]], u=[[0.0]]).save(nested)
    assert sorted(p.name for p in nested.parent.iterdir()) == ["run.h5"]


def test_two_kane_simulate_on_the_same_path_the_second_refuses_and_the_first_completes(tmp_path):
    out = tmp_path / "same.h5"
    first = subprocess.Popen([str(KANE), "simulate", str(WRIST), "-o", str(out), "--t-end", "2"], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lock = Path(f"{out}.lock")
        _wait_for(lambda: lock.exists() and lock.read_text().strip(), proc=first)  # claimed before it derives
        second = CliRunner().invoke(main, ["simulate", str(WRIST), "-o", str(out), "--t-end", "4"])
        stdout, stderr = first.communicate(timeout=300)
    finally:
        first.kill()
    assert second.exit_code == 2, second.output
    assert f"output file {out} is being written by another kane run (process {first.pid}" in \
        " ".join(second.output.split())
    assert first.returncode == 0, stderr
    traj = load_trajectory(out)
    assert traj.status == "completed" and traj.source == str(out)
    np.testing.assert_allclose(traj.t, 0.01 * np.arange(201), atol=1e-12)  # every output time of the first run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["same.h5"]  # no partial, lock or previous file left


_KILLED_WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from kane.io.trajectory import TrajectoryWriter
    w = TrajectoryWriter(sys.argv[1], flush_every=5, flush_seconds=1e9)
    w.open(q_names=("x",), u_names=("v",))
    for k in range(13):
        w.append(0.1 * k, np.array([k]), np.array([-k]))
    print("flushed", flush=True)
    time.sleep(600)
""")


def test_after_a_sigkill_the_partial_is_read_and_the_next_run_takes_the_path(tmp_path):
    path = tmp_path / "X.h5"
    Trajectory(t=np.arange(41.0), q=np.zeros((41, 1)), u=np.zeros((41, 1))).save(path)  # an older complete run
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path)], env=ENV, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "flushed"
        with pytest.raises(OutputBusyError, match=f"process {proc.pid}"):
            OutputLock.acquire(path)
    finally:
        proc.kill()
        proc.wait()
    previous = Path(f"{path}.previous")
    future = time.time() + 3600
    os.utime(previous, (future, future))  # the clock cannot bring the older run back
    traj = load_trajectory(path)
    assert (traj.status, traj.n_samples, traj.source) == ("incomplete", 10, f"{path}.partial")
    np.testing.assert_array_equal(traj.q[:, 0], np.arange(10.0))  # the two flushes of 5; 3 buffered were lost
    assert load_trajectory(previous).n_samples == 41  # kept aside until a later run completes
    assert Path(f"{path}.lock").read_text().split()[0] == str(proc.pid)  # its lock file stayed, its lock did not
    Trajectory(t=[0.0, 1.0], q=[[2.0], [3.0]], u=[[0.0], [0.0]]).save(path)
    assert load_trajectory(path).n_samples == 2 and not previous.exists() and not Path(f"{path}.lock").exists()


@pytest.mark.parametrize("delay", [0.3, 0.6, 1.0])
def test_sigint_in_the_first_second_of_kane_simulate_exits_130_without_a_traceback(tmp_path, delay):
    out = tmp_path / "early.h5"
    proc = subprocess.Popen([str(KANE), "simulate", str(WRIST), "-o", str(out)], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert "interrupted" in stderr and not out.exists()


def test_sigint_while_kane_simulate_derives_exits_130_without_a_traceback(tmp_path):
    out = tmp_path / "deriving.h5"
    proc = subprocess.Popen([str(KANE), "simulate", str(WRIST), "-o", str(out)], env={**ENV, "KANE_CACHE_DIR":
                            str(tmp_path / "cache")}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = Path(f"{out}.lock")
    _wait_for(lambda: lock.exists() and lock.read_text().strip(), proc=proc)  # loaded: it derives and compiles now
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert "interrupted" in stderr and not out.exists()


def test_a_writer_dropped_unclosed_lets_its_path_go(tmp_path):
    path = tmp_path / "dropped.h5"
    w = TrajectoryWriter(path)
    w.open(q_names=("x",), u_names=("v",))
    w.cycle = w  # unreachable only to the cycle collector, as a simulator dropped after an exception can be
    del w
    again = TrajectoryWriter(path)
    again.open(q_names=("x",), u_names=("v",))
    again.append(0.5, np.array([1.0]), np.array([0.0]))
    assert again.close() == path and load_trajectory(path).t.tolist() == [0.5]
