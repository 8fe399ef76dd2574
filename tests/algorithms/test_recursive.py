"""RNEA, CRBA + Cholesky and ABA against each other and against the symbolic Kane path, on seeded random trees.

The big tree has 12 bodies and every joint kind (revolute and prismatic about random axes, cylindrical, universal,
planar and gimbal with both choices of speeds, spherical, free, weld), random placements, physical inertias and
every kind of load. Its outputs come from one compiled function (``RecursiveDynamics.evaluate``) in one test, so
that the folder stays fast (also under pytest-xdist); the interface methods are exercised on a small tree.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import kane
from kane import joints as J
from kane import Formulation
from kane.algorithms import RecursiveDynamics, aba, crba, rnea

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _trees import JOINT_KINDS, assert_close, random_state, random_tree  # noqa: E402

ALL = ("udot_aba", "udot_crba", "M", "f", "kinetic", "tau")


def test_big_tree_all_formulations_agree():
    """One test (one derivation, one trace, one compiled function) for: ABA, CRBA + Cholesky and the symbolic Kane
    path agree on u' to 1e-9; CRBA's H and f equal Kane's M and f; RNEA of ABA's u' gives back the applied
    generalized forces; 0.5 u^T H u is the kinetic energy."""
    model = random_tree(11).compile()
    assert model.n_bodies >= 10
    assert {pj.name.split("_", 1)[1] for pj in model.joints} == set(JOINT_KINDS)
    sym = kane.derive(model).compile()
    rd = RecursiveDynamics(model)
    rng = np.random.default_rng(5)
    for k in range(4):
        q, u = random_state(model, rng)
        tau = np.zeros(model.n_u) if k == 0 else rng.normal(0, 2.0, model.n_u)
        t, inputs = float(rng.uniform(0, 2)), {"drive": float(rng.normal())}
        out = rd.evaluate(ALL, t, q, u, inputs=inputs, tau=tau)
        M_s, f_s = sym.mass_matrix(t, q), sym.forcing(t, q, u, inputs=inputs)
        ref = np.linalg.solve(M_s, f_s + tau)
        if k == 0:
            assert_close(ref, sym.udot(t, q, u, inputs=inputs), 1e-10, "reference")
        assert_close(out["udot_aba"], ref, 1e-9, f"ABA u', state {k}")
        assert_close(out["udot_crba"], ref, 1e-9, f"CRBA u', state {k}")
        assert_close(out["M"], M_s, 1e-10, f"CRBA H, state {k}")
        assert_close(out["f"], f_s + tau, 1e-10, f"f, state {k}")
        # RNEA of ABA's accelerations with the tau inputs off: what must be applied is tau itself
        back = rd.evaluate(ALL, t, q, u, inputs=inputs, udot=out["udot_aba"])["tau"]
        assert_close(back, tau, 1e-9, f"RNEA(ABA), state {k}")
        ke = float(out["kinetic"][0])
        assert ke > 0
        assert abs(0.5 * u @ out["M"] @ u - ke) <= 1e-10 * ke, f"0.5 u^T H u, state {k}"
        assert abs(sym.kinetic_energy(t, q, u) - ke) <= 1e-10 * ke, f"kinetic energy, state {k}"


def test_programs_are_straight_line_and_keep_the_algorithms_apart():
    s = random_tree(3, kinds=["revolute", "spherical", "prismatic"], extra_revolute=1, loads=False)
    p_aba, p_crba, p_rnea = aba(s), crba(s), rnea(s)
    assert set(p_aba.outputs) == {"udot"} and set(p_crba.outputs) == {"M", "f", "udot"}
    assert set(p_rnea.outputs) == {"tau", "joint_forces"}
    assert p_rnea.shape("joint_forces") == (4, 6)
    # ABA never forms H: its program computes no n_u x n_u matrix and differs from CRBA's in operation count
    assert p_aba.count_ops(["udot"]).total != p_crba.count_ops(["udot"]).total
    assert p_rnea.count_ops(["tau"]).total < p_aba.count_ops(["udot"]).total


@pytest.fixture(scope="module")
def small():
    s = kane.System("small", gravity=(0, 0, -9.81))
    s.add_body("base", mass=2.0, com=(0.1, 0, 0), inertia=(0.2, 0.3, 0.25, 0.01, 0.0, 0.02))
    s.add_body("arm", mass=1.0, com=(0, 0, -0.4), inertia=(0.05, 0.05, 0.01))
    s.add_body("ball", mass=0.5, com=(0.05, 0.0, -0.1), inertia=(0.01, 0.012, 0.015))
    s.add_joint("ground", "base", J.Free(), name="float")
    s.add_joint("base", "arm", J.Revolute((0, 0.6, 0.8)), name="hinge", parent_point=(0.2, 0, 0))
    s.add_joint("arm", "ball", J.Spherical(), name="wrist", parent_point=(0, 0, -0.8))
    s.add_joint_spring("hinge", 5.0, 0.2)  # conservative: the energy test needs no damping
    model = s.compile()
    return model, kane.derive(model).compile(), RecursiveDynamics(model), RecursiveDynamics(model, "crba")


def _states(model, n, seed):
    rng = np.random.default_rng(seed)
    qs, us = zip(*(random_state(model, rng) for _ in range(n)))
    return np.array(qs), np.array(us)


def test_interface_matches_the_symbolic_dynamics(small):
    model, sym, rd, rc = small
    Q, U = _states(model, 3, 1)
    for q, u in zip(Q, U):
        for dyn in (rd, rc):
            assert_close(dyn.udot(0.1, q, u), sym.udot(0.1, q, u), 1e-9, f"{dyn.method} u'")
        assert_close(rd.qdot(0.1, q, u), sym.qdot(0.1, q, u), 1e-12, "q'")
        assert_close(rd.mass_matrix(0.1, q), sym.mass_matrix(0.1, q), 1e-10, "H")
        assert_close(rd.forcing(0.1, q, u), sym.forcing(0.1, q, u), 1e-10, "f")
        assert abs(rd.energy(0.1, q, u) - sym.energy(0.1, q, u)) < 1e-10 * max(1, abs(sym.energy(0.1, q, u)))
        qd, ud = rc.rhs(0.1, q, u)
        assert_close(qd, sym.qdot(0.1, q, u), 1e-12, "rhs q'")
        assert_close(ud, sym.udot(0.1, q, u), 1e-9, "rhs u'")
        tau = np.arange(model.n_u) * 0.3
        udot = rd.udot(0.1, q, u, tau=tau)
        assert_close(rd.inverse_dynamics(0.1, q, u, udot), tau, 1e-9, "RNEA(ABA(tau))")
    assert rd.method is Formulation.ABA and rc.method is Formulation.CRBA
    assert rd.q_names == sym.q_names and rd.u_names == sym.u_names


def test_batch_equals_one_state_at_a_time(small):
    model, _, rd, rc = small
    Q, U = _states(model, 5, 2)
    for dyn in (rd, rc):
        batch = dyn.udot(0.0, Q, U)
        assert batch.shape == (5, model.n_u)
        for k in range(5):
            assert_close(batch[k], dyn.udot(0.0, Q[k], U[k]), 1e-12, "batch u'")
    H = rd.mass_matrix(0.0, Q)
    assert H.shape == (5, model.n_u, model.n_u)
    forces = rd.joint_forces(0.0, Q, U, np.zeros((5, model.n_u)))
    assert set(forces) == {"float", "hinge", "wrist"} and forces["hinge"].shape == (5, 6)
    assert rd.kinetic_energy(0.0, Q, U).shape == (5,)


def test_simulation_conserves_energy(small):
    model, _, rd, _ = small
    q0 = np.array(model.q0)
    u0 = np.zeros(model.n_u)
    u0[6] = 1.5
    traj = kane.simulate.simulate(rd, (0.0, 0.5), q0, u0, rtol=1e-10, atol=1e-12)
    e = traj.energy
    assert np.ptp(e) < 1e-6 * max(1.0, np.max(np.abs(e)))


def test_permanent_constraints_are_refused_transient_ones_give_rows():
    s = kane.System("locked")
    s.add_body("a", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    s.add_joint("ground", "a", J.Revolute("y"), name="pin")
    s.add_joint_lock("stuck", "pin")
    with pytest.raises(kane.ModelError, match="permanent constraint.*'stuck'.*kane.derive"):
        RecursiveDynamics(s)
    s2 = kane.System("unlocked")
    s2.add_body("a", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    s2.add_joint("ground", "a", J.Revolute("y"), name="pin")
    s2.add_joint_lock("stuck", "pin", transient=True)
    A, b = RecursiveDynamics(s2).constraints(0.0, [0.3])
    assert A.tolist() == [[1.0]] and b.tolist() == [0.0]


def test_bad_arguments():
    s = random_tree(4, kinds=["revolute"], extra_revolute=0, loads=False)
    with pytest.raises(kane.ModelError, match="method 'featherstone'"):
        RecursiveDynamics(s, method="featherstone")
    with pytest.raises(kane.ModelError, match="backend"):
        RecursiveDynamics(s, backend="fortran")
    with pytest.raises(kane.KaneError, match=r"expected q of shape \(1,\)"):
        RecursiveDynamics(s).udot(0.0, [0.0, 1.0], [0.0])


def test_numba_backend_matches_numpy(monkeypatch, tmp_path):
    pytest.importorskip("numba")
    monkeypatch.setenv("KANE_CACHE_DIR", str(tmp_path))
    s = random_tree(6, kinds=["prismatic"], extra_revolute=1, loads=False)  # small: numba compiles in seconds
    model = s.compile()
    ref, fast = RecursiveDynamics(model), RecursiveDynamics(model, backend="numba")
    Q, U = _states(model, 4, 3)
    assert_close(fast.udot(0.2, Q[0], U[0]), ref.udot(0.2, Q[0], U[0]), 1e-12, "numba u'")
    assert_close(fast.udot(0.2, Q, U), ref.udot(0.2, Q, U), 1e-12, "numba batch u'")
    assert list(tmp_path.glob("numba/kane_numba_*.py"))


def test_aba_stays_more_accurate_than_crba_on_an_ill_conditioned_chain():
    """Seed 001 §4.3: with a distal link 1e5 times the proximal one (cond(H) ~ 5e10), CRBA + Cholesky loses
    precision forming H; the traced ABA, which keeps its own operation order, stays well ahead of it. The
    reference is the symbolic Kane M u' = f evaluated and solved with 50 digits."""
    import mpmath
    import sympy as sp

    big = 1e5
    s = kane.System("two_link", gravity=(0, -9.8, 0))
    s.add_body("l1", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 1 / 12, 1 / 12))
    s.add_body("l2", mass=big, com=(big / 2, 0, 0), inertia=(1e-3 * big, big**3 / 12, big**3 / 12))
    s.add_joint("ground", "l1", J.Revolute("z"), name="j1")
    s.add_joint("l1", "l2", J.Revolute("z"), name="j2", parent_point=(1, 0, 0))
    model = s.compile()
    eq = kane.derive(model)
    M_x, f_x = eq.explicit("M"), eq.explicit("f")
    rd = RecursiveDynamics(model)
    err_aba, err_crba = [], []
    mpmath.mp.dps = 50
    for q2 in np.linspace(0.1, 3.0, 12):
        q, u = np.array([0.3, q2]), np.array([0.2, -0.1])
        out = rd.evaluate(("udot_aba", "udot_crba", "M"), 0.0, q, u)
        sub = {sym: sp.Float(v, 50) for sym, v in zip(model.q + model.u, [*q, *u])}
        ref = mpmath.lu_solve(mpmath.matrix(M_x.xreplace(sub).evalf(50).tolist()),
                              mpmath.matrix(f_x.xreplace(sub).evalf(50).tolist()))
        ref = np.array([float(x) for x in ref])
        err_aba.append(np.max(np.abs(out["udot_aba"] - ref)) / np.max(np.abs(ref)))
        err_crba.append(np.max(np.abs(out["udot_crba"] - ref)) / np.max(np.abs(ref)))
    assert np.linalg.cond(out["M"]) > 1e10
    assert max(err_aba) < max(err_crba) / 2  # measured 3.2x (8.1e-7 against 2.6e-6)
