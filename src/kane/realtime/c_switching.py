"""What the C period needs of a switching plant (issue 32, compiled switching modes): :func:`switch_plan` reads a
real-time loop's switching plant and returns its :class:`SwitchPlan`, the switches the C side could evaluate
(time-scheduled locks, each with the mode it enters and whether the state mapping at it is the identity) and, where
the period cannot run in C, the reason that names the rule, mode or switch at fault.

What the C period can evaluate: a :class:`kane.switching.Lock` given by time intervals (its switches are known
before the run). Not compiled: state events (a UnilateralContact or Coulomb rule, a Lock switched by a Python
function), modes that run on line (not compiled, or with slip), and a switch whose state mapping changes the speeds
(locking is an impulse: plastic, or of restitution e); unlocking leaves (q, u) as they are (the identity). The
periods of a switching plant stay on the Python path (:mod:`kane.realtime.mode_plant`): :func:`switch_plan` says
why, for :func:`kane.realtime.native_loop.why_not_c`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..switching import Lock
from .mode_plant import ModePlant
from .switching_plant import SwitchingPlant

__all__ = ["SWITCHING_PLANTS", "ScheduledSwitch", "SwitchPlan", "switch_plan"]

SWITCHING_PLANTS = (ModePlant, SwitchingPlant)  # the plants whose modes switch inside the period


@dataclass(frozen=True)
class ScheduledSwitch:
    """One time-scheduled switch: at ``t`` [s] the Lock on ``constraint`` does ``kind`` ("lock" or "unlock");
    ``identity``: the state mapping at it leaves (q, u) unchanged (unlocking), else an impulse of ``restitution``."""

    t: float
    constraint: str
    kind: str
    identity: bool
    restitution: float


@dataclass(frozen=True)
class SwitchPlan:
    """The time-scheduled ``switches`` after the start, in time order, and ``reason`` (None when the C period can run
    them all)."""

    switches: tuple[ScheduledSwitch, ...]
    reason: str | None


def _modes_missing(plant: ModePlant) -> list:
    """The active sets of the switched constraints that have no compiled mode (sorted names)."""
    online = plant.runner.dynamics
    names = [n for n in online.transient if any(r.constraint == n for r in plant.runner.rules)]
    subsets = [frozenset(c) for k in range(len(names) + 1) for c in itertools.combinations(names, k)]
    return [sorted(s) for s in subsets if s not in plant.modes]


def switch_plan(plant, t0: float) -> SwitchPlan:
    """The :class:`SwitchPlan` of ``plant`` (a :class:`ModePlant` or :class:`SwitchingPlant`) for a run from
    ``t0`` [s]."""
    if isinstance(plant, SwitchingPlant):
        return SwitchPlan((), "the switching plant's modes are not compiled (SwitchingDynamics without its system "
                              "embeds the constraints on line)")
    if not isinstance(plant, ModePlant):
        return SwitchPlan((), f"the plant ({type(plant).__name__}) is not a switching plant")
    switches = []
    for rule in plant.runner.rules:
        kind, name = type(rule).__name__, rule.constraint
        if not isinstance(rule, Lock):
            return SwitchPlan((), f"the {kind} rule on {name!r} switches on state events, which are not compiled "
                                  "to C")
        if callable(rule.on):
            return SwitchPlan((), f"the Lock on {name!r} is switched by a Python function on(t, q, u), not by "
                                  "time intervals")
        e = float(rule.restitution)
        for a, b in rule.on:
            switches += [ScheduledSwitch(a, name, "lock", False, e)] if a > t0 else []
            switches += [ScheduledSwitch(b, name, "unlock", True, e)] if b > t0 else []
    switches.sort(key=lambda s: s.t)
    missing = _modes_missing(plant)
    if missing:
        return SwitchPlan(tuple(switches), f"mode {missing[0] or 'free'} is not compiled (it runs on line)")
    impulse = next((s for s in switches if not s.identity), None)
    if impulse is not None:
        return SwitchPlan(tuple(switches), f"locking {impulse.constraint!r} at t = {impulse.t:g} s is an impulse "
                                           f"(restitution {impulse.restitution:g}) that changes the speeds, and "
                                           "the impulse is not compiled to C")
    return SwitchPlan(tuple(switches), "the compiled modes' switches are not run in the C period yet (issue 32)")
