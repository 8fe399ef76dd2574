"""kane: dynamics of multibody systems by Kane's method.

Describe bodies, joints, loads and constraints once on a :class:`System`; :func:`derive` forms compact equations
of motion with the constraints embedded; :meth:`Equations.compile` gives a numeric :class:`Dynamics`.
"""

from . import joints
from .dynamics import Dynamics
from .errors import DerivationError, KaneError, ModelError
from .model.joints import SpeedMap, Speeds
from .model.system import GROUND, Model, System, stretch, stretch_rate, t
from .symbolic.derive import Embedding, Equations, derive

__all__ = [
    "System", "Model", "GROUND", "joints", "Speeds", "SpeedMap", "derive", "Embedding", "Equations", "Dynamics",
    "KaneError", "ModelError", "DerivationError", "t", "stretch", "stretch_rate",
]

__version__ = "0.1.0"
