"""The work of ``kane realtime MODEL --device sim|udp|replay --rate 1000 --duration 10 --couple BODY:POINT -o LOG.h5``
(options not given come from the model file's ``[realtime]`` table, :mod:`kane.realtime.model_table`): couple a
simulated hand (a 5 cm circle at 0.5 Hz in the ground x-y plane around the coupled point, start and stop
smoothed) or a recorded log to the model's body point, run the fixed-rate loop, and return the closing summary
(``missed deadlines: N of M periods``, p50 / p99 / max compute time). The click command itself is in cli.py."""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np

from ..errors import ArgumentError
from ..io.model_surfaces import rolling_dynamics
from ..io.trajectory import PARTIAL_SUFFIX
from ..spatial import rotation_axis_angle
from ..switching.contact_run import has_collisions
from ..switching.model_table import switching_rules
from .contact_plant import ContactRealtime
from .coupler import CouplerGains, VirtualCoupler, add_coupler
from .devices import Replay, SimulatedHand, Workspace
from .loop import ClockMode, LoopOptions, LoopPath, LoopResult, RealtimeLoop
from .model_table import DEVICES, RealtimeSettings, realtime_settings
from .rolling_plant import RollingRealtime
from .switching_plant import SwitchingDynamics
from .udp import UdpDevice, parse_peer

__all__ = ["parse_couple", "realtime_choices", "unused_output_path", "RealtimeRun", "run_realtime", "circle_path",
           "line_path", "turning_path", "realtime_command"]


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
    """path(t) -> (position, velocity) (tuples of three floats): a circle of ``radius`` [m] in the ground x-y plane
    through ``center`` (3,) [m], once every ``period`` [s], its radius growing smoothly from 0 over ``ramp`` [s]."""
    cx, cy, cz = (float(a) for a in center)
    w = 2 * math.pi / period

    def path(t):
        g = 1.0 if t >= ramp else 0.5 * (1 - math.cos(math.pi * t / ramp))
        dg = 0.0 if t >= ramp else 0.5 * math.pi / ramp * math.sin(math.pi * t / ramp)
        s, co = math.sin(w * t), math.cos(w * t)
        rg = radius * g
        return ((cx + rg * s, cy + rg * (1 - co), cz),
                (radius * (dg * s + g * w * co), radius * (dg * (1 - co) + g * w * s), 0.0))

    return path


def turning_path(path, start, turn, period: float = 2.0):
    """``path`` (t -> position, velocity) with the handle turning too: t -> (position, velocity, orientation (3, 3),
    angular velocity (3,) [rad/s]), the orientation ``start`` (3, 3) turned about the axis of ``turn`` (3,) [rad]
    by s(t) |turn|, s = (1 - cos(2 pi t / period)) / 2: from rest, to the full turn and back once every period."""
    start, turn = np.asarray(start, dtype=float).reshape(3, 3), np.asarray(turn, dtype=float).reshape(3)
    angle = float(np.linalg.norm(turn))
    axis = turn if angle > 0 else np.array([0.0, 0.0, 1.0])  # (no turn: any axis)
    w = 2 * math.pi / period

    def turning(t):
        R = rotation_axis_angle(axis, angle * 0.5 * (1 - math.cos(w * t))) @ start
        return (*path(t), R, turn * 0.5 * w * math.sin(w * t))

    return turning


@dataclass(frozen=True)
class RealtimeRun:
    """The loop's :class:`LoopResult` and the closing summary ``lines``."""

    result: LoopResult
    lines: tuple

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def line_path(start, direction, speed: float = 0.2, ramp: float = 0.5):
    """path(t) -> (position, velocity) (tuples of three floats): from ``start`` (3,) [m] along the unit
    ``direction`` (3,) at ``speed`` [m/s], the speed growing smoothly from 0 over ``ramp`` [s]."""
    start, direction = [float(a) for a in start], [float(a) for a in direction]

    def path(t):
        if t >= ramp:
            s, v = speed * (t - ramp / 2), speed
        else:
            s = 0.5 * speed * (t - ramp / math.pi * math.sin(math.pi * t / ramp))
            v = 0.5 * speed * (1 - math.cos(math.pi * t / ramp))
        return tuple(a + s * d for a, d in zip(start, direction)), tuple(v * d for d in direction)

    return path


_DEFAULTS = {"device": "sim", "rate": 1000.0, "duration": 10.0, "stiffness": 1000.0, "max_force": 20.0,
             "substeps": 1, "dynamics_every": 1, "workspace": 2.0, "hand_path": "circle", "hand_radius": 0.05,
             "hand_period": 2.0, "hand_direction": (1.0, 0.0, 0.0), "hand_speed": 0.2, "udp_port": 5005,
             "udp_host": "127.0.0.1",
             "hand_turn": (0.0, 0.0, 0.5)}


def realtime_choices(table, options: dict, couple: str | None, missing: str) -> tuple[dict, str, tuple]:
    """(settings, body, point): each key of :class:`RealtimeSettings` from ``options`` (when not None), else the
    model file's ``[realtime]`` ``table``, else the defaults; the coupled body and point from ``couple``
    (BODY:X,Y,Z) or the table. An :class:`ArgumentError` saying ``missing`` when neither names a body."""
    o = {k: options.get(k) if options.get(k) is not None else
         getattr(table, k) if getattr(table, k) is not None else _DEFAULTS.get(k)
         for k in RealtimeSettings.__dataclass_fields__}
    if couple is not None:
        return o, *parse_couple(couple)
    if table.body is None:
        raise ArgumentError(missing)
    return o, table.body, table.point or (0.0, 0.0, 0.0)


def run_realtime(loaded, couple: str | None, output, *, replay=None, virtual_clock: bool = False, status=None,
                 priority: int = 0, notice=None, loop_path: LoopPath = LoopPath.PYTHON, **options) -> RealtimeRun:
    """Run ``loaded`` (a :class:`kane.io.model_file.LoadedModel`) coupled at ``couple`` (BODY:X,Y,Z; None: the
    model file's ``[realtime]`` body and point) to the device, log to ``output``. ``options``: the keys of
    :class:`RealtimeSettings` (device, rate [Hz], duration [s], stiffness [N/m], damping [N s/m], max_force [N],
    substeps, dynamics_every, udp_port, workspace [m], hand_...); one given (not None) overrides the file's
    ``[realtime]`` table, which overrides the defaults. ``damping`` defaults to twice the passivity bound at the
    dynamics' period, K k T. ``status(line)`` is called about 4 times a second with the live status line.
    ``priority`` > 0: the loop's thread under SCHED_FIFO at that priority (root or CAP_SYS_NICE), spinning for 0.3
    of a period before each (a thread that spins for all of it meets Linux's real-time throttling). ``notice(line)``
    is called with what to know before the loop starts (where the UDP device is awaited). ``loop_path``: the
    period in Python or in C (:class:`LoopPath`; with C the dynamics of ``dynamics_every`` step in the loop's
    thread; what C cannot run stays on the Python path, and the summary says which ran and why)."""
    table = realtime_settings(loaded)
    unknown = set(options) - set(RealtimeSettings.__dataclass_fields__)
    if unknown:
        raise ArgumentError(f"run_realtime: unknown options {', '.join(sorted(unknown))}")
    o, body, point = realtime_choices(table, options, couple, "kane realtime: give --couple BODY:X,Y,Z, or body "
                                                               "(and point) in the model file's [realtime] table")
    rules = switching_rules(loaded)  # [[switching]] tables: the loop runs the switched system (compiled modes)
    pose = o["rotational_stiffness"] is not None  # a full pose coupled: a torque on the body too
    port = add_coupler(loaded.system, body, point, rotational=pose)
    rolling = rolling_dynamics(loaded) if loaded.tables.get("contacts") else None  # (with the coupler's inputs)
    if rolling is not None:  # [[contacts]]: stepped in absolute coordinates, seen in joint coordinates
        dyn = RollingRealtime(loaded.derive().compile(), rolling)
    elif has_collisions(loaded):  # [[collision]] shapes: contact time stepping at the dynamics' step
        dyn = ContactRealtime(loaded.derive().compile(), dict(loaded.parameters))
    else:
        dyn = SwitchingDynamics(loaded.derive(), rules, system=loaded.system) if rules else loaded.derive().compile()
    rate, stiffness, max_force, device = o["rate"], o["stiffness"], o["max_force"], o["device"]
    every = o["dynamics_every"]  # k > 1: the dynamics in a process of their own, a step behind (async_dynamics)
    loop_options = LoopOptions(rate=rate, duration=o["duration"], substeps=o["substeps"], dynamics_every=every,
                               dynamics_process=every > 1 and loop_path is LoopPath.PYTHON, priority=priority,
                               loop_path=loop_path,
                               spin=min(1e-3, 0.3 / rate) if priority and rate > 0 else 1e-3,
                               clock=ClockMode.VIRTUAL if virtual_clock else ClockMode.REAL)  # checked first
    period = loop_options.period * every  # the coupler acts on the dynamics sampled at k T: the bound's period
    k_r = float(o["rotational_stiffness"] or 0.0)
    gains = CouplerGains(float(stiffness), float(stiffness * period if o["damping"] is None else o["damping"]),
                         k_r, float(k_r * period if o["rotational_damping"] is None else o["rotational_damping"]))
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names], dtype=float)
    u0 = np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names], dtype=float)
    coupler = VirtualCoupler(dyn, port, gains, max_force=max_force, params=dict(loaded.parameters),
                             max_torque=o["max_torque"] or np.inf)
    x0, _ = coupler.point_state(0.0, q0, u0)
    space = Workspace(tuple(x0 - o["workspace"]), tuple(x0 + o["workspace"]), 10.0)
    if device == "sim":
        path = (circle_path(x0, o["hand_radius"], o["hand_period"]) if o["hand_path"] == "circle" else
                line_path(x0, o["hand_direction"], o["hand_speed"]))
        if pose:  # the handle starts at the body's orientation and turns about hand_turn
            path = turning_path(path, coupler.pose_state(0.0, q0, u0)[0], o["hand_turn"], o["hand_period"])
        dev = SimulatedHand(path, max_force=max_force, workspace=space)
    elif device == "replay":
        if replay is None:
            raise ArgumentError("--device replay needs --replay LOG.h5 (a log written by kane realtime)")
        dev = Replay.from_log(replay, max_force=max_force, workspace=space)
    elif device == "udp":
        peer = None if o["udp_peer"] is None else parse_peer(o["udp_peer"])
        dev = UdpDevice(int(o["udp_port"]), host=o["udp_host"], max_force=max_force, workspace=space, pose=pose,
                        peer=peer)
        if notice is not None:
            if not dev.host.startswith("127."):
                notice(f"kane realtime: warning: listening beyond loopback on udp {dev.host}:{dev.port}: any host "
                       f"that reaches it can pair first{'' if peer else ' (give --udp-peer HOST:PORT)'}")
            notice(f"kane realtime: waiting up to {dev.connect_timeout:g} s for the device bridge's first state "
                   f"packet on udp {dev.host}:{dev.port}" + (f" from {o['udp_peer']}" if peer else ""))
    else:
        raise ArgumentError(f"--device {device!r}: expected one of {', '.join(DEVICES)}")
    laws = loaded.input_function(dyn)  # the file's [inputs] schedules, held over each period as the coupler's force
    with warnings.catch_warnings(record=True) as caught:  # the gains' bounds, checked as the loop is built
        warnings.simplefilter("always")
        loop = RealtimeLoop(coupler, dev, q0, u0, params=dict(loaded.parameters), options=loop_options, log=output,
                            inputs=laws)
    result = loop.run(progress=status)
    lines = [f"warning: {w.message}" for w in caught]
    steps = (f"{o['substeps']} substep(s) per period" if every == 1 else
             f"the dynamics every {every} periods, "
             f"{'a step behind the coupler' if loop_options.dynamics_process else 'in the loop'}, "
             f"{o['substeps']} substep(s) each")
    lines += [f"status: {result.status} ({result.plant}, {steps})",
              *result.deadlines.lines(),
              *(["virtual clock: the periods ran back to back, nothing waited; a missed deadline is a period whose "
                 "compute time exceeded the period"] if virtual_clock else []),
              *_meaning_lines(result, o["max_force"], o["max_torque"], priority, virtual_clock),
              f"device samples refused: {result.refused}, missing: {result.missing}; "
              f"energy into the model through the coupler: {result.port_energy:.6g} J"]
    if every > 1 and not virtual_clock and loop_options.dynamics_process:
        lines.append(f"dynamics steps not back within their slow period: {getattr(loop.plant, 'late_steps', 0)} of "
                     f"{result.deadlines.periods // every}")
    if laws is not None:
        lines.append(f"inputs from the model's schedules, held over each period: {', '.join(loaded.input_laws)}")
    if rules:
        events = getattr(loop.plant, "events", ())
        kinds = [e.kind for e in events]
        lines.append(f"mode changes: {len(events)}" + "".join(f", {k} {kinds.count(k)}" for k in dict.fromkeys(kinds)))
    if device == "udp":
        lines.append("udp packets: " + ", ".join(f"{k} {v}" for k, v in dev.counts.items()))
    lines.append(f"period: {'C, in a native thread' if result.loop_path == 'c' else 'Python'}"
                 + (f" (not C: {loop.path_reason})" if loop.path_reason else ""))
    lines.append(f"log: {result.log}")
    if result.log is not None:
        lines.append(f"plot it: kane plot {result.log}; describe it: kane info {result.log}")
    return RealtimeRun(result, tuple(lines))


MISS_ADVICE_FRACTION = 0.01  # above this share of missed deadlines, with --priority 0, the summary suggests it


def _meaning_lines(result, max_force, max_torque, priority: int, virtual_clock: bool) -> list[str]:
    """The closing summary's plain words for its numbers: what a missed deadline and a saturated period are, with
    their counts, and the advice to give ``--priority N`` when more than 1 % of the periods missed at priority 0."""
    d = result.deadlines
    limit = f"--max-force ({max_force:g} N)" + (f" or --max-torque ({max_torque:g} N m)" if max_torque else "")
    lines = [f"  (a missed deadline: a period whose work - read the device, the coupler's force, the dynamics step - "
             f"ended after the next period was due, {d.period * 1e6:.0f} us after its start, so the device got that "
             f"force late; {d.missed} of {d.periods} here)",
             f"saturated periods: {result.saturated} of {d.periods}: periods in which the coupler's force reached "
             f"{limit} and was cut to that limit, so the hand felt less than the coupler asked"]
    if not virtual_clock and priority == 0 and d.periods and d.missed > MISS_ADVICE_FRACTION * d.periods:
        lines.append(f"hint: {100 * d.missed / d.periods:.1f} % of the deadlines were missed; run the loop's thread "
                     f"at real-time priority with --priority N (e.g. --priority 80; needs root or CAP_SYS_NICE)")
    return lines


def unused_output_path(path) -> Path:
    """``path`` when neither it nor its partial file exists, else the first free one of NAME-1.EXT, NAME-2.EXT,
    ... beside it: a run never overwrites an earlier run's log."""
    p = Path(path)
    candidate, k = p, 0
    while candidate.exists() or Path(str(candidate) + PARTIAL_SUFFIX).exists():
        k += 1
        candidate = p.with_name(f"{p.stem}-{k}{p.suffix}")
    return candidate


def _status_writer(stream):
    """status(line) rewriting one line in place on ``stream`` (a TTY), and end() clearing it; None off a TTY."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None, lambda: None
    width = [0]

    def status(line):
        stream.write("\r" + line.ljust(width[0]))
        stream.flush()
        width[0] = max(width[0], len(line))

    def end():
        stream.write("\r" + " " * width[0] + "\r")
        stream.flush()

    return status, end


def realtime_command(load, errors) -> click.Command:
    """The ``kane realtime`` click command; ``load(path)`` reads a model file or script, ``errors`` wraps the
    command as cli.py's other commands (one paragraph on stderr, exit status 2). Options not given fall back on
    the model file's ``[realtime]`` table, then on the defaults shown."""

    @click.command("realtime", short_help="Run a model in a fixed-rate haptic loop with a virtual coupler.")
    @click.argument("model", type=click.Path(exists=True, dir_okay=False))
    @click.option("--device", type=click.Choice(list(DEVICES)), help="Device [default: [realtime] or sim].")
    @click.option("--replay", "replay", type=click.Path(exists=True, dir_okay=False), help="Log to replay.")
    @click.option("--udp-port", type=click.IntRange(0, 65535), help="UDP port of --device udp [default: 5005].")
    @click.option("--udp-host", help="Address --device udp listens on [default: 127.0.0.1]; another one (0.0.0.0: "
                                     "every interface) is explicit and warned of.")
    @click.option("--udp-peer", metavar="HOST[:PORT]", help="The device's address: only its packets are heard "
                                                            "[default: the first valid sender pairs].")
    @click.option("--rate", type=float, help="Loop rate [Hz] [default: 1000].")
    @click.option("--duration", type=float, help="Run time [s] [default: 10].")
    @click.option("--couple", metavar="BODY:X,Y,Z", help="Coupled body and point (body axes, m) [default: "
                                                         "[realtime] body and point].")
    @click.option("--stiffness", type=float, help="Coupler K [N/m] [default: 1000].")
    @click.option("--damping", type=float, default=None,
                  help="Coupler B [N s/m] (default K k T, twice the bound; k: --dynamics-every).")
    @click.option("--max-force", type=float, help="Device force limit [N] [default: 20].")
    @click.option("--rotational-stiffness", type=float,
                  help="Couple the body's orientation too: K_r [N m/rad] (a full pose; a torque on the body).")
    @click.option("--rotational-damping", type=float, help="B_r [N m s/rad] (default K_r k T).")
    @click.option("--max-torque", type=float, help="Device torque limit [N m] [default: none].")
    @click.option("--substeps", type=int, help="Dynamics steps per period [default: 1].")
    @click.option("--dynamics-every", type=click.IntRange(1, 10000),
                  help="Step the dynamics once every K periods, in a process of their own [default: 1].")
    @click.option("--priority", type=click.IntRange(0, 99), default=0,
                  help="SCHED_FIFO priority of the loop's thread (root or CAP_SYS_NICE); 0: normal.")
    @click.option("--loop", "loop_path", type=click.Choice([p.value for p in LoopPath]), default="python",
                  show_default=True, help="Run each period in Python, or in C in a native thread (c; auto: C where "
                                          "it can); what C cannot run stays on Python, and the summary says why.")
    @click.option("--virtual-clock", is_flag=True, help="Run as fast as possible, not on the wall clock.")
    @click.option("-o", "--output", type=click.Path(dir_okay=False), default="realtime.h5", show_default=True,
                  help="HDF5 log file; when it exists, the first free NAME-1.h5, NAME-2.h5, ... (never overwritten).")
    @errors
    def realtime(model, device, replay, udp_port, udp_host, udp_peer, rate, duration, couple, stiffness, damping,
                 max_force, rotational_stiffness, rotational_damping, max_torque, substeps, dynamics_every, priority,
                 loop_path, virtual_clock, output):
        """Couple a simulated hand (a replayed log, or a device over UDP) to BODY:POINT of MODEL; print the
        deadline summary. A live status line is shown on a terminal."""
        free = unused_output_path(output)
        if str(free) != str(output):
            click.echo(f"kane realtime: {output} exists (an earlier run's log); writing {free}", err=True)
        output = str(free)
        status, end = _status_writer(sys.stderr)
        try:
            run = run_realtime(load(model), couple, output, replay=replay, virtual_clock=virtual_clock,
                               status=status, priority=priority, notice=lambda line: click.echo(line, err=True),
                               device=device, udp_port=udp_port, udp_host=udp_host, udp_peer=udp_peer, rate=rate,
                               duration=duration, stiffness=stiffness, damping=damping, max_force=max_force,
                               substeps=substeps, dynamics_every=dynamics_every,
                               rotational_stiffness=rotational_stiffness, rotational_damping=rotational_damping,
                               max_torque=max_torque, loop_path=LoopPath(loop_path))
        finally:
            end()
        click.echo(run.text, nl=False)

    return realtime
