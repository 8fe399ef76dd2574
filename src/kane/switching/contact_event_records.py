"""The records and options of the event-driven contact scheme (:mod:`.contact_events`): its options
(:class:`EventOptions`, :class:`EventEngine`), its events (:class:`ContactEvent`), its run
(:class:`EventContactRun`) and its failure (:class:`ContactInconsistencyError`)."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from ..errors import ArgumentError, KaneError
from .contact_stepping import ContactRun

__all__ = ["ContactEvent", "ContactInconsistencyError", "EventContactRun", "EventEngine", "EventOptions"]


class ContactInconsistencyError(KaneError):
    """No consistent contact mode, or several with different accelerations (Painleve-type), at time ``t`` [s]
    among the contacts ``contacts`` (their names); ``kind`` is ``"none"`` or ``"several"``; ``q`` (n_q,), ``u``
    (n_u,) the state there (the last good one) and ``modes`` ((name, mode name), ...) the modes before it."""

    def __init__(self, message: str, t: float, contacts: tuple, kind: str, q=None, u=None, modes: tuple = ()):
        super().__init__(message)
        self.t, self.contacts, self.kind = float(t), tuple(contacts), kind
        self.q, self.u, self.modes = q, u, tuple(modes)


class EventEngine(enum.Enum):
    """Who integrates the segments between events: ``AUTO`` the compiled path when the scene qualifies
    (:func:`.contact_events_fast.engine_of`), else the Python loop; ``COMPILED`` (refused by name when the scene
    does not qualify); ``PYTHON`` (scipy's DOP853 on the Python right-hand side)."""

    AUTO = "auto"
    COMPILED = "compiled"
    PYTHON = "python"


@dataclass(frozen=True)
class EventOptions:
    """Tolerances of the event-driven scheme: ``rtol``/``atol`` of the integrator (DOP853 in the Python loop,
    DOPRI5 on the compiled path); ``gap_tolerance``
    [m] (a contact this close touches); ``velocity_tolerance`` [m/s] (an approach slower than this is a resting
    contact, not an impact; a rebound slower than this ends at rest); ``force_tolerance`` (relative, of the mode
    checks); ``max_events`` (more is refused as a Zeno run); ``max_step`` [s] of the integrator;
    ``accumulation_time`` [s]: an impact of a contact that had one less than this before is plastic (e = 0), so
    the impacts of a bouncing or rocking body accumulate to a resting contact instead of chattering ever faster;
    ``engine`` (:class:`EventEngine`) who integrates between events."""

    rtol: float = 1e-12
    atol: float = 1e-12
    gap_tolerance: float = 1e-8
    velocity_tolerance: float = 1e-7
    force_tolerance: float = 1e-9
    max_events: int = 1000
    max_step: float = math.inf
    accumulation_time: float = 1e-3
    engine: EventEngine = EventEngine.AUTO

    def __post_init__(self):
        if not isinstance(self.engine, EventEngine):
            try:
                object.__setattr__(self, "engine", EventEngine(self.engine))
            except ValueError:
                raise ArgumentError(f"EventOptions: engine: expected one of "
                                    f"{', '.join(e.value for e in EventEngine)}, got {self.engine!r}") from None
        for key in ("rtol", "atol", "gap_tolerance", "velocity_tolerance", "force_tolerance", "max_step",
                    "accumulation_time"):
            if not float(getattr(self, key)) > 0:
                raise ArgumentError(f"EventOptions: {key}: expected > 0, got {getattr(self, key)!r}")
        if int(self.max_events) < 1:
            raise ArgumentError(f"EventOptions: max_events: expected >= 1, got {self.max_events!r}")


@dataclass(frozen=True)
class ContactEvent:
    """One event: time ``t`` [s], ``kind`` ("impact", "touch" (a contact closing at zero speed), "open",
    "stick->slip", "slip->stick", "slip->slip" (the slip reversed and slips on), "slip turned" (a 3-D slip turned
    across its starting direction; it slips on along the new one)),
    ``contact`` (the triggering contact's name) and the modes after it (name -> mode name)."""

    t: float
    kind: str
    contact: str
    modes: tuple


@dataclass(frozen=True)
class EventContactRun(ContactRun):
    """A :class:`ContactRun` of the event-driven scheme, with ``events`` (tuple of :class:`ContactEvent`); its
    ``iterations`` count the right-hand sides evaluated, per segment between events, on the output interval where
    the segment ends; ``engine`` "compiled" or "python" (who integrated the segments) and ``engine_reason`` why
    not the compiled path ("" when it ran)."""

    events: tuple = ()
