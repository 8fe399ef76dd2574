"""Geometry for display and body poses along a run: the scene the browser viewer draws (kane.viz.viewer).

A body without visual geometry is drawn as the *equivalent box* of its mass m and central inertia: the
homogeneous box with the same principal moments, its sides along the principal axes,

    a_i^2 = 6 (I_j + I_k - I_i) / m     (I_i = m (a_j^2 + a_k^2) / 12),

centred at the centre of mass; a particle (or a body of zero inertia) as a small sphere at its centre of mass.
Each joint adds its frames F (in the parent) and M (in the child). The pose of every body frame at every sample
of a run comes from the model's tree kinematics (:mod:`kane.analysis.kinematic_outputs`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

import numpy as np

from ..analysis.kinematic_outputs import kinematic_outputs
from ..errors import ArgumentError
from ..model.model import float_value
from ..spatial import quaternion_to_rotation, rotation_to_quaternion
from .contact_plot import contact_arrows, merge_arrows
from .forces import ForceArrows, constraint_arrows, equations_of

__all__ = ["PALETTE", "ShapeKind", "BodyShape", "JointFrame", "Scene", "equivalent_box", "default_shapes",
           "joint_frames", "body_poses", "poses_at", "build_scene", "state_scene",
           "point_trace", "scene_size"]

# body colours, RGB 0-255, in body order
PALETTE = ((70, 130, 180), (205, 92, 92), (60, 179, 113), (238, 173, 14), (147, 112, 219), (72, 209, 204))


class ShapeKind(enum.Enum):
    """The kind of a drawn shape."""

    BOX = "box"
    SPHERE = "sphere"
    CYLINDER = "cylinder"
    CAPSULE = "capsule"
    MESH = "mesh"


@dataclass(frozen=True)
class BodyShape:
    """A shape fixed in body ``body``: ``size`` (3,) [m] the box sides (a sphere: its diameter three times; a
    cylinder or capsule: (2 r, 2 r, length) along its z, a capsule's length its straight part; a mesh: its scale),
    ``position`` (3,) [m] its centre and ``wxyz`` (4,) its axes, both in body axes; ``color`` RGB 0-255; a
    mesh's ``file`` and ``mesh`` (a trimesh.Trimesh, scaled, in the shape's axes)."""

    body: str
    kind: ShapeKind
    size: tuple[float, float, float]
    position: tuple[float, float, float]
    wxyz: tuple[float, float, float, float]
    color: tuple[int, int, int]
    file: str | None = None
    mesh: object = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class JointFrame:
    """A joint frame drawn as axes: joint ``joint``'s frame ``which`` ("F" in the parent, "M" in the child) fixed
    in ``body`` (a body name or "ground") at ``position`` (3,) [m] with axes ``wxyz`` (4,), in body axes."""

    joint: str
    which: str
    body: str
    position: tuple[float, float, float]
    wxyz: tuple[float, float, float, float]


@dataclass(frozen=True)
class Scene:
    """What the viewer draws: ``bodies`` (names), their ``shapes`` and joint ``frames``, and at every sample
    ``t`` (N,) [s] the body frames' origins ``position`` (N, n_b, 3) [m] and axes ``wxyz`` (N, n_b, 4) (scalar-first
    quaternions, body axes to ground axes); ``energy`` (N,) [J] or None; ``length`` [m] a size for axes; ``up`` the
    direction against gravity; ``residuals`` name -> (N,) the run's constraint residuals; ``forces`` the
    constraint forces at their contact points (:class:`kane.viz.forces.ForceArrows`) or None."""

    bodies: tuple[str, ...]
    shapes: tuple[BodyShape, ...]
    frames: tuple[JointFrame, ...]
    t: np.ndarray
    position: np.ndarray
    wxyz: np.ndarray
    energy: np.ndarray | None
    length: float
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    residuals: dict = field(default_factory=dict)
    forces: ForceArrows | None = None


def equivalent_box(mass: float, inertia) -> tuple[np.ndarray, np.ndarray]:
    """(sides (3,) [m], R (3, 3) principal axes as columns, in body axes) of the homogeneous box of ``mass`` [kg]
    with the central ``inertia`` (3, 3) [kg m^2]; a side that the moments would make imaginary is 0."""
    moments, axes = np.linalg.eigh(np.asarray(inertia, dtype=float))
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    sq = 6.0 * (moments.sum() - 2.0 * moments) / mass
    return np.sqrt(np.clip(sq, 0.0, None)), axes


def _values(model, params) -> dict:
    return dict(zip(model.parameters, model.parameter_values(params)))


def _vec(expr, values) -> np.ndarray:
    return np.array([float_value(e, values) for e in expr], dtype=float).reshape(-1)


def _wxyz(R) -> tuple:
    return tuple(float(x) for x in rotation_to_quaternion(np.asarray(R, dtype=float)))


def _length(model, values) -> float:
    """A size of the model [m]: the largest joint offset or centre-of-mass distance (0.2 m when all are 0)."""
    sizes = [np.linalg.norm(_vec(b.com, values)) for b in model.bodies]
    for j in model.joints:
        sizes += [np.linalg.norm(_vec(j.r_parent_F, values)), np.linalg.norm(_vec(j.r_child_M, values))]
    return float(max(sizes, default=0.0)) or 0.2


def default_shapes(model, params=None) -> tuple[BodyShape, ...]:
    """The default shape of every body of ``model`` with parameter values ``params`` (name -> value, defaults
    otherwise): its equivalent box (:func:`equivalent_box`) at its centre of mass, or a sphere of diameter
    0.1 x the model's size for a particle, a body of zero inertia, or one of zero mass."""
    values = _values(model, params)
    dot = 0.1 * _length(model, values)
    shapes = []
    for i, body in enumerate(model.bodies):
        mass = float_value(body.mass, values)
        inertia = np.array([[float_value(e, values) for e in row] for row in body.inertia.tolist()])
        com = tuple(_vec(body.com, values))
        color = PALETTE[i % len(PALETTE)]
        sides, axes = (np.zeros(3), np.eye(3)) if mass <= 0 else equivalent_box(mass, inertia)
        if body.is_particle or not np.any(sides > 0):
            shapes.append(BodyShape(body.name, ShapeKind.SPHERE, (dot,) * 3, com, (1.0, 0.0, 0.0, 0.0), color))
        else:
            shapes.append(BodyShape(body.name, ShapeKind.BOX, tuple(float(s) for s in sides), com, _wxyz(axes),
                                    color))
    return tuple(shapes)


def joint_frames(model, params=None) -> tuple[JointFrame, ...]:
    """The frames F (in the parent, "ground" for the ground) and M (in the child) of every joint of ``model``."""
    values = _values(model, params)
    out = []
    for j in model.joints:
        parent = "ground" if j.parent < 0 else model.bodies[j.parent].name
        for which, body, R, r in (("F", parent, j.R_parent_F, j.r_parent_F),
                                  ("M", model.bodies[j.child].name, j.R_child_M, j.r_child_M)):
            R = np.array([[float_value(e, values) for e in row] for row in R.tolist()])
            out.append(JointFrame(j.name, which, body, tuple(_vec(r, values)), _wxyz(R)))
    return tuple(out)


def body_poses(equations, trajectory) -> tuple[np.ndarray, np.ndarray]:
    """(position (N, n_b, 3) [m], wxyz (N, n_b, 4)) of every body frame at every sample of ``trajectory``, from the
    kinematics of ``equations`` (a :class:`kane.Equations` or the KaneDynamics compiled from them) with the run's
    parameters. The run's coordinates and speeds must be those of the equations (an :class:`ArgumentError` says
    otherwise)."""
    equations = equations_of(equations)
    model = equations.model
    q_names = tuple(str(s) for s in model.q)
    u_names = tuple(str(s) for s in equations.u_independent)
    if tuple(trajectory.q_names) != q_names or tuple(trajectory.u_names) != u_names:
        raise ArgumentError(f"run {trajectory.source or ''}: its coordinates {', '.join(trajectory.q_names)} and "
                            f"speeds {', '.join(trajectory.u_names)} are not those of model {model.name!r} "
                            f"({', '.join(q_names)}; {', '.join(u_names)})")
    outputs = kinematic_outputs(equations)
    params = {k: v for k, v in trajectory.params.items() if k in {str(p) for p in model.parameters}}
    n, nb = trajectory.n_samples, model.n_bodies
    position, wxyz = np.zeros((n, nb, 3)), np.zeros((n, nb, 4))
    for k in range(n):
        position[k], wxyz[k] = poses_at(outputs, trajectory.t[k], trajectory.q[k], trajectory.u[k], params or None)
    return position, wxyz


def poses_at(outputs, t: float, q, u, params=None) -> tuple[np.ndarray, np.ndarray]:
    """(position (n_b, 3) [m], wxyz (n_b, 4)) of every body frame at (t [s], q (n_q,), independent u) from
    ``outputs`` (the :func:`kane.analysis.kinematic_outputs.kinematic_outputs` of the equations)."""
    bodies = outputs.model.bodies
    vals = outputs.evaluate([f"{b.name}.{k}" for b in bodies for k in ("position", "quaternion")], t, q, u, params)
    return (np.array([vals[f"{b.name}.position"] for b in bodies], dtype=float).reshape(-1, 3),
            np.array([vals[f"{b.name}.quaternion"] for b in bodies], dtype=float).reshape(-1, 4))


def build_scene(equations, trajectory, shapes=None, inputs=None, dynamics=None) -> Scene:
    """The :class:`Scene` of ``trajectory`` (a run of ``equations``): ``shapes`` (default: :func:`default_shapes`),
    joint frames, poses and the constraint forces (:func:`kane.viz.forces.constraint_arrows`, with the run's
    ``inputs`` and the compiled ``dynamics`` when they are recomputed)."""
    equations = equations_of(equations)
    params = {k: v for k, v in trajectory.params.items() if k in {str(p) for p in equations.model.parameters}}
    position, wxyz = body_poses(equations, trajectory)
    scene = _scene(equations.model, params or None, np.array(trajectory.t), position, wxyz,
                   None if trajectory.energy is None else np.array(trajectory.energy), shapes,
                   {k: np.array(v) for k, v in trajectory.residuals.items()})
    forces = merge_arrows(constraint_arrows(equations, trajectory, position, wxyz, inputs, dynamics),
                          contact_arrows(trajectory, {c.name: c.body for c in equations.model.collisions}))
    return scene if forces is None else replace(scene, forces=forces)


def state_scene(equations, t: float, q, u, params=None, shapes=None) -> Scene:
    """The one-sample :class:`Scene` of ``equations`` at (t [s], q (n_q,), independent u), what the live viewer
    starts from; ``params`` name -> value (defaults otherwise)."""
    equations = equations_of(equations)
    position, wxyz = poses_at(kinematic_outputs(equations), t, q, u, params)
    return _scene(equations.model, params, np.array([float(t)]), position[None], wxyz[None], None, shapes)


def _scene(model, params, t, position, wxyz, energy, shapes, residuals=None) -> Scene:
    values = _values(model, params)
    gravity = _vec(model.gravity, values)
    up = -gravity / np.linalg.norm(gravity) if np.linalg.norm(gravity) > 0 else np.array([0.0, 0.0, 1.0])
    shapes = default_shapes(model, params) if shapes is None else tuple(shapes)
    return Scene(tuple(b.name for b in model.bodies), shapes, joint_frames(model, params),
                 t, position, wxyz, energy, _length(model, values), tuple(float(x) for x in up),
                 dict(residuals or {}))


def point_trace(scene: Scene, body: str, point) -> np.ndarray:
    """The path (N, 3) [m], ground axes, of ``point`` (3,) [m] fixed in ``body`` (body axes) over ``scene``'s
    samples; an :class:`ArgumentError` listing the bodies when ``body`` is not one."""
    if body not in scene.bodies:
        raise ArgumentError(f"trace: no body named {body!r}; bodies: {', '.join(scene.bodies)}")
    i = scene.bodies.index(body)
    R = quaternion_to_rotation(scene.wxyz[:, i])
    return scene.position[:, i] + R @ np.asarray(point, dtype=float).reshape(3)


def scene_size(scene: Scene) -> float:
    """The size [m] of the drawn model: the largest of ``scene.length`` (joint offsets, centres of mass) and the
    sides of its shapes (a mesh's extent from its vertices), what arrows and axes are scaled to."""
    sides = [scene.length]
    for s in scene.shapes:
        if s.kind is ShapeKind.MESH and s.mesh is not None:
            sides.append(float(np.max(np.ptp(np.asarray(s.mesh.vertices, dtype=float), axis=0), initial=0.0)))
        elif s.kind is not ShapeKind.MESH:
            sides.append(float(max(s.size)))
    return max(sides)
