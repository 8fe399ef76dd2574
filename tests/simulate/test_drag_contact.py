"""Assembly with a surface contact (seed 003): a sphere at the tip of a planar two-link arm kept touching a NURBS
plane or a NURBS sphere while its centre is dragged toward targets inside the surface; the centre ends at the
closed-form nearest point (on the offset surface) and the contact holds every frame."""

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.errors import ArgumentError
from kane.simulate.drag import DragSolver, Target
from kane.simulate.surface_contact import SphereOnSurface
from kane.surfaces import NurbsSurface, nurbs_sphere

RADIUS = 0.1


@pytest.fixture(scope="module")
def arm():
    s = kane.System("arm")
    s.add_body("upper", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
    s.add_joint("ground", "upper", J.Revolute("z"), coordinates=["a"], speeds=["wa"])
    s.add_body("fore", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
    s.add_joint("upper", "fore", J.Revolute("z"), parent_point=(1.0, 0, 0), coordinates=["b"], speeds=["wb"])
    return kane.derive(s).compile()


def tip(q):
    return np.array([np.cos(q[0]) + np.cos(q[0] + q[1]), np.sin(q[0]) + np.sin(q[0] + q[1])])


def floor(height=-0.5):
    """The plane y = height as a bilinear NURBS patch, s along z and t along x, so S_s x S_t points along +y."""
    P = np.array([[[-3, height, -1], [3, height, -1]], [[-3, height, 1], [3, height, 1]]], float)
    return NurbsSurface(P, np.ones((2, 2)), [0, 0, 1, 1], [0, 0, 1, 1], 1, 1, name="floor")


def test_the_ball_slides_along_a_nurbs_floor_under_a_target_below_it(arm):
    contact = SphereOnSurface("fore", (1.0, 0, 0), RADIUS, floor(), s=0.5, t=0.5)
    solver = DragSolver(arm, [Target("fore", (1.0, 0, 0), position=(1.2, -1.0, 0.0))], contacts=[contact])
    q = np.array([-0.3, 0.2])
    for x in np.linspace(1.2, 0.4, 9):
        solver.move(0, position=(x, -1.0, 0.0))
        res = solver.solve(q)
        q = res.q
        assert res.residual < 1e-10 and not res.reachable and res.converged
        assert np.abs(tip(q) - [x, -0.5 + RADIUS]).max() < 1e-9  # straight above the target, resting on the floor
        assert abs(res.distance - (-0.5 + RADIUS + 1.0)) < 1e-9  # the height of the centre above the target
    assert abs(contact.t - (0.4 + 3) / 6) < 1e-9  # the contact coordinate follows the ball (x = 6 t - 3)


def test_the_ball_rests_on_a_nurbs_dome_at_the_point_nearest_a_target_inside_it(arm):
    centre, R = np.array([1.0, -0.9, 0.0]), 0.5
    contact = SphereOnSurface("fore", (1.0, 0, 0), RADIUS, nurbs_sphere(R, centre, name="dome"), s=0.3, t=0.5)
    solver = DragSolver(arm, [Target("fore", (1.0, 0, 0), position=(0, 0, 0))], contacts=[contact])
    q = np.array([0.1, -1.0])
    for angle in np.linspace(1.8, 2.6, 5):  # targets 0.2 m from the dome's centre, up and to the left
        direction = np.array([np.cos(angle), np.sin(angle), 0.0])
        solver.move(0, position=centre + 0.2 * direction)
        res = solver.solve(q)
        q = res.q
        expected = centre + (R + RADIUS) * direction  # on the offset sphere, on the ray to the target
        assert res.converged and res.residual < 1e-10 and np.abs(tip(q) - expected[:2]).max() < 1e-9
        assert abs(res.distance - (R + RADIUS - 0.2)) < 1e-9


def test_a_contact_with_a_bad_radius_or_parameters_is_refused(arm):
    with pytest.raises(ArgumentError, match="radius >= 0"):
        SphereOnSurface("fore", (1.0, 0, 0), -0.1, floor())
    with pytest.raises(ArgumentError, match="surface 'floor': parameter s = 2.0 is outside its bounds"):
        SphereOnSurface("fore", (1.0, 0, 0), 0.1, floor(), s=2.0, t=0.5)
    with pytest.raises(ArgumentError, match="target body 'hand' is not in the model"):
        DragSolver(arm, [], contacts=[SphereOnSurface("hand", (0, 0, 0), 0.1, floor(), 0.5, 0.5)])


def test_a_contact_of_neither_kind_is_refused_by_its_type(arm):
    """A contact is a point contact (body, center, rows) or a surface pair (bodies, params, ...): the sphere is
    the first kind, a plain tuple neither (an ArgumentError naming its type, not an AttributeError later)."""
    contact = SphereOnSurface("fore", (1.0, 0, 0), RADIUS, floor(), s=0.5, t=0.5)
    solver = DragSolver(arm, [Target("fore", (1.0, 0, 0), position=(1.2, -1.0, 0.0))], contacts=[contact])
    assert solver._pair == (False,)
    with pytest.raises(ArgumentError, match="DragSolver contacts: tuple is neither a point contact"):
        DragSolver(arm, [Target("fore", (1.0, 0, 0), position=(1.2, -1.0, 0.0))], contacts=[("fore", (1, 0, 0))])
