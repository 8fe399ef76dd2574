"""Multi-rate real-time loop with the dynamics in a process of their own (issue 14, item 6): the haptic loop runs
the coupler at its rate while a forked worker process steps the virtual system once every k periods, the common
architecture of haptic rendering with a slow simulation (a servo loop at 1 kHz, the simulation in another thread or
process; e.g. Barbagli, Prattichizzo and Salisbury 2003, multirate coupling).

The plant's physics are those of :class:`kane.realtime.SlowDynamics`: the mean of the k coupler forces of a slow
interval [t_j, t_j + k T) is held over that interval, whatever the timing (the tests check the steps against an
offline RK4 integration of the logged forces). What differs is when the loop sees a step's result: the step over
[t_j, t_j + k T) is handed to the worker at the interval's end and taken back as soon as it is done, by the end of
the next interval when the worker keeps up (a step still out then counts in ``late_steps``; the loop waits only
when three are out). Meanwhile the coupler sees the newest state returned, extrapolated to the loop's time (first
order in q, the speeds held), up to 2 k T ahead. This delay narrows the gains' stable region
(:mod:`.coupler_stability`).

The worker is forked from the loop's process when the loop is built (POSIX), so it steps the very plant the loop
built (compiled steppers included) without pickling it; it runs at nice 10, so that the loop's thread goes first.
``process=False`` (the virtual clock) runs each step in the loop's own process when it is handed over and takes it
back one interval later: the slowest worker that keeps up, and a run that does not depend on the machine.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import warnings

import numpy as np

from ..errors import ArgumentError, KaneError

__all__ = ["AsyncDynamics"]

_MAX_OUT = 3  # steps handed to the worker and not yet back, at most (then the loop waits)


def _serve(plant, conn) -> None:
    """The worker: for each (period [s], n, force (3,), w) advance ``plant`` and send back (t, q, u, mode, new
    events), or ("error", message); None ends it. Ctrl-C belongs to the loop, which stops the worker itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.nice(10)  # the loop's thread first where they want the same core
    seen = 0
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the loop's process is gone
            return
        if job is None:
            return
        conn.send(_step(plant, job, seen))
        seen = len(getattr(plant, "events", ()))


def _step(plant, job, seen: int):
    """One job on ``plant``: (t, q, u, mode, the events after the first ``seen``), or ("error", message)."""
    period, n, force, w = job
    try:
        plant.w[:] = w
        plant.advance(period, n, force)
        t, q, u = plant.state()
    except Exception as exc:  # the loop reports it as the run's failure
        return "error", f"{type(exc).__name__}: {exc}"
    events = list(getattr(plant, "events", ()))[seen:]
    return float(t), np.array(q, dtype=float), np.array(u, dtype=float), getattr(plant, "mode", "single"), events


class AsyncDynamics:
    """Wraps a plant (``state()`` -> (t [s], q (n_q,), u (n_u,)), ``advance(period [s], n, force (3,) [N])``,
    ``w`` its inputs) so that it is stepped once every ``every`` calls of ``advance``, over ``every`` periods with
    the mean force, in a forked worker process (``process``: its result taken back as soon as it is done; else in
    this process: one slow step later). ``state()`` is the newest result extrapolated to the loop's time with
    ``dynamics.qdot(t, q, u, params)``. ``close()`` takes back the steps out and ends the worker. ``late_steps``
    counts the steps not back by the end of the interval after their own; ``steps`` holds the plant's own states
    (t [s], q, u) at the start and after each step taken back."""

    def __init__(self, plant, every: int, dynamics, params=None, *, process: bool = True):
        if int(every) != every or every < 2:
            raise ArgumentError(f"dynamics in a process: dynamics_every must be an integer >= 2, got {every!r}")
        self.plant, self.every, self.dynamics, self.params = plant, int(every), dynamics, params
        self.w = np.array(plant.w, dtype=float)  # the inputs the loop writes (schedules), sent with each step
        t, q, u = plant.state()
        self._base(float(t), np.array(q, dtype=float), np.array(u, dtype=float))
        self.steps = [(self._t, self._q, self._u)]  # the plant's own states: the start, then each step taken back
        self._mode = getattr(plant, "mode", "single")
        self._events: list = []
        self._m, self._sum, self._period = 0, 0.0, 0.0
        self._pending = None  # the in-process result waiting to be taken (process=False)
        self._out = 0  # steps handed over and not yet taken back
        self.late_steps = 0
        self._conn = self._proc = None
        if process and os.name != "posix":
            warnings.warn("dynamics in a process need fork (POSIX); they run in the loop's process", RuntimeWarning,
                          stacklevel=2)
            process = False
        if process:
            ctx = multiprocessing.get_context("fork")
            self._conn, child = ctx.Pipe()
            with warnings.catch_warnings():  # fork of a process with other threads (a test runner's): the worker
                warnings.simplefilter("ignore", DeprecationWarning)  # only steps the plant, taking no lock of theirs
                self._proc = ctx.Process(target=_serve, args=(plant, child), name="kane-dynamics", daemon=True)
                self._proc.start()
            child.close()
            gc.collect()  # touches every object once now: their pages, shared with the worker, are copied before
            # the loop's first period, not by the periods' first writes (copy-on-write faults of milliseconds)

    def _base(self, t: float, q, u) -> None:
        """The newest state of the plant and its q' (the extrapolation's start); the loop's time is ``_p`` periods
        after it."""
        self._t, self._q, self._u = t, q, u
        self._qdot = np.asarray(self.dynamics.qdot(t, q, u, self.params), dtype=float).reshape(-1)
        self._p = 0

    def state(self):
        h = self._p * self._period
        return self._t + h, self._q + h * self._qdot, self._u

    def advance(self, period: float, n: int, force) -> None:
        """Period ``period`` [s] with the coupler ``force`` (3,) [N]. The worker's results are taken as they come
        back; every ``every``-th call the next step, over every * period with the mean force of the calls since, is
        handed over (a step still out then is late; with ``_MAX_OUT`` out, the loop waits for the oldest)."""
        self._period = float(period)
        self._sum = self._sum + np.asarray(force, dtype=float)
        self._m += 1
        self._p += 1
        conn = self._conn
        while self._out and conn is not None and conn.poll():
            self._take()
        if self._m < self.every:
            return
        job = (self.every * period, int(n), self._sum / self.every, self.w.copy())
        self._m, self._sum = 0, 0.0
        if conn is None:  # in this process: the step taken back one slow step after it was handed over
            if self._out:
                self._take()
            self._pending = _step(self.plant, job, len(self._events))
        else:
            if self._out:
                self.late_steps += 1
            while self._out >= _MAX_OUT:
                self._take()
            try:
                conn.send(job)
            except OSError:
                raise self._ended() from None
        self._out += 1

    def _take(self) -> None:
        """The oldest step out, back (waiting for it if needed): the new base state (``every`` periods after the
        last one), the mode and the events."""
        if self._conn is None:
            reply, self._pending = self._pending, None
        else:
            try:
                reply = self._conn.recv()
            except (EOFError, OSError):
                raise self._ended() from None
        self._out -= 1
        if reply[0] == "error":
            raise KaneError(f"the dynamics failed: {reply[1]}")
        t, q, u, self._mode, events = reply
        p = self._p - self.every
        self._base(t, q, u)
        self.steps.append((t, q, u))
        self._p = p
        self._events.extend(events)

    def _ended(self) -> KaneError:
        self._proc.join(1.0)
        return KaneError(f"the dynamics process ended (exit code {self._proc.exitcode})")

    def close(self) -> None:
        """Take back the step in flight (its state becomes the base) and end the worker."""
        try:
            while self._out:
                self._take()
        finally:
            if self._conn is not None:
                try:
                    self._conn.send(None)
                except OSError:
                    pass
                self._proc.join(5.0)
                if self._proc.is_alive():
                    self._proc.kill()
                    self._proc.join()
                self._conn.close()
                self._conn = None

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs; None when the steps run in this process or the worker ended."""
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    @property
    def kind(self) -> str:
        """The wrapped plant's kind (what the log calls it)."""
        return self.plant.kind

    @property
    def mode(self) -> str:
        """The plant's mode at its newest state ("single" when it has none)."""
        return self._mode

    @property
    def events(self) -> list:
        """The plant's mode changes taken back so far."""
        return list(self._events)
