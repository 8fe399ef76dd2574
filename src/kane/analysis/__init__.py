"""Linearization, steady motions, eigenvalue sweeps and speed rates of :class:`kane.Equations` (DESIGN.md: analysis).

:func:`linearize` gives x' = A x + B r about an operating point from exact forward-mode derivatives:
``kane.linearize(equations, q, u, ...)`` (the method ``Equations.linearize`` was removed in kane 0.2).
"""

from .kinematic_outputs import KinematicOutputs, kinematic_outputs
from .linearize import Linearization, Linearizer, MechanicalForm, Modes, NotSteadyWarning, linearize, linearizer
from .outputs import SpeedRates, speed_rates
from .stability import Crossing, EigenSweep, eigenvalue_sweep
from .steady import SteadyMotion, steady_motion

__all__ = ["Linearization", "Linearizer", "MechanicalForm", "Modes", "NotSteadyWarning", "linearize", "linearizer",
           "SteadyMotion", "steady_motion", "Crossing", "EigenSweep", "eigenvalue_sweep", "SpeedRates", "speed_rates",
           "KinematicOutputs", "kinematic_outputs"]

