"""Bad NURBS input: each gets a ModelError (or an ArgumentError for evaluation arguments) naming the surface, the
field and the value; a control net collapsed at a corner is degenerate there and only there."""

import numpy as np
import pytest

from kane.errors import ArgumentError, ModelError
from kane.surfaces import NurbsSurface, nurbs_sphere


def _net(n_u=4, n_v=3):
    u, v = np.meshgrid(np.arange(n_u, dtype=float), np.arange(n_v, dtype=float), indexing="ij")
    return np.stack([u, v, 0.1 * u * v], -1)


def _make(**changes):
    args = dict(control_points=_net(), weights=np.ones((4, 3)), knots_u=[0, 0, 0, 0.5, 1, 1, 1],
                knots_v=[0, 0, 0, 1, 1, 1], degree_u=2, degree_v=2, name="cam")
    args.update(changes)
    return NurbsSurface(**args)


def test_the_reference_net_is_valid():
    S = _make()
    assert S.bounds == ((0.0, 1.0), (0.0, 1.0))
    np.testing.assert_allclose(S.point(0.0, 0.0), [0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(S.point(1.0, 1.0), [3, 2, 0.6], atol=1e-15)


@pytest.mark.parametrize("changes, match", [
    (dict(weights=np.array([[1, 1, 1], [1, 0, 1], [1, 1, 1], [1, 1, 1]], float)),
     r"surface 'cam': field 'weights' must be positive and finite, got weights\[1, 1\] = 0\.0"),
    (dict(weights=-np.ones((4, 3))), r"field 'weights' .* weights\[0, 0\] = -1\.0"),
    (dict(weights=np.ones((3, 4))), r"field 'weights' must have shape \(4, 3\)"),
    (dict(knots_u=[0, 0, 0, 0.7, 0.5, 1, 1]),
     r"surface 'cam': field 'knots_u' must be non-decreasing, but knot 4 = 0\.5 < knot 3 = 0\.7"),
    (dict(knots_v=[0, 0, 0, 1, 1]), r"field 'knots_v' has 5 knots; degree 2 with 3 control points needs 6"),
    (dict(knots_u=[0, 0, 0, 0.5, 0.5, 0.5, 1]), r"field 'knots_u' repeats the knot 0\.5 3 times; at most 2"),
    (dict(knots_u=[0, 0, 0, 0, 0, 0, 0]), r"field 'knots_u' has an empty parameter range"),
    (dict(knots_v=[0, 0, 0, np.nan, 1, 1]), r"field 'knots_v' has a non-finite knot"),
    (dict(degree_u=4), r"field 'degree_u' = 4 needs at least 5 control points in that direction, got 4"),
    (dict(degree_v=0), r"field 'degree_v' must be an integer >= 1, got 0"),
    (dict(degree_v=1.5), r"field 'degree_v' must be an integer >= 1, got 1\.5"),
    (dict(control_points=np.zeros((4, 3, 2))), r"field 'control_points' must have shape \(n_u, n_v, 3\)"),
    (dict(control_points=np.where(np.arange(3) == 2, np.inf, _net())),
     r"field 'control_points' has a non-finite entry at \[0, 0\]"),
    (dict(control_points=np.ones((4, 3, 3))), r"field 'control_points' are all the same point"),
])
def test_bad_fields_are_model_errors_naming_the_field_and_value(changes, match):
    with pytest.raises(ModelError, match=match):
        _make(**changes)


def test_a_collapsed_corner_is_degenerate_only_where_it_matters():
    """Repeated control points at the corner (s, t) = (0, 0): the first row collapses onto one point, so S_t = 0
    along s = 0 (a triangular patch); elsewhere the normal is fine."""
    P = _net()
    P[0, :] = P[0, 0]
    S = _make(control_points=P)
    n = S.normal([0.5, 0.2], [0.5, 0.9])
    np.testing.assert_allclose(np.linalg.norm(n, axis=-1), 1.0, atol=1e-15)
    with pytest.raises(ModelError, match=r"surface 'cam': degenerate at \(s, t\) = \(0\.0, 0\.4\): the normal "
                                         r"S_s x S_t "
                                         r"vanishes \(\|S_s\| = .*, \|S_t\| = 0\)"):
        S.normal([0.5, 0.0], [0.5, 0.4])


def test_the_poles_of_the_nurbs_sphere_are_degenerate():
    S = nurbs_sphere(1.0, name="ball")
    with pytest.raises(ModelError, match=r"surface 'ball': degenerate at \(s, t\) = \(0\.3, 1\.0\)"):
        S.normal(0.3, 1.0)


def test_parameters_outside_the_knot_range_are_argument_errors():
    S = _make()
    with pytest.raises(ArgumentError, match=r"surface 'cam': parameter s = 1\.25 is outside its bounds \[0\.0, 1\.0\]"):
        S.point([0.5, 1.25], 0.5)
    with pytest.raises(ArgumentError, match=r"surface 'cam': parameter t = -0\.1 is outside"):
        S.tangents(0.5, -0.1)
    with pytest.raises(ArgumentError, match=r"derivative order must be 0, 1 or 2, got 3"):
        S.derivatives(0.5, 0.5, order=3)
