"""The small kernels of the on-line embedding (issue 14's per-period work) against numpy's general routines, and
the per-mode cache of the choice of independent speeds."""

import pathlib
import sys

import numpy as np
import pytest

import kane
from kane.switching import Lock, simulate_switching
from kane.switching.online import OnlineDynamics, _Block
from kane.switching.rules import _Cholesky

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _models import cart  # noqa: E402


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_dependent_block_solves_match_lapack(m):
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, m)) + 2 * np.eye(m)
    rhs = rng.normal(size=(m, 3))
    blk = _Block(A)
    assert np.allclose(blk.solve(rhs), np.linalg.solve(A, rhs), rtol=0, atol=1e-12)
    assert np.allclose(blk.solve(rhs[:, 0], transposed=True), np.linalg.solve(A.T, rhs[:, 0]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_cholesky_solves_match_lapack_and_refuse_indefinite(p):
    rng = np.random.default_rng(10 + p)
    B = rng.normal(size=(p, p))
    Mt = B @ B.T + p * np.eye(p)
    rhs = rng.normal(size=p)
    assert np.allclose(_Cholesky(Mt).solve(rhs), np.linalg.solve(Mt, rhs), rtol=0, atol=1e-12)
    Mt[-1, -1] = -1.0
    with pytest.raises(kane.KaneError, match="not positive definite"):
        _Cholesky(Mt)


def test_condition_bound_agrees_with_the_svd(monkeypatch):
    """_cond and _cond_exceeds (a determinant bound before any SVD) say what numpy's SVD says of the kept rows
    A_r and their dependent block A_d: ||A_r||_F / sigma_min(A_d); the bound alone decides some of the limits."""
    dyn = OnlineDynamics(kane.derive(cart()), active=["caster_stick"])
    rng = np.random.default_rng(3)
    exact = OnlineDynamics._cond
    svd_calls = []
    counted = staticmethod(lambda A_S, part: svd_calls.append(1) or exact(A_S, part))
    monkeypatch.setattr(OnlineDynamics, "_cond", counted)
    decided, asked = 0, 0
    for _ in range(20):
        q = rng.uniform(-1.5, 1.5, size=dyn.n_q)
        A_S = dyn.constraint_rows(0.0, q)[0]
        part = dyn._choose(A_S)
        assert part.dep.size == 3
        A_r = A_S[part.rows]
        reference = np.linalg.norm(A_r, "fro") / np.linalg.svd(A_r[:, part.dep], compute_uv=False)[-1]
        assert exact(A_S, part) == pytest.approx(reference, rel=1e-12)
        for factor in (0.5, 0.9, 0.999, 1.001, 1.1, 2.0, 10.0):
            svd_calls.clear()
            assert dyn._cond_exceeds(A_S, part, factor * reference) == (reference > factor * reference)
            asked += 1
            decided += not svd_calls
    assert 0 < decided < asked  # the determinant bound decided some limits alone, the SVD the others


def test_a_mode_seen_before_keeps_its_choice(monkeypatch):
    """Lock, unlock, lock again: the dependent speeds are chosen once per mode, and the run still keeps the
    lock (the swivel rate stays zero while locked) as the uncached one does."""
    eqs = kane.derive(cart())
    calls = []
    real = OnlineDynamics._choose
    monkeypatch.setattr(OnlineDynamics, "_choose", lambda self, A_S: calls.append(self.active) or real(self, A_S))
    rules = [Lock("caster_stick", on=[(0.1, 0.2), (0.3, 0.4)])]
    traj = simulate_switching(eqs, (0.0, 0.5), [0.0, 0.0, 0.0, 0.3], [1.0, 0.0, 0.2, 0.0], rules,
                              method="rk4", dt=1e-3, inputs={"F": 1.0, "tau": 0.5})
    assert calls.count(("caster_stick",)) == 1 and calls.count(()) == 1
    w4 = traj.u[:, list(traj.u_names).index("w4")]
    locked = (traj.t > 0.31) & (traj.t < 0.39)
    assert locked.any() and np.max(np.abs(w4[locked])) < 1e-9
    assert np.max(np.abs(w4[(traj.t > 0.21) & (traj.t < 0.29)])) > 1e-3
