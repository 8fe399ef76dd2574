"""The compiled NURBS evaluator (kane.surfaces.nurbs_c, issue 16 performance): point, first and second
derivatives equal the numpy evaluator (Piegl & Tiller in power-basis form, kane.surfaces.bspline) to 1e-13
relative, for bicubic and other degrees, at knots, ends and wrapped periodic parameters; the common-normal
conditions of two surfaces in one compiled call equal the numpy formulas; without a compiler the numpy path
is used and says so once."""

import pickle
import warnings

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.spatial import quaternion_to_rotation
from kane.surfaces import MovedSurface, NurbsSurface, closest_point, contact, nurbs_c, nurbs_sphere

pytestmark = pytest.mark.skipif(nurbs_c.kernel() is None, reason="no C compiler: the numpy evaluator is used")

FIELDS = ("point", "d_s", "d_t", "d_ss", "d_st", "d_tt")


def _patch(degree_u, degree_v, n_u, n_v, seed=0, repeat=False):
    """A rational patch with random weights in [0.5, 2] and non-uniform clamped knots (a knot repeated
    ``degree - 1`` times inside when ``repeat``)."""
    rng = np.random.default_rng(seed)
    u, v = np.meshgrid(np.linspace(0, 2, n_u), np.linspace(-1, 1, n_v), indexing="ij")
    P = np.stack([u, v + 0.1 * rng.standard_normal(u.shape), np.sin(2 * u) * np.cos(3 * v)], -1)

    def knots(n, p):
        inner = np.sort(rng.uniform(0.0, 3.0, n - p - 1))
        if repeat and p > 1 and len(inner) > 1:
            inner[1:p] = inner[0]
            inner = np.sort(inner)
        return np.concatenate([[0.0] * (p + 1), inner, [3.0] * (p + 1)])

    return NurbsSurface(P, rng.uniform(0.5, 2.0, (n_u, n_v)), knots(n_u, degree_u), knots(n_v, degree_v), degree_u,
                        degree_v, name=f"patch {degree_u}x{degree_v}")


def _parameters(S, n=400, seed=1):
    """Random parameters plus every knot and both ends in each direction (the span edges)."""
    rng = np.random.default_rng(seed)
    (s0, s1), (t0, t1) = S.bounds
    s = np.concatenate([rng.uniform(s0, s1, n), np.unique(S.knots_u), [s0, s1]])
    t = np.concatenate([rng.uniform(t0, t1, n), rng.uniform(t0, t1, len(np.unique(S.knots_u)) + 2)])
    t = np.concatenate([t, np.unique(S.knots_v), [t0, t1]])
    s = np.concatenate([s, rng.uniform(s0, s1, len(np.unique(S.knots_v)) + 2)])
    return s, t


def _assert_close(got, want):
    """Each field equal to 1e-13 relative to the field's largest entry (at least 1): the two evaluators' rounding
    differs (the numpy one sums the span's power-basis polynomials, A2.3 runs the triangular recurrence)."""
    for g, w in zip(got, want):
        assert np.abs(g - w).max() <= 1e-13 * max(1.0, np.abs(w).max())


@pytest.mark.parametrize("degrees", [(3, 3, 8, 7, False), (3, 3, 9, 6, True), (2, 5, 6, 9, True),
                                     (1, 4, 3, 7, False), (5, 1, 8, 2, False), (4, 2, 7, 5, True)])
def test_compiled_derivatives_equal_the_numpy_evaluator(degrees):
    S = _patch(*degrees)
    s, t = _parameters(S)
    for order in (0, 1, 2):
        got, want = S._evaluate(s, t, order), S._evaluate_numpy(s, t, order)
        assert len(got) == len(want) == (1, 3, 6)[order]
        _assert_close(got, want)
    for k in range(0, len(s), 37):  # the one-point path (Python floats into the kernel)
        one = S.derivatives(float(s[k]), float(t[k]))
        _assert_close([getattr(one, f) for f in FIELDS], [w[0] for w in S._evaluate_numpy(s[k:k + 1], t[k:k + 1], 2)])


def test_compiled_and_numpy_agree_on_the_exact_sphere_with_a_wrapped_periodic_parameter():
    S = nurbs_sphere(0.7, (0.1, 0.2, 0.3))
    S.periodic = (True, False)
    one = S.derivatives(1.25, 0.4)  # wraps to s = 0.25
    want = S._evaluate_numpy(np.array([0.25]), np.array([0.4]), 2)
    _assert_close([getattr(one, f) for f in FIELDS], [w[0] for w in want])
    assert abs(np.linalg.norm(one.point - (0.1, 0.2, 0.3)) - 0.7) < 1e-14  # on the sphere
    many = S.derivatives(np.array([-0.75, 1.25]), np.array([0.4, 0.4]))
    _assert_close([getattr(many, f)[0] for f in FIELDS], [w[0] for w in want])


def test_one_point_outside_the_bounds_still_names_the_parameter():
    S = _patch(3, 3, 6, 6)
    with pytest.raises(ArgumentError, match=r"'patch 3x3': parameter s = 3\.5 is outside its bounds"):
        S.derivatives(3.5, 1.0)
    with pytest.raises(ArgumentError, match=r"parameter t = nan"):
        S.derivatives(1.0, float("nan"))


def test_compiled_common_normal_conditions_equal_the_numpy_formulas(monkeypatch):
    S1, S2 = _patch(3, 3, 8, 7, seed=2), _patch(2, 3, 6, 6, seed=3)
    e = np.array([0.9, 0.1, -0.2, 0.3])
    moved = MovedSurface(S2, quaternion_to_rotation(e / np.linalg.norm(e)), np.array([0.1, 0.2, 0.5]))
    rng = np.random.default_rng(4)
    for _ in range(20):
        z = np.concatenate([rng.uniform(0, 3, 2), rng.uniform(0, 3, 2)])
        fast = contact._compiled_conditions(S1, moved, z)
        assert fast is not None
        with monkeypatch.context() as m:
            m.setattr(contact, "_compiled_conditions", lambda *a: None)
            slow = contact.common_normal_conditions(S1, moved, z)
        for g, w in [(fast[0], slow[0]), (fast[1], slow[1]), (fast[4], slow[4])] + \
                [(getattr(fast[i], f), getattr(slow[i], f)) for i in (2, 3) for f in FIELDS]:
            assert np.abs(g - w).max() <= 1e-13 * max(1.0, np.abs(w).max())
    assert contact._compiled_conditions(S1, S2, np.array([1.0, 1.0, 1.0, 1.0])) is not None  # not moved


def test_without_a_compiler_the_numpy_evaluator_is_used_and_says_so_once(monkeypatch):
    S = _patch(3, 3, 6, 6)
    s, t = _parameters(S, 50)
    want = S._evaluate(s, t, 2)
    monkeypatch.setenv("CC", "/nonexistent/kane-test-cc")
    monkeypatch.setattr(nurbs_c, "_state", {})
    with pytest.warns(RuntimeWarning, match="evaluated in numpy.*not in C.*nonexistent/kane-test-cc"):
        assert nurbs_c.kernel() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second time: no warning
        assert nurbs_c.kernel() is None
        fresh = pickle.loads(pickle.dumps(S))  # the C descriptor is not pickled; bound again (here: to nothing)
        _assert_close(fresh._evaluate(s, t, 2), want)
        one = fresh.derivatives(float(s[0]), float(t[0]))
        _assert_close([getattr(one, f) for f in FIELDS], [w[0] for w in want])


def test_a_degree_above_the_kernel_limit_uses_numpy():
    S = _patch(nurbs_c.MAX_DEGREE + 1, 2, nurbs_c.MAX_DEGREE + 2, 4)
    assert S._kernel() is None
    corners = S.point(np.array([0.0, 3.0, 3.0]), np.array([0.0, 3.0, 0.0]))  # a clamped net's corners
    assert np.abs(corners - S.control_points[[0, -1, -1], [0, -1, 0]]).max() < 1e-13


def test_closest_point_is_the_same_with_the_compiled_and_the_numpy_evaluator():
    S = _patch(3, 3, 8, 7, seed=5)
    twin = pickle.loads(pickle.dumps(S))
    twin._fast = (None, None)  # the numpy evaluator
    rng = np.random.default_rng(6)
    for _ in range(10):
        a, b = rng.uniform(0.3, 2.7, 2)
        x = S.point(a, b) + 0.05 * rng.standard_normal(3)
        fast, slow = (closest_point(surface, x, 1.5, 1.5) for surface in (S, twin))
        assert fast.converged and slow.converged
        assert abs(fast.s - slow.s) + abs(fast.t - slow.t) < 1e-10
        # the first-order conditions hold at the point found: x - S is normal to the surface
        r = x - fast.point
        assert np.abs(np.cross(r, S.normal(fast.s, fast.t))).max() < 1e-11
