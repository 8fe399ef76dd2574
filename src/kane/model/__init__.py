"""Description and model: the ``System`` builder, the frozen ``Model``, joints, bodies, loads, constraints."""

from .elements import Body, Constraint, ConstraintKind, PlacedJoint
from .system import GROUND, Model, System

__all__ = ["System", "Model", "GROUND", "Body", "PlacedJoint", "Constraint", "ConstraintKind"]
