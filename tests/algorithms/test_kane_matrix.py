"""Kane's matrix form for trees (seed 004): u' against ABA and kane.derive, and the generalized constraint forces
of every constrained joint axis against RNEA's joint forces (an independent route), Pinocchio's RNEA and hand
calculations (a pendulum's pivot carries m g + m w^2 r at the bottom of its swing)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.algorithms.kane_matrix import AXIS_LABELS, KaneMatrixDynamics, constrained_axes, kane_matrix
from kane.algorithms.noc import NOCDynamics

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _trees import JOINT_KINDS, assert_close, random_inertia, random_rotation, random_state, random_tree  # noqa: E402

G = 9.81


def _components(forces: dict, model) -> dict:
    """RNEA's joint forces (moment about M's origin, force; M axes) restricted to each joint's constrained axes."""
    return {pj.name: {AXIS_LABELS[k]: forces[pj.name][..., k] for k in constrained_axes(pj.joint)}
            for pj in model.joints}


def test_big_tree_kane_matrix_and_constraint_forces():
    """12 bodies, every joint kind and load: u' from (Omega^T I Omega + V^T m V) u' = rhs equals ABA's and
    kane.derive's to 1e-9, its M and f equal Kane's; the constraint forces of every constrained axis, computed
    after the fact from u', equal the components of RNEA's joint forces along those axes."""
    model = random_tree(11).compile()
    assert model.n_bodies >= 10 and {pj.name.split("_", 1)[1] for pj in model.joints} == set(JOINT_KINDS)
    sym = kane.derive(model).compile()
    dyn = KaneMatrixDynamics(model)
    rng = np.random.default_rng(31)
    for k in range(2):
        q, u = random_state(model, rng)
        tau = rng.normal(0, 2.0, model.n_u)
        t, inputs = float(rng.uniform(0, 2)), {"drive": float(rng.normal())}
        out = dyn.evaluate(("udot_kane", "udot_aba", "M_kane", "f_kane"), t, q, u, inputs=inputs, tau=tau)
        M_s, f_s = sym.mass_matrix(t, q), sym.forcing(t, q, u, inputs=inputs)
        ud = out["udot_kane"]
        assert_close(ud, np.linalg.solve(M_s, f_s + tau), 1e-9, f"Kane matrix vs kane.derive, state {k}")
        assert_close(ud, out["udot_aba"], 1e-9, f"Kane matrix vs ABA, state {k}")
        assert_close(out["M_kane"], M_s, 1e-10, f"generalized mass, state {k}")
        assert_close(out["f_kane"], f_s + tau, 1e-10, f"right-hand side, state {k}")
        cf = dyn.constraint_forces(t, q, u, inputs=inputs, udot=ud)
        ref = _components(dyn.joint_forces(t, q, u, ud, inputs=inputs), model)
        assert set(cf) == {pj.name for pj in model.joints}
        for name, axes in ref.items():
            assert list(cf[name]) == list(axes), name
            scale = max(1.0, max((abs(v) for v in axes.values()), default=1.0))
            for label, value in axes.items():
                assert abs(cf[name][label] - value) <= 1e-9 * scale, f"{name} {label}, state {k}"
    assert cf["j5_free"] == {} and list(cf["j1_weld"]) == list(AXIS_LABELS)
    assert list(cf["j7_planar_body"]) == ["rot x", "rot y", "trn z"]


def _pendulum(inertia=(0.2, 0.3, 0.15), m=2.0, r=0.5):
    s = kane.System("pendulum", gravity=(0, 0, -G))
    s.add_body("link", mass=m, com=(0, 0, -r), inertia=inertia)
    s.add_joint("ground", "link", J.Revolute("y"), name="hinge")
    return KaneMatrixDynamics(s)


def test_pendulum_pivot_force_by_hand():
    """At the bottom of the swing the pivot pulls up with m g + m w^2 r and exerts no moment; at angle theta,
    in the link's axes, the force is m (-alpha r - g sin theta, 0, w^2 r + g cos theta) with
    alpha = -m g r sin(theta) / (I_yy + m r^2)."""
    m, r, Iyy = 2.0, 0.5, 0.3
    dyn = _pendulum(m=m, r=r)
    assert dyn.constrained_axes() == {"hinge": ("rot x", "rot z", "trn x", "trn y", "trn z")}
    w = 2.5
    cf = dyn.constraint_forces(0.0, [0.0], [w])["hinge"]
    assert cf["trn z"] == pytest.approx(m * G + m * w * w * r, rel=1e-13)
    for label in ("rot x", "rot z", "trn x", "trn y"):
        assert abs(cf[label]) < 1e-12
    theta = 0.7
    alpha = -m * G * r * np.sin(theta) / (Iyy + m * r * r)
    ud = dyn.udot(0.0, [theta], [w])
    assert ud[0] == pytest.approx(alpha, rel=1e-13)
    cf = dyn.constraint_forces(0.0, [theta], [w])["hinge"]
    expected = m * np.array([-alpha * r - G * np.sin(theta), 0.0, w * w * r + G * np.cos(theta)])
    np.testing.assert_allclose([cf["trn x"], cf["trn y"], cf["trn z"]], expected, rtol=1e-12, atol=1e-12)
    assert abs(cf["rot x"]) < 1e-12 and abs(cf["rot z"]) < 1e-12


def test_only_the_joints_asked_for_after_the_fact_without_an_inverse(monkeypatch):
    """One joint's constraint forces come from a program that touches only its subtree's bodies, with no
    division anywhere (no matrix inverse: u' is an input); a u' the caller already has is used as is; a batch
    gives arrays; an unknown joint name is a clear error."""
    s = random_tree(7, kinds=["revolute", "spherical", "prismatic", "weld", "universal"], extra_revolute=1,
                    loads=False)
    model = s.compile()
    dyn = KaneMatrixDynamics(model)
    names = [pj.name for pj in model.joints]
    leaf = next(j for j in reversed(range(model.n_bodies)) if j not in model.parent)
    every = tuple(f"Fc_{j}" for j in range(model.n_bodies))
    p_leaf, p_all = (dyn.program(keys).select(keys) for keys in ((f"Fc_{leaf}",), every))
    assert p_leaf.count_ops().total < p_all.count_ops().total
    for prog in (p_leaf, p_all):
        exprs = [e for _, e in prog.assignments] + [e for m in prog.outputs.values() for e in m]
        assert not any(pw.exp.is_negative for e in exprs for pw in e.atoms(sp.Pow)), "a division in the program"
    rng = np.random.default_rng(8)
    q, u = random_state(model, rng)
    ud = dyn.udot(0.0, q, u)
    only = dyn.constraint_forces(0.0, q, u, joints=[names[leaf]])
    assert list(only) == [names[leaf]]
    monkeypatch.setattr(dyn, "udot", lambda *a, **k: pytest.fail("u' solved again"))  # a caller's u' is used
    again = dyn.constraint_forces(0.0, q, u, joints=names[leaf], udot=ud)
    assert again[names[leaf]] == pytest.approx(only[names[leaf]], rel=1e-14)
    monkeypatch.undo()
    Q, U = map(np.array, zip(*(random_state(model, rng) for _ in range(3))))
    batch = dyn.constraint_forces(0.0, Q, U, joints=[names[0]])[names[0]]
    for k in range(3):
        single = dyn.constraint_forces(0.0, Q[k], U[k], joints=[names[0]])[names[0]]
        for label, v in batch.items():
            assert v.shape == (3,) and v[k] == pytest.approx(single[label], rel=1e-12, abs=1e-12)
    with pytest.raises(kane.KaneError, match="unknown joint.*'nope'.*has joints"):
        dyn.constraint_forces(0.0, q, u, joints=["nope"])


def test_partials_equal_the_natural_orthogonal_complement_and_the_program():
    """Omega and V, built body by body (seed 004), equal the rows of T built speed by speed (seed 002)."""
    s = random_tree(9, kinds=["free", "gimbal_rates", "cylindrical"], extra_revolute=1, loads=False)
    model = s.compile()
    rng = np.random.default_rng(10)
    q, _ = random_state(model, rng)
    Om, V = KaneMatrixDynamics(model).partial_velocities(0.0, q)
    T = NOCDynamics(model).twist_matrix(0.0, q).reshape(model.n_bodies, 6, model.n_u)
    assert_close(Om, T[:, :3], 1e-13, "Omega")
    assert_close(V, T[:, 3:], 1e-13, "V")
    prog = kane_matrix(s)
    assert {"M", "f", "udot", "Omega", "V"} <= set(prog.outputs)
    assert {k for k in prog.outputs if k.startswith("Fc_")} == {
        f"Fc_{j}" for j, pj in enumerate(model.joints) if constrained_axes(pj.joint)}
    assert sys.modules["kane.algorithms.kane_matrix"].__doc__.startswith("Kane's equations in matrix form")


def test_constraint_forces_match_pinocchio_rnea():
    """Pinocchio's RNEA leaves in data.f the spatial force each joint transmits, in the joint's frame (the body
    frame here): its components along the constrained axes are kane's constraint forces."""
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(12)
    s = kane.System("chain", gravity=(0, 0, -G))
    pm = pin.Model()
    parent_body, parent_jid = "ground", 0
    for k, kind in enumerate(["revolute", "prismatic", "spherical", "revolute"]):
        m, c, Ic = float(rng.uniform(0.5, 3.0)), rng.normal(0, 0.2, 3), random_inertia(rng)
        R, p = random_rotation(rng), rng.normal(0, 0.4, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joint, pjoint = {"revolute": (J.Revolute(tuple(axis)), pin.JointModelRevoluteUnaligned(*axis)),
                         "prismatic": (J.Prismatic(tuple(axis)), pin.JointModelPrismaticUnaligned(*axis)),
                         "spherical": (J.Spherical(), pin.JointModelSpherical())}[kind]
        s.add_body(f"B{k}", mass=m, com=tuple(c), inertia=Ic.tolist())
        s.add_joint(parent_body, f"B{k}", joint, name=f"j{k}", parent_point=tuple(p), parent_rotation=R.tolist())
        jid = pm.addJoint(parent_jid, pjoint, pin.SE3(R, p), f"j{k}")
        pm.appendBodyToJoint(jid, pin.Inertia(m, c, Ic), pin.SE3.Identity())
        parent_body, parent_jid = f"B{k}", jid
    model = s.compile()
    dyn = KaneMatrixDynamics(model)
    q, u = random_state(model, rng)
    qp = np.concatenate([q[:2], q[3:6], q[2:3], q[6:]])  # spherical: kane (w, x, y, z), Pinocchio (x, y, z, w)
    cf = dyn.constraint_forces(0.0, q, u)
    data = pm.createData()
    pin.rnea(pm, data, qp, u, dyn.udot(0.0, q, u))
    for jid, pj in enumerate(model.joints, start=1):
        f = np.concatenate([data.f[jid].angular, data.f[jid].linear])
        for label, value in cf[pj.name].items():
            assert value == pytest.approx(f[AXIS_LABELS.index(label)], rel=1e-9, abs=1e-9), (pj.name, label)
