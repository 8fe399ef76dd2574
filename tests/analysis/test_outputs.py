"""Rates of the dependent speeds against central differences along a simulated trajectory (scipy's DOP853 dense
output), on the rolling disk (three dependent speeds, leaning, turning and spinning)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kane
from kane.analysis.outputs import speed_rates

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _analysis_models import rolling_disk  # noqa: E402


def test_dependent_speed_rates_equal_differences_of_a_simulated_trajectory():
    eqs = kane.derive(rolling_disk(), dependent=["vx", "vy", "vz"])
    dyn = eqs.compile("numpy")
    n_q = dyn.n_q
    q0 = np.array([0.0, 0.0, 0.4 * np.cos(0.2), 0.1, 0.2, 0.0])
    u0 = np.array([0.5, 0.3, 4.0])
    run = solve_ivp(lambda t, x: np.concatenate(dyn.rhs(t, x[:n_q], x[n_q:])), (0, 1.0),
                    np.concatenate([q0, u0]), method="DOP853", rtol=1e-12, atol=1e-13, dense_output=True)
    h = 1e-4
    for t in (0.3, 0.7):
        x = run.sol(t)
        rates = speed_rates(eqs, t, x[:n_q], x[n_q:])
        full = lambda s: dyn.full_speeds(s, run.sol(s)[:n_q], run.sol(s)[n_q:])  # noqa: E731
        fd = (full(t + h) - full(t - h)) / (2 * h)
        scale = max(1.0, np.abs(fd).max())
        assert np.max(np.abs(rates.u_full_dot - fd)) < 1e-6 * scale
        np.testing.assert_allclose(rates.u_full, full(t), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(rates.udot, dyn.udot(t, x[:n_q], x[n_q:]), rtol=1e-12, atol=1e-12)
        assert rates["w_spin"] == rates.udot[2] and abs(rates["vx"]) > 1e-3
    with pytest.raises(kane.KaneError, match="unknown speed 'v9'; known: vx, vy, vz"):
        rates["v9"]
