"""Real-time loop benchmark for a slow model (issue 14, item 6): the ball rolling in its bowl
(examples/ball_in_bowl.toml, a rolling contact in absolute coordinates whose numpy dynamics take about 4 ms an RK4
step), pulled by the simulated hand through the coupler, on the wall clock.

Printed, for ``--seconds`` (default 10) each: (1) the haptic loop at 1 kHz with the contact stepped every 10 periods
in a worker process, a step behind (kane.realtime.AsyncDynamics); (2) the same multi-rate loop with each step in the
loop's own thread (kane.realtime.SlowDynamics): the period that steps takes the whole step; (3) the single-rate loop
at 100 Hz. For each: missed deadlines, p50 / p99 / max compute time per period, and the worker's late steps; then
the ratio of missed deadlines (2) / (1).
Run: ``python bench/bench_realtime_rolling.py [--seconds 10] [--priority 0]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from kane import realtime as rt
from kane.io import load_model
from kane.io.model_surfaces import rolling_dynamics
from kane.realtime.command import circle_path

__all__ = ["run"]

BOWL = Path(__file__).resolve().parents[1] / "examples" / "ball_in_bowl.toml"


def _model():
    loaded = load_model(BOWL)
    port = rt.add_coupler(loaded.system, "ball", (0.0, 0.0, 0.0))
    dyn = rt.RollingRealtime(loaded.derive().compile(), rolling_dynamics(loaded))
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names])
    return dyn, port, q0, dict(loaded.parameters)


def one_run(model, rate: float, every: int, process: bool, seconds: float, log, priority: int = 0):
    """(LoopResult, late steps) of one wall-clock run: K = 1000 N/m, B = K k T (twice the bound at the dynamics'
    period), the hand circling 5 cm around the ball's start."""
    dyn, port, q0, params = model
    period = every / rate
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(1000.0, 1000.0 * period), max_force=20.0, params=params)
    x0, _ = cp.point_state(0.0, q0, np.zeros(dyn.n_u))
    hand = rt.SimulatedHand(circle_path(x0), max_force=20.0, workspace=rt.Workspace(tuple(x0 - 2), tuple(x0 + 2)))
    opts = rt.LoopOptions(rate=rate, duration=seconds, dynamics_every=every, dynamics_process=process,
                          priority=priority, spin=0.3 / rate if priority else min(1e-3, 1 / rate))
    loop = rt.RealtimeLoop(cp, hand, q0, np.zeros(dyn.n_u), options=opts, params=params, log=log)
    result = loop.run()
    return result, getattr(loop.plant, "late_steps", 0)


def run(seconds: float = 10.0, priority: int = 0) -> dict:
    model = _model()
    out = {}
    print(f"loop thread priority: {'SCHED_FIFO ' + str(priority) if priority else 'normal'}")
    with tempfile.TemporaryDirectory() as tmp:
        for key, label, rate, every, process in (
                ("async", "1 kHz, contact every 10 periods in a worker process", 1000.0, 10, True),
                ("in_thread", "1 kHz, contact every 10 periods in the loop's thread", 1000.0, 10, False),
                ("single_100Hz", "100 Hz single-rate", 100.0, 1, False)):
            result, late = one_run(model, rate, every, process, seconds, Path(tmp) / f"{key}.h5", priority)
            d = result.deadlines
            out[key] = {**d.as_dict(), "late_steps": late}
            print(f"{label}: {result.status}; missed {d.missed} of {d.periods}; compute p50 "
                  f"{d.compute_p50 * 1e6:.1f} us, p99 {d.compute_p99 * 1e6:.1f} us, max {d.compute_max * 1e6:.1f} us"
                  + (f"; steps late {late} of {d.periods // every}" if process else ""))
    ratio = out["in_thread"]["missed"] / max(out["async"]["missed"], 1)
    out["missed_ratio_in_thread_over_async"] = ratio
    print(f"missed deadlines at 1 kHz, step in the loop's thread / in a worker process: {ratio:.0f}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="duration of each run [s]")
    ap.add_argument("--priority", type=int, default=0, help="SCHED_FIFO priority of the loop thread (root), 0: normal")
    args = ap.parse_args()
    run(args.seconds, args.priority)
