"""The linearizer's per-point linear algebra (kane.analysis.pointwise) against numpy's and scipy's own routines,
which it replaces on small arrays: the same solutions, pivots, verdicts and assembled matrices."""

import numpy as np
import pytest
import scipy.linalg as sla

from kane.analysis.pointwise import (StateLayout, ill_conditioned, lu_factors, lu_solve, pivoted_qr, singular_values,
                                     state_matrix)


def test_one_factorization_solves_every_right_hand_side_as_numpy_does():
    rng = np.random.default_rng(11)
    for n in (1, 3, 6):
        M = rng.standard_normal((n, n)) + n * np.eye(n)
        lu = lu_factors(M)
        for b in (rng.standard_normal(n), rng.standard_normal((n, 4))):
            ref = np.linalg.solve(M, b)
            assert lu_solve(lu, b).shape == ref.shape
            assert np.max(np.abs(lu_solve(lu, b) - ref)) <= 1e-14 * max(1.0, np.max(np.abs(ref)))
    assert lu_solve(lu_factors(np.eye(3)), np.zeros((3, 0))).shape == (3, 0)
    with pytest.raises(np.linalg.LinAlgError):
        lu_factors(np.array([[1.0, 2.0], [2.0, 4.0]]))  # rank 1: singular, as np.linalg.solve says


def test_pivoted_qr_gives_scipys_pivots_and_diagonal():
    rng = np.random.default_rng(12)
    cases = [rng.standard_normal((m, 7)) for m in (1, 2, 3)]
    cases.append(np.array([[0.5, -2.0, 2.0, 1.0]]))  # a tie in |a_0j|: the first column of largest norm
    cases.append(np.array([[3.0, 0.0, 1.0], [6.0, 0.0, 2.0]]))  # rank 1
    for a in cases:
        _, R, piv = sla.qr(a, pivoting=True, mode="economic")
        d, p = pivoted_qr(a)
        m = a.shape[0]
        assert list(p) == list(piv[:m])
        assert np.allclose(np.abs(d), np.abs(np.diag(R)), rtol=1e-14, atol=1e-300)
    assert list(pivoted_qr(np.array([[0.5, -2.0, 2.0, 1.0]]))[1]) == [1]
    with pytest.raises(ValueError):
        pivoted_qr(np.array([[1.0, np.nan]]))  # scipy's refusal of a non-finite matrix


def test_ill_conditioned_is_numpys_condition_number_test():
    rng = np.random.default_rng(13)
    with np.errstate(all="ignore"):
        for a in ([[0.0]], [[-0.0]], [[5e-324]], [[np.inf]], [[-np.inf]], [[3.0]], [[1.0, 1.0], [1.0, 1.0 + 1e-14]],
                  rng.standard_normal((3, 3))):
            a = np.array(a)
            assert ill_conditioned(a, 1e12) == bool(np.linalg.cond(a) > 1e12), a
    with pytest.raises(np.linalg.LinAlgError):
        ill_conditioned(np.array([[np.nan]]), 1e12)


def test_singular_values_are_numpys():
    rng = np.random.default_rng(14)
    for shape in ((3, 3), (2, 5), (4, 2), (1, 1)):
        a = rng.standard_normal(shape)
        ref = np.linalg.svd(a, compute_uv=False)
        assert np.max(np.abs(singular_values(a) - ref)) <= 1e-14 * ref[0]
    assert singular_values(np.zeros((2, 0))).shape == (0,)


def test_state_layout_and_matrix_are_the_selection_and_np_block():
    rng = np.random.default_rng(15)
    names, u_names = ("x", "y", "z", "a"), ("w1", "w2")
    lay = StateLayout.of(names, (2,), u_names)
    assert lay.ind == [0, 1, 3] and lay.coords == ("x", "y", "a") and lay.dep_names == ("z",)
    assert lay.states == ("x", "y", "a", "w1", "w2") and list(lay.sel) == [0, 1, 3, 4, 5]
    assert np.array_equal(lay.P0, np.eye(4)[:, [0, 1, 3]]) and not lay.P0.flags.writeable
    assert np.array_equal(lay.Pfull0[4:, 3:], np.eye(2)) and not np.any(lay.Pfull0[:4])
    P = lay.P0.copy()
    P[2] = rng.standard_normal(3)
    h_x, h_u = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    g_x, g_u = rng.standard_normal((2, 4)), rng.standard_normal((2, 2))
    ind = lay.ind_array
    ref = np.block([[h_x[ind] @ P, h_u[ind]], [g_x @ P, g_u]])
    assert np.array_equal(state_matrix(h_x, h_u, g_x, g_u, P, ind), ref)
