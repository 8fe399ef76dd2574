"""Real-time loop with constraint changes inside the period (issue 14): the shopping cart of seed 000 (its caster's
swivel locked and unlocked every second by a kane.switching Lock rule, so 2 x ``duration`` switches with their
impulses), pushed round a circle by the simulated hand through the virtual coupler, on the wall clock at 1 kHz.

Printed: missed deadlines, p50 / p99 / max compute time per period and wake-up lateness of (1) the switching cart
with its two modes compiled to C beforehand (kane.realtime.mode_plant: the mode's RK4 stepper in C, the events
located on it and handled by the on-line machinery), (2) the same on line (kane.realtime.switching_plant:
SwitchingSimulator with on-line embedding, RK4 at the period), (3) their peer in the same process, the same cart
with the caster always free on the plain Python engine (kane.simulate.Simulator, constraints embedded once), (4)
the free cart on the compiled engine (C stepper); the ratios of p50 compute times; the number of mode changes;
(5) the machine's floor: a C loop on the same schedule spinning (1)'s p50 compute time (bench/_floor.py).
``--virtual``: the same runs on the virtual clock (no waiting: compute times only, free of the scheduler's
wake-ups); ``--priority N``: the loop thread under SCHED_FIFO N (root).
Run: ``python bench/bench_realtime_switching.py [--duration 60] [--quick] [--virtual] [--priority N]``
(``--quick``: 5 s), or ``python bench/run.py realtime_switching``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import kane
from kane import realtime as rt
from kane.realtime.command import circle_path
from kane.codegen.c_backend import compiler_available
from kane.realtime import SwitchingDynamics
from kane.switching import Lock

from _floor import floor_run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from shopping_cart import build  # noqa: E402

__all__ = ["run", "one_run"]

POINT = (-0.3, 0.0, 0.0)  # the handle on the basket [m]
Q0 = np.array([0.0, 0.0, 0.0, 0.3])


def _lock_intervals(duration: float) -> list:
    """The caster locked from k + 0.3005 s to k + 0.8003 s, every second of the run."""
    return [(k + 0.3005, k + 0.8003) for k in range(int(np.ceil(duration)))]


def one_run(duration: float, switching: bool = True, log=None, clock=rt.ClockMode.REAL, engine=rt.Engine.PYTHON,
            compiled_modes: bool = False, priority: int = 0):
    """One run of ``duration`` [s] at 1 kHz; returns (LoopResult, number of mode changes or None). The free cart
    (``switching`` False) runs on ``engine`` (COMPILED: the C backend's stepper); the switching cart on line, or
    with ``compiled_modes`` its two modes compiled to C beforehand (kane.realtime.mode_plant)."""
    s = build()
    if switching:
        s.add_joint_lock("caster_stick", "swivel", transient=True)
    port = rt.add_coupler(s, "B", POINT)
    eqs = kane.derive(s)
    if switching:
        dyn = SwitchingDynamics(eqs, [Lock("caster_stick", on=_lock_intervals(duration))],
                                system=s if compiled_modes else None)
        u0 = np.zeros(4)
    else:
        dyn = eqs.compile("c" if engine is rt.Engine.COMPILED else "numpy")
        u0 = np.zeros(dyn.n_u)
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 20.0), max_force=50.0)
    x0, _ = cp.point_state(0.0, Q0, u0)
    hand = rt.SimulatedHand(circle_path(x0, radius=0.15, period=2.0), max_force=50.0,
                            workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    opts = rt.LoopOptions(rate=1000.0, duration=duration, clock=clock, engine=engine, priority=priority,
                          spin=3e-4 if priority else 1e-3)
    loop = rt.RealtimeLoop(cp, hand, Q0, u0, options=opts, log=log)
    result = loop.run()
    return result, (len(loop.plant.events) if switching else None)


def _show(label: str, r: rt.LoopResult) -> None:
    print(f"{label}: {r.status}; " + "; ".join(r.deadlines.lines()), flush=True)


def run(duration: float = 60.0, virtual: bool = False, priority: int = 0) -> dict:
    """``priority`` > 0: the loop thread under SCHED_FIFO at that priority (root; LoopOptions.priority)."""
    out = {"priority": priority}
    clock = rt.ClockMode.VIRTUAL if virtual else rt.ClockMode.REAL
    where = f"{duration:g} s at 1 kHz" + (" (virtual clock)" if virtual else "")
    print(f"loop thread priority: {'SCHED_FIFO ' + str(priority) if priority else 'normal'}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        if compiler_available()[0]:
            runs["compiled_modes"] = one_run(duration, True, log=Path(tmp) / "modes.h5", clock=clock,
                                             compiled_modes=True, priority=priority)
            _show(f"cart with switching caster, compiled modes, {where}", runs["compiled_modes"][0])
            print(f"  mode changes: {runs['compiled_modes'][1]} (lock / unlock with impulses)")
        runs["online"] = one_run(duration, True, log=Path(tmp) / "switching.h5", clock=clock, priority=priority)
        _show(f"cart with switching caster, on-line embedding, {where}", runs["online"][0])
        print(f"  mode changes: {runs['online'][1]}")
        runs["plain"] = one_run(duration, False, log=Path(tmp) / "plain.h5", clock=clock, priority=priority)
        _show(f"peer: cart with free caster, Python engine, {where}", runs["plain"][0])
        if compiler_available()[0]:
            runs["compiled"] = one_run(duration, False, log=Path(tmp) / "compiled.h5", clock=clock,
                                       engine=rt.Engine.COMPILED, priority=priority)
            _show(f"cart with free caster, compiled engine, {where}", runs["compiled"][0])
    if compiler_available()[0] and not virtual:  # the machine's floor: a C loop on the same schedule
        work = runs["compiled_modes"][0].deadlines.compute_p50
        spin = 3e-4 if priority else 1e-3
        missed, n, late = floor_run(1000.0, duration, spin, work, priority)
        out["floor_1kHz"] = {"missed": missed, "periods": n, "lateness_max": late, "work": work}
        print(f"machine's floor: a C loop waiting as the loop does and computing {work * 1e6:.1f} us a period "
              f"(bench/_floor.py), {duration:g} s at 1 kHz: missed {missed} of {n} (wake-up lateness max "
              f"{late * 1e6:.0f} us)")
    p50 = {k: r.deadlines.compute_p50 for k, (r, _) in runs.items()}
    print(f"p50 compute time per period, on-line switching / plain Python engine: {p50['online'] / p50['plain']:.2f}")
    if "compiled_modes" in p50:
        print(f"p50 compute time per period, compiled modes / on-line switching: "
              f"{p50['compiled_modes'] / p50['online']:.3f}")
    out.update({k: r.deadlines.as_dict() for k, (r, _) in runs.items()})
    out["mode_changes"] = runs["online"][1]
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0, help="duration of each 1 kHz run [s]")
    ap.add_argument("--quick", action="store_true", help="5 s runs")
    ap.add_argument("--virtual", action="store_true", help="the virtual clock: compute times without waiting")
    ap.add_argument("--priority", type=int, default=0, help="SCHED_FIFO priority of the loop thread (root), 0: normal")
    args = ap.parse_args()
    run(5.0 if args.quick else args.duration, args.virtual, args.priority)
