"""Extra generalized forces ``tau=`` and inverse dynamics of :class:`kane.Dynamics`: against RNEA
(:class:`kane.algorithms.RecursiveDynamics`) on a branched tree, inverse of forward = identity, and with
constraints embedded against the unconstrained equations of the full model by virtual power."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import RecursiveDynamics
from kane.analysis import speed_rates
from kane.codegen.numpy_backend import compile_program

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _analysis_models import four_bar, rolling_disk  # noqa: E402


def _tree():
    s = kane.System("tree", gravity=(0, -9.81, 0))
    s.add_body("base", mass=2.0, com=(0.1, 0.2, 0), inertia=(0.1, 0.2, 0.15, 0.01, 0, 0.02))
    s.add_body("left", mass=1.0, com=(0, -0.3, 0.1), inertia=(0.05, 0.03, 0.04))
    s.add_body("right", mass=1.5, com=(0.2, 0, 0), inertia=(0.02, 0.06, 0.05, 0, 0.005, 0))
    s.add_body("tip", mass=0.5, com=(0, 0, 0.2), inertia=(0.01, 0.01, 0.004))
    s.add_joint("ground", "base", J.Revolute((0.3, 0.1, 1.0)))
    s.add_joint("base", "left", J.Revolute("x"), parent_point=(0.4, 0, 0))
    s.add_joint("base", "right", J.Prismatic((1, 1, 0)), parent_point=(-0.3, 0.1, 0))
    s.add_joint("right", "tip", J.Spherical(), parent_point=(0.2, 0, 0.1))
    return s.compile()


def test_tau_and_inverse_dynamics_agree_with_rnea_on_a_tree():
    model = _tree()
    dyn = kane.derive(model).compile("numpy")
    rd = RecursiveDynamics(model)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = np.array(model.q0) + rng.uniform(-1, 1, model.n_q)
        q[3:7] /= np.linalg.norm(q[3:7])
        u, tau, udot = rng.normal(0, 1.5, (3, model.n_u))
        np.testing.assert_allclose(dyn.udot(0.0, q, u, tau=tau), rd.udot(0.0, q, u, tau=tau), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(dyn.rhs(0.0, q, u, tau=tau)[1], rd.udot(0.0, q, u, tau=tau), atol=1e-10)
        np.testing.assert_allclose(dyn.inverse_dynamics(0.0, q, u, udot), rd.inverse_dynamics(0.0, q, u, udot),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(dyn.inverse_dynamics(0.0, q, u, dyn.udot(0.0, q, u, tau=tau)), tau, atol=1e-10)


@pytest.mark.parametrize("build, dependent", [(rolling_disk, ["vx", "vy", "vz"]), (four_bar, None)])
def test_inverse_dynamics_with_constraints_embedded(build, dependent):
    eqs = kane.derive(build(), dependent=dependent)
    dyn = eqs.compile("numpy")
    model = eqs.model
    mf_full = compile_program(eqs.full_program, ["M", "f"])
    rng = np.random.default_rng(11)
    q = np.array(model.q0, dtype=float)
    if build is rolling_disk:
        q = np.array([0.0, 0.0, 0.4 * np.cos(0.2), 0.1, 0.2, 0.0])
    p = dyn.n_u
    for _ in range(3):
        u, tau, udot = rng.normal(0, 1.0, (3, p))
        # inverse of forward is the identity, both ways
        np.testing.assert_allclose(dyn.inverse_dynamics(0.0, q, u, dyn.udot(0.0, q, u, tau=tau)), tau, atol=1e-10)
        np.testing.assert_allclose(dyn.udot(0.0, q, u, tau=dyn.inverse_dynamics(0.0, q, u, udot)), udot, atol=1e-10)
        # virtual power of the unconstrained full equations along the admissible directions D (u_full affine in u)
        base = dyn.full_speeds(0.0, q, np.zeros(p))
        D = np.column_stack([dyn.full_speeds(0.0, q, e) - base for e in np.eye(p)])
        u_full = dyn.full_speeds(0.0, q, u)
        r0 = speed_rates(eqs, 0.0, q, u)  # the free motion's rates: u_full' is affine in u' with slope D
        a_full = D @ (udot - r0.udot) + r0.u_full_dot
        M_full, f_full = mf_full(0.0, q, u_full, model.parameter_values(), model.input_values())
        expected = D.T @ (M_full @ a_full - f_full)
        np.testing.assert_allclose(dyn.inverse_dynamics(0.0, q, u, udot), expected, atol=1e-9)
    with pytest.raises(kane.KaneError, match=r"tau: expected \d generalized forces along the independent speeds"):
        dyn.udot(0.0, q, np.zeros(p), tau=np.zeros(p + 1))
