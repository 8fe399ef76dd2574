"""Stopping a run from outside: SIGKILL leaves a readable partial log (a `kane realtime` process), SIGTERM and Ctrl-C
(SIGINT) end the loop with zero force on the device and the whole log saved."""

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

import kane
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


def _wait_unlocked(path, seconds=30.0):
    """Until ``path`` opens for reading with HDF5's lock: the log's writer runs in a session of its own, so a
    SIGKILL of the loop's process leaves it to finish the block in hand (and exit at the end of its input)."""
    end = time.monotonic() + seconds
    while True:
        try:
            with h5py.File(path, "r"):
                return
        except OSError:
            assert time.monotonic() < end, f"{path} stayed locked"
            time.sleep(0.05)


def _writers(partial) -> list:
    """The ids of the log writer processes (kane.realtime.log_writer) still writing ``partial``."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or one that just ended
            continue
        if any(a.endswith(b"log_writer.py") for a in argv) and str(partial).encode() in argv:
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="POSIX signals, /proc")
def test_a_killed_run_leaves_a_readable_partial_log(tmp_path):
    # The loop hands the writer a block once at least flush_every (1000) rows have their energies, and it hands
    # all such rows, which run ahead of the boundary by the batches computed in the free time (and a loop that
    # lags a whole ring behind catches up to its newest row): blocks are >= 1000 rows, not multiples of 1000, so
    # the committed count is any number >= 1000 (1033 was seen). What holds on any machine: the file is a prefix
    # of the run, every row in it is complete and consistent, no row past the committed count was written.
    killed = tmp_path / "killed.h5"
    partial = Path(str(killed) + ".partial")
    proc = _start(killed, "--rate", "5000")  # on the real clock the log is written by its writer process
    try:
        _wait_for(partial, proc, rows=1000)
        seen = _committed(partial)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert not killed.exists()
    end = time.monotonic() + 30.0  # the writer, in its own session, commits every block it was handed, then ends
    while _writers(partial):
        assert time.monotonic() < end, f"the log's writer of {partial} did not end"
        time.sleep(0.05)
    _wait_unlocked(partial)
    with h5py.File(partial, "r") as f:  # plain h5py reads what a SIGKILL left
        n = int(f["n_committed"][0])
        assert n >= seen >= 1000 and f.attrs["status"] == "running"
        assert all(f[name].shape[0] >= n for name in ("t", "q", "u", "energy", "sample_status", "mode"))
        # the first n rows: the run's periods 0..n-1 at 5 kHz, complete (energies computed before the hand-over)
        np.testing.assert_allclose(f["t"][:n], np.arange(n) * 2e-4, rtol=0, atol=1e-9)
        assert np.all(np.isfinite(f["q"][:n])) and np.all(np.isfinite(f["energy"][:n]))
        assert np.all(np.isfinite(f["force"][:n])) and np.all(f["sample_status"][:n] == 0)
        assert np.all(f["mode"][:n] == 0)  # the one mode of a system without switching
        # past the committed count: the NaN reserve, never a row of a block that was not committed
        assert np.all(np.isnan(f["t"][n:])) and np.all(np.isnan(f["q"][n:]))


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


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals and sessions")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_whole_process_group_saves_the_whole_log(tmp_path, signum):
    # a terminal's Ctrl-C (SIGINT) and `timeout` (SIGTERM) signal every process of the foreground group: the log's
    # writer process must not die of it before the loop has handed it the last rows
    out = tmp_path / "group.h5"
    proc = subprocess.Popen([sys.executable, "-m", "kane.cli", "realtime", "examples/planar_chain.toml", "--couple",
                             "link7:1,0,0", "--rate", "5000", "--duration", "1000", "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(Path(str(out) + ".partial"), proc, rows=1000)
        os.killpg(proc.pid, signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    status = "interrupted" if signum == signal.SIGINT else "terminated"
    assert proc.returncode == 0, stderr
    assert f"status: {status} " in stdout and f"log: {out}" in stdout
    with h5py.File(out, "r") as f:  # renamed to its final name, every period in it
        n = json.loads(f.attrs["stats"])["periods"]
        assert f.attrs["status"] == status and n > 1000 and int(f["n_committed"][0]) == n == f["t"].shape[0]
        np.testing.assert_allclose(f["t"][:], np.arange(n) * 2e-4, rtol=0, atol=1e-9)


def test_a_writer_process_that_dies_hands_its_rows_back_to_the_loop(chain, closed_path, tmp_path):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 2.0), max_force=50.0)
    x0, _ = cp.point_state(0.0, np.zeros(7), np.zeros(7))
    hand = rt.SimulatedHand(closed_path(x0, period=1e9, radius=0.3), workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    options = rt.LoopOptions(rate=2000.0, duration=1e4, flush_every=500)  # the real clock: a writer process
    loop = rt.RealtimeLoop(cp, hand, np.zeros(7), np.zeros(7), options=options, log=tmp_path / "w.h5")
    writer = loop.log.writer_pid
    assert writer is not None
    loop.start()
    try:
        while loop.log.n_committed < 1000:
            assert loop.join(0.05) is None or not loop.running
        os.kill(writer, signal.SIGKILL)
        killed_at = loop.log.n_committed
        while loop.log.n_rows < killed_at + 3000:  # more than the ring holds (8 blocks of 500) after the kill
            loop.join(0.05)
    finally:
        loop.stop()
    result = loop.join()
    assert "the log's writer process ended early" in result.status
    n = result.deadlines.periods
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert f.attrs["status"].startswith("stopped; the log's writer process ended early")
        assert int(f["n_committed"][0]) == n == f["t"].shape[0]  # no row lost
        np.testing.assert_allclose(f["t"][:], np.arange(n) * 5e-4, rtol=0, atol=1e-9)
        assert np.all(np.isfinite(f["q"][:])) and np.all(np.isfinite(f["energy"][:]))


def test_a_device_that_never_opens_on_the_real_clock_closes_the_log_at_once(wall, tmp_path):
    # the log (with its writer process) exists before the device opens; closing it with no row must not wait
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(100.0, 1.0))
    dev = rt.UdpDevice(0, connect_timeout=0.05)
    loop = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=rt.LoopOptions(duration=1.0), log=tmp_path / "none.h5")
    assert loop.log.writer_pid is not None
    loop.start()
    end = time.monotonic() + 30.0
    while loop.running and time.monotonic() < end:
        time.sleep(0.05)
    assert not loop.running, "closing the empty log hung"
    with pytest.raises(kane.KaneError, match="no valid state packet"):
        loop.join()
    with h5py.File(tmp_path / "none.h5", "r") as f:
        assert f.attrs["status"].startswith("failed: the device did not open: UdpDevice: no valid state packet")
        assert f["t"].shape == (0,)
