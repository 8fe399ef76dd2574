"""NURBS surfaces: the exact sphere and cylinder against the analytic primitives (points, normals, derivatives
after the parameter map), a general rational bicubic patch against central differences and against geomdl."""

import numpy as np
import pytest

import kane
from kane.surfaces import Cylinder, NurbsSurface, Sphere, nurbs_cylinder, nurbs_sphere

T8 = np.tan(np.pi / 8)


def _arc_angle(u, start, width):
    """Angle [rad] and its first two derivatives along a circle of quadratic rational quarter arcs (weights 1,
    cos 45 deg, 1), each over a parameter interval of ``width``, the first starting at angle ``start`` when u = 0:
    on a symmetric arc the tangent of the half angle measured from the arc's middle is linear in the parameter."""
    k = np.minimum(np.floor(u / width), 1 / width - 1)
    xi = u / width - k
    tau = T8 * (2 * xi - 1)
    theta = start + k * np.pi / 2 + np.pi / 4 + 2 * np.arctan(tau)
    d1 = 4 * T8 / width / (1 + tau**2)
    d2 = -d1 * 2 * tau * (2 * T8 / width) / (1 + tau**2)
    return theta, d1, d2


def _bicubic(seed=7):
    """A rational bicubic patch, 6 x 5 control points, non-uniform knots with a double interior knot."""
    rng = np.random.default_rng(seed)
    u, v = np.meshgrid(np.linspace(0, 3, 6), np.linspace(0, 2, 5), indexing="ij")
    P = np.stack([u + 0.2 * rng.standard_normal(u.shape), v + 0.2 * rng.standard_normal(u.shape),
                  0.5 * np.sin(u) * np.cos(v) + 0.3 * rng.standard_normal(u.shape)], -1)
    W = rng.uniform(0.5, 2.0, (6, 5))
    knots_u = [0, 0, 0, 0, 0.3, 0.3, 1, 1, 1, 1]
    knots_v = [-1, -1, -1, -1, 0.2, 2, 2, 2, 2]
    return NurbsSurface(P, W, knots_u, knots_v, 3, 3, name="patch")


def test_nurbs_sphere_points_and_normals_are_the_sphere():
    c = np.array([0.5, -1.0, 2.0])
    S = nurbs_sphere(1.3, c)
    u, v = np.meshgrid(np.linspace(0, 1, 41), np.linspace(0.01, 0.99, 37), indexing="ij")
    p = S.point(u, v)
    assert np.abs(np.linalg.norm(p - c, axis=-1) - 1.3).max() <= 1e-14 * 1.3 * 4
    np.testing.assert_allclose(S.normal(u, v), (p - c) / 1.3, atol=1e-13)
    assert np.abs(S.point(0.3, [0.0, 1.0]) - (c + [[0, 0, -1.3], [0, 0, 1.3]])).max() < 1e-15 * 4


def test_nurbs_sphere_derivatives_match_the_analytic_sphere_after_the_parameter_map():
    c = np.array([0.5, -1.0, 2.0])
    S, A = nurbs_sphere(1.3, c), Sphere(1.3, c)
    u, v = np.meshgrid(np.linspace(0.01, 0.99, 23), np.linspace(0.02, 0.98, 19), indexing="ij")
    lon, lon1, lon2 = _arc_angle(u, 0.0, 0.25)
    lat, lat1, lat2 = _arc_angle(v, -np.pi / 2, 0.5)
    a, d = A.derivatives(lon, lat), S.derivatives(u, v)
    np.testing.assert_allclose(d.point, a.point, atol=1e-14 * 8)
    tol = dict(rtol=0, atol=1e-11)
    np.testing.assert_allclose(d.d_s, a.d_s * lon1[..., None], **tol)
    np.testing.assert_allclose(d.d_t, a.d_t * lat1[..., None], **tol)
    np.testing.assert_allclose(d.d_ss, a.d_ss * lon1[..., None] ** 2 + a.d_s * lon2[..., None], **tol)
    np.testing.assert_allclose(d.d_st, a.d_st * (lon1 * lat1)[..., None], **tol)
    np.testing.assert_allclose(d.d_tt, a.d_tt * lat1[..., None] ** 2 + a.d_t * lat2[..., None], **tol)


def _turn(seed=3):
    """A proper rotation (3, 3) from a seeded random matrix (QR, signs fixed, det +1)."""
    Q, R = np.linalg.qr(np.random.default_rng(seed).standard_normal((3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def test_placed_nurbs_sphere_and_cylinder_are_the_placed_analytic_ones():
    """origin and rotation (world from local, as the primitives'): the placed NURBS sphere's derivatives equal the
    analytic Sphere's placed alike (after the parameter map), its poles sit at origin -+ r R e_z; the placed
    cylinder's points and normals equal the placed analytic Cylinder's."""
    c, turn = np.array([0.5, -1.0, 2.0]), _turn()
    S, A = nurbs_sphere(1.3, c, rotation=turn), Sphere(1.3, c, turn)
    u, v = np.meshgrid(np.linspace(0.01, 0.99, 23), np.linspace(0.02, 0.98, 19), indexing="ij")
    lon, lon1, _ = _arc_angle(u, 0.0, 0.25)
    lat, lat1, _ = _arc_angle(v, -np.pi / 2, 0.5)
    a, d = A.derivatives(lon, lat), S.derivatives(u, v)
    np.testing.assert_allclose(d.point, a.point, rtol=0, atol=1e-14 * 8)
    np.testing.assert_allclose(d.d_s, a.d_s * lon1[..., None], rtol=0, atol=1e-11)
    np.testing.assert_allclose(d.d_t, a.d_t * lat1[..., None], rtol=0, atol=1e-11)
    np.testing.assert_allclose(S.normal(u, v), (d.point - c) / 1.3, rtol=0, atol=1e-13)
    np.testing.assert_allclose(S.point(0.3, [0.0, 1.0]), [c - 1.3 * turn[:, 2], c + 1.3 * turn[:, 2]], atol=1e-14)
    C, B = nurbs_cylinder(0.7, (-0.5, 1.5), c, rotation=turn), Cylinder(0.7, (-0.5, 1.5), c, turn)
    u, v = np.meshgrid(np.linspace(0, 1, 17), np.linspace(0, 1, 5), indexing="ij")
    lon = _arc_angle(u, 0.0, 0.25)[0]
    np.testing.assert_allclose(C.point(u, v), B.point(lon, -0.5 + 2 * v), rtol=0, atol=1e-14 * 8)
    np.testing.assert_allclose(C.normal(u, v), B.normal(lon, -0.5 + 2 * v), rtol=0, atol=1e-14)
    # a general patch placed: its control points moved, its points moved likewise
    patch = _bicubic()
    placed = NurbsSurface(patch.control_points, patch.weights, patch.knots_u, patch.knots_v, 3, 3, origin=c,
                          rotation=turn)
    np.testing.assert_allclose(placed.point(u, v), c + patch.point(u, v) @ turn.T, rtol=0, atol=1e-13)


def test_a_placement_that_is_no_rotation_is_named():
    with pytest.raises(kane.ModelError, match=r"surface 'nurbs sphere': field 'rotation' must be a proper rotation "
                                              r"matrix \(R\^T R = I, det R = \+1\)"):
        nurbs_sphere(1.0, rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(kane.ModelError, match=r"surface 'nurbs cylinder': field 'origin' must be finite of shape"):
        nurbs_cylinder(1.0, origin=(0.0, np.nan, 0.0))
    with pytest.raises(kane.ModelError, match=r"surface 'nurbs': field 'rotation' must be finite of shape \(3, 3\)"):
        patch = _bicubic()
        NurbsSurface(patch.control_points, None, patch.knots_u, patch.knots_v, 3, 3, rotation=np.eye(2))


def test_nurbs_cylinder_matches_the_analytic_cylinder():
    C, A = nurbs_cylinder(0.7, (-0.5, 1.5)), Cylinder(0.7, (-0.5, 1.5))
    u, v = np.meshgrid(np.linspace(0, 1, 17), np.linspace(0, 1, 5), indexing="ij")
    lon, lon1, lon2 = _arc_angle(u, 0.0, 0.25)
    a, d = A.derivatives(lon, -0.5 + 2 * v), C.derivatives(u, v)
    np.testing.assert_allclose(d.point, a.point, rtol=0, atol=1e-15 * 4)
    np.testing.assert_allclose(d.d_s, a.d_s * lon1[..., None], rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.d_t, 2 * a.d_t, rtol=0, atol=1e-14)
    np.testing.assert_allclose(d.d_ss, a.d_ss * lon1[..., None] ** 2 + a.d_s * lon2[..., None], rtol=0, atol=1e-11)
    np.testing.assert_array_equal(d.d_tt, 0.0)
    np.testing.assert_allclose(C.normal(u, v), A.normal(lon, -0.5 + 2 * v), atol=1e-14)


@pytest.mark.parametrize("make", [_bicubic, lambda: nurbs_sphere(1.3, [0.5, -1.0, 2.0])], ids=["bicubic", "sphere"])
def test_derivatives_match_central_differences(make):
    S = make()
    rng = np.random.default_rng(1)
    (s0, s1), (t0, t1) = S.bounds
    h = 1e-5
    s = rng.uniform(s0 + 2 * h, s1 - 2 * h, 50)
    t = rng.uniform(t0 + 2 * h, t1 - 2 * h, 50)
    s[:3], t[:3] = [0.3 - 1e-3, 0.3 + 1e-3, 0.5], [0.2 + 1e-3, 0.2 - 1e-3, 0.5]  # beside the double knot
    if S.name != "patch":
        s[:3], t[:3] = 0.25 + np.array([-1e-3, 1e-3, 0.3]), 0.5 + np.array([1e-3, -1e-3, 0.2])
    d = S.derivatives(s, t)
    ds_p, ds_m = S.derivatives(s + h, t, 1), S.derivatives(s - h, t, 1)
    dt_p, dt_m = S.derivatives(s, t + h, 1), S.derivatives(s, t - h, 1)
    scale = max(1.0, float(np.abs(d.d_ss).max()))
    np.testing.assert_allclose(d.d_s, (ds_p.point - ds_m.point) / (2 * h), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(d.d_t, (dt_p.point - dt_m.point) / (2 * h), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(d.d_ss, (ds_p.d_s - ds_m.d_s) / (2 * h), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(d.d_st, (dt_p.d_s - dt_m.d_s) / (2 * h), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(d.d_st, (ds_p.d_t - ds_m.d_t) / (2 * h), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(d.d_tt, (dt_p.d_t - dt_m.d_t) / (2 * h), rtol=0, atol=1e-7 * scale)


def test_without_weights_a_bilinear_patch_is_the_bilinear_interpolant():
    P = np.array([[[0, 0, 0], [0, 1, 0.5]], [[2, 0, 1], [2, 1, -1]]], float)
    S = NurbsSurface(P, None, [0, 0, 1, 1], [0, 0, 1, 1], 1, 1)
    s, t = 0.3, 0.8
    expected = (1 - s) * (1 - t) * P[0, 0] + (1 - s) * t * P[0, 1] + s * (1 - t) * P[1, 0] + s * t * P[1, 1]
    np.testing.assert_allclose(S.point(s, t), expected, atol=1e-15)
    np.testing.assert_allclose(S.second_derivatives(s, t)[1], P[1, 1] - P[1, 0] - P[0, 1] + P[0, 0], atol=1e-15)


def test_agrees_with_geomdl():
    NURBS = pytest.importorskip("geomdl.NURBS")
    S = _bicubic()
    peer = NURBS.Surface(normalize_kv=False)
    peer.degree_u, peer.degree_v = 3, 3
    Pw = np.concatenate([S.control_points * S.weights[..., None], S.weights[..., None]], -1)
    peer.set_ctrlpts(Pw.reshape(-1, 4).tolist(), 6, 5)
    peer.knotvector_u, peer.knotvector_v = S.knots_u.tolist(), S.knots_v.tolist()
    rng = np.random.default_rng(5)
    s, t = rng.uniform(0, 1, 20), rng.uniform(-1, 2, 20)
    s[0], t[0] = 1.0, 2.0  # the far corner
    d = S.derivatives(s, t)
    for k in range(20):
        skl = np.array(peer.derivatives(float(s[k]), float(t[k]), order=2))
        got = [d.point[k], d.d_s[k], d.d_t[k], d.d_ss[k], d.d_st[k], d.d_tt[k]]
        want = [skl[0, 0], skl[1, 0], skl[0, 1], skl[2, 0], skl[1, 1], skl[0, 2]]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(w).max()))


def test_basis_functions_and_derivatives_match_scipy_bsplines():
    """Each basis function N_j (and its first two derivatives) against scipy's BSpline with a unit coefficient."""
    from scipy.interpolate import BSpline

    from kane.surfaces.bspline import basis_derivatives, find_span, span_polynomials

    knots = np.array([-1, -1, -1, -1, -0.4, 0.2, 0.2, 0.9, 2, 2, 2, 2], float)
    n_points, p = len(knots) - 4, 3
    u = np.concatenate([np.linspace(-1, 2, 61), [0.2, -0.4, 2.0]])
    span = find_span(knots, p, n_points, u)
    ders = basis_derivatives(span_polynomials(knots, p, n_points, 2), knots, span, u)
    full = np.zeros((len(u), 3, n_points))
    for row, (i, d) in enumerate(zip(span, ders)):
        full[row, :, i - p: i + 1] = d
    for j in range(n_points):
        b = BSpline(knots, np.eye(n_points)[j], p, extrapolate=False)
        for k in range(3):
            want = b(np.minimum(u, 2.0 - 1e-15), nu=k)  # scipy leaves u = 2 outside its half-open last span
            np.testing.assert_allclose(full[:, k, j], want, rtol=1e-12, atol=1e-12 * 10**k)
    np.testing.assert_allclose(full[:, 0].sum(-1), 1.0, atol=1e-15)  # partition of unity


def test_the_exact_circle_constructions_are_periodic_in_s_and_wrap_only_outside_their_range():
    for surface in (nurbs_cylinder(0.4, height=(0.0, 2.0)), nurbs_sphere(0.7)):
        assert surface.periodic == (True, False)
        inside = surface.derivatives(np.array([0.2, 0.7]), 0.3)
        outside = surface.derivatives(np.array([1.2, -0.3]), 0.3)
        for a, b in zip((inside.point, inside.d_s, inside.d_ss), (outside.point, outside.d_s, outside.d_ss)):
            assert np.abs(a - b).max() < 1e-12
        # s = 1 itself stays the end of the last arc (not wrapped to s = 0): the parametric acceleration S_ss, whose
        # tangential part changes sign across the seam as across every interior knot, is the left limit's
        end, left, start = (surface.derivatives(s, 0.3).d_ss for s in (1.0, 1.0 - 1e-9, 0.0))
        assert np.abs(end - left).max() < 1e-6 and np.abs(end - start).max() > 0.1
