"""What every formulation shares, written once over sympy scalars named by a ProgramBuilder: tree kinematics,
body inertia, applied loads and energies, constraint rows and the choice of dependent speeds."""

from .constraints import ConstraintRows, EmbeddingChoice, constraint_rows, select_dependent
from .inertia import SpatialInertia, body_inertia
from .kinematics import TreeKinematics
from .loads import applied_body_forces, energy_expressions, joint_generalized_forces

__all__ = ["ConstraintRows", "EmbeddingChoice", "constraint_rows", "select_dependent", "SpatialInertia",
           "body_inertia", "TreeKinematics", "applied_body_forces", "energy_expressions", "joint_generalized_forces"]
