"""The analytic surfaces: points on their implicit equations, derivatives against central differences, normals
against the gradient of the implicit function, vectorization, and bad input."""

import numpy as np
import pytest

from kane.errors import ArgumentError, ModelError
from kane.spatial import rotation_axis_angle
from kane.surfaces import Cylinder, Ellipsoid, Plane, Sphere, Torus

R0 = rotation_axis_angle(np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5]), 0.7)
O0 = np.array([0.3, -1.2, 2.0])


def _local(p):
    return (p - O0) @ R0  # world to local: R^T (p - o)


# (surface, implicit F(local point) whose zero set is the surface and whose gradient points outward)
CASES = {
    "plane": (Plane(O0, R0), lambda x: x[..., 2], lambda x: np.broadcast_to([0.0, 0.0, 1.0], x.shape)),
    "sphere": (Sphere(1.7, O0, R0), lambda x: (x * x).sum(-1) - 1.7**2, lambda x: 2 * x),
    "ellipsoid": (Ellipsoid(1.5, 0.8, 0.6, O0, R0), lambda x: ((x / [1.5, 0.8, 0.6]) ** 2).sum(-1) - 1,
                  lambda x: 2 * x / np.array([1.5, 0.8, 0.6]) ** 2),
    "cylinder": (Cylinder(0.9, (-1.0, 2.0), O0, R0), lambda x: x[..., 0] ** 2 + x[..., 1] ** 2 - 0.81,
                 lambda x: np.stack([2 * x[..., 0], 2 * x[..., 1], 0 * x[..., 2]], -1)),
    "torus": (Torus(2.0, 0.5, O0, R0), lambda x: (np.hypot(x[..., 0], x[..., 1]) - 2.0) ** 2 + x[..., 2] ** 2 - 0.25,
              lambda x: np.stack([2 * (1 - 2.0 / np.hypot(x[..., 0], x[..., 1])) * x[..., 0],
                                  2 * (1 - 2.0 / np.hypot(x[..., 0], x[..., 1])) * x[..., 1], 2 * x[..., 2]], -1)),
}


def _samples(surface, n=7):
    rng = np.random.default_rng(3)
    (s0, s1), (t0, t1) = [(max(lo, -2.0), min(hi, 2.0)) for lo, hi in surface.bounds]
    margin = 0.05
    s = s0 + (s1 - s0) * rng.uniform(margin, 1 - margin, n)
    t = t0 + (t1 - t0) * rng.uniform(margin, 1 - margin, n)
    return s, t


@pytest.mark.parametrize("name", CASES)
def test_points_lie_on_the_implicit_surface_and_normals_follow_its_gradient(name):
    surface, F, gradF = CASES[name]
    s, t = _samples(surface)
    x = _local(surface.point(s, t))
    assert np.abs(F(x)).max() < 1e-13
    g = gradF(x) @ R0.T
    np.testing.assert_allclose(surface.normal(s, t), g / np.linalg.norm(g, axis=-1)[:, None], atol=1e-13)


@pytest.mark.parametrize("name", CASES)
def test_derivatives_match_central_differences(name):
    surface = CASES[name][0]
    s, t = _samples(surface)
    d = surface.derivatives(s, t)
    h = 1e-5
    fd_s = (surface.point(s + h, t) - surface.point(s - h, t)) / (2 * h)
    fd_t = (surface.point(s, t + h) - surface.point(s, t - h)) / (2 * h)
    np.testing.assert_allclose(d.d_s, fd_s, atol=1e-7)
    np.testing.assert_allclose(d.d_t, fd_t, atol=1e-7)
    ds_p, ds_m = surface.tangents(s + h, t), surface.tangents(s - h, t)
    dt_p, dt_m = surface.tangents(s, t + h), surface.tangents(s, t - h)
    np.testing.assert_allclose(d.d_ss, (ds_p[0] - ds_m[0]) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(d.d_st, (dt_p[0] - dt_m[0]) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(d.d_st, (ds_p[1] - ds_m[1]) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(d.d_tt, (dt_p[1] - dt_m[1]) / (2 * h), atol=1e-7)


def test_evaluation_broadcasts_over_parameter_arrays():
    torus = CASES["torus"][0]
    s = np.linspace(-3, 3, 4)[:, None]
    t = np.linspace(-1, 1, 5)[None, :]
    ss, tt = torus.second_derivatives(s, t)[1], torus.normal(s, t)
    assert ss.shape == tt.shape == (4, 5, 3)
    for i in range(4):
        for j in range(5):
            np.testing.assert_allclose(torus.point(s[i, 0], t[0, j]), torus.point(s, t)[i, j], rtol=0, atol=1e-15)
            np.testing.assert_allclose(torus.second_derivatives(float(s[i, 0]), float(t[0, j]))[1], ss[i, j],
                                       rtol=0, atol=1e-15)


def test_sphere_second_derivatives_give_its_curvature():
    """Shape operator of a sphere of radius r: normal curvature 1/r in every direction (II = -I / r, outward n)."""
    sphere = Sphere(2.5)
    d = sphere.derivatives(0.4, 0.3)
    n = sphere.normal(0.4, 0.3)
    first = np.array([[d.d_s @ d.d_s, d.d_s @ d.d_t], [d.d_s @ d.d_t, d.d_t @ d.d_t]])
    second = np.array([[d.d_ss @ n, d.d_st @ n], [d.d_st @ n, d.d_tt @ n]])
    np.testing.assert_allclose(second, -first / 2.5, atol=1e-14)


def test_parameters_outside_the_bounds_name_the_surface_parameter_and_value():
    cyl = Cylinder(1.0, (0.0, 2.0), name="roller")
    with pytest.raises(ArgumentError,
                       match=r"surface 'roller': parameter t = 2\.5 is outside its bounds \[0\.0, 2\.0\]"):
        cyl.point([0.1, 0.2], [1.0, 2.5])
    with pytest.raises(ArgumentError, match=r"'roller': parameter s = nan"):
        cyl.point(np.nan, 1.0)
    assert np.allclose(cyl.point(7.0, 1.0), cyl.point(7.0 - 2 * np.pi, 1.0), atol=1e-14)  # s is periodic
    with pytest.raises(ArgumentError, match="do not broadcast"):
        cyl.point(np.zeros(3), np.zeros(2))
    with pytest.raises(ArgumentError, match="parameter s"):
        cyl.point("a", 1.0)


def test_a_pole_has_no_normal():
    with pytest.raises(ModelError, match=r"surface 'ball': degenerate at \(s, t\) = \(0\.3, 1\.5707963"):
        Sphere(1.0, name="ball").normal([0.3, 0.3], [0.0, np.pi / 2])


@pytest.mark.parametrize("make, match", [
    (lambda: Sphere(0.0, name="b"), r"surface 'b': field 'radius' must be a positive finite number \[m\], got 0\.0"),
    (lambda: Sphere(-1.0), r"field 'radius' .* got -1\.0"),
    (lambda: Ellipsoid(1.0, float("inf"), 1.0), r"field 'b'"),
    (lambda: Torus(1.0, 1.5, name="donut"), r"'donut': field 'minor_radius' = 1\.5 must be smaller"),
    (lambda: Cylinder(1.0, (2.0, 1.0)), r"field 'height'"),
    (lambda: Plane(rotation=2 * np.eye(3)), r"field 'rotation' must be a proper rotation"),
    (lambda: Plane(rotation=np.diag([1.0, 1.0, -1.0])), r"field 'rotation'"),
    (lambda: Plane(origin=[0.0, 1.0]), r"field 'origin' must be finite of shape \(3,\)"),
    (lambda: Plane(bounds=((0, 1), (1, 0))), r"field 'bounds'"),
])
def test_bad_fields_raise_model_errors_naming_them(make, match):
    with pytest.raises(ModelError, match=match):
        make()
