"""Events: zero crossings of scalar functions g(t, q, u), located on a step's dense output.

After every accepted step each event function is evaluated at the step's end. A sign change across the step
(in the event's direction) is located by Brent's method (scipy.optimize.brentq) on the step's continuous
extension: DOPRI5's 4th-order dense output, scipy's for Radau/BDF, and a cubic Hermite interpolant of the step
for the fixed-step methods. A crossing means g goes from strictly one side of zero to zero or the other side.
A function sitting on zero at the start of a step (right after its event fired) takes its starting sign from
the dense output a millionth of the step later, so it does not fire again at once yet is caught when the same
step carries it back through zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from kane.errors import KaneError

__all__ = ["Event", "EventHit", "EventDetector", "EventFunctionError"]

_XTOL = 1e-14
_RTOL = 4 * np.finfo(float).eps
_PROBE = 1e-6


class EventFunctionError(KaneError, ValueError):
    """An event function returned NaN (or a non-number); the message names the event and the time [s]."""

    def __init__(self, name: str, t: float, value: object):
        super().__init__(f"event function '{name}' returned {value!r} at t = {t!r} s; it must return a finite float")
        self.name = name
        self.t = float(t)


@dataclass(frozen=True)
class Event:
    """A named zero crossing of ``function(t [s], q (n_q,), u (n_u,)) -> float``.

    ``direction``: +1 fires only when g rises through zero, -1 only when it falls, 0 both ways.
    ``terminal``: stop the run at the crossing (the state there is the run's last sample).
    """

    name: str
    function: Callable[[float, np.ndarray, np.ndarray], float]
    direction: int = 0
    terminal: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"an event needs a non-empty name, got {self.name!r}")
        if not callable(self.function):
            raise ValueError(f"event '{self.name}': function must be callable g(t, q, u) -> float")
        if self.direction not in (-1, 0, 1):
            raise ValueError(f"event '{self.name}': direction must be -1, 0 or +1, got {self.direction!r}")


@dataclass(frozen=True)
class EventHit:
    """A located crossing: the event, its index in the detector, time ``t`` [s], state ``x`` (n,) there, and the
    sign of the crossing (+1 rising, -1 falling)."""

    event: Event
    index: int
    t: float
    x: np.ndarray
    crossing: int


class EventDetector:
    """Tracks the sign of each event function from step to step and locates crossings inside a step.

    ``n_q`` splits a state x (n,) into q = x[:n_q], u = x[n_q:].
    """

    def __init__(self, events: Iterable[Event], n_q: int):
        self.events = tuple(events)
        for ev in self.events:
            if not isinstance(ev, Event):
                raise TypeError(f"events must be kane.simulate.Event instances, got {ev!r}")
        names = [ev.name for ev in self.events]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"event names must be unique; repeated: {sorted(dup)}")
        self.n_q = int(n_q)
        self._g = np.zeros(len(self.events))

    def __bool__(self) -> bool:
        return bool(self.events)

    def value(self, index: int, t: float, x: np.ndarray) -> float:
        """g_index(t, q, u) as a float; raises EventFunctionError on NaN or a non-number."""
        ev = self.events[index]
        raw = ev.function(t, x[: self.n_q], x[self.n_q:])
        try:
            g = float(raw)
        except (TypeError, ValueError):
            raise EventFunctionError(ev.name, t, raw) from None
        if math.isnan(g):
            raise EventFunctionError(ev.name, t, raw)
        return g

    def start(self, t: float, x: np.ndarray, on_surface: Iterable[int] = ()) -> None:
        """Evaluate every g at (t, x); events listed in ``on_surface`` (just fired) are taken as sitting on zero."""
        self._g = np.array([self.value(i, t, x) for i in range(len(self.events))])
        for i in on_surface:
            self._g[i] = 0.0

    def check(self, step: Callable[[float], np.ndarray], t_old: float, t_new: float,
              x_new: np.ndarray) -> list[EventHit]:
        """Crossings inside the step (t_old, t_new], sorted by time and cut after the first terminal one.

        ``step(t) -> x`` is the step's dense output. Updates the remembered signs to those at t_new.
        """
        if not self.events:
            return []
        g0 = self._g
        g1 = np.array([self.value(i, t_new, x_new) for i in range(len(self.events))])
        self._g = g1
        hits: list[EventHit] = []
        for i, ev in enumerate(self.events):
            t_a, a, b = t_old, g0[i], g1[i]
            if a == 0.0:
                t_a = t_old + _PROBE * (t_new - t_old)
                a = self.value(i, t_a, step(t_a))
            if a < 0.0 <= b:
                crossing = 1
            elif a > 0.0 >= b:
                crossing = -1
            else:
                continue
            if ev.direction and ev.direction != crossing:
                continue
            if b == 0.0:
                t_hit = t_new
            else:
                def g(s: float, i: int = i) -> float:
                    return self.value(i, s, step(s))

                t_hit = brentq(g, t_a, t_new, xtol=_XTOL, rtol=_RTOL, maxiter=200)
            hits.append(EventHit(ev, i, float(t_hit), step(t_hit), crossing))
        hits.sort(key=lambda h: h.t)
        for k, hit in enumerate(hits):
            if hit.event.terminal:
                return hits[: k + 1]
        return hits
