"""Runaway and interrupted runs: the step and wall-time limits, and SIGTERM handled like Ctrl-C.

A runaway run (a stiff spring, huge speeds, a diverging input) takes ever smaller or ever more steps: the
Simulator stops it after ``max_steps`` attempted steps or ``max_wall_time`` seconds of stepping
(:func:`run_limits` sets the defaults), saving the state and the samples so far.

A process manager, a batch scheduler or ``kill`` sends SIGTERM; by default Python then dies at once and a
trajectory file loses its last samples and its status. Inside :func:`interrupt_signals` both signals raise
:class:`RunInterrupted` (a ``KeyboardInterrupt``), so the code that runs the simulation closes its file with
status "interrupted: SIGTERM" (or SIGINT) and keeps every sample. With ``defer=True`` a signal is only recorded
(``pending``) and the stepping loop raises it between steps (:meth:`InterruptSignals.check`); a second signal
raises at once.
"""

from __future__ import annotations

import math
import numbers
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kane.errors import ArgumentError
from kane.options import Method

__all__ = ["RunInterrupted", "InterruptSignals", "interrupt_signals", "interrupted_status", "run_limits",
           "limit_reached", "DEFAULT_MAX_STEPS"]

DEFAULT_MAX_STEPS = 1_000_000  # attempted steps of an adaptive method when max_steps is None


class RunInterrupted(KeyboardInterrupt):
    """The run was stopped by a signal; ``signal_name`` is "SIGINT" (Ctrl-C) or "SIGTERM"."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        self.signal_name = signal.Signals(signum).name
        super().__init__(f"interrupted by {self.signal_name}")


class InterruptSignals:
    """State of :func:`interrupt_signals`: ``defer`` (record signals instead of raising), ``pending`` (the
    number of a recorded signal or None) and ``installed`` (False off the main thread, where nothing is done)."""

    def __init__(self, defer: bool):
        self.defer = bool(defer)
        self.pending: int | None = None
        self.installed = False

    def handle(self, signum: int, frame) -> None:
        """The signal handler: record the signal when deferring (the first time), raise otherwise."""
        if self.defer and self.pending is None:
            self.pending = signum
            return
        raise RunInterrupted(signum)

    def check(self) -> None:
        """Raise :class:`RunInterrupted` for a recorded signal (call between steps)."""
        if self.pending is not None:
            signum, self.pending = self.pending, None
            raise RunInterrupted(signum)


@contextmanager
def interrupt_signals(defer: bool = False, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM),
                      only_default: bool = False) -> Iterator[InterruptSignals]:
    """Within the block, ``signals`` raise :class:`RunInterrupted` (or are recorded, with ``defer``); the
    previous handlers come back at the end. ``only_default`` leaves a signal alone when the program has already
    set its own handler. Off the main thread (where Python cannot set handlers) it does nothing."""
    state = InterruptSignals(defer)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            current = signal.getsignal(sig)
            if only_default and current not in (signal.SIG_DFL, signal.default_int_handler):
                continue
            previous[sig] = current
            signal.signal(sig, state.handle)
        state.installed = bool(previous)
    try:
        yield state
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def interrupted_status(exc: BaseException) -> str:
    """The status a trajectory file gets when ``exc`` stopped the run: "interrupted: SIGTERM" or "...: SIGINT"
    for a signal, "interrupted: KeyboardInterrupt" for Ctrl-C under Python's own handler, else "failed: ..."."""
    if isinstance(exc, RunInterrupted):
        return f"interrupted: {exc.signal_name}"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted: KeyboardInterrupt"
    return f"failed: interrupted by {type(exc).__name__}"


def run_limits(method: Method, max_steps: int | None,
               max_wall_time: float | None) -> tuple[int | None, float | None]:
    """The step limit of ``method`` (``max_steps`` None: DEFAULT_MAX_STEPS for an adaptive method, no limit for a
    fixed-step one, whose step count (t_end - t0) / dt is known) and the wall-time limit [s] (None: none),
    checked; raises ArgumentError for a limit that is not a positive number."""
    if max_steps is None:
        max_steps = DEFAULT_MAX_STEPS if method.adaptive else None
    elif isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) or max_steps < 1:
        raise ArgumentError(f"max_steps must be a whole number of steps >= 1 (or None for the default), "
                            f"got {max_steps!r}")
    if max_wall_time is not None:
        try:
            max_wall_time = float(max_wall_time)
        except (TypeError, ValueError):
            max_wall_time = math.nan
        if not max_wall_time > 0:
            raise ArgumentError(f"max_wall_time must be a time > 0 [s] (or None for no limit), got "
                                f"{max_wall_time!r}")
    return (None if max_steps is None else int(max_steps)), max_wall_time


def limit_reached(n_steps: int, wall_s: float, t: float, max_steps: int | None,
                  max_wall_time: float | None) -> str | None:
    """Why a run must stop after ``n_steps`` attempted steps and ``wall_s`` [s] of stepping, at time t [s], or
    None while it is within ``max_steps`` and ``max_wall_time`` [s] (None: no limit)."""
    if max_steps is not None and n_steps >= max_steps:
        return (f"the step limit was reached: {n_steps} steps (max_steps = {max_steps}) by t = {t!r} s; the run "
                f"may be stiff (try method 'radau' or 'bdf') or diverging; raise max_steps to go on")
    if max_wall_time is not None and wall_s >= max_wall_time:
        return (f"the wall-time limit was reached: {wall_s:.1f} s of stepping (max_wall_time = {max_wall_time:g} "
                f"s) after {n_steps} steps, by t = {t!r} s; raise max_wall_time to go on")
    return None
