"""ABA, CRBA and RNEA against Pinocchio's aba, crba and rnea on the same models.

Pinocchio (PyPI ``pin``, a benchmark and test dependency only) is skipped when missing. The models: a chain built
by hand in both (free base, revolute and prismatic joints about oblique axes, a spherical joint, offsets, full
inertia tensors), and the UR5 and Panda URDFs shipped by ``example-robot-data``, imported by kane's own importer
and by ``pin.buildModelFromUrdf`` from the same file (the Panda on a floating base).

Conventions mapped here: Pinocchio's free-flyer q is (position, quaternion x y z w) and its v is (linear,
angular) in the local frame; kane's Free joint has q = (position, quaternion w x y z) and u = (angular, linear)
in the same local frame, so u and u' are the same numbers with the halves swapped. A spherical joint: Pinocchio
q = (x, y, z, w), kane q = (w, x, y, z); both speeds are the angular velocity in the child frame.
"""

from __future__ import annotations

import pathlib
import sys
import sysconfig

import numpy as np
import pytest

import kane
from kane.algorithms import RecursiveDynamics
from kane.io.urdf import load_urdf

pin = pytest.importorskip("pinocchio")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _pin_pairs import paired_chain  # noqa: E402
from _trees import assert_close  # noqa: E402

OUTPUTS = ("udot_aba", "udot_crba", "M", "tau")


def _robots_dir():
    for root in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        path = pathlib.Path(root) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if path.is_dir():
            return path
    pytest.skip("example-robot-data is not installed")


class Layout:
    """Index maps between a kane model and a Pinocchio model with the same joints (by name)."""

    def __init__(self, model, pmodel):
        self.q_idx = np.zeros(pmodel.nq, dtype=int)  # pin q[k] = kane q[q_idx[k]]
        self.v_idx = np.zeros(pmodel.nv, dtype=int)
        for jid in range(1, pmodel.njoints):
            name, jm = pmodel.names[jid], pmodel.joints[jid]
            pj = model.joints[model.joint_index(name)]
            qs, us = list(range(model.n_q)[pj.q_slice]), list(range(model.n_u)[pj.u_slice])
            if pj.joint.kind == "free":  # (x y z w qx qy qz) -> (x y z qx qy qz qw); (w, v) -> (v, w)
                qs, us = qs[:3] + qs[4:] + [qs[3]], us[3:] + us[:3]
            elif pj.joint.kind == "spherical":
                qs = qs[1:] + qs[:1]
            self.q_idx[jm.idx_q:jm.idx_q + jm.nq] = qs
            self.v_idx[jm.idx_v:jm.idx_v + jm.nv] = us

    def to_pin(self, q, u):
        return q[self.q_idx], u[self.v_idx]


def _compare(model, pmodel, states, rtol=1e-9):
    rd = RecursiveDynamics(model)
    data = pmodel.createData()
    lay = Layout(model, pmodel)
    assert sorted(lay.v_idx.tolist()) == list(range(model.n_u))
    for k, (q, u, tau) in enumerate(states):
        out = rd.evaluate(OUTPUTS, 0.0, q, u, tau=tau)
        qp, vp = lay.to_pin(q, u)
        taup = tau[lay.v_idx]
        a = pin.aba(pmodel, data, qp, vp, taup)
        assert_close(out["udot_aba"][lay.v_idx], a, rtol, f"ABA vs pin.aba, state {k}")
        assert_close(out["udot_crba"][lay.v_idx], a, rtol, f"CRBA vs pin.aba, state {k}")
        H = pin.crba(pmodel, data, qp)
        H = np.triu(H) + np.triu(H, 1).T  # Pinocchio fills the upper triangle
        assert_close(out["M"][np.ix_(lay.v_idx, lay.v_idx)], H, rtol, f"CRBA vs pin.crba, state {k}")
        udot = np.random.default_rng(k).normal(0, 3.0, model.n_u)
        back = rd.evaluate(OUTPUTS, 0.0, q, u, udot=udot)["tau"]
        assert_close(back[lay.v_idx], pin.rnea(pmodel, data, qp, vp, udot[lay.v_idx]), rtol,
                     f"RNEA vs pin.rnea, state {k}")


def _states(model, seed, n=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = np.array(model.q0) + rng.uniform(-1.5, 1.5, model.n_q)
        for pj in model.joints:
            if pj.joint.kind in ("free", "spherical"):
                idx = list(range(model.n_q)[pj.q_slice])[-4:]
                q[idx] /= np.linalg.norm(q[idx])
        out.append((q, rng.normal(0, 1.5, model.n_u), rng.normal(0, 5.0, model.n_u)))
    return out


def test_hand_built_chain_matches_pinocchio():
    kinds = ["free", "revolute", "revolute", "prismatic", "revolute", "spherical", "revolute"]
    s, pm, _, _ = paired_chain(np.random.default_rng(42), kinds, root_at_origin=True)
    model = s.compile()
    _compare(model, pm, _states(model, 7))


def test_ur5_urdf_matches_pinocchio():
    path = _robots_dir() / "ur_description" / "urdf" / "ur5_robot.urdf"
    robot = load_urdf(path)
    assert robot.limits["elbow_joint"]["upper"] == pytest.approx(3.14159265359)
    model = robot.system.compile()
    pm = pin.buildModelFromUrdf(str(path))
    assert (model.n_q, model.n_u) == (pm.nq, pm.nv) == (6, 6)
    _compare(model, pm, _states(model, 8), rtol=1e-12)  # the file's numbers as they are: as close as Pinocchio's own round-off


def test_panda_urdf_on_a_floating_base_matches_pinocchio():
    path = _robots_dir() / "panda_description" / "urdf" / "panda.urdf"
    with pytest.raises(kane.ModelError, match="panda_finger_joint2.*mimic joints are not imported by default"):
        load_urdf(path)
    robot = load_urdf(path, root_joint="floating", mimic="independent")  # Pinocchio's default for mimic tags
    model = robot.system.compile()
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert (model.n_q, model.n_u) == (pm.nq, pm.nv) == (16, 15)
    _compare(model, pm, _states(model, 9, n=2))
