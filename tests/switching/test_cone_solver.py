"""kane.switching.cone_solver: the projected Gauss-Seidel sweeps on elliptic cones, plain and over-relaxed, and the
exact tangential update; every solution checked against Signorini's and Coulomb's conditions directly."""

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.switching import cone_solver as cs
from kane.switching.cone_solver import ConeSolverOptions, solve_cones


def _problem(seed, m=8, bodies=3):
    """W = J M^-1 J^T of m random contacts on random bodies (positive semidefinite, W_nn > 0), b, mu."""
    rng = np.random.default_rng(seed)
    J = np.zeros((3 * m, 6 * bodies))
    for i in range(m):
        for body in rng.choice(bodies, size=rng.integers(1, 3), replace=False):
            J[3 * i:3 * i + 3, 6 * body:6 * body + 6] = rng.normal(size=(3, 6))
    Minv = np.diag(rng.uniform(0.5, 2.0, size=6 * bodies))
    return J @ Minv @ J.T, rng.normal(size=3 * m), rng.uniform(0.1, 1.0, size=m)


def _check_conditions(W, b, mu, sol, tol):
    p, v = sol.impulse, (W @ sol.impulse.reshape(-1) + b).reshape(-1, 3)
    np.testing.assert_allclose(v, sol.velocity, atol=1e-12)
    scale = np.abs(b).max()
    assert np.all(p[:, 0] >= 0) and np.all(v[:, 0] >= -tol * scale)
    assert np.all(np.abs(v[:, 0] * p[:, 0]) <= tol * scale * (1 + p[:, 0]))  # Signorini
    pt, vt = np.linalg.norm(p[:, 1:], axis=1), np.linalg.norm(v[:, 1:], axis=1)
    assert np.all(pt <= mu * p[:, 0] * (1 + 1e-12))  # inside the cone
    for i in range(len(mu)):
        if p[i, 0] > 0 and pt[i] < mu[i] * p[i, 0] * (1 - 1e-9):
            assert vt[i] <= 10 * tol * scale  # sticking: no slip
        elif pt[i] > 0:  # on the rim: the slip opposes the friction (maximal dissipation)
            np.testing.assert_allclose(v[i, 1:], -vt[i] * p[i, 1:] / pt[i], atol=10 * tol * scale)


@pytest.mark.parametrize("seed", range(6))
def test_plain_and_over_relaxed_sweeps_both_meet_signorini_and_coulomb(seed):
    W, b, mu = _problem(seed)
    sweeps = {}
    for relaxation in (1.0, 1.2, 1.5):
        sol = solve_cones(W, b, mu, ConeSolverOptions(tolerance=1e-11, relaxation=relaxation))
        assert sol.converged, (relaxation, sol.residual)
        _check_conditions(W, b, mu, sol, 1e-9)
        sweeps[relaxation] = sol.iterations
    assert len(set(sweeps.values())) > 1  # the relaxation is applied (different paths to the same conditions)


def test_the_tangential_update_does_not_depend_on_its_newton_start():
    """The rim multiplier carried from the previous sweep only starts Newton's iteration: from 0, from far above
    and from below the root, the same point on the rim, with T x + g = -lam x (the velocity opposes x)."""
    rng = np.random.default_rng(3)
    rim = 0
    for _ in range(2000):
        A = rng.normal(size=(2, 2))
        T = A @ A.T + rng.uniform(0, 0.1) * np.eye(2)
        g = rng.normal(size=2) * rng.uniform(0.1, 10)
        radius = rng.uniform(0.01, 1.0)
        E = np.empty(10)
        cs._disc_setup(T[0, 0], T[1, 1], T[0, 1], E)
        x0, y0, lam = cs._disc_minimum(E, g[0], g[1], radius, 0.0)
        x = np.array([x0, y0])
        if lam == 0.0:
            assert np.linalg.norm(x) <= radius * (1 + 1e-12)
            np.testing.assert_allclose(T @ x + g, 0.0, atol=1e-10 * np.abs(g).max())
            continue
        rim += 1
        assert np.linalg.norm(x) == pytest.approx(radius, rel=1e-14)
        np.testing.assert_allclose(T @ x + g, -lam * x, atol=1e-9 * np.abs(g).max())
        for start in (10.0 * lam + 1.0, lam / 3.0, lam):
            x1, y1, lam1 = cs._disc_minimum(E, g[0], g[1], radius, start)
            np.testing.assert_allclose([x1, y1], x, rtol=0, atol=1e-13 * radius)
            assert lam1 == pytest.approx(lam, rel=1e-9)
    assert rim > 500


@pytest.mark.parametrize("value", [0.0, 2.0, -1.0])
def test_a_relaxation_outside_0_2_is_refused_by_name(value):
    with pytest.raises(ArgumentError, match="relaxation"):
        ConeSolverOptions(relaxation=value)
