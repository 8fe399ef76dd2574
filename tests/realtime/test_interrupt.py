"""Stopping a run from outside: SIGKILL leaves a readable partial log (a `kane realtime` process), SIGTERM and Ctrl-C
(SIGINT) end the loop with zero force on the device and the whole log saved."""

import _thread
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from kane import realtime as rt

ROOT = Path(__file__).resolve().parents[2]


def _start(out, *clock):
    # the chain for what would be 1000 s: it runs until signalled
    return subprocess.Popen([sys.executable, "-m", "kane.cli", "realtime", "examples/planar_chain.toml", "--couple",
                             "link7:1,0,0", *clock, "--duration", "1000", "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _committed(path) -> int:
    try:  # without HDF5's file lock, so that the writer is never kept out; a read mid-flush is tried again
        with h5py.File(path, "r", locking=False) as f:
            return int(f["n_committed"][0])
    except (OSError, KeyError):
        return 0


def _wait_for(path, proc, rows=2000, seconds=90.0):
    end = time.monotonic() + seconds
    while _committed(path) < rows:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run did not write its first blocks"
        time.sleep(0.1)


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_killed_run_leaves_a_readable_partial_log(tmp_path):
    killed = tmp_path / "killed.h5"
    proc = _start(killed, "--rate", "5000")  # on the real clock the log is written by its writer process
    try:
        _wait_for(Path(str(killed) + ".partial"), proc, rows=1000)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert not killed.exists()
    with h5py.File(str(killed) + ".partial", "r") as f:  # plain h5py reads what a SIGKILL left
        n = int(f["n_committed"][0])
        assert n >= 1000 and n % 1000 == 0 and f.attrs["status"] == "running"
        np.testing.assert_allclose(f["t"][:n], np.arange(n) * 2e-4, rtol=0, atol=1e-9)
        assert np.all(np.isfinite(f["q"][:n])) and np.all(f["sample_status"][:n] == 0)
        assert np.all(f["mode"][:n] == 0)  # the one mode of a system without switching


class _Recording:
    """A simulated hand that keeps every force written to it."""

    def __init__(self, hand):
        self.hand, self.max_force, self.workspace = hand, hand.max_force, hand.workspace
        self.writes = []

    def open(self):
        self.hand.open()

    def read(self, t):
        return self.hand.read(t)

    def write_force(self, t, force):
        self.writes.append(tuple(force))
        self.hand.write_force(t, force)

    def close(self):
        self.hand.close()


def _endless_loop(chain, closed_path, path):
    """The chain pulled by a recording hand on the virtual clock for what would be 1e4 s: it runs until stopped."""
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 2.0), max_force=50.0)
    x0, _ = cp.point_state(0.0, np.zeros(7), np.zeros(7))
    dev = _Recording(rt.SimulatedHand(closed_path(x0, period=1e9, radius=0.3),
                                      workspace=rt.Workspace((-2, -2, -9), (2, 2, 0))))
    options = rt.LoopOptions(rate=1000.0, duration=1e4, clock=rt.ClockMode.VIRTUAL)
    return rt.RealtimeLoop(cp, dev, np.zeros(7), np.zeros(7), options=options, log=path), dev


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_sigterm_ends_with_zero_force_and_the_whole_log_saved(chain, closed_path, tmp_path):
    loop, dev = _endless_loop(chain, closed_path, tmp_path / "terminated.h5")
    before = signal.getsignal(signal.SIGTERM)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))  # run() (main thread) catches it
    timer.start()
    try:
        result = loop.run()
    finally:
        timer.cancel()
    assert result.status == "terminated" and signal.getsignal(signal.SIGTERM) is before  # the handler restored
    n = result.deadlines.periods
    assert n > 100 and len(dev.writes) == n + 1 and dev.writes[-1] == (0.0, 0.0, 0.0)
    with h5py.File(tmp_path / "terminated.h5", "r") as f:  # the whole log, renamed to its final name
        stats = json.loads(f.attrs["stats"])
        assert f.attrs["status"] == "terminated" and int(f["n_committed"][0]) == stats["periods"] == n
        assert f["t"].shape == (n,)


def test_ctrl_c_ends_with_zero_force_and_the_log_saved(chain, closed_path, tmp_path):
    loop, dev = _endless_loop(chain, closed_path, tmp_path / "c.h5")
    lines = []
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))  # Ctrl-C, as the terminal sends it
    timer.start()
    try:
        result = loop.run(progress=lines.append, every=0.1)
    finally:
        timer.cancel()
    assert result.status == "interrupted"
    n = result.deadlines.periods
    assert n > 100 and len(dev.writes) == n + 1  # one force per period, then the closing zero
    assert max(abs(f) for f in dev.writes[n - 1]) > 0.0 and dev.writes[-1] == (0.0, 0.0, 0.0)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert f.attrs["status"] == "interrupted" and int(f["n_committed"][0]) == n == f["t"].shape[0]
    # the live status line, every 0.1 s while it ran
    assert lines and all(" periods " in line and " missed " in line for line in lines)
