"""Constraints that come and go during a run (seed 000 Figure 2): on-line embedding by recombination, contact,
friction and lock rules, impulses, contact shapes, pre-derived hybrid mode sequences, and the rules of a model
file's ``[[switching]]`` tables (:func:`switching_rules`; :func:`switching_simulation` is ``kane simulate``'s run).

    >>> traj = kane.switching.simulate_switching(eqs, (0.0, 5.0), q0, u0, rules=[UnilateralContact(...)])
"""

from kane.switching.command import switching_simulation
from kane.switching.dynamics import SwitchedDynamics
from kane.switching.hybrid import HybridSimulator, mode_system, robust_dependent, simulate_hybrid
from kane.switching.model_table import switching_rules
from kane.switching.online import ImpulseResult, OnlineDynamics, SlipForce, constraint_layout
from kane.switching.rules import Coulomb, Lock, UnilateralContact, resolve_impulse
from kane.switching.shapes import Contact, Disk, Gap, Plane, Point, Sphere, contact
from kane.switching.settings import SwitchingSettings
from kane.switching.simulator import SwitchingSimulator, simulate_switching

__all__ = [
    "HybridSimulator",
    "mode_system",
    "robust_dependent",
    "simulate_hybrid",
    "ImpulseResult",
    "OnlineDynamics",
    "SlipForce",
    "constraint_layout",
    "Coulomb",
    "Lock",
    "UnilateralContact",
    "resolve_impulse",
    "Contact",
    "Disk",
    "Gap",
    "Plane",
    "Point",
    "Sphere",
    "contact",
    "SwitchedDynamics",
    "SwitchingSettings",
    "SwitchingSimulator",
    "simulate_switching",
    "switching_rules",
    "switching_simulation",
]
