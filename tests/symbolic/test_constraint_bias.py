"""The velocity-product part A' u + b' of the constraint rows (seed 000 Eq. 44), formed from the bodies'
accelerations (kane.mechanics.constraints.constraint_bias), against central differences of A(q, t) u + b(q, t) along
the motion (q' = W u + X, t' = 1, u held), for every constraint kind; and the Whipple bicycle's operation count
(issue 13: at most 2,000 operations in M and f)."""

from pathlib import Path

import numpy as np

import kane
from kane import joints as J
from kane.codegen.numpy_backend import compile_program
from kane.io import load_model

BICYCLE = Path(__file__).resolve().parents[2] / "examples" / "bicycle.toml"


def _every_kind():
    """A spherical-revolute-universal chain with one constraint of each kind, all transient (nothing embedded):
    point velocity along skew ground directions, a knife edge along a body-fixed direction, a loop closure of
    points and frames between two bodies, a point loop closure to ground, a rolling disk."""
    s = kane.System("every_kind", gravity=(0, 0, -9.81))
    s.add_body("a", mass=2.0, com=(0.1, 0.2, 0.3), inertia=(0.3, 0.4, 0.5, 0.01, 0.02, 0.03))
    s.add_body("b", mass=1.0, com=(0.5, -0.1, 0), inertia=(0.1, 0.2, 0.15))
    s.add_body("c", mass=0.5, com=(0.2, 0, 0.1), inertia=(0.05, 0.06, 0.07))
    s.add_joint("ground", "a", J.Spherical(), parent_point=(0, 0, 1))
    s.add_joint("a", "b", J.Revolute((0.3, 0.4, 0.866)), parent_point=(0.4, 0.1, -0.2))
    s.add_joint("b", "c", J.Universal(), parent_point=(0.7, 0.0, 0.1))
    s.add_point_velocity_constraint("pv", "c", (0.3, 0.1, -0.2), directions=[(1, 0, 0), (0.6, 0.8, 0)],
                                    transient=True)
    s.add_no_slip("ns", "b", (0.2, 0.3, 0.1), (0.0, 0.6, 0.8), transient=True)
    s.add_loop_closure("lc", "c", (0.1, 0.2, 0.3), "a", (0.5, 0.5, 0.1), frames=True, transient=True)
    s.add_loop_closure("lg", "b", (0.1, 0.0, 0.3), "ground", (1.0, 0.5, 0.1), transient=True)
    s.add_rolling_disk("rd", "c", 0.3, axis=(0, 1, 0), transient=True)
    return s


def _check_bias(system, states=3, seed=0):
    eqs = kane.derive(system)
    m = eqs.model
    fn = compile_program(eqs.full_program, ["A", "b", "A_bias", "qdot"])
    p, w = m.parameter_values(), m.input_values()
    rng = np.random.default_rng(seed)
    rows = 0
    for _ in range(states):
        q = m.normalize_quaternions(np.array(m.q0, float) + rng.normal(0, 0.4, m.n_q))
        u = rng.normal(0, 1.0, m.n_u)
        t = 0.3
        _, _, bias, qd = fn(t, q, u, p, w)
        h = 1e-5

        def rows_at(s):
            A, b = fn(t + s, q + s * qd, u, p, w)[:2]
            return A @ u + b

        fd = (rows_at(h) - rows_at(-h)) / (2 * h)
        np.testing.assert_allclose(bias, fd, rtol=1e-7, atol=1e-7 * max(1.0, np.abs(fd).max()))
        rows = len(bias)
    return rows


def test_every_constraint_kind_bias_equals_the_rate_of_its_rows():
    assert _check_bias(_every_kind()) == 2 + 1 + 6 + 3 + 3


def test_bicycle_bias_and_operation_count():
    loaded = load_model(BICYCLE)
    assert _check_bias(loaded.system) == 6
    counts = loaded.derive().count_ops()
    assert counts["M+f"].total <= 2000, counts["M+f"]
