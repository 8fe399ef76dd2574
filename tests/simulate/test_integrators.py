"""Integrators against exact solutions: orders of accuracy, dense output, counts, symplecticity, stiffness."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from kane.simulate import DormandPrince5, Method, Rhs, make_integrator, simulate


class Oscillator:
    """x'' = -w^2 x, exact x = x0 cos(w t) + (v0 / w) sin(w t)."""

    n_q, n_u = 1, 1
    q_names, u_names = ("x",), ("v",)

    def __init__(self, w=1.0):
        self.w = w

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        return -self.w**2 * q

    def exact(self, t, x0, v0):
        w = self.w
        return (x0 * np.cos(w * t) + v0 / w * np.sin(w * t), -x0 * w * np.sin(w * t) + v0 * np.cos(w * t))


class StiffDamped:
    """x'' + 1001 x' + 1000 x = 0: eigenvalues -1 and -1000; from x=1, v=0: x = (1000 e^-t - e^-1000t) / 999."""

    n_q, n_u = 1, 1
    q_names, u_names = ("x",), ("v",)

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        return -1000.0 * q - 1001.0 * u

    @staticmethod
    def exact(t):
        return ((1000 * np.exp(-t) - np.exp(-1000 * t)) / 999, (-1000 * np.exp(-t) + 1000 * np.exp(-1000 * t)) / 999)


def _final_error(method, dt, t_end=2.0):
    osc = Oscillator(w=2.0)
    tr = simulate(osc, (0.0, t_end), [1.0], [0.5], method=method, dt=dt)
    x, v = osc.exact(tr.t[-1], 1.0, 0.5)
    assert tr.t[-1] == t_end
    return np.hypot(tr.q[-1, 0] - x, tr.u[-1, 0] - v)


def test_rk4_global_error_is_fourth_order():
    errors = [_final_error(Method.RK4, dt) for dt in (0.04, 0.02, 0.01)]
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    assert all(14.0 < r < 18.0 for r in ratios), (errors, ratios)


def test_semi_implicit_euler_is_first_order():
    errors = [_final_error(Method.SEMI_IMPLICIT_EULER, dt) for dt in (0.004, 0.002)]
    assert 1.8 < errors[0] / errors[1] < 2.2


def test_semi_implicit_euler_conserves_its_modified_energy_over_1e4_steps():
    # For u1 = u - h q, q1 = q + h u1 the quadratic q^2 + u^2 - h q u is conserved exactly: the signature of
    # "u first, then q with the new u". The true energy stays within O(h) of its start, with no drift.
    h = 0.05
    integ = make_integrator(Method.SEMI_IMPLICIT_EULER, Rhs(Oscillator()), 0.0, [1.0, 0.3], dt=h)
    x = np.empty((10_001, 2))
    x[0] = integ.x
    for k in range(1, 10_001):
        x[k] = integ.step().x_new
    q, u = x[:, 0], x[:, 1]
    modified = q**2 + u**2 - h * q * u
    assert np.max(np.abs(modified - modified[0])) < 1e-11
    energy = 0.5 * (q**2 + u**2)
    assert np.max(np.abs(energy - energy[0])) / energy[0] < 0.06
    assert abs(energy[-1000:].mean() - energy[:1000].mean()) < 1e-3
    assert integ.t == pytest.approx(500.0, abs=1e-9)


def test_dopri5_matches_exact_solution_and_dense_output():
    osc = Oscillator(w=1.5)
    tr = simulate(osc, (0.0, 10.0), [1.0], [0.0], rtol=1e-10, atol=1e-12)
    x, v = osc.exact(tr.t, 1.0, 0.0)
    assert np.max(np.abs(tr.q[:, 0] - x)) < 1e-8
    assert np.max(np.abs(tr.u[:, 0] - v)) < 1e-8
    dense = simulate(osc, (0.0, 10.0), [1.0], [0.0], rtol=1e-10, atol=1e-12, output_dt=0.0137)
    assert dense.n_samples == 731 and dense.t[-1] == 10.0
    np.testing.assert_allclose(dense.t[:-1], 0.0137 * np.arange(730), rtol=0, atol=1e-12)
    x, v = osc.exact(dense.t, 1.0, 0.0)
    assert np.max(np.abs(dense.q[:, 0] - x)) < 1e-8
    assert np.max(np.abs(dense.u[:, 0] - v)) < 1e-8


class ForcedPendulum:
    """theta'' = -sin(theta) + cos(2 t): nonlinear and time-dependent, so no order is reached by accident."""

    n_q, n_u = 1, 1

    def qdot(self, t, q, u, params=None, inputs=None):
        return u

    def udot(self, t, q, u, params=None, inputs=None):
        return -np.sin(q) + np.cos(2 * t)


def _one_dopri_step(h, theta=0.37):
    integ = DormandPrince5(Rhs(ForcedPendulum()), 0.0, [1.0, 0.2], rtol=1.0, atol=1.0, first_step=h)
    step = integ.step()
    assert step.h == h
    ref = solve_ivp(lambda t, y: [y[1], -np.sin(y[0]) + np.cos(2 * t)], (0.0, h), [1.0, 0.2], method="DOP853",
                    rtol=1e-13, atol=1e-15, dense_output=True)
    local = np.max(np.abs(step.x_new - ref.y[:, -1]))
    dense = np.max(np.abs(step(theta * h) - ref.sol(theta * h)))
    return local, dense


def test_dopri5_local_orders_of_step_and_continuous_extension():
    (l1, d1), (l2, d2) = _one_dopri_step(0.2), _one_dopri_step(0.1)
    assert 55 < l1 / l2 < 75  # 5th-order method: local error O(h^6)
    assert 27 < d1 / d2 < 37  # 4th-order continuous extension: O(h^5)
    assert d2 < 2e-8


def test_dopri5_evaluations_grow_as_rtol_tightens_and_match_scipy_rk45():
    osc = Oscillator()
    counts, errors = [], []
    for rtol in (1e-4, 1e-6, 1e-8, 1e-10):
        tr = simulate(osc, (0.0, 20.0), [1.0], [0.0], rtol=rtol, atol=rtol * 1e-2)
        s = tr.stats
        assert s.n_fev == 6 * s.n_steps + 2  # 6 new stages per attempt (FSAL), f(x0) and the starting-step probe
        assert s.n_steps == s.n_accepted + s.n_rejected
        counts.append(s.n_fev)
        errors.append(abs(tr.q[-1, 0] - np.cos(20.0)))
        ref = solve_ivp(lambda t, y: [y[1], -y[0]], (0, 20), [1.0, 0.0], method="RK45", rtol=rtol, atol=rtol * 1e-2)
        assert 0.6 < s.n_fev / ref.nfev < 1.6
    assert counts == sorted(counts) and len(set(counts)) == 4
    assert errors == sorted(errors, reverse=True)


@pytest.mark.parametrize("method", [Method.RADAU, Method.BDF])
def test_implicit_methods_on_stiff_linear_system(method):
    tr = simulate(StiffDamped(), (0.0, 5.0), [1.0], [0.0], method=method, rtol=1e-8, atol=1e-10)
    x, v = StiffDamped.exact(tr.t)
    assert np.max(np.abs(tr.q[:, 0] - x)) < 1e-6
    assert np.max(np.abs(tr.u[:, 0] - v)) < 1e-5
    s = tr.stats
    assert s.n_jev >= 1 and s.n_lu >= 1 and s.n_rejected is None
    explicit = simulate(StiffDamped(), (0.0, 5.0), [1.0], [0.0], rtol=1e-8, atol=1e-10)
    assert s.n_accepted * 5 < explicit.stats.n_accepted  # explicit steps are capped by stability (h < 3.3e-3)


def test_fixed_step_ends_exactly_on_t_end_and_needs_dt():
    tr = simulate(Oscillator(), (0.0, 1.05), [1.0], [0.0], method="rk4", dt=0.1)
    assert tr.n_samples == 12 and tr.t[-1] == 1.05
    np.testing.assert_allclose(tr.t[:11], 0.1 * np.arange(11), atol=1e-15)
    with pytest.raises(ValueError, match="dt"):
        simulate(Oscillator(), (0.0, 1.0), [1.0], [0.0], method=Method.RK4)
    assert Method.parse("Semi_Implicit_Euler") is Method.SEMI_IMPLICIT_EULER
    with pytest.raises(ValueError, match="unknown integration method"):
        Method.parse("euler")


def test_rk4_hermite_dense_output_is_accurate():
    osc = Oscillator()
    tr = simulate(osc, (0.0, 3.0), [1.0], [0.0], method=Method.RK4, dt=0.01, output_dt=0.0033)
    x, v = osc.exact(tr.t, 1.0, 0.0)
    assert np.max(np.abs(tr.q[:, 0] - x)) < 1e-9
    assert np.max(np.abs(tr.u[:, 0] - v)) < 1e-9
    assert tr.stats.n_fev == 4 * 300 + 1  # step-end derivatives are shared with the next step's first stage
