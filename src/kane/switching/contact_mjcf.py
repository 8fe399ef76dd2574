"""An MJCF scene of free bodies (``kane.io.load_mjcf``) as :class:`FreeBodies` with its collision shapes' contacts,
ready for :func:`kane.switching.contact_stepping.simulate_contacts`, and its states to and from MuJoCo's qpos/qvel.

Scope: every moving body has a free joint (bodies welded to the world are scenery, their shapes on the ground);
a jointless body below a free body must be massless (its shapes go on the free body, as MuJoCo welds it). Other
joints and equality constraints are refused by name: contact on jointed models is the point-Jacobian class's.

States: MuJoCo's free body has qpos = (origin position (3,) [m], scalar-first quaternion (4,)) and qvel = (origin
velocity (3,) in world axes [m/s], angular velocity (3,) in body axes [rad/s]); :class:`FreeBodies` tracks the
centre of mass: q = (c, quaternion), u = (omega, c'). With ``com`` the centre of mass in body axes,
c = p + R com and c' = p' + R (omega x com).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..mechanics.collision import BodyPoses, CollisionData, CollisionOptions, contacts
from ..spatial import quaternion_to_rotation
from .contact_bodies import FreeBodies

__all__ = ["MjcfContactScene", "mjcf_contact_scene"]


@dataclass(frozen=True)
class MjcfContactScene:
    """``bodies`` (:class:`FreeBodies`, named as kane's bodies), ``contacts`` (q -> list of
    :class:`kane.model.contact.ContactPoint`, the imported shapes through :func:`kane.mechanics.collision.contacts`),
    ``com`` (n, 3) each body's centre of mass in body axes [m], ``model`` (the compiled kane model), and the
    conversions :meth:`state` and :meth:`qpos_qvel`."""

    bodies: FreeBodies
    contacts: Callable
    com: np.ndarray
    model: object

    def state(self, qpos, qvel=None) -> tuple[np.ndarray, np.ndarray]:
        """(q (7 n,), u (6 n,)) of :attr:`bodies` from MuJoCo's ``qpos`` (7 n,) and ``qvel`` (6 n,) (default 0)."""
        n = len(self.bodies.names)
        qp = _shaped(qpos, (n, 7), "qpos")
        qv = np.zeros((n, 6)) if qvel is None else _shaped(qvel, (n, 6), "qvel")
        R = quaternion_to_rotation(qp[:, 3:7]).reshape(n, 3, 3)
        q = np.concatenate([qp[:, 0:3] + np.einsum("bij,bj->bi", R, self.com), qp[:, 3:7]], axis=1)
        v_c = qv[:, 0:3] + np.einsum("bij,bj->bi", R, np.cross(qv[:, 3:6], self.com))
        return q.reshape(-1), np.concatenate([qv[:, 3:6], v_c], axis=1).reshape(-1)

    def qpos_qvel(self, q, u) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo's (qpos (7 n,), qvel (6 n,)) of the :attr:`bodies` state (q, u) (the inverse of :meth:`state`)."""
        n = len(self.bodies.names)
        qb, ub = _shaped(q, (n, 7), "q"), _shaped(u, (n, 6), "u")
        R = quaternion_to_rotation(qb[:, 3:7]).reshape(n, 3, 3)
        p = qb[:, 0:3] - np.einsum("bij,bj->bi", R, self.com)
        v = ub[:, 3:6] - np.einsum("bij,bj->bi", R, np.cross(ub[:, 0:3], self.com))
        return np.concatenate([p, qb[:, 3:7]], axis=1).reshape(-1), np.concatenate([v, ub[:, 0:3]], axis=1).reshape(-1)


def _shaped(x, shape, what) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.size != shape[0] * shape[1]:
        raise ModelError(f"MJCF contact scene: {what}: expected {shape[0] * shape[1]} numbers, got {a.size}")
    return a.reshape(shape)


def mjcf_contact_scene(mjcf, margin: float = 0.02) -> MjcfContactScene:
    """The :class:`MjcfContactScene` of an imported MJCF model (:class:`kane.io.mjcf.MjcfModel`); ``margin`` [m]:
    shapes closer than this give contact points (the time stepping's look-ahead)."""
    others = sorted(name for name, kind in mjcf.joints.items() if kind != "free")
    if others or mjcf.constraints:
        raise ModelError(f"MJCF model {mjcf.name!r}: joints {others} and constraints {list(mjcf.constraints)}: the "
                         "MJCF contact scene takes free bodies only (a free joint each, no equality constraints)")
    model = mjcf.system.compile()
    free = {name: model.body_index(name) for name in mjcf.free_bodies}
    for i, b in enumerate(model.bodies):
        k = model.parent[i]
        while k >= 0 and model.bodies[k].name not in free:
            k = model.parent[k]
        if b.name not in free and k >= 0 and float(b.mass) != 0:
            raise ModelError(f"MJCF model {mjcf.name!r}: body {b.name!r} is welded below the free body "
                             f"{model.bodies[k].name!r} and has mass {float(b.mass):g} kg: expected its mass in the "
                             "free body (one <body> per rigid body)")
    names = tuple(mjcf.free_bodies)
    masses = [float(model.bodies[free[n]].mass) for n in names]
    com = np.array([[float(x) for x in model.bodies[free[n]].com] for n in names], dtype=float).reshape(-1, 3)
    inertias = [np.array(model.bodies[free[n]].inertia.tolist(), dtype=float) for n in names]
    gravity = np.array([float(x) for x in model.gravity], dtype=float)
    bodies = FreeBodies(names, masses, inertias, gravity)
    data = CollisionData(model, CollisionOptions(margin=margin))
    index = np.array([free[n] for n in names], dtype=int)
    n_b = len(model.bodies)

    def scene_contacts(q):
        qb = np.asarray(q, dtype=float).reshape(-1, 7)
        R_b = quaternion_to_rotation(qb[:, 3:7]).reshape(-1, 3, 3)
        R = np.repeat(np.eye(3)[None], n_b, axis=0)
        r = np.zeros((n_b, 3))
        R[index], r[index] = R_b, qb[:, 0:3] - np.einsum("bij,bj->bi", R_b, com)
        return contacts(model, data, BodyPoses(R, r))

    return MjcfContactScene(bodies, scene_contacts, com, model)
