"""Contact runs written as they go (``kane simulate MODEL`` of a model with collision shapes): the samples, energy
and per-pair outputs reach the run file in blocks while the run proceeds, and a run stopped by Ctrl-C or SIGTERM,
by its step or wall-time limit, or by a failure leaves the file closed with every sample up to the stop.

Time stepping hands a :class:`.contact_samples.SampleBlock` to its ``sink`` every ``every`` steps from
:func:`.contact_stepping.simulate_contacts` (``sink``, ``every``, ``watch``: the same loop as a run in memory); the
event-driven scheme hands its blocks from :func:`.contact_events.simulate_events` (``sink``, ``window``).
:func:`write_contact_stream` runs either with a :class:`kane.io.trajectory.TrajectoryWriter` open, turns each
block into the file's samples and ``"<pair>.<field>"`` series (``outputs``: :func:`.contact_run.pair_block_outputs`),
and closes the file as the run pipeline (:func:`kane.simulate.run`) does: "completed"; "interrupted: SIGINT" / "SIGTERM" / "KeyboardInterrupt"
(:func:`kane.simulate.run_limits.interrupted_status`), the exception going on; "failed: <reason>" for a step or
wall-time limit (:func:`kane.simulate.run_limits.limit_reached`), a :class:`.contact_events.ContactInconsistencyError`,
an integrator failure, a Zeno run or a step that raised, then a :class:`kane.simulate.SimulationError` naming the
time, the contact modes, the last good state and the file. Every stopped run's file holds an event record
``"stop"`` (kind "stop") at the stop time with ``data``: ``status``, ``modes`` (contact name -> mode), ``q``,
``u`` (the last good state) and ``t_good`` [s].

Why not through :func:`kane.simulate.run`: the event-driven scheme integrates each segment between events in one
scipy ``solve_ivp`` call (not step by step), so it has no ``step()`` for run's stepper loop; both schemes here use
run's limit, interrupt and status helpers and the writer's status API instead of copies of them. An event-driven
run takes signals and checks its limits at each block (every ``every`` samples or event); SIGTERM and a Ctrl-C
outside ``kane simulate`` stop it at once and keep the samples up to the last block.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..io.trajectory import EventRecord, Stats
from ..simulate.run_limits import interrupt_signals, interrupted_status, limit_reached
from ..simulate.simulator import SimulationError
from .contact_events import ContactInconsistencyError, simulate_events
from .contact_samples import SampleBlock, modes_text
from .contact_stepping import ContactOptions, ContactScheme, simulate_contacts

__all__ = ["STREAM_EVERY", "run_scheme", "write_contact_stream"]

STREAM_EVERY = 100
"""Samples per block (time stepping: steps between blocks; event-driven: the integration window)."""


class _LimitReached(SimulationError):
    """A step or wall-time limit stopped the run (its state: the stream's last sample)."""


@dataclass
class _Progress:
    """What the CLI's progress reads (``t`` [s], ``stats``) and where the run stands: the last good sample
    (``t``, ``q``, ``u``), the contact ``modes`` there, ``steps`` (samples advanced) and ``wall`` [s]."""

    t: float
    stats: Stats
    q: np.ndarray
    u: np.ndarray
    modes: tuple = ()
    steps: int = 0
    evaluations: int = 0
    wall: float = 0.0


class _Stream:
    """The sink of one run: each block to the writer, progress, limits and the stop record."""

    def __init__(self, writer, scheme: ContactScheme, outputs, progress, limits, method: str, q0, u0):
        self.writer, self.scheme, self.outputs = writer, scheme, outputs
        self.progress, self.limits, self.method = progress, limits, method
        self.state = _Progress(0.0, Stats(method=method), np.array(q0), np.array(u0))
        self.previous = None  # the last sample of the previous block (time stepping records end one sample on)
        self.started = time.perf_counter()
        self.loop = ("python", f"contact {scheme.value} loop")  # (loop, loop_reason) the run file records

    def stats(self, h: float) -> Stats:
        s = self.state
        return Stats(n_fev=s.evaluations, n_steps=s.steps, n_accepted=s.steps, n_rejected=None,
                     wall_time_s=time.perf_counter() - self.started, method=f"{self.method}, h = {h:g} s",
                     loop=self.loop[0], loop_reason=self.loop[1])

    def __call__(self, block: SampleBlock) -> None:
        m = block.t.shape[0]
        if m:
            self.writer.append_block(block.t, block.q, block.u, block.energy, self.outputs(block, self.previous))
            self.previous = (block.start + m - 1, block.t[-1], block.q[-1])
        for ev in block.events:
            self.writer.add_event(EventRecord(float(ev.t), f"{ev.kind} {ev.contact}", "contact",
                                              {"contact": ev.contact, "modes": dict(ev.modes)}))
            self.writer.start_mode(float(ev.t), modes_text(ev.modes))
        s = self.state
        if m:
            s.t, s.q, s.u = float(block.t[-1]), block.q[-1].copy(), block.u[-1].copy()
            s.steps = block.start + m - 1
        s.modes, s.evaluations = block.modes, s.evaluations + block.evaluations
        if self.scheme is ContactScheme.EVENT_DRIVEN:
            self.check()

    def check(self, steps: int | None = None, t: float | None = None) -> None:
        """Take the progress (and its signals) and stop at a limit (a SimulationError after closing the file)."""
        s = self.state
        s.stats = Stats(n_steps=s.steps if steps is None else steps, method=self.method)
        if self.progress is not None:
            self.progress(s)
        reason = limit_reached(s.steps if steps is None else steps, time.perf_counter() - self.started,
                               s.t if t is None else t, *self.limits)
        if reason is not None:
            raise _LimitReached(reason, reason=reason, t=s.t, mode=modes_text(s.modes), t_good=s.t, q=s.q, u=s.u)

    def stop(self, status: str, t: float, q, u, modes: tuple, h: float):
        """Close the file with ``status`` and the stop record (module docstring); returns its path."""
        self.writer.add_event(EventRecord(float(t), "stop", "stop", {
            "status": status, "modes": dict(modes), "q": np.asarray(q, dtype=float).tolist(),
            "u": np.asarray(u, dtype=float).tolist(), "t_good": float(self.state.t)}))
        return self.writer.close(status, self.stats(h))


def write_contact_stream(writer, scheme: ContactScheme, run: Callable, outputs: Callable, h: float, q0, u0, *,
                         method: str, progress=None, limits=(None, None)):
    """Run ``run(sink, watch)`` (a scheme's run, calling ``sink(block)`` with its :class:`SampleBlock` and, in
    time stepping, ``watch(k, t)`` before each step) with ``writer`` (a :class:`kane.io.trajectory.TrajectoryWriter`,
    open) taking the blocks, and close it (module docstring); returns the file's path. ``outputs(block,
    previous)``: the block's series name -> (m,) (``previous``: (index, t, q) of the sample before it, or None);
    ``h`` [s] the step or sampling interval; ``progress(state)``: the CLI's progress (``t``, ``stats``);
    ``limits``: (max_steps, max_wall_time [s]) (None: none)."""
    stream = _Stream(writer, scheme, outputs, progress, tuple(limits), method, q0, u0)
    stream.writer.start_mode(0.0, "start")

    def watch(k, t):
        stream.check(k, t)

    try:
        with interrupt_signals(signals=(signal.SIGTERM,), only_default=True):
            run(stream, watch)
    except (SimulationError, ContactInconsistencyError) as exc:
        inconsistent, s = isinstance(exc, ContactInconsistencyError), stream.state
        t, q, u = (s.t, s.q, s.u) if isinstance(exc, _LimitReached) or exc.q is None else (exc.t, exc.q, exc.u)
        modes = exc.modes if inconsistent else s.modes
        text = modes_text(modes)
        reason = str(exc) if inconsistent else exc.reason
        status = f"failed: {reason}" + ("" if inconsistent or "modes:" in reason else f" (modes: {text})")
        path = stream.stop(status, t, q, u, modes, h)
        fmt = ", ".join
        message = (f"contact run failed at t = {t!r} s in contact modes '{text}': {reason}\n"
                   f"last good state at t = {t!r} s:\n"
                   f"  q: {fmt(f'{v:.12g}' for v in np.ravel(q))}\n  u: {fmt(f'{v:.12g}' for v in np.ravel(u))}\n"
                   f"results so far saved to {path}")
        raise SimulationError(message, reason=reason, t=t, mode=text, t_good=t, q=q, u=u) from exc
    except BaseException as exc:
        s = stream.state
        if writer.is_open:
            stream.stop(interrupted_status(exc), s.t, s.q, s.u, s.modes, h)
        raise
    return stream.writer.close("completed", stream.stats(h))


def run_scheme(scheme: ContactScheme, dynamics, contacts: Callable, q0, u0, h: float, t_end: float,
               options: ContactOptions, bodies, params, every: int = STREAM_EVERY) -> Callable:
    """The ``run(sink, watch)`` of :func:`write_contact_stream` for ``scheme``."""
    def run(sink, watch):
        if scheme is ContactScheme.EVENT_DRIVEN:
            simulate_events(dynamics, contacts, q0, u0, h, t_end, options, bodies, params, sink=sink, window=every)
        else:
            simulate_contacts(dynamics, contacts, q0, u0, h, t_end, options, bodies, params, sink=sink, every=every,
                              watch=watch)
    return run
