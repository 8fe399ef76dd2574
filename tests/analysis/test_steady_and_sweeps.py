"""Steady motions by Newton's method (a steady turn of the rolling disk, checked by integration and by the
response to a small perturbation), eigenvalue sweeps with the stability changes found to 1e-10 (the upright disk
at omega^2 = g / (3 r); a damper whose coefficient crosses zero), the plot and the errors."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

import kane
from kane import joints as J
from kane.analysis import eigenvalue_sweep, linearize, steady_motion

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _analysis_models import rolling_disk  # noqa: E402

R, G = 0.4, 9.81


@pytest.fixture(scope="module")
def disk():
    return kane.derive(rolling_disk(r=R, g=G), dependent=["vx", "vy", "vz"])


def test_steady_turn_of_the_disk_has_zero_residual_and_matches_a_simulation(disk):
    sm = steady_motion(disk, {"z": 0.3, "lean": 0.3}, {"w_heading": 1.2, "w_spin": 3.0}, ["w_spin"])
    lin = sm.linearization
    assert lin.steady and np.max(np.abs(lin.residual)) <= 1e-12
    assert np.isclose(sm.q[2], R * np.cos(0.3), rtol=0, atol=1e-15)  # contact height assembled
    assert set(sm.residual_names) == {"lean", "w_heading", "w_lean", "w_spin"}
    dyn = disk.compile("numpy")
    n_q = dyn.n_q

    def rhs(t, x):
        qd, ud = dyn.rhs(t, x[:n_q], x[n_q:])
        return np.concatenate([qd, ud])

    # the steady turn stays a steady turn: lean and speeds constant over a second of integration
    x0 = np.concatenate([sm.q, sm.u])
    run = solve_ivp(rhs, (0, 1.0), x0, rtol=1e-12, atol=1e-13, method="DOP853")
    assert np.max(np.abs(run.y[4] - 0.3)) < 1e-9 and np.max(np.abs(run.y[n_q:].T - sm.u)) < 1e-9
    # a small push on the lean rate: the reduced states follow expm(A_r t) of the linearization
    red = lin.reduced()
    eps = 1e-6
    x1 = x0.copy()
    x1[n_q + 1] += eps
    times = np.linspace(0, 1.5, 7)[1:]
    run = solve_ivp(rhs, (0, 1.5), x1, rtol=1e-12, atol=1e-14, method="DOP853", t_eval=times)
    names = list(dyn.q_names) + list(dyn.u_names)
    rows = [names.index(n) for n in red.state_names]
    dx0 = np.zeros(len(rows))
    dx0[red.state_names.index("w_lean")] = eps
    for k, t in enumerate(times):
        predicted = expm(red.A * t) @ dx0
        actual = run.y[rows, k] - x0[rows]
        assert np.max(np.abs(actual - predicted)) < 1e-3 * eps, f"t = {t}"
    assert np.all(np.abs(lin.eigenvalues(reduced=True).real) < 1e-9)  # a stable (marginally) steady turn


def test_steady_motion_solves_for_parameters_and_inputs():
    """The equilibrium torque of a pendulum held at 0.4 rad: tau = m g l sin(0.4) (a hand derivation)."""
    s = kane.System("held", gravity=(0, 0, -9.81))
    s.parameter("m", 1.0)
    tau = s.input("tau", 0.0)
    s.add_body("bob", mass=2.0, com=(0, 0, -0.5), inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", "bob", J.Revolute("y"), name="hinge", coordinates=["th"], speeds=["w"])
    s.add_joint_torque("hinge", [tau])
    eqs = kane.derive(s)
    sm = steady_motion(eqs, [0.4], [0.0], ["tau"])
    assert abs(sm.values["tau"] - 2.0 * 9.81 * 0.5 * np.sin(0.4)) < 1e-12
    with pytest.raises(kane.KaneError, match="unknown 'torque': expected a coordinate \\(th\\)"):
        steady_motion(eqs, [0.4], [0.0], ["torque"])


def test_upright_disk_changes_stability_at_the_classical_spin(disk):
    sweep = eigenvalue_sweep(disk, "w_spin", np.linspace(0.5, 6.0, 12), {"z": R}, [0.0, 0.0, 1.0])
    assert len(sweep.crossings) == 1
    c = sweep.crossings[0]
    assert c.direction == "stabilizing"
    assert abs(c.value - np.sqrt(G / (3 * R))) < 1e-10
    assert sweep.eigenvalues.shape == (12, 4) and sweep.state_names == ("lean", "w_heading", "w_lean", "w_spin")
    closed = np.sqrt((0.8 * (G / R - 3 * sweep.values ** 2)).astype(complex))
    np.testing.assert_allclose(sweep.eigenvalues[:, 0].real, np.maximum(closed.real, 0), atol=1e-9)
    np.testing.assert_array_equal(sweep.unstable, sweep.values ** 2 < G / (3 * R))
    batched = eigenvalue_sweep(disk, "w_spin", np.linspace(0.5, 6.0, 12), {"z": R}, [0.0, 0.0, 1.0], batch=True)
    np.testing.assert_allclose(batched.eigenvalues, sweep.eigenvalues, rtol=1e-12, atol=1e-12)
    assert batched.crossings[0].value == c.value


def test_a_damper_crossing_zero_is_found_by_the_hurwitz_test(tmp_path):
    """A double pendulum with a damper c on its first joint: energy changes at the rate -c u1^2, so the hanging
    equilibrium is stable for c > 0 and unstable for c < 0 (the crossing at c = 0 exactly, a complex pair)."""
    s = kane.System("damped", gravity=(0, 0, -9.81))
    c = s.parameter("c", 0.1)
    s.add_body("a", mass=1.3, com=(0.05, 0, -0.4), inertia=(0.03, 0.04, 0.01))
    s.add_body("b", mass=0.7, com=(0, 0.02, -0.3), inertia=(0.02, 0.02, 0.005))
    s.add_joint("ground", "a", J.Revolute("y"), name="j1", coordinates=["q1"], speeds=["u1"])
    s.add_joint("a", "b", J.Revolute("y"), name="j2", coordinates=["q2"], speeds=["u2"], parent_point=(0, 0, -0.8))
    s.add_joint_spring("j1", 0.0, 0.0, c)
    eqs = kane.derive(s)
    start = steady_motion(eqs, [0.1, 0.1], [0.0, 0.0], ["q1", "q2"])  # the hanging equilibrium (offset masses)
    sweep = eigenvalue_sweep(eqs, "c", np.linspace(-0.37, 0.5, 7), start.q, start.u)
    assert [x.direction for x in sweep.crossings] == ["stabilizing"]
    assert abs(sweep.crossings[0].value) < 1e-10
    fig = sweep.plot(tmp_path / "eig.png")
    assert (tmp_path / "eig.png").stat().st_size > 1000 and len(fig.axes[0].lines) >= 2 * 4
    with pytest.raises(kane.KaneError, match="sweep: unknown name 'damping'; known: parameters c"):
        eigenvalue_sweep(eqs, "damping", [0, 1], start.q, start.u)


def test_linearize_is_a_function_exported_by_kane_and_no_longer_a_method(disk):
    assert kane.linearize is linearize
    lin = kane.linearize(disk, {"z": R}, {"w_spin": 4.0})
    assert lin.dependent_coordinates == ("z",) and lin.A.shape == (8, 8)
    with pytest.raises(kane.KaneError, match=r"removed in kane 0\.2: call kane\.linearize\(equations, q, u"):
        disk.linearize({"z": R}, {"w_spin": 4.0})
