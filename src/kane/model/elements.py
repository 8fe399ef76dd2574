"""The parts of a frozen model: bodies, placed joints, loads and constraints (plain immutable records).

All vectors are sympy 3x1 matrices in the frame named by the record; all expressions are sympy objects in the
model's symbols (q, u, t, parameters, inputs).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import sympy as sp

from .joints import Joint

__all__ = [
    "Body", "PlacedJoint", "Force", "Torque", "Spring", "JointLoad",
    "ConstraintKind", "Constraint", "Visual",
]


@dataclass(frozen=True)
class Body:
    """A rigid body or a particle.

    mass [kg]; com: centre of mass in body axes [m] (3,); inertia: central inertia tensor in body axes
    [kg m^2] (3, 3), zero for a particle.
    """

    name: str
    mass: sp.Expr
    com: sp.ImmutableMatrix
    inertia: sp.ImmutableMatrix
    is_particle: bool = False


@dataclass(frozen=True)
class PlacedJoint:
    """A joint placed between a parent body (index, -1 for ground) and a child body.

    R_parent_F, r_parent_F: the joint frame F in the parent's axes; R_child_M, r_child_M: the frame M in the
    child's axes. q_slice and u_slice index the system's q and u.
    """

    name: str
    parent: int
    child: int
    joint: Joint
    R_parent_F: sp.ImmutableMatrix
    r_parent_F: sp.ImmutableMatrix
    R_child_M: sp.ImmutableMatrix
    r_child_M: sp.ImmutableMatrix
    q_slice: slice
    u_slice: slice


@dataclass(frozen=True)
class Force:
    """A force vector [N] applied at ``point`` (body axes, [m]) of body ``body``, components in ``frame``
    (a body index, or -1 for ground)."""

    body: int
    vector: sp.ImmutableMatrix
    point: sp.ImmutableMatrix
    frame: int


@dataclass(frozen=True)
class Torque:
    """A couple [N m] on body ``body`` with components in ``frame`` (body index or -1 for ground)."""

    body: int
    vector: sp.ImmutableMatrix
    frame: int


@dataclass(frozen=True)
class Spring:
    """A spring-damper between point_a of body_a and point_b of body_b (body indices, -1 for ground).

    ``tension`` is the pulling force [N] as an expression of ``stretch`` (length - rest length [m]) and
    ``stretch_rate`` [m/s]; ``potential`` its potential energy as a function of stretch, or None if unknown.
    """

    body_a: int
    point_a: sp.ImmutableMatrix
    body_b: int
    point_b: sp.ImmutableMatrix
    rest_length: sp.Expr
    tension: sp.Expr
    potential: sp.Expr | None


@dataclass(frozen=True)
class JointLoad:
    """Generalized forces Q conjugate to a joint's coordinates (torque [N m] for an angle, force [N] for a
    length), expressions in q, u, t, parameters and inputs; ``potential`` is the stored energy or None."""

    joint: int
    Q: sp.ImmutableMatrix
    potential: sp.Expr | None


class ConstraintKind(enum.Enum):
    """Built-in kinds of motion constraints."""

    MOTION = "motion"  # user rows A(q) u + b(q, t) = 0
    JOINT_LOCK = "joint_lock"  # the speeds of a joint are zero
    POINT_VELOCITY = "point_velocity"  # a body-fixed point has zero velocity (components along ground axes)
    ROLLING_DISK = "rolling_disk"  # a disk rolls without slip on the ground plane
    NO_SLIP = "no_slip"  # a body-fixed point has no velocity along a body-fixed direction (knife edge)
    LOOP_CLOSURE = "loop_closure"  # two points (and optionally frames) keep together, at velocity level


@dataclass(frozen=True)
class Constraint:
    """A named motion constraint. ``data`` holds the kind's fields (see :class:`kane.System` add_* methods).

    permanent constraints are embedded at derivation; transient ones are exported as rows for on-line use.
    """

    name: str
    kind: ConstraintKind
    data: tuple
    transient: bool = False


@dataclass(frozen=True)
class Visual:
    """A shape drawn fixed in body ``body`` (display only: no mass): ``shape`` "box" | "cylinder" | "sphere" |
    "capsule" | "mesh"; ``size`` (3,) box sides or a mesh's scale, ``radius`` and ``length`` [m] (cylinders and
    capsules along their z); ``position`` (3,) [m] and ``rotation`` (roll, pitch, yaw) [rad] of the shape in body
    axes (URDF's rpy); ``color`` RGB 0-1 or None (the body's palette colour); ``file`` a mesh file."""

    body: str
    shape: str
    size: tuple = (1.0, 1.0, 1.0)
    radius: float = 0.0
    length: float = 0.0
    position: tuple = (0.0, 0.0, 0.0)
    rotation: tuple = (0.0, 0.0, 0.0)
    color: tuple | None = None
    file: str | None = None
