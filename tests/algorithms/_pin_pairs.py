"""A serial chain built twice, in kane and in Pinocchio, from the same seeded random masses, inertias, placements
and joint axes (for the cross-checks against Pinocchio); imports pinocchio, so only tests that have it use it."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

import kane
from kane import joints as J

from _trees import random_inertia, random_rotation

__all__ = ["paired_chain"]


def paired_chain(rng, kinds, root_at_origin=False):
    """(kane System, pin.Model, Pinocchio joint ids, body names) of a chain with one joint per entry of ``kinds``
    ("free", "revolute", "prismatic", "spherical"); the body frame is the joint frame M in both, and Pinocchio's
    joint placement is kane's (parent_point, parent_rotation). ``root_at_origin``: the first joint at the origin."""
    s = kane.System("chain", gravity=(0, 0, -9.81))
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([0, 0, -9.81, 0, 0, 0]))
    parent_body, parent_jid, jids, names = "ground", 0, [], []
    for k, kind in enumerate(kinds):
        m, c, Ic = float(rng.uniform(0.5, 3.0)), rng.normal(0, 0.2, 3), random_inertia(rng)
        if k == 0 and root_at_origin:
            R, p = np.eye(3), np.zeros(3)
        else:
            R, p = random_rotation(rng), rng.normal(0, 0.4, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joint, pjoint = {
            "free": (J.Free(), pin.JointModelFreeFlyer()),
            "revolute": (J.Revolute(tuple(axis)), pin.JointModelRevoluteUnaligned(*axis)),
            "prismatic": (J.Prismatic(tuple(axis)), pin.JointModelPrismaticUnaligned(*axis)),
            "spherical": (J.Spherical(), pin.JointModelSpherical()),
        }[kind]
        name = f"B{k}"
        s.add_body(name, mass=m, com=tuple(c), inertia=Ic.tolist())
        s.add_joint(parent_body, name, joint, name=f"j{k}", parent_point=tuple(p), parent_rotation=R.tolist())
        jid = pm.addJoint(parent_jid, pjoint, pin.SE3(R, p), f"j{k}")
        pm.appendBodyToJoint(jid, pin.Inertia(m, c, Ic), pin.SE3.Identity())
        parent_body, parent_jid = name, jid
        jids.append(jid)
        names.append(name)
    return s, pm, jids, names
