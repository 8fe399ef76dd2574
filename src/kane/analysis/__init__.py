"""Linearization, steady motions, eigenvalue sweeps and speed rates of :class:`kane.Equations` (DESIGN.md: analysis).

:func:`linearize` gives x' = A x + B r about an operating point from exact forward-mode derivatives; it is also
available as ``Equations.linearize`` (attached here, since ``kane.symbolic`` sits below this package and may not
import it).
"""

from ..symbolic.derive import Equations
from .kinematic_outputs import KinematicOutputs, kinematic_outputs
from .linearize import Linearization, Linearizer, MechanicalForm, Modes, NotSteadyWarning, linearize, linearizer
from .outputs import SpeedRates, speed_rates
from .stability import Crossing, EigenSweep, eigenvalue_sweep
from .steady import SteadyMotion, steady_motion

__all__ = ["Linearization", "Linearizer", "MechanicalForm", "Modes", "NotSteadyWarning", "linearize", "linearizer",
           "SteadyMotion", "steady_motion", "Crossing", "EigenSweep", "eigenvalue_sweep", "SpeedRates", "speed_rates",
           "KinematicOutputs", "kinematic_outputs"]


def _equations_linearize(self, q, u, t: float = 0.0, params=None, inputs=None, **options) -> Linearization:
    """``kane.analysis.linearize(self, q, u, t, params, inputs, **options)``: see :func:`kane.analysis.linearize`."""
    return linearize(self, q, u, t, params, inputs, **options)


Equations.linearize = _equations_linearize
