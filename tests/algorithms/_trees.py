"""Seeded random trees for the algorithm tests: every joint kind, random placements, physical inertias, loads."""

from __future__ import annotations

import numpy as np

import kane
from kane import joints as J

__all__ = ["random_rotation", "random_inertia", "JOINT_KINDS", "random_tree", "random_state", "assert_close"]


def random_rotation(rng) -> np.ndarray:
    """A uniformly random proper rotation (3, 3)."""
    qq = rng.normal(size=4)
    w, x, y, z = qq / np.linalg.norm(qq)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_inertia(rng, scale=1.0) -> np.ndarray:
    """A physical central inertia tensor (3, 3): principal moments (b+c, a+c, a+b), randomly rotated."""
    a, b, c = rng.uniform(0.02, 0.3, 3) * scale
    R = random_rotation(rng)
    return R @ np.diag([b + c, a + c, a + b]) @ R.T


def _axis(rng):
    v = rng.normal(size=3)
    return tuple(v / np.linalg.norm(v))


# every joint kind of kane.joints, with both choices of speeds where a joint has them
JOINT_KINDS = {
    "revolute": lambda rng: J.Revolute(_axis(rng)),
    "prismatic": lambda rng: J.Prismatic(_axis(rng)),
    "cylindrical": lambda rng: J.Cylindrical(_axis(rng)),
    "universal": lambda rng: J.Universal("31"),
    "planar_rates": lambda rng: J.Planar(speeds=J.Speeds.RATES),
    "planar_body": lambda rng: J.Planar(speeds=J.Speeds.BODY),
    "gimbal_rates": lambda rng: J.Gimbal("213", speeds=J.Speeds.RATES),
    "gimbal_body": lambda rng: J.Gimbal("313", speeds=J.Speeds.BODY),
    "spherical": lambda rng: J.Spherical(),
    "free": lambda rng: J.Free(),
    "weld": lambda rng: J.Weld(),
}


def random_tree(seed: int, kinds=None, extra_revolute: int = 1, loads: bool = True) -> kane.System:
    """A tree with one joint of each kind in ``kinds`` (default all) plus ``extra_revolute`` revolute joints, in a
    seeded random order with random parents, placements, masses and inertias; with ``loads``: a time-dependent
    force, a couple, a spring, joint springs and a joint torque input."""
    rng = np.random.default_rng(seed)
    kinds = list(kinds or JOINT_KINDS) + ["revolute"] * extra_revolute
    rng.shuffle(kinds)
    s = kane.System(f"tree{seed}", gravity=(0.3, -0.2, -9.81))
    names = []
    for k, kind in enumerate(kinds):
        name = f"B{k}"
        s.add_body(name, mass=float(rng.uniform(0.5, 3.0)), com=tuple(rng.normal(0, 0.15, 3)),
                   inertia=random_inertia(rng).tolist())
        parent = "ground" if k == 0 else (names[int(rng.integers(0, k))] if rng.random() < 0.85 else "ground")
        s.add_joint(parent, name, JOINT_KINDS[kind](rng), name=f"j{k}_{kind}",
                    parent_point=tuple(rng.normal(0, 0.3, 3)), parent_rotation=random_rotation(rng).tolist(),
                    child_point=tuple(rng.normal(0, 0.2, 3)), child_rotation=random_rotation(rng).tolist())
        names.append(name)
    if loads:
        s.add_force(names[-1], (1.5, -0.7, 2.0 * kane.t), point=(0.1, -0.05, 0.3), frame="ground")
        s.add_torque(names[len(names) // 2], (0.3, -0.2, 0.1), frame=names[len(names) // 2])
        s.add_spring(names[1], (0.1, 0.2, 0.0), names[-2], (0.0, 0.1, -0.1), stiffness=20.0, rest_length=0.3,
                     damping=0.5)
        drive = s.input("drive", 0.7)
        for k, kind in enumerate(kinds):
            if kind in ("revolute", "prismatic", "gimbal_rates"):
                s.add_joint_spring(f"j{k}_{kind}", 3.0, 0.1, 0.2)
            if kind == "cylindrical":
                s.add_joint_torque(f"j{k}_{kind}", [drive, -0.5 * drive])
    return s


def random_state(model, rng, q_scale=1.0, u_scale=1.0):
    """(q, u) near the model's q0 with unit quaternions."""
    q = np.array(model.q0) + rng.normal(0, q_scale, model.n_q)
    for pj in model.joints:
        if pj.joint.kind in ("spherical", "free"):
            idx = list(range(model.n_q)[pj.q_slice])[-4:]
            q[idx] /= np.linalg.norm(q[idx])
    return q, rng.normal(0, u_scale, model.n_u)


def assert_close(actual, expected, rtol=1e-9, what=""):
    """Agreement relative to the largest entry of the reference (entries may pass through zero)."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shapes {actual.shape} != {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= rtol * scale, f"{what}: max abs error {err:.3e} > {rtol:g} * {scale:.3e}"
