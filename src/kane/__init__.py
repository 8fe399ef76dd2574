"""kane: dynamics of multibody systems by Kane's method.

Describe bodies, joints, loads and constraints once on a :class:`System`; :func:`derive` forms compact equations
of motion with the constraints embedded; :meth:`Equations.compile` gives a numeric :class:`Dynamics`.
"""

from . import algorithms, joints
from .dynamics import Dynamics
from .errors import DerivationError, KaneError, ModelError
from .model.joints import SpeedMap, Speeds
from .model.system import GROUND, Model, System, stretch, stretch_rate, t
from .symbolic.derive import Embedding, Equations, derive
from .simulate import Event, Method, SimulationError, Trajectory, assemble, load_trajectory, project_positions
from .simulate import simulate as _simulate_function

__all__ = [
    "System", "Model", "GROUND", "joints", "algorithms", "Speeds", "SpeedMap", "derive", "Embedding", "Equations", "Dynamics",
    "KaneError", "ModelError", "DerivationError", "t", "stretch", "stretch_rate",
    "simulate", "Method", "Event", "SimulationError", "Trajectory", "load_trajectory", "assemble",
    "project_positions",
]

simulate = _simulate_function  # kane.simulate(dynamics, t_span, q0, u0, ...); the package stays kane.simulate

__version__ = "0.1.0"
