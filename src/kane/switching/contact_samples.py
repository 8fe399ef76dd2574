"""What a contact run records: its per-contact rows (:class:`ContactRecords`, modes :data:`MODES`), the blocks of
samples it hands on as it makes them (:class:`SampleBlock`), records cut from the lists a run collects them in
(:func:`records_of`), and the text of a set of contact modes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MODES", "ContactRecords", "SampleBlock", "mode_names", "modes_text", "records_of", "run_failure"]

MODES = ("open", "stick", "slip")
"""Contact mode names; :class:`ContactRecords` ``mode`` holds their indices."""


@dataclass(frozen=True)
class ContactRecords:
    """Every active contact of every step, one row each (K rows): ``step`` (K,) the step index (the forces act
    over [t[step], t[step + 1]]), ``name`` (K,) the pair's name, ``normal_force`` (K,) [N], ``friction_force``
    (K, 2) [N] along (t1, t2), ``normal_world`` (K, 3), ``slip_velocity`` (K, 2) [m/s] after the step, ``mode``
    (K,) indices into :data:`MODES`."""

    step: np.ndarray
    name: tuple[str, ...]
    normal_force: np.ndarray
    friction_force: np.ndarray
    normal_world: np.ndarray
    slip_velocity: np.ndarray
    mode: np.ndarray


@dataclass(frozen=True)
class SampleBlock:
    """Samples ``start`` .. ``start + m - 1`` of a contact run as they are made (the ``sink`` of
    :func:`.contact_events.simulate_events` and of :func:`.contact_stepping.simulate_contacts`): ``t`` (m,) [s],
    ``q`` (m, n_q), ``u`` (m, n_u), ``energy`` (m,) [J] or None, ``contacts`` (:class:`ContactRecords` of these samples,
    ``step`` global), ``events`` (the :class:`ContactEvent` since the previous block), ``evaluations`` (right-hand
    sides or steps since the previous block), ``modes`` ((name, mode name) of the closed contacts at the end)."""

    start: int
    t: np.ndarray
    q: np.ndarray
    u: np.ndarray
    energy: np.ndarray | None
    contacts: ContactRecords
    events: tuple
    evaluations: int
    modes: tuple


def modes_text(modes: tuple) -> str:
    """``"a|b#0 stick, a|b#1 slip"`` of ((name, mode name), ...), or ``"all open"``."""
    return ", ".join(f"{name} {mode}" for name, mode in modes) or "all open"


def mode_names(modes: dict) -> tuple:
    """((``"<pair>#<rank>"``, mode name), ...) of ``modes`` {(pair, rank): a mode with ``kind`` in MODES}."""
    return tuple((f"{k[0]}#{k[1]}", MODES[m.kind]) for k, m in modes.items())


def run_failure(scheme: str, reason: str, t: float, q, u, modes: tuple):
    """The :class:`kane.simulate.SimulationError` of a contact run of ``scheme`` that stopped at t [s] in
    ``modes`` ((name, mode name), ...), (q, u) its last good state."""
    from ..simulate.simulator import SimulationError

    text = modes_text(modes)
    return SimulationError(f"{scheme}: {reason} (modes: {text})", reason=reason, t=t, mode=text, t_good=t,
                           q=np.array(q, dtype=float), u=np.array(u, dtype=float))


def records_of(rec: dict, lo: int = 0, hi: int | None = None) -> ContactRecords:
    """The :class:`ContactRecords` of rows lo:hi of the run's record lists."""
    cut = slice(lo, hi)
    return ContactRecords(np.array(rec["step"][cut], dtype=np.int64), tuple(rec["name"][cut]),
                          np.array(rec["pn"][cut], dtype=float), np.array(rec["pt"][cut], dtype=float).reshape(-1, 2),
                          np.array(rec["n"][cut], dtype=float).reshape(-1, 3),
                          np.array(rec["slip"][cut], dtype=float).reshape(-1, 2),
                          np.array(rec["mode"][cut], dtype=np.int8))
