"""The natural orthogonal complement (seed 002) against ABA, CRBA and the symbolic Kane path on seeded random
trees, and against the paper's own worked formulas (Eqs. 30, 32-34) for a body turning about a fixed point."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.algorithms.noc import NOCDynamics, noc, subtrees
from kane.algorithms.trace import Trace
from kane.codegen.numpy_backend import compile_program
from kane.spatial import skew

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _trees import JOINT_KINDS, assert_close, random_state, random_tree  # noqa: E402

OUT = ("udot_noc", "udot_aba", "M_noc", "f_noc", "T", "kinetic")


def test_big_tree_noc_agrees_with_aba_and_kane():
    """12 bodies, every joint kind and load: u' = (T^T M T)^-1 (-ID(q, u, 0)) equals ABA's and kane.derive's to
    1e-9; T^T M T equals Kane's M; 0.5 u^T T^T M T u is the kinetic energy; T has exact zeros where a speed does
    not move a body (Eq. 26: a unit speed of joint j moves j's subtree only)."""
    model = random_tree(11).compile()
    assert model.n_bodies >= 10 and {pj.name.split("_", 1)[1] for pj in model.joints} == set(JOINT_KINDS)
    sym = kane.derive(model).compile()
    dyn = NOCDynamics(model)
    rng = np.random.default_rng(21)
    sub = subtrees(model)
    for k in range(3):
        q, u = random_state(model, rng)
        tau = np.zeros(model.n_u) if k == 0 else rng.normal(0, 2.0, model.n_u)
        t, inputs = float(rng.uniform(0, 2)), {"drive": float(rng.normal())}
        out = dyn.evaluate(OUT, t, q, u, inputs=inputs, tau=tau)
        M_s, f_s = sym.mass_matrix(t, q), sym.forcing(t, q, u, inputs=inputs)
        assert_close(out["udot_noc"], np.linalg.solve(M_s, f_s + tau), 1e-9, f"NOC vs kane.derive, state {k}")
        assert_close(out["udot_noc"], out["udot_aba"], 1e-9, f"NOC vs ABA, state {k}")
        assert_close(out["M_noc"], M_s, 1e-10, f"T^T M T vs Kane's M, state {k}")
        assert_close(out["f_noc"], f_s + tau, 1e-10, f"Eq. 27 forcing, state {k}")
        ke = float(out["kinetic"][0])
        assert abs(0.5 * u @ out["M_noc"] @ u - ke) <= 1e-10 * ke
    T = out["T"]
    assert T.shape == (6 * model.n_bodies, model.n_u)
    for j, pj in enumerate(model.joints):
        for r in range(model.n_u)[pj.u_slice]:
            moved = {i for i in range(model.n_bodies) if np.any(T[6 * i:6 * i + 6, r] != 0.0)}
            assert moved <= set(sub[j]), f"speed {r} of joint {pj.name} moves bodies outside its subtree"


def test_twists_are_T_times_the_speeds():
    """Column r of T is the generalized twist for u = e_r, so the twists of any motion are T u: checked against
    the mass-centre velocities by central differences of the mass-centre positions along q' = W u."""
    s = random_tree(2, kinds=["revolute", "spherical", "prismatic", "gimbal_body"], extra_revolute=1, loads=False)
    model = s.compile()
    dyn = NOCDynamics(model)
    rng = np.random.default_rng(3)
    q, u = random_state(model, rng)
    T = dyn.twist_matrix(0.0, q)
    twists = (T @ u).reshape(model.n_bodies, 6)
    # mass-centre positions from the kinematics, differentiated numerically along q' = W u
    tr = Trace(model)
    pos = [tr.kin.point_in_ground(i, model.bodies[i].com) for i in range(model.n_bodies)]
    R0 = [tr.kin.rotation_to_ground(i) for i in range(model.n_bodies)]
    prog = tr.b.build({"c": sp.Matrix(pos), "R": sp.Matrix.vstack(*R0)})
    fn = compile_program(prog, ["c", "R"], batch=False)
    p0, w0 = model.parameter_values(), np.zeros(len(model.inputs) + 2 * model.n_u)
    qd = dyn.qdot(0.0, q, u)
    h = 1e-6
    c_plus = fn(0.0, q + h * qd, u, p0, w0)[0]
    c_minus = fn(0.0, q - h * qd, u, p0, w0)[0]
    R = fn(0.0, q, u, p0, w0)[1].reshape(model.n_bodies, 3, 3)
    for i in range(model.n_bodies):
        v_ground = (c_plus[i] - c_minus[i]) / (2 * h)
        np.testing.assert_allclose(R[i] @ twists[i, 3:], v_ground, rtol=1e-6, atol=1e-7)


def test_body_about_a_fixed_point_matches_the_papers_formulas():
    """Seed 002 §5 for a body turning about a body-fixed point Q (a spherical joint, speeds = the angular velocity
    omega in body axes): T = [1; (q - c) x 1] (Eq. 30), I = I_C + m [(q-c).(q-c) 1 - (q-c)(q-c)^T] (Eq. 32), and
    f = C omega + gamma with C = -omega x I_C - m [(q - c) x omega] (q - c)^T (Eq. 33) and gamma = m (c - q) x g
    (Eq. 34), g in body axes."""
    m, c_body = 2.5, np.array([0.1, -0.2, 0.4])
    I_C = np.array([[0.3, 0.01, -0.02], [0.01, 0.25, 0.03], [-0.02, 0.03, 0.12]])
    q_body = np.array([0.05, 0.1, -0.3])  # the fixed point Q in body axes
    g = np.array([0.0, 0.0, -9.81])
    s = kane.System("top", gravity=tuple(g))
    s.add_body("top", mass=m, com=tuple(c_body), inertia=I_C.tolist())
    s.add_joint("ground", "top", J.Spherical(), name="tip", child_point=tuple(q_body))
    model = s.compile()
    dyn = NOCDynamics(model)
    rng = np.random.default_rng(4)
    qq = rng.normal(size=4)
    qq /= np.linalg.norm(qq)
    w = rng.normal(size=3)
    out = dyn.evaluate(("T", "M_noc", "f_noc", "udot_noc", "udot_aba"), 0.0, qq, w)
    r = q_body - c_body
    np.testing.assert_allclose(out["T"], np.vstack([np.eye(3), skew(r)]), atol=1e-14)
    np.testing.assert_allclose(out["M_noc"], I_C + m * (r @ r * np.eye(3) - np.outer(r, r)), atol=1e-13)
    a, b, cc, d = qq
    R = np.array([[1 - 2 * (cc * cc + d * d), 2 * (b * cc - a * d), 2 * (b * d + a * cc)],
                  [2 * (b * cc + a * d), 1 - 2 * (b * b + d * d), 2 * (cc * d - a * b)],
                  [2 * (b * d - a * cc), 2 * (cc * d + a * b), 1 - 2 * (b * b + cc * cc)]])
    C = -skew(w) @ I_C - m * np.outer(np.cross(r, w), r)
    gamma = m * np.cross(c_body - q_body, R.T @ g)
    np.testing.assert_allclose(out["f_noc"], C @ w + gamma, atol=1e-12)
    np.testing.assert_allclose(out["udot_noc"], out["udot_aba"], atol=1e-12)


def test_interface_batch_and_program():
    s = random_tree(5, kinds=["free", "universal"], extra_revolute=1, loads=False)
    model = s.compile()
    dyn = NOCDynamics(model)
    assert dyn.method is kane.Formulation.NOC and dyn.u_names == tuple(str(x) for x in model.u)
    rng = np.random.default_rng(6)
    Q, U = map(np.array, zip(*(random_state(model, rng) for _ in range(3))))
    tau = rng.normal(0, 1.0, model.n_u)
    batch = dyn.udot(0.2, Q, U)
    assert batch.shape == (3, model.n_u)
    for k in range(3):
        assert_close(batch[k], dyn.udot(0.2, Q[k], U[k]), 1e-12, "batch u'")
    M, f = dyn.mass_matrix(0.2, Q[0]), dyn.forcing(0.2, Q[0], U[0], tau=tau)
    _, ud = dyn.rhs(0.2, Q[0], U[0], tau=tau)
    assert_close(ud, np.linalg.solve(M, f), 1e-10, "I u' = f")
    assert_close(dyn.inverse_dynamics(0.2, Q[0], U[0], ud), tau, 1e-9, "RNEA(NOC(tau))")
    assert dyn.twist_matrix(0.2, Q).shape == (3, 6 * model.n_bodies, model.n_u)
    prog = noc(random_tree(1, kinds=["prismatic"], extra_revolute=1, loads=False))
    assert set(prog.outputs) == {"T", "M", "f", "udot"} and prog.shape("T") == (12, 2)
    assert prog.count_ops(["udot"]).total > 0
    assert sys.modules["kane.algorithms.noc"].__doc__.startswith("Natural orthogonal complement")


def test_bad_arguments():
    s = random_tree(4, kinds=["revolute"], extra_revolute=0, loads=False)
    with pytest.raises(kane.ModelError, match="backend"):
        NOCDynamics(s, backend="fortran")
    with pytest.raises(kane.KaneError, match=r"expected q of shape \(1,\)"):
        NOCDynamics(s).udot(0.0, [0.0, 1.0], [0.0])
    locked = kane.System("locked")
    locked.add_body("a", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    locked.add_joint("ground", "a", J.Revolute("y"), name="pin")
    locked.add_joint_lock("stuck", "pin")
    with pytest.raises(kane.ModelError, match="permanent constraint"):
        NOCDynamics(locked)
