"""The work of ``kane realtime MODEL --device sim|replay --rate 1000 --duration 10 --couple BODY:POINT -o LOG.h5``:
couple a simulated hand (a 5 cm circle at 0.5 Hz in the ground x-y plane around the coupled point, start and stop
smoothed) or a recorded log to the model's body point, run the fixed-rate loop, and return the closing summary
(``missed deadlines: N of M periods``, p50 / p99 / max compute time). The click command itself is in cli.py."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import click
import numpy as np

from ..errors import ArgumentError
from .coupler import CouplerGains, VirtualCoupler, add_coupler, check_gains
from .devices import Replay, SimulatedHand, Workspace
from .loop import ClockMode, LoopOptions, LoopResult, RealtimeLoop

__all__ = ["parse_couple", "RealtimeRun", "run_realtime", "circle_path", "realtime_command"]


def parse_couple(text: str) -> tuple[str, tuple]:
    """``"BODY"`` or ``"BODY:X,Y,Z"`` (the point in body axes [m]) -> (body, point)."""
    body, sep, rest = text.partition(":")
    if not body.strip():
        raise ArgumentError(f"--couple {text!r}: expected BODY or BODY:X,Y,Z, such as link7:1,0,0")
    if not sep:
        return body.strip(), (0.0, 0.0, 0.0)
    parts = rest.split(",")
    try:
        point = tuple(float(p) for p in parts)
    except ValueError:
        point = ()
    if len(point) != 3 or not all(math.isfinite(x) for x in point):
        raise ArgumentError(f"--couple {text!r}: the point must be three finite numbers X,Y,Z [m] in body axes")
    return body.strip(), point


def circle_path(center, radius: float = 0.05, period: float = 2.0, ramp: float = 0.5):
    """path(t) -> (position (3,), velocity (3,)): a circle of ``radius`` [m] in the ground x-y plane through
    ``center`` (3,) [m], once every ``period`` [s], its radius growing smoothly from 0 over ``ramp`` [s]."""
    c, w = np.asarray(center, dtype=float), 2 * np.pi / period

    def path(t):
        g = 1.0 if t >= ramp else 0.5 * (1 - math.cos(math.pi * t / ramp))
        dg = 0.0 if t >= ramp else 0.5 * math.pi / ramp * math.sin(math.pi * t / ramp)
        s, co = math.sin(w * t), math.cos(w * t)
        p = c + radius * g * np.array([s, 1 - co, 0.0])
        v = radius * (dg * np.array([s, 1 - co, 0.0]) + g * w * np.array([co, s, 0.0]))
        return p, v

    return path


@dataclass(frozen=True)
class RealtimeRun:
    """The loop's :class:`LoopResult` and the closing summary ``lines``."""

    result: LoopResult
    lines: tuple

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def run_realtime(loaded, couple: str, output, *, device: str = "sim", replay=None, rate: float = 1000.0,
                 duration: float = 10.0, stiffness: float = 1000.0, damping: float | None = None,
                 max_force: float = 20.0, substeps: int = 1, virtual_clock: bool = False) -> RealtimeRun:
    """Run ``loaded`` (a :class:`kane.io.model_file.LoadedModel`) coupled at ``couple`` (BODY:X,Y,Z) to the
    device, log to ``output``. ``damping`` [N s/m] defaults to twice the passivity bound, K T."""
    body, point = parse_couple(couple)
    port = add_coupler(loaded.system, body, point)
    dyn = loaded.derive().compile()
    period = 1.0 / rate
    gains = CouplerGains(float(stiffness), float(stiffness * period if damping is None else damping))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_gains(gains, period)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names], dtype=float)
    u0 = np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names], dtype=float)
    coupler = VirtualCoupler(dyn, port, gains, max_force=max_force, params=dict(loaded.parameters))
    x0, _ = coupler.point_state(0.0, q0, u0)
    space = Workspace(tuple(x0 - 2.0), tuple(x0 + 2.0), 10.0)
    if device == "sim":
        dev = SimulatedHand(circle_path(x0), max_force=max_force, workspace=space)
    elif device == "replay":
        if replay is None:
            raise ArgumentError("--device replay needs --replay LOG.h5 (a log written by kane realtime)")
        dev = Replay.from_log(replay, max_force=max_force, workspace=space)
    else:
        raise ArgumentError(f"--device {device!r}: expected sim or replay")
    options = LoopOptions(rate=rate, duration=duration, substeps=substeps,
                          clock=ClockMode.VIRTUAL if virtual_clock else ClockMode.REAL)
    result = RealtimeLoop(coupler, dev, q0, u0, params=dict(loaded.parameters), options=options,
                          log=output).run()
    lines = [f"warning: {w.message}" for w in caught]
    lines += [f"status: {result.status} ({result.engine.value} engine, {substeps} substep(s) per period)",
              *result.deadlines.lines(),
              f"device samples refused: {result.refused}, missing: {result.missing}; saturated periods: "
              f"{result.saturated}; energy into the model through the coupler: {result.port_energy:.6g} J",
              f"log: {result.log}"]
    return RealtimeRun(result, tuple(lines))


def realtime_command(load, errors) -> click.Command:
    """The ``kane realtime`` click command; ``load(path)`` reads a model file or script, ``errors`` wraps the
    command as cli.py's other commands (one paragraph on stderr, exit status 2)."""

    @click.command("realtime", short_help="Run a model in a fixed-rate haptic loop with a virtual coupler.")
    @click.argument("model", type=click.Path(exists=True, dir_okay=False))
    @click.option("--device", type=click.Choice(["sim", "replay"]), default="sim", show_default=True)
    @click.option("--replay", "replay", type=click.Path(exists=True, dir_okay=False), help="Log to replay.")
    @click.option("--rate", type=float, default=1000.0, show_default=True, help="Loop rate [Hz].")
    @click.option("--duration", type=float, default=10.0, show_default=True, help="Run time [s].")
    @click.option("--couple", required=True, metavar="BODY:X,Y,Z", help="Coupled body and point (body axes, m).")
    @click.option("--stiffness", type=float, default=1000.0, show_default=True, help="Coupler K [N/m].")
    @click.option("--damping", type=float, default=None, help="Coupler B [N s/m] (default K T, twice the bound).")
    @click.option("--max-force", type=float, default=20.0, show_default=True, help="Device force limit [N].")
    @click.option("--substeps", type=int, default=1, show_default=True, help="Dynamics steps per period.")
    @click.option("--virtual-clock", is_flag=True, help="Run as fast as possible, not on the wall clock.")
    @click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="HDF5 log file.")
    @errors
    def realtime(model, device, replay, rate, duration, couple, stiffness, damping, max_force, substeps,
                 virtual_clock, output):
        """Couple a simulated hand (or a replayed log) to BODY:POINT of MODEL; print the deadline summary."""
        run = run_realtime(load(model), couple, output, device=device, replay=replay, rate=rate,
                           duration=duration, stiffness=stiffness, damping=damping, max_force=max_force,
                           substeps=substeps, virtual_clock=virtual_clock)
        click.echo(run.text, nl=False)

    return realtime
