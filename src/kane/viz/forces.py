"""Contact points and constraint forces of a run, drawn as arrows by the viewer (Kane & Levinson, *Dynamics:
Theory and Applications*, sec. 4.5: noncontributing forces brought into evidence).

A permanent constraint that holds a body point's velocity along directions d_r (its rows A_r = d_r . v_P) has
multipliers lambda_r in M u' = f + A^T lambda (:meth:`kane.Dynamics.constraint_forces`); the force it applies to
the body at P is

    F = sum_r lambda_r d_r    [N], ground axes,

so one arrow per constraint: a rolling disk's at its contact point (the rim point nearest the plane, tangents and
normal of the plane), a knife edge's (``no_slip``) at its point along its body-fixed direction, a point-velocity
constraint's at its point, a loop closure's on its first body at its point (the second body gets -F). Joint locks
and a user's rows give generalized forces with no point of application: they get no arrow. The multipliers are
read from the run's recorded outputs ``"<constraint>.force.<row>"`` (:mod:`kane.analysis.kinematic_outputs`
monitors) when it has them, else recomputed from the model at each sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..mechanics.constraints import plane_tangents
from ..model.elements import ConstraintKind
from ..model.model import float_value
from ..spatial import quaternion_to_rotation
from ..symbolic.derive import Equations
from ..symbolic.dynamics import KaneDynamics

__all__ = ["ForceArrows", "ARROW_KINDS", "constraint_arrows", "equations_of"]

ARROW_KINDS = (ConstraintKind.ROLLING_DISK, ConstraintKind.NO_SLIP, ConstraintKind.POINT_VELOCITY,
               ConstraintKind.LOOP_CLOSURE)


@dataclass(frozen=True)
class ForceArrows:
    """The constraint forces of a run: ``names`` (k,) the constraints, ``bodies`` (k,) the body each force acts on,
    at every sample the point of application ``point`` (N, k, 3) [m] and the ``force`` (N, k, 3) [N], both in
    ground axes."""

    names: tuple[str, ...]
    bodies: tuple[str, ...]
    point: np.ndarray
    force: np.ndarray


def _floats(vec, values) -> np.ndarray:
    return np.array([float_value(e, values) for e in vec], dtype=float)


def _recorded(trajectory, name: str, rows: int) -> np.ndarray | None:
    columns = [f"{name}.force.{r + 1}" for r in range(rows)]
    if all(c in trajectory.residuals for c in columns):
        return np.stack([np.asarray(trajectory.residuals[c], dtype=float) for c in columns], axis=1)
    return None



def equations_of(source) -> Equations:
    """The :class:`kane.Equations` a scene is drawn from: ``source`` itself, or those the compiled Kane dynamics
    ``source`` (a :class:`kane.KaneDynamics`) were made from; an ArgumentError naming the type otherwise."""
    if isinstance(source, Equations):
        return source
    if isinstance(source, KaneDynamics):
        return source.equations
    raise ArgumentError(f"scene: expected kane.Equations (kane.derive) or the kane.KaneDynamics compiled from them, "
                        f"got {type(source).__name__}")

def constraint_arrows(equations, trajectory, position, wxyz, inputs=None, dynamics=None) -> ForceArrows | None:
    """The :class:`ForceArrows` of the permanent point constraints of ``equations`` along ``trajectory`` (its
    bodies' frames at ``position`` (N, n_b, 3) [m] and ``wxyz`` (N, n_b, 4), as :func:`kane.viz.scene.body_poses`
    gives them); ``inputs``: None, a dict or a callable (t, q, u) -> dict of the run's inputs, and ``dynamics``
    the compiled equations (default ``equations.compile("numpy")``), with which the multipliers are recomputed
    when the run did not record them. None when the model has no such constraint."""
    equations = equations_of(equations)
    model = equations.model
    chosen = [c for c in model.constraints if c.kind in ARROW_KINDS and not c.transient]
    if not chosen:
        return None
    params = {k: v for k, v in trajectory.params.items() if k in {str(p) for p in model.parameters}} or None
    values = dict(zip(model.parameters, model.parameter_values(params)))
    layout = equations.constraint_layout
    lam = {c.name: _recorded(trajectory, c.name, layout[c.name].rows.stop - layout[c.name].rows.start)
           for c in chosen}
    if any(v is None for v in lam.values()):
        dyn = equations.compile("numpy") if dynamics is None else dynamics  # no C compile for a few hundred calls
        n = trajectory.n_samples
        computed = {c.name: [] for c in chosen}
        for k in range(n):
            t, q, u = float(trajectory.t[k]), trajectory.q[k], trajectory.u[k]
            w = inputs(t, q, u) if callable(inputs) else inputs
            out = dyn.constraint_forces(t, q, u, params, w)
            for name in computed:
                computed[name].append(out[name])
        lam = {name: np.array(v) if lam[name] is None else lam[name] for name, v in computed.items()}
    R = quaternion_to_rotation(wxyz.reshape(-1, 4)).reshape(wxyz.shape[:2] + (3, 3))
    points, forces, bodies = [], [], []
    for c in chosen:
        data, L = c.data, lam[c.name]
        i, local = int(data[0]), None if c.kind is ConstraintKind.ROLLING_DISK else _floats(data[1], values)
        if c.kind is ConstraintKind.ROLLING_DISK:
            radius, axis, center = float_value(data[1], values), _floats(data[2], values), _floats(data[3], values)
            axis = axis / np.linalg.norm(axis)
            n_b = np.einsum("nji,j->ni", R[:, i], _floats(data[5], values))  # the plane's normal in disk axes
            k = n_b - (n_b @ axis)[:, None] * axis
            local = center - radius * k / np.linalg.norm(k, axis=1, keepdims=True)
            normal = [float(x) for x in _floats(data[5], values)]
            F = L @ np.array([*plane_tangents(normal), normal], dtype=float)
        elif c.kind is ConstraintKind.NO_SLIP:
            F = L[:, :1] * np.einsum("nij,j->ni", R[:, i], _floats(data[2], values))
        elif c.kind is ConstraintKind.POINT_VELOCITY:
            F = L @ np.array([_floats(d, values) for d in data[2]])
        else:  # a loop closure: the point rows' force on its first body (on the second, reversed, when the first
            dirs = np.array([_floats(d, values) for d in data[5]])  # is the ground)
            F = L[:, :len(dirs)] @ dirs
            if i < 0:
                i, local, F = int(data[2]), _floats(data[3], values), -F
        local = np.broadcast_to(local, position[:, i].shape)
        points.append(position[:, i] + np.einsum("nij,nj->ni", R[:, i], local))
        forces.append(F)
        bodies.append(model.bodies[i].name)
    return ForceArrows(tuple(c.name for c in chosen), tuple(bodies), np.stack(points, axis=1),
                       np.stack(forces, axis=1))
