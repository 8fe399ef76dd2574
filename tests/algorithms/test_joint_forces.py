"""Joint reaction forces from RNEA's inward pass, against forces worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import RecursiveDynamics
from kane.spatial import rotation_axis_angle

G = 9.81


def _pendulum(child_rotation=None, child_point=(0, 0, 0)):
    s = kane.System("pendulum", gravity=(0, 0, -G))
    s.add_body("link", mass=2.0, com=(0, 0, -0.5), inertia=(0.2, 0.2, 0.01))
    s.add_joint("ground", "link", J.Revolute("y"), name="hinge", child_rotation=child_rotation,
                child_point=child_point)
    return RecursiveDynamics(s)


def test_hanging_pendulum_at_rest_carries_its_weight():
    dyn = _pendulum()
    udot = dyn.udot(0.0, [0.0], [0.0])
    assert abs(udot[0]) < 1e-14
    f = dyn.joint_forces(0.0, [0.0], [0.0], udot)["hinge"]
    np.testing.assert_allclose(f, [0, 0, 0, 0, 0, 2.0 * G], atol=1e-12)  # moment 0; the hinge holds m g up


def test_reaction_is_reported_in_the_joint_frame_M():
    """A rotated, offset frame M and a link released at rest off the vertical: the joint force (in M axes) is
    m (a_com - g) with a_com = alpha x r (no velocity), and no moment about the free axis."""
    R_link_M = rotation_axis_angle((1.0, 2.0, -0.5), 0.7)  # M's axes in the link's axes
    dyn = _pendulum(child_rotation=R_link_M.tolist(), child_point=(0.1, 0.0, 0.0))
    theta, m = -0.3, 2.0
    q, u = np.array([theta]), np.array([0.0])
    udot = dyn.udot(0.0, q, u)
    f = dyn.joint_forces(0.0, q, u, udot)["hinge"]
    r_M = R_link_M.T @ (np.array([0, 0, -0.5]) - np.array([0.1, 0.0, 0.0]))  # com from M's origin, M axes
    alpha_M = np.array([0.0, udot[0], 0.0])
    g_M = rotation_axis_angle((0, 1, 0), theta).T @ np.array([0, 0, -G])
    np.testing.assert_allclose(f[3:], m * (np.cross(alpha_M, r_M) - g_M), atol=1e-12)
    assert abs(f[1]) < 1e-12


def test_motor_torque_appears_as_the_moment_about_the_axis():
    dyn = _pendulum()
    q, u = np.array([0.4]), np.array([-0.8])
    udot = dyn.udot(0.0, q, u, tau=[3.0])
    f = dyn.joint_forces(0.0, q, u, udot)["hinge"]
    assert f[1] == pytest.approx(3.0, abs=1e-12)


def test_spinning_link_needs_the_centripetal_force():
    m, r, w = 1.5, 0.4, 3.0
    s = kane.System("spinner", gravity=(0, 0, -G))
    s.add_body("arm", mass=m, com=(r, 0, 0), inertia=(0.01, 0.05, 0.05))
    s.add_joint("ground", "arm", J.Revolute("z"), name="spindle")
    dyn = RecursiveDynamics(s)
    for angle in (0.0, 1.1):
        udot = dyn.udot(0.0, [angle], [w])
        assert abs(udot[0]) < 1e-14
        f = dyn.joint_forces(0.0, [angle], [w], udot)["spindle"]
        # in the arm's axes: pull m w^2 r toward the axis, hold the weight, and hold the weight's moment m g r
        np.testing.assert_allclose(f, [0.0, -m * G * r, 0.0, -m * w * w * r, 0.0, m * G], atol=1e-12)


def test_free_base_transmits_nothing_in_free_fall():
    s = kane.System("fall", gravity=(0, 0, -G))
    s.add_body("box", mass=3.0, com=(0.1, 0.2, 0.3), inertia=(0.1, 0.2, 0.25, 0.01, 0.02, 0.0))
    s.add_body("lid", mass=0.5, com=(0.0, 0.0, 0.1), inertia=(0.01, 0.01, 0.02))
    s.add_joint("ground", "box", J.Free(), name="float")
    s.add_joint("box", "lid", J.Revolute("x"), name="hinge", parent_point=(0, 0.2, 0.4))
    dyn = RecursiveDynamics(s)
    rng = np.random.default_rng(0)
    q = np.array(dyn.model.q0) + rng.normal(0, 0.3, dyn.n_q)
    q[3:7] /= np.linalg.norm(q[3:7])
    u = rng.normal(0, 1.0, dyn.n_u)
    udot = dyn.udot(0.0, q, u)
    forces = dyn.joint_forces(0.0, q, u, udot)
    np.testing.assert_allclose(forces["float"], 0.0, atol=1e-11)
    assert abs(forces["hinge"][0]) < 1e-11  # no torque about the free hinge axis


def test_joint_forces_are_recorded_in_the_trajectory():
    """A pendulum released from rest: the pivot force recorded with every sample equals the hand result,
    tension along the link m g cos(th) + m r th'^2 (r to the centre of mass), read in the link's frame."""
    m, r, g = 1.2, 0.4, 9.81
    s = kane.System("pendulum", gravity=(0, 0, -g))
    s.add_body("link", mass=m, com=(0, 0, -r), inertia=(0.01, 0.01, 0.001))
    s.add_joint("ground", "link", J.Revolute("y"), name="pivot", coordinates=["th"], speeds=["w"])
    dyn = RecursiveDynamics(s)
    traj = kane.simulate.simulate(dyn, (0.0, 1.0), [1.0], [0.0], output_dt=0.1, rtol=1e-10, atol=1e-12,
                                  monitors=dyn.joint_force_monitors(["pivot"]))
    th, w = traj.q[:, 0], traj.u[:, 0]
    # the link's z axis points from the centre of mass to the pivot; the pivot pulls the link along +z
    assert np.allclose(traj.residuals["pivot.fz"], m * g * np.cos(th) + m * r * w**2, rtol=1e-8, atol=1e-8)
