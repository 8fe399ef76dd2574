"""Event-driven contact (kane.switching.contact_events) on tumbling boxes dropped on a plane (issue 30's open case):
per seed, a box of random orientation, spin and sideways speed dropped from 0.1 m (the scene of
tests/switching/test_contact_events_random.py), run to ``t_end``; records the outcome (at rest on a face, or the
error that stopped it: the event limit of a Zeno run, a Painleve-type inconsistency), the events by kind, the
largest energy gain between samples [J], the deepest corner [m] and the wall time [s].

    python bench/bench_contact_event_drops.py 0 1 2 3 4
"""

from __future__ import annotations

import collections
import pathlib
import sys
import time

import numpy as np

from kane.errors import KaneError
from kane.switching import ContactOptions, ContactScheme, simulate_contacts

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "switching"))
from test_contact_events_random import HALF, tumbling_box  # noqa: E402

__all__ = ["drop"]


def drop(seed: int, h: float = 0.01, t_end: float = 1.0) -> dict:
    """The outcome of one drop (module docstring)."""
    bodies, contacts, q0, u0 = tumbling_box(seed)
    start = time.perf_counter()
    try:
        run = simulate_contacts(bodies, contacts, q0, u0, h, t_end, ContactOptions(ContactScheme.EVENT_DRIVEN))
    except KaneError as exc:
        return {"seed": seed, "outcome": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}",
                "wall_s": round(time.perf_counter() - start, 2)}
    rest = bool(np.abs(run.u[-1]).max() < 1e-9 and np.abs(run.q[-1, 2] - HALF).min() < 1e-6)
    return {"seed": seed, "outcome": "at rest on a face" if rest else "moving at t_end",
            "events": dict(collections.Counter(e.kind for e in run.events)),
            "energy_gain_J": float(np.diff(run.energy).max()),
            "deepest_m": float(min(min(cp.distance for cp in contacts(q)) for q in run.q)),
            "wall_s": round(time.perf_counter() - start, 2)}


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["0", "1", "2", "3", "4"]:
        print(drop(int(arg)), flush=True)
