"""What the C period's supervisor (kane.realtime.native_loop.run_c) does to the threads of its process on the real
clock: the C thread keeps the caller's nice value while the supervisor thread runs 10 higher; with
LoopOptions(pin_cpu=True) the C thread runs alone on the last allowed CPU, the supervisor and the log's writer
process on the others, and the log's counts say so. Read from /proc and the scheduler while the loop runs."""

import json
import os
import threading
import time

import h5py
import numpy as np
import pytest

from kane import realtime as rt


def _run_watching(chain, tmp_path, pin: bool):
    """Start a 0.6 s real-clock C run of the chain on a replayed circle; while it runs, the (nice, CPUs) of its C
    thread (the one thread of the process that Python did not start), of the supervisor thread and of the writer;
    then the log's counts."""
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 1.0), max_force=20.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)
    t = np.arange(700) * 1e-3
    pos = x0 + 0.01 * np.stack([np.sin(t), np.cos(t) - 1, 0 * t], 1)
    dev = rt.Replay(t, pos, 0.01 * np.stack([np.cos(t), -np.sin(t), 0 * t], 1), max_force=20.0,
                    workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    opts = rt.LoopOptions(rate=1000.0, duration=0.6, loop_path=rt.LoopPath.C, pin_cpu=pin, flush_every=100)
    before = set(os.listdir("/proc/self/task"))
    caller_nice = os.getpriority(os.PRIO_PROCESS, 0)
    log = tmp_path / "run.h5"
    loop = rt.RealtimeLoop(cp, dev, q0, u0, options=opts, log=log)
    loop.start()
    seen = None
    deadline = time.monotonic() + 30.0
    while seen is None and loop.running and time.monotonic() < deadline:
        python = {str(th.native_id) for th in threading.enumerate()}
        native = [tid for tid in os.listdir("/proc/self/task") if tid not in before and tid not in python]
        sup = loop._thread.native_id
        if native and os.getpriority(os.PRIO_PROCESS, sup) != caller_nice:  # the supervisor has settled
            c_tid = int(native[0])
            writer = loop.log.writer_pid
            seen = {"c": (os.getpriority(os.PRIO_PROCESS, c_tid), os.sched_getaffinity(c_tid)),
                    "supervisor": (os.getpriority(os.PRIO_PROCESS, sup), os.sched_getaffinity(sup)),
                    "writer": None if writer is None else os.sched_getaffinity(writer)}
        time.sleep(0.005)
    result = loop.join()
    assert result.loop_path == "c" and seen is not None
    with h5py.File(log, "r") as f:
        counts = json.loads(f.attrs["counts"])
    return caller_nice, seen, counts


def test_the_supervisor_runs_ten_nice_values_below_the_c_thread(chain, tmp_path):
    caller_nice, seen, counts = _run_watching(chain, tmp_path, pin=False)
    assert seen["c"][0] == caller_nice
    assert seen["supervisor"][0] == min(19, caller_nice + 10) == counts["supervisor_nice"]
    assert counts["cpus"] is None and seen["c"][1] == os.sched_getaffinity(0)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two CPUs")
def test_pin_cpu_puts_the_c_thread_alone_on_the_last_cpu(chain, tmp_path):
    allowed = sorted(os.sched_getaffinity(0))
    _, seen, counts = _run_watching(chain, tmp_path, pin=True)
    assert seen["c"][1] == {allowed[-1]}
    assert seen["supervisor"][1] == set(allowed[:-1])
    assert seen["writer"] == set(allowed[:-1])
    assert counts["cpus"] == {"c_thread": allowed[-1], "others": allowed[:-1]}
    assert os.sched_getaffinity(0) == set(allowed)  # the calling thread's own CPUs untouched
