"""Collision-detection benchmark: kane.mechanics.collision.contacts and the batched
kane.mechanics.collision_batch.contacts_batch (compiled: one numba call; coal: coal per pair) against MuJoCo's
mj_collision on one scene.

The scene: 20 boxes (half extents 0.1 m) in two layers of a 5 x 2 grid, each 1 mm into the one below (the lower
layer 1 mm into a ground half-space), so every box touches its support on a face: 4 points per face contact in
kane (coal's contact patch), MuJoCo's box-box and box-plane collider. Both run in this process from Python on the
same poses; printed: the time per call (best of 5 rounds of 200), the contact counts and the ratios to
mj_collision, and a profile of the compiled contacts_batch (where its time goes). Run:
``python bench/bench_collision.py`` (needs mujoco and coal; the times depend on the machine and its load).
"""

from __future__ import annotations

import time

import numpy as np

from kane import System
from kane import joints as J
from kane.mechanics.collision import CollisionData, CollisionOptions, contacts
from kane.mechanics.collision_batch import contacts_batch
from kane.model.collision import Box, HalfSpace

__all__ = ["scene_poses", "kane_scene", "mujoco_scene", "run"]

N_BOXES, HALF = 20, 0.1


def scene_poses() -> tuple[np.ndarray, np.ndarray]:
    """(R (20, 3, 3), r (20, 3)) of the boxes: a 5 x 2 grid in x, y with 0.25 m pitch, two layers."""
    r = np.array([[0.25 * (k % 5), 0.25 * (k // 5 % 2), HALF - 0.001 + (2 * HALF - 0.001) * (k // 10)]
                  for k in range(N_BOXES)])
    return np.repeat(np.eye(3)[None], N_BOXES, axis=0), r


def kane_scene():
    s = System("boxes")
    for k in range(N_BOXES):
        s.add_body(f"b{k}", 1.0, inertia=(0.01, 0.01, 0.01))
        s.add_joint("ground", f"b{k}", J.Free(), name=f"j{k}")
        s.add_collision(f"b{k}", Box((HALF, HALF, HALF)))
    s.add_collision("ground", HalfSpace())
    return s.compile()


def mujoco_scene():
    import mujoco

    _, r = scene_poses()
    bodies = "".join(f'<body pos="{x} {y} {z}"><freejoint/><geom type="box" size="{HALF} {HALF} {HALF}"/></body>'
                     for x, y, z in r)
    xml = (f'<mujoco><option cone="elliptic"/><worldbody><geom type="plane" size="5 5 0.1"/>{bodies}'
           "</worldbody></mujoco>")
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    return model, data


def _best(f, rounds=5, n=200) -> float:
    best = np.inf
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def run() -> dict:
    import mujoco

    m = kane_scene()
    poses = scene_poses()
    data = CollisionData(m)
    data_coal = CollisionData(m, CollisionOptions(narrow_phase="coal"))
    n_kane = len(contacts(m, data, poses))
    t_kane = _best(lambda: contacts(m, data, poses))
    n_batch = len(contacts_batch(m, data, poses))
    t_batch = _best(lambda: contacts_batch(m, data, poses), n=2000)
    n_coal = len(contacts_batch(m, data_coal, poses))
    t_coal = _best(lambda: contacts_batch(m, data_coal, poses))
    mm, md = mujoco_scene()
    mujoco.mj_collision(mm, md)
    n_mj = int(md.ncon)
    t_mj = _best(lambda: mujoco.mj_collision(mm, md), n=2000)
    out = {"kane_s": t_kane, "kane_batch_s": t_batch, "kane_batch_coal_s": t_coal, "mujoco_s": t_mj,
           "kane_contacts": n_kane, "kane_batch_contacts": n_batch, "kane_batch_coal_contacts": n_coal,
           "mujoco_contacts": n_mj}
    print(f"kane contacts(): {t_kane * 1e6:.0f} us per call, {n_kane} points; contacts_batch() compiled: "
          f"{t_batch * 1e6:.1f} us, {n_batch} points; contacts_batch() coal: {t_coal * 1e6:.0f} us, {n_coal} points; "
          f"MuJoCo mj_collision: {t_mj * 1e6:.1f} us per call, {n_mj} contacts; ratios to mj_collision "
          f"{t_kane / t_mj:.0f}x, {t_batch / t_mj:.1f}x, {t_coal / t_mj:.0f}x (2-core shared VM)")
    return out


def profile(n: int = 5000) -> None:
    """cProfile of ``n`` compiled contacts_batch calls on the scene: the compiled kernel, the Python around it."""
    import cProfile
    import pstats

    m = kane_scene()
    poses = scene_poses()
    data = CollisionData(m)
    contacts_batch(m, data, poses)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        contacts_batch(m, data, poses)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    run()
    profile()
