"""The standalone haptic servo program in C (issue 32, item 3): ``kane export-c MODEL --servo -o DIR`` writes the C
export's model.c and model.h (:func:`kane.codegen.c_export.export_c`), the C period of :mod:`.c_period_text` as
period.c and period.h (the text itself, not a copy), servo.c (:mod:`.servo_text`: the model's RK4 step and the
coupler's body point behind the period's function pointers, the UDP device of :mod:`.udp` in C, the log, the
command line) and a Makefile. It builds with ``cc -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L`` and
runs without Python. The gains, rate, coupling point, substeps and dynamics_every come from the model's
``[realtime]`` table (kane's defaults where it has none, as ``kane realtime`` takes them) as generated constants.

Running it on a device controller: copy DIR to the controller (Linux or any POSIX system with a C99 compiler and
pthreads), ``make``, then ``sudo ./servo --port 5005 --duration 60 --log run.csv`` (root or CAP_SYS_NICE gives
the period's thread SCHED_FIFO at ``--priority``, 80 by default, and ``mlockall`` keeps its memory resident;
without them it says so and runs at normal priority). The device bridge sends kane's state packets (protocol
version 1, or 2 with a full pose coupled; :mod:`kane.realtime.udp`) to that port, from loopback unless ``--host``
listens elsewhere; the clock starts with its first valid packet (``--wait`` seconds at most), and each period it
gets a force (wrench) packet echoing the sequence number of the state used. Two threads: the period's (the C
period, unchanged) and the device's, at one priority below, which sleeps on the socket between periods, hands
the period the newest state received when the previous period ended (held for 5 ms when packets stop; after the
device timeout, 10 ms, of missing states the run stops), sends each period's force as soon as its row is out and
writes the row to the log. The log is
CSV: a header of column names (those of a kane realtime log's row: t, hand_position[0..2], ..., force[0..2], ...,
compute_time, lateness, then q[i] and u[i] in model.h's order), then one row per period with %.17g. ``--replay``
runs in lockstep: one period per state packet received, no clock (what the tests use to compare it with kane's
Python and C periods).

Not supported (refused with a :class:`kane.errors.NotSupportedError` naming it): ``[[contacts]]``,
``[[switching]]`` rules, ``[inputs]`` schedules and dependent speeds (constraints): the program runs the free
equations of motion with the inputs at their defaults.
"""

from __future__ import annotations

import math
import pathlib
import re
import struct
from dataclasses import dataclass
from string import Template

import numpy as np

from ..codegen.c_backend import CPrinter
from ..codegen.c_export import CExportOptions, export_c
from ..codegen.program import ProgramBuilder
from ..errors import KaneError, NotSupportedError
from ..io.model_surfaces import refuse_contacts
from ..mechanics.kinematics import TreeKinematics
from ..switching.model_table import switching_rules
from .c_period_text import PERIOD_CDEF, PERIOD_SOURCE, ROW_POINT, ROW_POSE
from .command import realtime_choices
from .coupler import CouplerGains, VirtualCoupler, add_coupler
from .devices import Workspace
from .log import _WIDTH, POSE_FIELDS, ROW_FIELDS
from .loop import LoopOptions
from .model_table import realtime_settings
from .servo_text import PERIOD_HEADER, SERVO_MAKEFILE, SERVO_SOURCE
from .stats import JITTER_EDGES_S
from .udp import (FORCE_FORMAT, FORCE_MAGIC, POSE_STATE_FORMAT, POSE_VERSION, PROTOCOL_VERSION, STATE_FORMAT,
                  STATE_MAGIC, WRENCH_FORMAT, UdpDevice)

__all__ = ["ServoPlan", "ServoExport", "servo_plan", "export_servo"]

_HOLD = UdpDevice.__init__.__kwdefaults__["hold"]  # [s] how long the newest state stands in: UdpDevice's default


@dataclass(frozen=True)
class ServoPlan:
    """What the servo program runs, as kane's loop would run it: ``dynamics`` (the model with the coupler's inputs,
    compiled), ``coupler`` (:class:`VirtualCoupler`), ``options`` (:class:`LoopOptions`: rate [Hz], duration [s],
    substeps, dynamics_every), ``q0`` (n_q,), ``u0`` (n_u,), ``workspace`` (:class:`Workspace` around the coupled
    point at the start), ``udp_port`` and ``params`` (name -> value)."""

    equations: object
    dynamics: object
    coupler: VirtualCoupler
    options: LoopOptions
    q0: np.ndarray
    u0: np.ndarray
    workspace: Workspace
    udp_port: int
    params: dict


@dataclass(frozen=True)
class ServoExport:
    """What :func:`export_servo` wrote: the ``directory``, ``files`` (name -> path: model.c, model.h, period.c,
    period.h, servo.c, Makefile), the log's ``columns`` (CSV header names, in order) and the ``plan`` it runs."""

    directory: pathlib.Path
    files: dict
    columns: tuple
    plan: ServoPlan


def servo_plan(loaded, couple: str | None = None) -> ServoPlan:
    """The servo of ``loaded`` (a :class:`kane.io.model_file.LoadedModel`; its system gains the coupler's inputs)
    coupled at ``couple`` (BODY:X,Y,Z; None: the ``[realtime]`` table's body and point), with the settings of its
    ``[realtime]`` table or kane's defaults. Raises NotSupportedError naming what the servo program does not run."""
    where = loaded.path or loaded.name
    refuse_contacts(loaded, "kane export-c --servo")
    if switching_rules(loaded):
        raise NotSupportedError(f"{where}: kane export-c --servo does not run the [[switching]] rules of this model "
                                f"(the servo program steps one set of equations); run them with kane realtime")
    if loaded.input_laws:
        raise NotSupportedError(f"{where}: kane export-c --servo does not run the [inputs] schedules "
                                f"({', '.join(loaded.input_laws)}); the servo program holds inputs at their defaults")
    table = realtime_settings(loaded)
    o, body, point = realtime_choices(table, {}, couple, f"{where}: kane export-c --servo needs the coupled body: "
                                                         f"give body (and point) in the model file's [realtime] table")
    pose = o["rotational_stiffness"] is not None
    port = add_coupler(loaded.system, body, point, rotational=pose)
    eqs = loaded.derive()
    if eqs.u_dependent:
        raise NotSupportedError(f"{where}: kane export-c --servo does not run dependent speeds "
                                f"({', '.join(map(str, eqs.u_dependent))}: constraints); the servo program steps "
                                f"free equations of motion")
    dyn = eqs.compile()
    options = LoopOptions(rate=o["rate"], duration=o["duration"], substeps=o["substeps"],
                          dynamics_every=o["dynamics_every"])
    period = options.period * o["dynamics_every"]
    k_r = float(o["rotational_stiffness"] or 0.0)
    gains = CouplerGains(float(o["stiffness"]),
                         float(o["stiffness"] * period if o["damping"] is None else o["damping"]), k_r,
                         float(k_r * period if o["rotational_damping"] is None else o["rotational_damping"]))
    params = dict(loaded.parameters)
    coupler = VirtualCoupler(dyn, port, gains, max_force=o["max_force"], params=params,
                             max_torque=o["max_torque"] or np.inf)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names], dtype=float)
    u0 = np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names], dtype=float)
    x0, _ = coupler.point_state(0.0, q0, u0)
    space = Workspace(tuple(x0 - o["workspace"]), tuple(x0 + o["workspace"]), 10.0)
    return ServoPlan(eqs, dyn, coupler, options, q0, u0, space, int(o["udp_port"]), params)


def _c(value: float) -> str:
    """A C double: the shortest repr, INFINITY for +inf; KaneError for NaN or -inf."""
    value = float(value)
    if value == math.inf:
        return "INFINITY"
    if not math.isfinite(value):
        raise KaneError(f"export-c --servo: {value!r} is not a number the servo program can hold")
    return repr(value)


def _point_body(plan: ServoPlan) -> tuple[str, int]:
    """(the C statements of the coupler's body point x, v [, R, w] into out[], the number of parameters p[])."""
    model, cp = plan.dynamics.model, plan.coupler
    groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters, "inputs": model.inputs}
    b = ProgramBuilder(groups, prefix="c")
    kin = TreeKinematics(model, b)
    i = model.body_index(cp.port.body)
    outs = [*kin.point_in_ground(i, cp.port.point), *kin.point_velocity_in_ground(i, cp.port.point)]
    if cp.rotational:
        R = kin.rotation_to_ground(i)
        outs += [R[r, c] for r in range(3) for c in range(3)] + list(kin.angular_velocity_in_ground(i))
    prog = b.build({"out": outs}).select(["out"])
    names = {model.t: "t"}
    for grp, arr in (("q", "q"), ("u", "u"), ("inputs", "w"), ("params", "p")):
        names.update({s: f"{arr}[{k}]" for k, s in enumerate(groups[grp])})
    printer = CPrinter(names)
    lines = []
    for k, (s, e) in enumerate(prog.assignments):
        lines.append(f"    const double z_{k} = {printer.doprint(e)};")
        printer.names[s] = f"z_{k}"
    lines += [f"    out[{j}] = {printer.doprint(e) if e != 0 else '0.0'};" for j, e in enumerate(prog.outputs["out"])]
    return "\n".join(lines), len(model.parameters)


def _columns(pose: bool, nq: int, nu: int) -> tuple:
    """The log's column names: the floats of a kane realtime log's row, then q[i], u[i]."""
    cols = []
    for name in ROW_FIELDS + (POSE_FIELDS if pose else ()):
        cols += [name] if _WIDTH[name] == 1 else [f"{name}[{j}]" for j in range(_WIDTH[name])]
    return tuple(cols + [f"q[{j}]" for j in range(nq)] + [f"u[{j}]" for j in range(nu)])


def _offsets(fmt: str) -> list:
    """The byte offset of each field of the little-endian ``struct`` format ``fmt`` (kane.realtime.udp's)."""
    fields = re.findall(r"\d*[a-zA-Z]", fmt[1:])
    return [struct.calcsize("<" + "".join(fields[:i])) for i in range(len(fields))]


def _bytes(magic: bytes) -> str:
    return ", ".join(f"'{chr(b)}'" for b in magic)


def export_servo(loaded, directory, *, couple: str | None = None) -> ServoExport:
    """Write the servo program of ``loaded`` (see the module docstring) into ``directory`` (created if missing);
    ``couple``: BODY:X,Y,Z instead of the ``[realtime]`` table's body and point. Raises NotSupportedError naming
    what the program does not run, KaneError naming the directory when it cannot be written."""
    plan = servo_plan(loaded, couple)
    directory = pathlib.Path(directory)
    model = plan.dynamics.model
    ce = export_c(plan.equations, directory, q0=plan.q0, u0=plan.u0, params=plan.params,
                  inputs=dict(loaded.inputs), options=CExportOptions(dt=plan.options.period))
    input_names = [str(s) for s in model.inputs]
    idx = [input_names.index(n) for n in plan.coupler.port.inputs] + [0] * (6 - len(plan.coupler.port.inputs))
    pose = plan.coupler.rotational
    body, n_p = _point_body(plan)
    p = model.parameter_values(plan.params)
    state_fmt, reply_fmt = (POSE_STATE_FORMAT, WRENCH_FORMAT) if pose else (STATE_FORMAT, FORCE_FORMAT)
    columns = _columns(pose, ce.sizes["n_q"], ce.sizes["n_u"])
    state_off, reply_off = _offsets(POSE_STATE_FORMAT), _offsets(WRENCH_FORMAT)
    o, g, cp = plan.options, plan.coupler.gains, plan.coupler
    values = {
        "name": "servo", "rate": _c(o.rate), "every": int(o.dynamics_every), "substeps": int(o.substeps),
        "duration": _c(o.duration), "port": plan.udp_port, "pose": int(pose),
        "timeout_periods": max(1, int(math.ceil(o.device_timeout * o.rate - 1e-9))), "hold": _c(_HOLD),
        "gains": ", ".join(_c(v) for v in (g.stiffness, g.damping, g.rotational_stiffness, g.rotational_damping)),
        "point": ", ".join(_c(v) for v in cp.port.point), "max_force": _c(cp.max_force), "max_torque": _c(cp.max_torque),
        "lower": ", ".join(_c(v) for v in plan.workspace.lower),
        "upper": ", ".join(_c(v) for v in plan.workspace.upper),
        "max_speed": _c(plan.workspace.max_speed), "max_angular_speed": _c(plan.workspace.max_angular_speed),
        "idx": ", ".join(str(int(i)) for i in idx), "n_point_p": max(1, n_p),
        "point_p": ", ".join(_c(v) for v in p) or "0.0", "point_body": body,
        "n_edges": len(JITTER_EDGES_S), "edges": ", ".join(_c(v) for v in JITTER_EDGES_S),
        "columns": ",".join(columns), "state_size": struct.calcsize(state_fmt),
        "reply_size": struct.calcsize(reply_fmt), "version": POSE_VERSION if pose else PROTOCOL_VERSION,
        "state_magic": _bytes(STATE_MAGIC), "reply_magic": _bytes(FORCE_MAGIC),
        "row_base": ROW_POSE if pose else ROW_POINT,
        # (version 1's packets are the first fields of version 2's)
        **dict(zip(("off_seq", "off_pos", "off_quat", "off_w"), (state_off[i] for i in (3, 5, 7, 8)))),
        **dict(zip(("off_t", "off_f"), (reply_off[i] for i in (4, 5)))),
    }
    texts = {"period.c": PERIOD_SOURCE, "period.h": Template(PERIOD_HEADER).substitute(cdef=PERIOD_CDEF),
             "servo.c": Template(SERVO_SOURCE).substitute(values), "Makefile": SERVO_MAKEFILE}
    files = {"model.c": ce.model_c, "model.h": ce.model_h}
    try:
        for name, text in texts.items():
            (directory / name).write_text(text, encoding="utf-8")
            files[name] = directory / name
        for name in ("main.c",):  # the C export's demo: not part of the servo program
            (directory / name).unlink(missing_ok=True)
    except OSError as exc:
        raise KaneError(f"export-c --servo: cannot write into the output directory {directory}: "
                        f"{exc.strerror or exc}") from None
    return ServoExport(directory, files, columns, plan)
