"""kane: dynamics of multibody systems by Kane's method.

Describe bodies, joints, loads and constraints once on a :class:`System`; :func:`derive` forms compact equations
of motion with the constraints embedded; :meth:`Equations.compile` gives a numeric :class:`Dynamics`.
"""

from . import algorithms, joints, simulate, switching
from .errors import DerivationError, KaneError, ModelError, SingularStateError
from .io.trajectory import Trajectory, load_trajectory
from .model.joints import SpeedMap, Speeds
from .model.model import GROUND, Model, stretch, stretch_rate, t
from .model.system import System
from .options import Method
from .simulate import Event, SimulationError, assemble, project_positions
from .symbolic.derive import Embedding, Equations, Redundant, derive
from .symbolic.dynamics import Dynamics
from .symbolic.formulation import Formulation, dynamics  # Kane's equations or a recursive algorithm
from .analysis import linearize  # also Equations.linearize (attached by kane.analysis)

__all__ = [
    "System", "Model", "GROUND", "joints", "algorithms", "Speeds", "SpeedMap", "derive", "Embedding", "Equations",
    "Redundant", "Dynamics", "SingularStateError",
    "KaneError", "ModelError", "DerivationError", "t", "stretch", "stretch_rate",
    "simulate", "switching", "Method", "Event", "SimulationError", "Trajectory", "load_trajectory", "assemble",
    "project_positions", "linearize", "Formulation", "dynamics",
]

__version__ = "0.1.0"
