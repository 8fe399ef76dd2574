"""The mutable ``System`` builder and the frozen ``Model`` it compiles into.

A user describes bodies, joints, loads and constraints once on a :class:`System`; :meth:`System.compile` checks
everything and returns an immutable, index-based :class:`Model` that every formulation consumes. Nothing
downstream mutates a ``Model``.

Conventions: SI units; right-handed frames; the ground frame is called ``"ground"``; vectors are 3-sequences of
numbers or sympy expressions; inertia tensors are 3x3 or the 6-tuple (Ixx, Iyy, Izz, Ixy, Iyz, Izx) about the
centre of mass in body axes; quaternions are scalar-first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..errors import ModelError
from . import joints as J
from .collision_system import add_collision, exclude_collision
from .compile import compile_system
from .elements import Body, ConstraintKind, Visual
from .model import GROUND, Model, stretch, stretch_rate, t
from .values import _inertia, _real, _rotation, _scalar, _vec

__all__ = ["System", "Model", "GROUND", "t", "stretch", "stretch_rate"]

@dataclass
class _JointEntry:
    name: str
    parent: str
    child: str
    joint: J.Joint
    R_parent_F: sp.ImmutableMatrix
    r_parent_F: sp.ImmutableMatrix
    R_child_M: sp.ImmutableMatrix
    r_child_M: sp.ImmutableMatrix
    q_names: tuple[str, ...]
    u_names: tuple[str, ...]
    q0: tuple | None
    u0: tuple | None


@dataclass
class System:
    """Mutable description of a multibody system. Build it with the ``add_*`` methods, then :meth:`compile`.

    >>> s = System("pendulum", gravity=(0, 0, -9.81))
    >>> b = s.add_body("link", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    >>> j = s.add_joint("ground", "link", Revolute("y"), name="hinge", coordinates=["theta"], speeds=["omega"])
    """

    name: str = "system"
    gravity: tuple = (0, 0, 0)
    _bodies: dict = field(default_factory=dict)
    _joints: list = field(default_factory=list)
    _params: dict = field(default_factory=dict)
    _param_bounds: dict = field(default_factory=dict)
    _inputs: dict = field(default_factory=dict)
    _forces: list = field(default_factory=list)
    _torques: list = field(default_factory=list)
    _springs: list = field(default_factory=list)
    _joint_loads: list = field(default_factory=list)
    _constraints: list = field(default_factory=list)
    _visuals: list = field(default_factory=list)
    _collisions: list = field(default_factory=list)
    _collision_excludes: list = field(default_factory=list)

    # ---- symbols -------------------------------------------------------------------------------------------
    def set_gravity(self, gravity) -> None:
        """The gravitational acceleration [m/s^2] in ground axes, a 3-vector of numbers or expressions of this
        system's parameters (``s.set_gravity((0, 0, -s.parameter("g", 9.81)))``), so a sweep can change it."""
        self.gravity = tuple(_vec(gravity, f"system {self.name!r} field 'gravity'"))

    def parameter(self, name: str, default: float, *, lower: float = -np.inf, upper: float = np.inf) -> sp.Symbol:
        """Declare a named parameter with a default value and the range [lower, upper] its values must lie in
        (checked for the default and for every value given at run time); returns its symbol for expressions.

        A parameter used as a body's mass or principal moment of inertia is non-negative unless declared
        otherwise."""
        self._check_new_name(name, "parameter")
        value = _real(default, f"parameter {name!r} default")
        lo, hi = (float(_real(b, f"parameter {name!r} bound")) if np.isfinite(b) else float(b) for b in (lower, upper))
        if not lo <= value <= hi:
            raise ModelError(f"parameter {name!r}: default {value:g} lies outside its range [{lo:g}, {hi:g}]")
        self._params[name] = value
        if (lo, hi) != (-np.inf, np.inf):  # declared; otherwise inferred at compile (masses are non-negative)
            self._param_bounds[name] = (lo, hi)
        return sp.Symbol(name)

    def input(self, name: str, default: float = 0.0) -> sp.Symbol:
        """Declare a named input (applied torque, device force, ...) given at run time; returns its symbol."""
        self._check_new_name(name, "input")
        self._inputs[name] = _real(default, f"input {name!r} default")
        return sp.Symbol(name)

    def _check_new_name(self, name, what):
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise ModelError(f"{what} name {name!r}: expected an identifier not starting with '_'")
        if name in self._params or name in self._inputs or name in ("t", "stretch", "stretch_rate") or (
                name in self._joint_names()[1]):
            raise ModelError(f"{what} name {name!r} is already used by another symbol of system {self.name!r}")

    def _joint_names(self) -> tuple[set, set]:
        """(names of the joints, names of their coordinates and speeds), brought up to date with the joints added
        since the last call: a new name is checked in constant time, not by a pass over every joint (a
        10,000-link URDF loads in linear time)."""
        seen, joints, symbols = self.__dict__.get("_names_seen", (0, set(), set()))
        n = len(self._joints)  # what is added below, also if another thread appends meanwhile (adding is idempotent)
        if seen > n:
            seen, joints, symbols = 0, set(), set()
        for e in self._joints[seen:n]:
            joints.add(e.name)
            symbols.update(e.q_names + e.u_names)
        self.__dict__["_names_seen"] = (n, joints, symbols)
        return joints, symbols

    # ---- bodies and joints ---------------------------------------------------------------------------------
    def add_body(self, name: str, mass, com=(0, 0, 0), inertia=(0, 0, 0)) -> str:
        """Add a rigid body: mass [kg], centre of mass in body axes [m], central inertia in body axes [kg m^2]."""
        if not isinstance(name, str) or not name or name == GROUND or name in self._bodies:
            raise ModelError(f"body name {name!r}: expected a new, non-empty name other than 'ground'")
        self._bodies[name] = Body(name, _scalar(mass, f"body {name!r} field 'mass'"),
                                  _vec(com, f"body {name!r} field 'com'"),
                                  _inertia(inertia, f"body {name!r} field 'inertia'"))
        return name

    def add_visual(self, body: str, shape: str, *, size=(1.0, 1.0, 1.0), radius: float = 0.0, length: float = 0.0,
                   position=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0), color=None, file=None) -> None:
        """Draw ``body`` as ``shape`` in the viewer (display only; see :class:`kane.model.elements.Visual` for the
        fields and units). A body without visuals is drawn from its inertia."""
        if body not in self._bodies:
            raise ModelError(f"visual of body {body!r}: no such body; bodies: {', '.join(self._bodies) or 'none'}")
        shapes = ("box", "cylinder", "sphere", "capsule", "mesh")
        if shape not in shapes:
            raise ModelError(f"visual of body {body!r} field 'shape': expected one of {', '.join(shapes)}, "
                             f"got {shape!r}")
        nums = {k: tuple(float(_real(x, f"visual of body {body!r} field {k!r}")) for x in v)
                for k, v in (("size", size), ("position", position), ("rotation", rotation))}
        if any(len(v) != 3 for v in nums.values()):
            raise ModelError(f"visual of body {body!r}: size, position and rotation take 3 numbers each")
        r, h = (float(_real(x, f"visual of body {body!r} field {k!r}"))
                for k, x in (("radius", radius), ("length", length)))
        if (shape == "box" and min(nums["size"]) <= 0) or (shape in ("cylinder", "sphere", "capsule") and r <= 0) \
                or h < 0 or (shape == "mesh" and not file):
            raise ModelError(f"visual of body {body!r}: a {shape} needs positive sizes (box: size; cylinder, sphere, "
                             f"capsule: radius; mesh: file), got size={size}, radius={radius}, length={length}")
        self._visuals.append(Visual(body, shape, nums["size"], r, h, nums["position"], nums["rotation"],
                                    None if color is None else tuple(float(c) for c in color),
                                    None if file is None else str(file)))

    def add_collision(self, body: str, shape, placement=None, *, name: str | None = None, material=None,
                      group: int = 1, mask: int = ~0) -> str:
        """Attach a collision ``shape`` (:mod:`kane.model.collision`) to ``body`` (or ``"ground"``) at ``placement``
        ((R (3, 3), r (3,)) in body axes; None: the body frame), with an optional ``material``
        (:class:`kane.model.contact.ContactMaterial`) and filter bits; returns its name (default
        ``"<body>_collision<k>"``). A :class:`HalfSpace` goes on the ground only."""
        return add_collision(self, body, shape, placement, name=name, material=material, group=group, mask=mask)

    def exclude_collision(self, a: str, b: str) -> None:
        """Never test the pair ``a``, ``b`` (two body names, or two collision names) for contact."""
        exclude_collision(self, a, b)

    def add_particle(self, name: str, mass) -> str:
        """Add a particle (a point mass at its frame's origin, no rotational inertia)."""
        self.add_body(name, mass)
        b = self._bodies[name]
        self._bodies[name] = Body(b.name, b.mass, b.com, b.inertia, is_particle=True)
        return name

    def add_joint(self, parent: str, child: str, joint: J.Joint, *, name: str | None = None,
                  parent_point=(0, 0, 0), parent_rotation=None, child_point=(0, 0, 0), child_rotation=None,
                  coordinates=None, speeds=None, q0=None, u0=None) -> str:
        """Connect ``child`` to ``parent`` (a body name or ``"ground"``) by ``joint``.

        parent_point / parent_rotation place the joint frame F in the parent's axes (rotation R_parent_F, 3x3);
        child_point / child_rotation place the frame M in the child's axes. ``coordinates`` and ``speeds`` name
        the joint's q and u (defaults ``q_<joint>...`` and ``u_<joint>...``); q0, u0 are initial values.

        The model's q and u follow the order in which joints are added (each body after its parent: a joint
        added before its parent's waits for it), so a tree declared depth-first, as in URDF and Pinocchio, keeps
        that order.
        """
        if not isinstance(joint, J.Joint):
            raise ModelError(f"joint {name or child!r}: expected a kane.joints joint object, got {joint!r}")
        name = name or f"{parent}_{child}"
        if name in self._joint_names()[0]:
            raise ModelError(f"joint name {name!r} is used twice")
        what = f"joint {name!r}"
        suffixes = joint.coordinate_suffixes()
        qn = tuple(coordinates) if coordinates is not None else (
            (f"q_{name}",) if joint.nq == 1 else tuple(f"q_{name}_{s}" for s in suffixes))
        un = tuple(speeds) if speeds is not None else (
            (f"u_{name}",) if joint.nu == 1 else tuple(f"u_{name}_{k + 1}" for k in range(joint.nu)))
        if len(qn) != joint.nq or len(un) != joint.nu:
            raise ModelError(f"{what}: a {joint.kind} joint has {joint.nq} coordinates and {joint.nu} speeds; "
                             f"got {len(qn)} coordinate and {len(un)} speed names")
        for n in qn + un:
            self._check_new_name(n, f"{what} coordinate/speed")
        if len(set(qn + un)) != len(qn + un):
            raise ModelError(f"{what}: coordinate and speed names must be distinct")
        self._joints.append(_JointEntry(
            name, parent, child, joint,
            _rotation(parent_rotation, f"{what} field 'parent_rotation'"),
            _vec(parent_point, f"{what} field 'parent_point'"),
            _rotation(child_rotation, f"{what} field 'child_rotation'"),
            _vec(child_point, f"{what} field 'child_point'"),
            qn, un, None if q0 is None else tuple(_real(v, f"{what} field 'q0'") for v in np.atleast_1d(q0)),
            None if u0 is None else tuple(_real(v, f"{what} field 'u0'") for v in np.atleast_1d(u0))))
        return name

    def q(self, name: str) -> sp.Symbol:
        """The symbol of a coordinate by name."""
        return sp.Symbol(name)

    def u(self, name: str) -> sp.Symbol:
        """The symbol of a speed by name."""
        return sp.Symbol(name)

    # ---- loads ---------------------------------------------------------------------------------------------
    def add_force(self, body: str, force, point=(0, 0, 0), frame: str = GROUND) -> None:
        """A force [N] (components in ``frame``) applied at ``point`` (body axes [m]) of ``body``."""
        self._forces.append((body, _vec(force, f"force on {body!r}"), _vec(point, f"force point on {body!r}"),
                             frame))

    def add_torque(self, body: str, torque, frame: str = GROUND) -> None:
        """A couple [N m] on ``body``, components in ``frame``."""
        self._torques.append((body, _vec(torque, f"torque on {body!r}"), frame))

    def add_spring(self, body_a: str, point_a, body_b: str, point_b, *, stiffness=0, rest_length=0,
                   damping=0, tension=None) -> None:
        """A spring-damper between two body points. Linear by default: tension = k*stretch + c*stretch_rate;
        or any ``tension`` expression of ``kane.stretch`` [m] and ``kane.stretch_rate`` [m/s]."""
        k = _scalar(stiffness, "spring field 'stiffness'")
        c = _scalar(damping, "spring field 'damping'")
        if tension is None:
            law, potential = k * stretch + c * stretch_rate, k * stretch**2 / 2
        else:
            law, potential = _scalar(tension, "spring field 'tension'"), None
        self._springs.append((body_a, _vec(point_a, "spring field 'point_a'"), body_b,
                              _vec(point_b, "spring field 'point_b'"),
                              _scalar(rest_length, "spring field 'rest_length'"), law, potential))

    def add_joint_spring(self, joint: str, stiffness, rest=0, damping=0) -> None:
        """Linear spring and damper on every coordinate of a joint: Q = -k (q - rest) - c q'."""
        what = f"joint spring on {joint!r}"
        self._joint_loads.append(("spring", joint, _scalar(stiffness, f"{what} field 'stiffness'"),
                                  _scalar(rest, f"{what} field 'rest'"), _scalar(damping, f"{what} field 'damping'")))

    def add_joint_torque(self, joint: str, generalized_forces) -> None:
        """Generalized forces conjugate to the joint's coordinates (a torque about a revolute axis, a force
        along a prismatic axis): one expression per coordinate, e.g. an input symbol."""
        forces = generalized_forces if isinstance(generalized_forces, (list, tuple)) else [generalized_forces]
        self._joint_loads.append(("torque", joint, tuple(_scalar(x, f"joint torque on {joint!r}") for x in forces)))

    # ---- constraints ---------------------------------------------------------------------------------------
    def _add_constraint(self, name, kind, data, transient):
        if not isinstance(name, str) or not name:
            raise ModelError(f"constraint name {name!r}: expected a non-empty string")
        if any(c[0] == name for c in self._constraints):
            raise ModelError(f"constraint name {name!r} is used twice")
        self._constraints.append((name, kind, data, bool(transient)))
        return name

    def add_motion_constraint(self, name: str, expressions, *, transient=False) -> str:
        """Pfaffian rows A(q) u + b(q, t) = 0 given as expressions linear in the speeds."""
        rows = tuple(_scalar(e, f"constraint {name!r} row") for e in expressions)
        return self._add_constraint(name, ConstraintKind.MOTION, rows, transient)

    def add_joint_lock(self, name: str, joint: str, *, transient=False) -> str:
        """All speeds of ``joint`` are zero (42's lock of a joint's DOFs; a sticking caster)."""
        return self._add_constraint(name, ConstraintKind.JOINT_LOCK, (joint,), transient)

    def add_point_velocity_constraint(self, name: str, body: str, point=(0, 0, 0), directions=None, *,
                                      transient=False) -> str:
        """The body-fixed ``point`` has zero velocity along ``directions`` (ground axes; default all three)."""
        dirs = tuple(_vec(d, f"constraint {name!r} direction") for d in (directions or np.eye(3).tolist()))
        return self._add_constraint(name, ConstraintKind.POINT_VELOCITY,
                                    (body, _vec(point, f"constraint {name!r} point"), dirs), transient)

    def add_rolling_disk(self, name: str, body: str, radius, axis=(0, 1, 0), center=(0, 0, 0), *,
                         plane_point=(0, 0, 0), plane_normal=None, transient=False) -> str:
        """A thin disk (symmetry ``axis`` in body axes, ``center`` in body axes) rolls without slip on a ground
        plane: the disk's material point at the contact has zero velocity (3 rows: two tangent, then the normal).

        The plane passes through ``plane_point`` [m] with the unit normal ``plane_normal`` (ground axes, pointing
        to the side the disk is on); by default it is normal to gravity (``-g/|g|`` at the default parameters),
        or z up when there is no gravity."""
        normal = None if plane_normal is None else _vec(plane_normal, f"constraint {name!r} plane_normal")
        return self._add_constraint(name, ConstraintKind.ROLLING_DISK,
                                    (body, _scalar(radius, f"constraint {name!r} radius"),
                                     _vec(axis, f"constraint {name!r} axis"),
                                     _vec(center, f"constraint {name!r} center"),
                                     _vec(plane_point, f"constraint {name!r} plane_point"), normal), transient)

    def add_no_slip(self, name: str, body: str, point, direction, *, transient=False) -> str:
        """Knife edge: the body-fixed ``point`` has no velocity along the body-fixed ``direction``."""
        return self._add_constraint(name, ConstraintKind.NO_SLIP,
                                    (body, _vec(point, f"constraint {name!r} point"),
                                     _vec(direction, f"constraint {name!r} direction")), transient)

    def add_loop_closure(self, name: str, body_a: str, point_a, body_b: str, point_b, *, frames=False,
                         directions=None, transient=False) -> str:
        """Two body points (and with ``frames=True`` the two body frames' rotations) move together, imposed at
        velocity level; ``directions`` (ground axes) selects components of the point velocity."""
        dirs = tuple(_vec(d, f"constraint {name!r} direction") for d in (directions or np.eye(3).tolist()))
        return self._add_constraint(name, ConstraintKind.LOOP_CLOSURE,
                                    (body_a, _vec(point_a, f"constraint {name!r} point_a"), body_b,
                                     _vec(point_b, f"constraint {name!r} point_b"), bool(frames), dirs),
                                    transient)

    # ---- compile -------------------------------------------------------------------------------------------
    @property
    def collisions(self) -> tuple:
        """The collision shapes added so far (:class:`kane.model.collision.Collision` records), in order."""
        return tuple(self._collisions)

    def compile(self) -> Model:
        """Check the description and return the frozen :class:`Model` (raises :class:`kane.ModelError`)."""

        return compile_system(self)
