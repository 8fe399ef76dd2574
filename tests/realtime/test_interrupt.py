"""Stopping a run from outside: SIGKILL leaves a readable partial log, SIGTERM and Ctrl-C (SIGINT) end the loop with
zero force on the device and the whole log saved."""

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
def test_killed_and_terminated_runs_leave_readable_logs(tmp_path):
    killed, terminated = tmp_path / "killed.h5", tmp_path / "terminated.h5"
    # on the real clock (5 kHz) the log is written by its writer process; on the virtual one by a thread
    a, b = _start(killed, "--rate", "5000"), _start(terminated, "--virtual-clock")
    try:
        _wait_for(Path(str(killed) + ".partial"), a)
        _wait_for(Path(str(terminated) + ".partial"), b)
        a.send_signal(signal.SIGKILL)
        b.send_signal(signal.SIGTERM)
        a.wait(30)
        out, err = b.communicate(timeout=30)
    finally:
        a.kill()
        b.kill()
    assert a.returncode == -signal.SIGKILL
    assert not killed.exists()
    with h5py.File(str(killed) + ".partial", "r") as f:  # plain h5py reads what a SIGKILL left
        n = int(f["n_committed"][0])
        assert n >= 1000 and n % 1000 == 0 and f.attrs["status"] == "running"
        np.testing.assert_allclose(f["t"][:n], np.arange(n) * 2e-4, rtol=0, atol=1e-9)
        assert np.all(np.isfinite(f["q"][:n])) and np.all(f["sample_status"][:n] == 0)
    assert b.returncode == 0, err
    assert "status: terminated" in out and "missed deadlines: " in out
    with h5py.File(terminated, "r") as f:  # the whole log, renamed to its final name
        n = int(f["n_committed"][0])
        stats = json.loads(f.attrs["stats"])
        assert f.attrs["status"] == "terminated" and n == stats["periods"] > 1000 and f["t"].shape == (n,)


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


def test_ctrl_c_ends_with_zero_force_and_the_log_saved(chain, closed_path, tmp_path):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 2.0), max_force=50.0)
    x0, _ = cp.point_state(0.0, np.zeros(7), np.zeros(7))
    dev = _Recording(rt.SimulatedHand(closed_path(x0, period=1e9, radius=0.3),
                                      workspace=rt.Workspace((-2, -2, -9), (2, 2, 0))))
    options = rt.LoopOptions(rate=1000.0, duration=1e4, clock=rt.ClockMode.VIRTUAL)
    loop = rt.RealtimeLoop(cp, dev, np.zeros(7), np.zeros(7), options=options, log=tmp_path / "c.h5")
    lines = []
    timer = threading.Timer(0.5, _thread.interrupt_main)  # Ctrl-C, as the terminal sends it
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
