"""MJCF import benchmark: dm_control's humanoid loaded by ``kane.io.load_mjcf`` and derived, against the same model
written as a kane TOML model file (by :func:`to_toml` here, from the imported System: kane has no writer) loaded by
``kane.io.load_model`` and derived. Issue 31's target: the MJCF path within 2x of the TOML path.

Printed: both times [s] (best of ``--repeat``, same process), their ratio MJCF / TOML, and for information the time
per call [us] of MuJoCo's ``mj_forward`` and of kane's compiled ``udot`` (C backend) at the same state.
Run: ``python bench/bench_mjcf.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings

import numpy as np

import kane
from kane.io.mjcf import MjcfWarning, load_mjcf
from kane.io.model_file import load_model

__all__ = ["humanoid_path", "to_toml", "run"]


def humanoid_path() -> str:
    import importlib.util  # found without importing dm_control (its import opens a display)

    return os.path.join(importlib.util.find_spec("dm_control").submodule_search_locations[0], "suite",
                        "humanoid.xml")


def _num(x) -> str:
    return repr(float(x))


def _vec(v) -> str:
    return "[" + ", ".join(_num(x) for x in np.asarray(v, dtype=float).ravel()) + "]"


def _mat(R) -> str:
    R = np.asarray(R, dtype=float).reshape(3, 3)
    return "[" + ", ".join(_vec(row) for row in R) + "]"


def to_toml(system) -> str:
    """A TOML model file of an imported System: bodies, revolute/prismatic/spherical/weld joints with their
    placement, q0, inputs, joint springs and joint torques (what an MJCF import of a tree without equalities
    makes)."""
    lines = ["[model]", f'name = "{system.name}"', f"gravity = {_vec(system.gravity)}", "", "[inputs]"]
    lines += [f"{name} = {_num(value)}" for name, value in system._inputs.items()]
    for b in system._bodies.values():
        lines += ["", "[[bodies]]", f'name = "{b.name}"', f"mass = {_num(b.mass)}", f"com = {_vec(b.com)}",
                  f"inertia = {_mat(b.inertia)}"]
    for e in system._joints:
        j = e.joint
        lines += ["", "[[joints]]", f'name = "{e.name}"', f'type = "{j.kind}"', f'parent = "{e.parent}"',
                  f'child = "{e.child}"', f"parent_point = {_vec(e.r_parent_F)}",
                  f"parent_rotation = {_mat(e.R_parent_F)}", f"child_point = {_vec(e.r_child_M)}"]
        if j.kind in ("revolute", "prismatic"):
            lines.append(f"axis = {_vec(j.axis)}")
        if j.nq:
            lines += ["coordinates = [" + ", ".join(f'"{n}"' for n in e.q_names) + "]",
                      "speed_names = [" + ", ".join(f'"{n}"' for n in e.u_names) + "]"]
        if e.q0 is not None:
            lines.append(f"q0 = {_vec(e.q0)}")
    for load in system._joint_loads:
        if load[0] == "spring":
            _, joint, k, rest, c = load
            lines += ["", "[[loads]]", 'type = "joint_spring"', f'joint = "{joint}"', f"stiffness = {_num(k)}",
                      f"rest = {_num(rest)}", f"damping = {_num(c)}"]
        else:
            _, joint, values = load
            lines += ["", "[[loads]]", 'type = "joint_torque"', f'joint = "{joint}"',
                      "values = [" + ", ".join(f'"{v}"' for v in values) + "]"]
    return "\n".join(lines) + "\n"


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def run(repeat: int = 3) -> dict:
    path = humanoid_path()

    def from_mjcf():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MjcfWarning)
            return kane.derive(load_mjcf(path).system)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        imported = load_mjcf(path)
    with tempfile.TemporaryDirectory() as tmp:
        toml = os.path.join(tmp, "humanoid.toml")
        with open(toml, "w") as fh:
            fh.write(to_toml(imported.system))
        t_toml, eqs_toml = _best(lambda: load_model(toml).derive(), repeat)
    t_mjcf, eqs = _best(from_mjcf, repeat)
    row = {"mjcf_s": t_mjcf, "toml_s": t_toml, "ratio": t_mjcf / t_toml}
    import mujoco

    m = mujoco.MjModel.from_xml_path(path)
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                           | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    m.dof_armature[:] = 0
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    q = m.qpos0 + 0.1 * rng.normal(size=m.nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    v = rng.normal(size=m.nv)
    d.qpos[:], d.qvel[:] = q, v
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_forward(m, d)
    row["mj_forward_us"] = (time.perf_counter() - t0) / n * 1e6
    dyn = eqs.compile()
    a = dyn.udot(0.0, q, v)
    t0 = time.perf_counter()
    for _ in range(n):
        dyn.udot(0.0, q, v)
    row["kane_udot_us"] = (time.perf_counter() - t0) / n * 1e6
    row["max_abs_diff_qacc"] = float(np.max(np.abs(a - d.qacc)))
    row["toml_derives_same"] = [str(s) for s in eqs_toml.u_independent] == [str(s) for s in eqs.u_independent]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    row = run(ap.parse_args().repeat)
    print(f"humanoid load+derive: MJCF {row['mjcf_s']:.3f} s, TOML {row['toml_s']:.3f} s, ratio "
          f"{row['ratio']:.2f} (target <= 2)")
    print(f"per call: mj_forward {row['mj_forward_us']:.1f} us, kane compiled udot {row['kane_udot_us']:.1f} us "
          f"(max |u' - qacc| = {row['max_abs_diff_qacc']:.2e}; TOML gives the same speeds: {row['toml_derives_same']})")


if __name__ == "__main__":
    main()
