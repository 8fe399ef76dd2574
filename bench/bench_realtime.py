"""Real-time loop benchmark (issue 14): the 7-link chain of models.py, a simulated hand circling its tip through
the virtual coupler, on the wall clock.

Printed: (1) ``--long`` s (default 60) at 1 kHz with the compiled stepper: missed deadlines (a period whose work
ends after the next period's start), p50 / p99 / max compute time per period (device read included: the simulated
hand is integrated on Python floats each period; the coupler is one C call into a preallocated buffer; the log's
ring buffer is handed to a writer process in the free time of the periods) and the wake-up lateness (sleep, then
spin the last ``LoopOptions.spin`` = 1 ms); (2) the highest rate of 1, 2, 5, 10, 20 and 50 kHz run for ``--short``
s (default 10) with no missed deadline; (3) the same 1 kHz loop with the Python Simulator as the engine, and the
ratio of p50 compute times compiled / Python; (4) the machine's floor at 10 kHz: kane's loop against a C loop
(bench/_floor.py) on the same schedule that only waits and computes for kane's p50 compute time, in ``--pairs``
(default 10) interleaved pairs of 1 s runs.
With ``--c-period`` (issue 32) only: the period in C in a native thread (``LoopPath.C``; the device a Replay of the
same circle, sampled ahead into the C ring; the log drained into the writer process) against the floor loop at 1 kHz
and 10 kHz, ``--pairs`` interleaved pairs of 1 s each, the floor working kane's p50 compute time: misses of each,
kane's p99 compute per period, and where kane's misses come from (a wake-up already late by a period: the
scheduler's, the floor's kind; or a wake-up in time and work that ran long: interrupted inside the period).
With ``--pin``, kane's C thread runs alone on the last CPU (LoopOptions.pin_cpu) and the floor loop on the same CPU.
With ``--c-rates``: the highest of the rates run ``--short`` s with no miss, C period and floor.
With ``--c-cpu``: the CPU time of each thread of kane's process (the C thread, the supervisor thread, others) and
of the log's writer process while a ``--short`` s C-period run at 1 and 10 kHz lasts (Linux /proc), per second.
Run: ``python bench/bench_realtime.py [--long 60] [--short 10] [--pairs 10] [--quick] [--c-period] [--c-rates]
[--c-cpu] [--pin]`` (``--quick``: 5 s, 2 s and 3 pairs).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import kane
from kane import realtime as rt
from kane.codegen.c_backend import compiler_available
from kane.realtime.command import circle_path

from _floor import floor_run

from models import pendulum_chain_kane

__all__ = ["run", "one_run", "c_period_pairs"]

RATES = (1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0)


def _chain():
    s = pendulum_chain_kane(7)
    port = rt.add_coupler(s, "B6", (0.0, 0.0, -1.0))
    return kane.derive(s).compile(), port


def one_run(dyn, port, rate: float, duration: float, engine=rt.Engine.AUTO, log=None, priority=0) -> rt.LoopResult:
    """One wall-clock run of the chain at ``rate`` [Hz] for ``duration`` [s]; coupler K = 1000 N/m, B = K T."""
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 1000.0 / rate), max_force=20.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)
    hand = rt.SimulatedHand(circle_path(x0), max_force=20.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    opts = rt.LoopOptions(rate=rate, duration=duration, engine=engine, flush_every=max(1000, int(rate / 4)),
                          priority=priority, spin=min(1e-3, 0.3 / rate) if priority else 1e-3)
    return rt.RealtimeLoop(cp, hand, q0, u0, options=opts, log=log).run()


def c_run(dyn, port, rate: float, duration: float, log=None, priority=0, pin=False) -> rt.LoopResult:
    """One wall-clock run of the chain with the period in C: the hand's circle replayed (sampled ahead); ``pin``:
    LoopOptions.pin_cpu."""
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 1000.0 / rate), max_force=20.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)
    path = circle_path(x0)
    t = np.arange(int(round(duration * rate)) + 1) / rate
    pos, vel = (np.array([path(a)[i] for a in t]) for i in (0, 1))
    hand = rt.Replay(t, pos, vel, max_force=20.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    opts = rt.LoopOptions(rate=rate, duration=duration, flush_every=max(1000, int(rate / 4)), priority=priority,
                          spin=min(1e-3, 0.3 / rate) if priority else 1e-3, loop_path=rt.LoopPath.C, pin_cpu=pin)
    result = rt.RealtimeLoop(cp, hand, q0, u0, options=opts, log=log).run()
    assert result.loop_path == "c", result
    return result


def _miss_causes(path, period: float) -> tuple[int, int]:
    """(misses whose wake-up was already late by more than half a period, misses whose work ran long) of a log."""
    import h5py

    with h5py.File(path, "r") as f:
        late, comp = f["lateness"][()], f["compute_time"][()]
    missed = late + comp > period
    return int(np.count_nonzero(missed & (late > comp))), int(np.count_nonzero(missed & (late <= comp)))


def c_period_pairs(dyn, port, pairs: int = 10, priority: int = 0, pin: bool = False) -> dict:
    """At 1 and 10 kHz: ``pairs`` interleaved 1 s runs of the C period and of the floor loop (its work kane's p50);
    with ``pin`` kane's C thread alone on the last CPU (LoopOptions.pin_cpu) and the floor loop on the same CPU."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        c_run(dyn, port, 1000.0, 0.2, log=Path(tmp) / "warm.h5", priority=priority)  # the C library built
        for rate in (1000.0, 10000.0):
            spin = min(1e-3, 0.3 / rate) if priority else 1e-3
            kane_missed, floor_missed, python_missed, p99, causes = [], [], [], [], [0, 0]
            for i in range(pairs):
                log = Path(tmp) / f"c{rate:g}_{i}.h5"
                r = c_run(dyn, port, rate, 1.0, log=log, priority=priority, pin=pin)
                kane_missed.append(r.deadlines.missed)
                p99.append(r.deadlines.compute_p99)
                late, work = _miss_causes(log, 1.0 / rate)
                causes[0] += late
                causes[1] += work
                floor_missed.append(floor_run(rate, 1.0, spin, r.deadlines.compute_p50, priority, pin_cpu=pin)[0])
                py = one_run(dyn, port, rate, 1.0, log=Path(tmp) / f"py{rate:g}_{i}.h5", priority=priority)
                python_missed.append(py.deadlines.missed)  # the Python period (simulated hand), for comparison
            k, f = sum(kane_missed), sum(floor_missed)
            out[rate] = {"kane_missed": kane_missed, "floor_missed": floor_missed, "p99_compute": p99,
                         "python_period_missed": python_missed,
                         "late_wakeups": causes[0], "long_work": causes[1]}
            prio = (f"FIFO {priority}" if priority else "normal priority") + (", pinned" if pin else "")
            print(f"C period, {rate / 1000:g} kHz, {pairs} pairs of 1 s ({prio}): kane missed {k} of {pairs * int(rate)} {kane_missed}, the floor {f} "
                  f"{floor_missed}; target kane <= 1.5 floor + 2 = {1.5 * f + 2:g}: "
                  f"{'met' if k <= 1.5 * f + 2 else 'not met'}; p99 compute per period median "
                  f"{np.median(p99) * 1e6:.1f} us (max of runs {max(p99) * 1e6:.1f} us); kane's misses: "
                  f"{causes[0]} woke late (scheduler), {causes[1]} woke in time and worked long (interrupted); "
                  f"the Python period in the same pairs missed {sum(python_missed)} {python_missed}")
    return out


def c_period_rates(dyn, port, seconds: float = 10.0, priority: int = 0) -> dict:
    """For 1, 2, 5, 10, 20, 50 kHz: whether the C period and the floor loop (its work kane's p50) each ran
    ``seconds`` without a miss; the highest such rate of each (up to the first rate where both missed)."""
    best = {"kane": None, "floor": None}
    with tempfile.TemporaryDirectory() as tmp:
        for rate in RATES:
            spin = min(1e-3, 0.3 / rate) if priority else 1e-3
            r = c_run(dyn, port, rate, seconds, log=Path(tmp) / f"r{rate:g}.h5", priority=priority)
            floor = floor_run(rate, seconds, spin, r.deadlines.compute_p50, priority)[0]
            print(f"  {rate / 1000:g} kHz for {seconds:g} s: C period missed {r.deadlines.missed}, floor {floor}")
            if r.deadlines.missed == 0 and best["kane"] == (RATES[RATES.index(rate) - 1] if rate != RATES[0] else None):
                best["kane"] = rate
            if floor == 0 and best["floor"] == (RATES[RATES.index(rate) - 1] if rate != RATES[0] else None):
                best["floor"] = rate
            if r.deadlines.missed and floor:
                break
    print(f"highest rate with no miss in {seconds:g} s: C period {best['kane']}, floor {best['floor']}")
    return best


def _cpu_times(pid) -> dict:
    """{thread id: user + system CPU [s]} of the threads of process ``pid`` (Linux /proc)."""
    out, tick = {}, os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else ():
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _children(pid: int) -> list:
    """The ids of the processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
        except (OSError, ValueError):
            continue
    return out


def c_period_cpu(dyn, port, seconds: float = 5.0, pin: bool = False) -> dict:
    """At 1 and 10 kHz: CPU [s per s] of the C thread, the supervisor (the loop's Python thread), the rest of the
    process and the log's writer process over the life of the C thread of a ``seconds`` C-period run, read from
    /proc every 0.1 s (the C thread: the one thread no Python code started)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        c_run(dyn, port, 1000.0, 0.2, log=Path(tmp) / "warm.h5", pin=pin)
        for rate in (1000.0, 10000.0):
            me, before, seen, done = os.getpid(), set(_cpu_times(os.getpid())), {}, threading.Event()

            def watch():
                previous = set()
                while not done.is_set():
                    python = {th.native_id: th.name for th in threading.enumerate()}
                    snap = {("kane", t): v for t, v in _cpu_times(me).items()}
                    for child in _children(me):  # the log's writer process
                        snap.update({("writer", t): v for t, v in _cpu_times(child).items()})
                    python.update({th.native_id: th.name for th in threading.enumerate()})
                    native = {t for w, t in snap if w == "kane" and t not in python and t not in before}
                    if native & previous:  # the C thread, seen twice (not a Python thread being born)
                        seen.setdefault("first", (time.perf_counter(), snap, dict(python)))
                        seen["last"] = (time.perf_counter(), snap, dict(python))
                    previous = native
                    time.sleep(0.1)

            watcher = threading.Thread(target=watch, name="cpu-watch", daemon=True)
            watcher.start()
            try:
                r = c_run(dyn, port, rate, seconds, log=Path(tmp) / f"cpu{rate:g}.h5", pin=pin)
            finally:
                done.set()
                watcher.join()
            (t0, a, _), (t1, b, names) = seen["first"], seen["last"]
            share = {}
            for key, cpu in b.items():
                who, tid = key
                name = ("writer process" if who == "writer" else "C thread" if tid not in names and tid not in
                        before else names.get(tid, "other thread"))
                if name != "cpu-watch":
                    share[name] = share.get(name, 0.0) + (cpu - a.get(key, 0.0)) / (t1 - t0)
            out[rate] = share
            print(f"C period {rate / 1000:g} kHz, {seconds:g} s{' pinned' if pin else ''}: missed "
                  f"{r.deadlines.missed}, {r.status}; CPU per second over {t1 - t0:.2f} s: "
                  + ", ".join(f"{k} {v:.3f}" for k, v in sorted(share.items())))
    return out


def _show(label: str, r: rt.LoopResult) -> None:
    print(f"{label}: {r.status}; " + "; ".join(r.deadlines.lines()))


def run(long: float = 60.0, short: float = 10.0, priority: int = 0, pairs: int = 10) -> dict:
    """``priority`` > 0: the loop thread under SCHED_FIFO at that priority (root; see LoopOptions.priority), spinning
    for at most 0.3 of a period (a thread that spins for all of it meets Linux's real-time throttling: 50 ms stops)."""
    dyn, port = _chain()
    out = {"backend": dyn.backend, "priority": priority}
    print(f"loop thread priority: {'SCHED_FIFO ' + str(priority) if priority else 'normal'}")
    with tempfile.TemporaryDirectory() as tmp:
        r = one_run(dyn, port, 1000.0, long, log=Path(tmp) / "long.h5", priority=priority)
        _show(f"7-link chain, {long:g} s at 1 kHz ({r.engine.value})", r)
        out["long"] = r.deadlines.as_dict()
        best = None
        for rate in RATES:
            r = one_run(dyn, port, rate, short, log=Path(tmp) / f"rate{rate:g}.h5", priority=priority)
            _show(f"  {rate / 1000:g} kHz for {short:g} s", r)
            if r.deadlines.missed:
                break
            best = rate
        out["highest_rate_without_miss"] = best
        print(f"highest rate with no missed deadline in {short:g} s: "
              f"{'none' if best is None else f'{best / 1000:g} kHz'}")
        if compiler_available()[0]:  # the machine's floor: a C loop with the same schedule and a loop's work,
            # interleaved with kane's loop in short runs (the VM's stalls come in bursts: one long run of each, at
            # different times, compares the bursts more than the loops)
            spin = min(1e-3, 0.3 / 10000.0) if priority else 1.0
            kane_missed, floor_missed = [], []
            for i in range(pairs):
                r10 = one_run(dyn, port, 10000.0, 1.0, log=Path(tmp) / f"rate10k_{i}.h5", priority=priority)
                kane_missed.append(r10.deadlines.missed)
                floor_missed.append(floor_run(10000.0, 1.0, spin, r10.deadlines.compute_p50, priority)[0])
            out["floor_10kHz"] = {"kane_missed": kane_missed, "floor_missed": floor_missed}
            print(f"  10 kHz, {pairs} pairs of 1 s runs: kane's loop missed {sum(kane_missed)} of {pairs * 10000} "
                  f"(median {np.median(kane_missed):g}, {kane_missed.count(0)} runs without a miss); a C loop "
                  f"doing nothing but wait and compute its p50 missed {sum(floor_missed)} (median "
                  f"{np.median(floor_missed):g}, {floor_missed.count(0)} runs without a miss): the machine's floor")
        if dyn.backend == "c":
            py = one_run(dyn, port, 1000.0, short, engine=rt.Engine.PYTHON, log=Path(tmp) / "py.h5")
            c = one_run(dyn, port, 1000.0, short, engine=rt.Engine.COMPILED, log=Path(tmp) / "c.h5")
            _show(f"  Python Simulator engine, {short:g} s at 1 kHz", py)
            _show(f"  compiled engine, {short:g} s at 1 kHz", c)
            ratio = c.deadlines.compute_p50 / py.deadlines.compute_p50
            out["p50_ratio_compiled_over_python"] = ratio
            print(f"p50 compute time per period, compiled / Python engine: {ratio:.3f}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long", type=float, default=60.0, help="duration of the 1 kHz run [s]")
    ap.add_argument("--short", type=float, default=10.0, help="duration of each rate's run [s]")
    ap.add_argument("--quick", action="store_true", help="5 s at 1 kHz and 2 s per rate")
    ap.add_argument("--priority", type=int, default=0, help="SCHED_FIFO priority of the loop thread (root), 0: normal")
    ap.add_argument("--pairs", type=int, default=10, help="1 s runs at 10 kHz of kane's loop and of the C floor")
    ap.add_argument("--c-period", action="store_true", help="only the period in C against the floor (issue 32)")
    ap.add_argument("--pin", action="store_true", help="with --c-period: kane's C thread and the floor loop on "
                                                       "the last CPU, the rest of kane's process on the others")
    ap.add_argument("--c-cpu", action="store_true", help="only the CPU per thread of a C-period run at 1 and "
                                                         "10 kHz (--short s)")
    ap.add_argument("--c-rates", action="store_true", help="only the highest rate without a miss in --short s, "
                                                          "C period and floor (issue 32)")
    args = ap.parse_args()
    if args.c_cpu:
        c_period_cpu(*_chain(), args.short, args.pin)
    elif args.c_rates:
        c_period_rates(*_chain(), args.short, args.priority)
    elif args.c_period:
        c_period_pairs(*_chain(), args.pairs, args.priority, args.pin)
    elif args.quick:
        run(5.0, 2.0, args.priority, 3)
    else:
        run(args.long, args.short, args.priority, args.pairs)
