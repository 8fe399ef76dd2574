"""The Python side of the haptic period in C (issue 32): :class:`LoopPath` (which period runs: the C loop of
:mod:`.c_period` in a native thread that holds no GIL, or the Python period of :class:`kane.realtime.RealtimeLoop`),
:func:`why_not_c` (what keeps a loop on the Python path) and :func:`run_c`, which starts the C thread, fills its
device ring ahead, drains its log ring into the HDF5 log (:class:`kane.realtime.log.RealtimeLog`, whose writer is a
separate process on the real clock), supervises it (stop, errors) and builds the loop's result and statistics from
the C counters.

What runs in C: a device read by ``read(t)`` that depends on t only (a :class:`kane.realtime.Replay` of a recorded
log: sampled ahead into the ring, each sample checked by :func:`kane.realtime.check_sample` as it is written), the
point or pose coupler, the compiled RK4 step of a plain model (single rate, or the dynamics every k periods in the
loop's thread as :class:`kane.realtime.multirate.SlowDynamics`), and the compiled modes of a switching plant whose
switches are Locks on time intervals (:mod:`kane.realtime.c_switching`: the modes, the lock impulses, the event
records). Anything else (a device that reacts to the forces, such as the simulated hand; switching on state events
or with modes run on line; rolling plants; scheduled inputs; the dynamics in a worker process; the Python engine)
runs on the Python path, and the log's ``counts`` attribute says which path ran (``loop_path``) and why
(``loop_path_reason``).
"""

from __future__ import annotations

import enum
import math
import os
import socket
import sys
import threading
import time
import warnings

import numpy as np

from ..errors import KaneError
from .c_period_text import ROW_POINT, ROW_POSE
from .devices import Replay
from .multirate import SlowDynamics
from .plants import CompiledPlant
from .stats import DeadlineStats, DeadlineSummary
from .udp import UdpDevice

__all__ = ["LoopPath", "why_not_c", "run_c"]

_POLL = 5e-3  # [s] between the supervisor's visits to the rings on the real clock: at least this
_POLL_MAX = 50e-3  # [s] and at most this; a quarter of the time the C loop takes to empty or fill a ring between
_NICE = 10  # the supervisor thread's nice value above the C thread's (the log's writer process runs at +10 too)


class LoopPath(enum.Enum):
    """PYTHON: the period is Python calling C (kane.realtime.loop); C: the period is one C function in a native
    thread (kane.realtime.c_period), falling back to Python (recorded in the log) where a piece is not compiled;
    AUTO: C where it can, silently."""

    PYTHON = "python"
    C = "c"
    AUTO = "auto"


def why_not_c(loop, inputs) -> str | None:
    """None when ``loop`` (a :class:`kane.realtime.RealtimeLoop` being built) can run its period in C; otherwise
    why not, in a phrase."""
    opts, plant, cpl = loop.options, loop.plant, loop.coupler
    if inputs is not None:
        return "scheduled inputs are evaluated in Python"
    if not isinstance(loop.device, (Replay, UdpDevice)):
        return (f"the device ({type(loop.device).__name__}) is neither sampled ahead (a Replay is) nor read in C (a "
                "UdpDevice is)")
    base = plant.plant if isinstance(plant, SlowDynamics) else plant
    from .c_switching import SWITCHING_PLANTS, switch_plan

    if isinstance(base, SWITCHING_PLANTS):  # which of its switches C could run, and why it does not
        if base is not plant:
            return "the slow-rate scheme over a switching plant is not run in C"
        reason = switch_plan(base, float(base.state()[0])).reason
        if reason is not None:
            return reason
    elif not isinstance(base, CompiledPlant):
        return f"the plant ({getattr(plant, 'kind', type(plant).__name__)}) is not the compiled engine"
    if opts.dynamics_process:
        return "the dynamics step in a worker process"
    from ..codegen.c_backend import CFunction

    if not isinstance(cpl._fn, CFunction) or (cpl._full and not isinstance(cpl._u_full, CFunction)):
        return "the coupler's point is not compiled to C"
    try:
        from .c_period import period_library

        period_library()
        if isinstance(base, SWITCHING_PLANTS):
            from .c_switching import switching_library

            switching_library()
    except KaneError as exc:
        return f"the C period did not build: {exc}"
    return None


def run_c(loop) -> tuple:
    """Run ``loop``'s periods in C; returns the fields of its :class:`kane.realtime.LoopResult`, in order (the log
    closed)."""
    from .c_period import STATUS, PeriodContext

    opts, dev, cpl, log = loop.options, loop.device, loop.coupler, loop.log
    plant = loop.plant
    base = plant.plant if isinstance(plant, SlowDynamics) else plant
    period, rate = opts.period, opts.rate
    n_periods = int(round(opts.duration * rate)) if math.isfinite(opts.duration) else -1
    virtual = opts.clock.value == "virtual"  # ClockMode.VIRTUAL (kane.realtime.loop imports this module)
    rot = cpl.rotational
    t_start, q_start, u_start = base.state()
    nq, nu = q_start.shape[0], u_start.shape[0]
    from .c_switching import SWITCHING_PLANTS, SwitchContext

    sw = SwitchContext(base) if isinstance(base, SWITCHING_PLANTS) else None  # a ModePlant's period in C
    modes = {}  # mode name -> its index in the log (a switching plant's, in the order they appear)
    ctx = PeriodContext(
        stepper=None if sw else base.stepper, switching=sw, coupler=cpl, index=base.index, t0=float(t_start),
        period=period, n_periods=n_periods,
        substeps=int(opts.substeps), every=int(opts.dynamics_every), virtual=virtual, spin=float(opts.spin),
        timeout_periods=max(1, int(math.ceil(opts.device_timeout * rate - 1e-9))), priority=int(opts.priority),
        dev_cap=max(1024, int(min(rate, 1e5) / 2)), row_cap=max(4096, int(min(rate, 1e5))),
        stat_cap=n_periods if 0 < n_periods <= 1 << 22 else 1 << 20, max_force=float(cpl.max_force))
    a = ROW_POSE if rot else ROW_POINT
    every = int(opts.dynamics_every)
    steps = [(float(t_start), np.array(q_start), np.array(u_start))]
    taken, shown = [0], []  # rows drained; (t, force, torque) blocks handed to the device once the loop ends

    def sink(rows):
        k0 = taken[0]
        shown.append((rows[:, 0].copy(), rows[:, 13:16].copy(), rows[:, 23:26].copy() if rot else None))
        if sw is not None:  # C's mode index (a bit per Lock) -> the log's
            rows[:, 20] = [modes.setdefault(sw.names[int(m)], len(modes)) for m in rows[:, 20].tolist()]
        if every > 1:  # the plant's own state after each slow step: rows k0 + j > 0 with k0 + j a multiple of k
            j0 = (-k0) % every or (every if k0 == 0 else 0)
            for row in rows[j0::every]:
                steps.append((float(row[0]), np.array(row[a:a + nq]), np.array(row[a + nq:a + nq + nu])))
        if log is not None:
            log.record_block(rows[:, :a], rows[:, a:a + nq], rows[:, a + nq:a + nq + nu])
        taken[0] = k0 + len(rows)
        if log is not None:
            log.housekeeping(None)

    dev.open()
    udp = isinstance(dev, UdpDevice)
    ahead = 0 if udp else n_periods if n_periods > 0 else 1 << 62
    try:
        if udp:
            udp_to_c(dev, ctx.c)
        ctx.fill(dev, rot, float(t_start), period, min(ahead, ctx.device.shape[0]))
        cpus = _cpu_plan() if opts.pin_cpu and not virtual else None
        if cpus is not None:  # the C thread inherits this thread's CPUs: its own one, set just before its start
            os.sched_setaffinity(0, {cpus["c_thread"]})
        try:
            rc = ctx.lib.kane_period_start(ctx.c)
        finally:
            if cpus is not None:
                os.sched_setaffinity(0, cpus["others"])
                if log is not None and log.writer_pid is not None:
                    os.sched_setaffinity(log.writer_pid, cpus["others"])
        if rc != 0:
            raise KaneError(f"C period: the native thread did not start (pthread_create returned {rc})")
        # after the C thread's creation (it keeps this thread's nice value); not on the virtual clock, where the C
        # loop waits for this thread's samples
        niced = None if virtual else _lower_priority()
        poll = min(_POLL_MAX, max(_POLL, 0.25 * period * min(ctx.device.shape[0], ctx.rows.shape[0])))
        try:
            while ctx.running():
                if loop._stop.is_set():
                    ctx.stop()
                ctx.fill(dev, rot, float(t_start), period, ahead)
                ctx.drain(sink)
                if sw is not None:
                    sw.drain()
                if not virtual or ctx.produced >= ahead:
                    time.sleep(poll)
        finally:
            ctx.stop()
            ctx.lib.kane_period_join(ctx.c)
            ctx.drain(sink)
            if sw is not None:
                sw.finish()
    finally:
        zero3 = (0.0, 0.0, 0.0)
        if udp:
            udp_from_c(ctx.c, dev)
            shown = []  # sent by C each period
        try:  # what the replayed device displayed, period by period, then zero (as the Python period writes them)
            for t_rows, forces, torques in shown:
                for j, t in enumerate(t_rows.tolist()):
                    dev.write_force(t, tuple(-forces[j]))
                    if rot:
                        dev.write_torque(t, tuple(-torques[j]))
            t_last = t_start + max(ctx.c.periods - 1, 0) * period  # the last period's time, as the Python period
            dev.write_force(t_last, zero3)
            if rot:
                dev.write_torque(t_last, zero3)
        finally:
            dev.close()
    c = ctx.c
    if c.sched_result:
        warnings.warn(f"real-time priority {opts.priority} refused (pthread_setschedparam returned "
                      f"{c.sched_result}); the C loop ran at normal priority", RuntimeWarning, stacklevel=3)
    status = STATUS[c.status]
    if c.status == 1:
        status = loop._stop_status
    elif c.status == 2:
        status = f"device stopped answering at t = {c.status_t:.6g} s"
    elif c.status == 3:
        status = (f"failed: step: the state is not finite after the step from t = {c.status_t:.9g}; q, u hold the "
                  "last finite state")
    elif c.status >= 5:
        status = f"failed: {sw.failure(c.status)}"
    summary, stats = c_summary(ctx, period)
    loop.stats = stats
    t_end, q_end, u_end = base.state()
    t_end, q_end, u_end = float(t_end), np.array(q_end), np.array(u_end)
    if every > 1 and c.m_left == 0 and c.periods > 0 and c.status != 3:
        steps.append((t_end, q_end.copy(), u_end.copy()))
    if every > 1 and c.m_left > 0:  # between slow steps: the extrapolated state, as SlowDynamics.state()
        h = c.m_left * period
        qdot = np.frombuffer(ctx.ffi.buffer(c.qdot, 8 * nq), dtype=float)
        t_end, q_end = t_end + h, q_end + h * qdot
    counts = {"refused": int(c.refused), "missing": int(c.missing), "saturated": int(c.saturated),
              "engine": loop.engine.value, "plant": plant.kind, "substeps": int(opts.substeps),
              "late_dynamics_steps": 0, "device": dict(getattr(dev, "counts", {})), "loop_path": "c",
              "log_ring_waits": int(c.log_waits), "supervisor_nice": niced,
              "cpus": cpus}
    path = None
    if log is not None:
        path = log.close(status, summary.as_dict(), counts, modes=list(modes) if sw else ["single"],
                         events=base.events if sw else (),
                         steps=steps if every > 1 else None)
        if log.writer_failure is not None:
            status = f"{status}; {log.writer_failure}"
    return (status, summary, int(c.refused), int(c.missing), int(c.saturated), float(c.port_energy), t_end, q_end,
            u_end, loop.engine, path, plant.kind, "c")


def _cpu_plan() -> dict | None:
    """{"c_thread": the last CPU this thread may run on, "others": the rest (sorted)}, or None with fewer than
    two CPUs (or no affinity on this system): nothing is pinned."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (OSError, AttributeError):
        return None
    if len(allowed) < 2:
        return None
    return {"c_thread": allowed[-1], "others": allowed[:-1]}


def _lower_priority() -> int | None:
    """Raise the calling thread's nice value by :data:`_NICE` (at most 19; lowering a priority needs no
    privilege), so that the C loop's thread wins the CPU from the supervisor; the new value, or None where the
    system refuses (no per-thread priority)."""
    tid = threading.get_native_id()
    try:
        nice = min(19, os.getpriority(os.PRIO_PROCESS, tid) + _NICE)
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except (OSError, AttributeError):
        return None
    return nice


def c_summary(ctx, period: float) -> tuple[DeadlineSummary, DeadlineStats]:
    """The :class:`DeadlineSummary` of a C run, as :class:`DeadlineStats` makes it: percentiles from the compute
    and lateness times C kept, the counts of misses and the lateness histogram from C's own counters (the same
    meaning: a period misses when lateness + compute > T; lateness binned by JITTER_EDGES_S)."""
    c = ctx.c
    n = int(c.periods)
    cap = ctx.compute.shape[0]
    if n <= cap:
        late, comp = ctx.late[:n], ctx.compute[:n]
    else:  # the last cap periods, in order
        i = n % cap
        late, comp = np.roll(ctx.late, -i), np.roll(ctx.compute, -i)
    stats = DeadlineStats.from_rows(period, late, comp)
    stats.missed = int(c.missed)
    s = stats.summary()
    summary = DeadlineSummary(s.period, n, int(c.missed), s.compute_p50, s.compute_p99, float(c.compute_max),
                              s.lateness_p99, float(c.late_max), tuple(int(k) for k in ctx.late_hist))
    return summary, stats


_UDP_COUNTS = ("received", "used", "lost", "late", "replayed", "malformed", "oversized", "superseded", "replies",
               "foreign")


def _ip_number(host: str) -> int:
    """An IPv4 address as the C loop reads ``sin_addr.s_addr`` (its bytes in network order, read natively)."""
    return int.from_bytes(socket.inet_aton(host), sys.byteorder)


def udp_to_c(dev: UdpDevice, c) -> None:
    """The opened :class:`UdpDevice`'s state (socket, pairing, sequence numbers seen, counts, held sample, its
    workspace) into the C loop's struct ``c``: the C period reads and answers the device from here on."""
    c.dev_kind, c.udp_fd, c.udp_pose = 1, dev.sock.fileno(), int(dev.pose)
    if dev.paired is not None:
        c.udp_paired, c.udp_ip, c.udp_port = 1, _ip_number(dev.paired[0]), int(dev.paired[1])
    if dev._peer_filter is not None:
        c.udp_has_filter, c.udp_filter_ip = 1, _ip_number(dev._peer_filter[0])
        c.udp_filter_port = int(dev._peer_filter[1])
    c.udp_have_last = int(dev.last_seq >= 0)
    c.udp_last, c.udp_first = max(dev.last_seq, 0), max(dev._first_seq, 0)
    seen = list(dev._seen)
    for i, seq in enumerate(seen):
        c.udp_seen[i] = seq
    c.udp_n_seen, c.udp_seen_pos = len(seen), len(seen) % len(c.udp_seen)
    for i, name in enumerate(_UDP_COUNTS):
        c.udp_counts[i] = dev.counts[name]
    sample = dev._sample
    if sample is not None:
        c.udp_have_sample, c.udp_fresh_at = 1, int(dev._fresh_at * 1e9)
        values = [0.0, 0.0, *sample.position, *sample.velocity]
        if dev.pose:
            values += [float(a) for row in sample.orientation for a in row] + list(sample.angular_velocity)
        for i, v in enumerate(values):
            c.udp_sample[i] = v
    c.udp_hold_ns = int(dev.hold * 1e9)
    ws = dev.workspace
    for i in range(3):
        c.ws_lo[i], c.ws_hi[i] = ws.lower[i], ws.upper[i]
    c.ws_max_speed, c.ws_max_angular = ws.max_speed, ws.max_angular_speed


def udp_from_c(c, dev: UdpDevice) -> None:
    """The C loop's counts, newest sequence number and pairing back into ``dev`` (which then writes the zero force
    and closes as the Python period's device does)."""
    for i, name in enumerate(_UDP_COUNTS):
        dev.counts[name] = int(c.udp_counts[i])
    if c.udp_have_last:
        dev.last_seq = int(c.udp_last)
    if c.udp_paired:
        dev._peer = (socket.inet_ntoa(int(c.udp_ip).to_bytes(4, sys.byteorder)), int(c.udp_port))
