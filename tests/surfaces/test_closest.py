"""Closest points by Newton's method against closed forms (sphere, torus, NURBS sphere), a brute-force search on
a NURBS patch, the bounds of a patch; contact coordinates of two surfaces (sphere on plane, ball in a bowl)."""

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.spatial import rotation_axis_angle
from kane.surfaces import NurbsSurface, Plane, Sphere, Torus, closest_point, common_normal, nurbs_sphere


def test_closest_point_on_a_sphere_is_the_radial_projection():
    c = np.array([0.2, -0.4, 1.0])
    for x in ([3.0, 1.0, 2.0], [0.5, -0.3, 1.2], [-2.0, -1.0, 0.5]):
        v = np.asarray(x) - c
        lon, lat = np.arctan2(v[1], v[0]), np.arcsin(v[2] / np.linalg.norm(v))
        starts = {"analytic": (Sphere(1.5, c), lon + 0.2, lat - 0.2),  # the NURBS start: roughly the same point
                  "nurbs": (nurbs_sphere(1.5, c), np.mod(lon, 2 * np.pi) / (2 * np.pi) + 0.03, lat / np.pi + 0.45)}
        for S, s0, t0 in starts.values():
            got = closest_point(S, x, s0, t0)
            assert got.converged and not got.on_boundary
            np.testing.assert_allclose(got.point, c + 1.5 * v / np.linalg.norm(v), atol=1e-13)
            assert abs(got.distance - abs(np.linalg.norm(v) - 1.5)) < 1e-13
            np.testing.assert_allclose(S.point(got.s, got.t), got.point, atol=1e-15)


def test_closest_point_on_a_torus_goes_through_the_tube_centre():
    R = rotation_axis_angle(np.array([0.0, 0.6, 0.8]), 0.4)
    o = np.array([1.0, 0.0, -0.5])
    torus = Torus(2.0, 0.6, o, R)
    for x_local in ([2.5, 1.0, 0.9], [-1.0, 1.2, -0.2], [0.3, -1.8, 0.1]):
        x_local = np.array(x_local)
        ring = 2.0 * np.array([x_local[0], x_local[1], 0]) / np.hypot(x_local[0], x_local[1])
        expected = ring + 0.6 * (x_local - ring) / np.linalg.norm(x_local - ring)
        s0 = np.arctan2(x_local[1], x_local[0]) + 0.3
        got = closest_point(torus, o + R @ x_local, s0, 0.5)
        assert got.converged
        np.testing.assert_allclose(got.point, o + R @ expected, atol=1e-13)


def _wavy_patch():
    rng = np.random.default_rng(11)
    u, v = np.meshgrid(np.linspace(0, 1, 5), np.linspace(0, 1, 5), indexing="ij")
    P = np.stack([u, v, 0.2 * np.sin(3 * u) * np.cos(2 * v)], -1)
    knots = [0, 0, 0, 0, 0.5, 1, 1, 1, 1]
    return NurbsSurface(P, rng.uniform(0.7, 1.5, (5, 5)), knots, knots, 3, 3, name="terrain")


def test_closest_point_on_a_nurbs_patch_beats_a_dense_search():
    S = _wavy_patch()
    grid = np.linspace(0, 1, 401)
    pts = S.point(grid[:, None], grid[None, :])
    for x in ([0.4, 0.6, 0.3], [0.7, 0.2, -0.25], [0.5, 0.5, 0.05]):
        got = closest_point(S, x, 0.5, 0.5)
        brute = np.linalg.norm(pts - np.asarray(x), axis=-1)
        assert got.converged and got.residual < 1e-12
        assert got.distance <= brute.min() + 1e-15
        assert brute.min() - got.distance < 1e-4  # the grid's spacing bounds how far it can be above


def test_closest_point_beyond_the_edge_stops_on_the_boundary():
    S = NurbsSurface([[[0, 0, 0], [0, 1, 0]], [[1, 0, 0], [1, 1, 0]]], None, [0, 0, 1, 1], [0, 0, 1, 1], 1, 1)
    got = closest_point(S, [1.5, 0.25, 0.4], 0.5, 0.5)
    assert got.converged and got.on_boundary
    assert (got.s, got.t) == (1.0, pytest.approx(0.25, abs=1e-14))
    assert got.distance == pytest.approx(np.hypot(0.5, 0.4), abs=1e-14)


def test_non_convergence_is_reported_and_bad_points_are_refused():
    got = closest_point(_wavy_patch(), [0.9, 0.1, 0.5], 0.1, 0.9, max_iterations=1)
    assert not got.converged and got.iterations == 1 and got.residual > 1e-6
    with pytest.raises(ArgumentError, match=r"closest_point on surface 'terrain': x must be a finite point"):
        closest_point(_wavy_patch(), [0.0, 1.0], 0.5, 0.5)
    with pytest.raises(ArgumentError, match=r"surface 'terrain': parameter t = 1\.5 is outside"):
        closest_point(_wavy_patch(), [0.0, 1.0, 0.0], 0.5, 1.5)


# the sphere turned so that its bottom point has regular parameters (local +x pointing down)
DOWN = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


@pytest.mark.parametrize("height", [1.8, 1.0, 0.7])
def test_sphere_on_a_plane_gap_and_contact_point(height):
    """A ball of radius 1 with its centre at height h above z = 0: gap h - 1 at the point below the centre."""
    c = np.array([0.3, -0.6, height])
    plane = Plane(origin=[0.0, 0.0, 0.0], rotation=rotation_axis_angle(np.array([0.0, 0.0, 1.0]), 0.5))
    got = common_normal(plane, Sphere(1.0, c, DOWN), [0.1, 0.2, 0.2, -0.1])
    assert got.converged
    np.testing.assert_allclose(got.point1, [0.3, -0.6, 0.0], atol=1e-14)
    np.testing.assert_allclose(got.point2, [0.3, -0.6, height - 1.0], atol=1e-14)
    assert got.gap == pytest.approx(height - 1.0, abs=1e-14)
    np.testing.assert_allclose(got.normal2, -got.normal1, atol=1e-14)


def test_nurbs_sphere_on_a_nurbs_plane():
    """A NURBS ball of radius 0.5 about (0.45, 0.1, 0.4) through the NURBS plane x = 0 (a bilinear patch, normal
    +x): the common normal meets the ball on its equator at longitude pi (u = 1/2, v = 1/2); it sinks 0.05 in."""
    wall = NurbsSurface([[[0, -2, -2], [0, -2, 2]], [[0, 2, -2], [0, 2, 2]]], None, [0, 0, 1, 1], [0, 0, 1, 1], 1, 1)
    ball = nurbs_sphere(0.5, [0.45, 0.1, 0.4])
    got = common_normal(wall, ball, [0.55, 0.55, 0.45, 0.55])
    assert got.converged
    np.testing.assert_allclose(got.point1, [0.0, 0.1, 0.4], atol=1e-14)
    np.testing.assert_allclose(got.point2, [-0.05, 0.1, 0.4], atol=1e-14)
    np.testing.assert_allclose(got.params, [0.525, 0.6, 0.5, 0.5], atol=1e-14)
    np.testing.assert_allclose(got.normal1, [1.0, 0.0, 0.0], atol=1e-15)
    assert got.gap == pytest.approx(-0.05, abs=1e-14)


def test_ball_inside_a_spherical_bowl():
    """A ball of radius r with centre c inside a sphere of radius R about the origin: the common normal runs
    along c, with signed gap |c| + r - R (negative: clearance)."""
    R, r = 2.0, 0.5
    c = np.array([0.6, -0.3, -0.9])
    e = c / np.linalg.norm(c)
    bowl = Sphere(R, rotation=rotation_axis_angle(np.array([1.0, 0.0, 0.0]), 1.2))
    ball = Sphere(r, c)
    e_bowl = bowl.rotation.T @ e  # the direction in the bowl's frame
    z0 = [np.arctan2(e_bowl[1], e_bowl[0]) + 0.05, np.arcsin(e_bowl[2]) - 0.05,
          np.arctan2(e[1], e[0]) + 0.1, np.arcsin(e[2]) - 0.1]
    got = common_normal(bowl, ball, z0)
    assert got.converged
    np.testing.assert_allclose(got.point1, R * e, atol=1e-14)
    np.testing.assert_allclose(got.point2, c + r * e, atol=1e-14)
    assert got.gap == pytest.approx(np.linalg.norm(c) + r - R, abs=1e-14)
    np.testing.assert_allclose(got.normal2, got.normal1, atol=1e-14)


def test_a_point_beyond_a_curved_edge_slides_along_it():
    """Past the edge s = 0 of the wavy patch the nearest point lies on the edge curve S(0, t): Newton holds s on
    its bound and solves for t; nothing on a dense sampling of that curve is nearer."""
    S = _wavy_patch()
    x = np.array([-0.15, 0.53, -0.06])
    got = closest_point(S, x, 0.05, 0.65)
    assert got.converged and got.on_boundary and got.s == 0.0
    edge = S.point(0.0, np.linspace(0, 1, 20001))
    brute = np.linalg.norm(edge - x, axis=-1)
    assert got.distance <= brute.min() + 1e-15 and brute.min() - got.distance < 1e-8


def test_the_contact_conditions_jacobian_matches_central_differences():
    from kane.surfaces.contact import common_normal_conditions as _conditions

    ball = nurbs_sphere(0.5, [0.45, 0.1, 0.4])
    terrain = _wavy_patch()
    z = np.array([0.37, 0.61, 0.42, 0.58])
    J = _conditions(terrain, ball, z)[1]
    h = 1e-6
    fd = np.stack([(_conditions(terrain, ball, z + h * e)[0] - _conditions(terrain, ball, z - h * e)[0]) / (2 * h)
                   for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(J, fd, rtol=0, atol=1e-7 * np.abs(J).max())
