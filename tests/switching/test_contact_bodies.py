"""FreeBodies (kane.switching.contact_bodies): Newton-Euler of free bodies against kane's own derivation of a body
on a Free joint, its point Jacobians against differenced point motion, and its errors."""

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.errors import ModelError
from kane.spatial import quaternion_to_rotation
from kane.switching.contact_bodies import FreeBodies

G = 9.81
MASS = 1.7
INERTIA = np.array([[0.05, 0.004, -0.002], [0.004, 0.08, 0.003], [-0.002, 0.003, 0.11]])


def random_state(rng, n):
    q = rng.normal(size=7 * n)
    u = rng.normal(size=6 * n)
    return q, u


def test_free_bodies_agree_with_kanes_derivation_of_a_body_on_a_free_joint():
    s = kane.System("free", gravity=(0, 0, -G))
    s.add_body("b", mass=MASS, com=(0, 0, 0), inertia=tuple(INERTIA[i, j] for i, j in
                                                         ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))))
    s.add_joint("ground", "b", J.Free(), name="free")
    ref = kane.derive(s).compile()
    bodies = FreeBodies(["b"], [MASS], [INERTIA], (0.0, 0.0, -G))
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, u = random_state(rng, 1)
        q = bodies.normalize(q)
        R = quaternion_to_rotation(q[3:7])
        omega, v_body = u[0:3], R.T @ u[3:6]  # kane's Free joint: both speeds in body axes
        u_ref = np.r_[omega, v_body]
        assert np.allclose(ref.mass_matrix(0.0, q)[0:3, 0:3], INERTIA)  # the same inertia convention
        a_ref = ref.udot(0.0, q, u_ref)
        got = bodies.udot(0.0, q, u)
        assert np.abs(got[0:3] - a_ref[0:3]).max() < 1e-12
        assert np.abs(got[3:6] - R @ (a_ref[3:6] + np.cross(omega, v_body))).max() < 1e-12  # world acceleration
        assert bodies.energy(0.0, q, u) == pytest.approx(ref.energy(0.0, q, u_ref), rel=1e-13)
        qd = bodies.qdot(0.0, q, u)
        assert np.abs(qd - ref.qdot(0.0, q, u_ref)).max() < 1e-13


def test_point_jacobian_gives_the_velocity_of_a_body_fixed_point():
    bodies = FreeBodies(["a", "b"], [1.0, 2.0], [INERTIA, 2 * INERTIA])
    rng = np.random.default_rng(11)
    q, u = random_state(rng, 2)
    q = bodies.normalize(q)
    points = rng.normal(size=(3, 3))
    names = ["b", "a", "b"]
    cols, values = bodies.point_jacobians(q, names, points)
    for k, (name, x) in enumerate(zip(names, points)):
        c, R = bodies.pose(q, name)
        r_body = R.T @ (x - c)

        def where(eps):
            q_eps = bodies.normalize(q + eps * bodies.qdot(0.0, q, u))
            c_eps, R_eps = bodies.pose(q_eps, name)
            return c_eps + R_eps @ r_body

        eps = 1e-6
        v_diff = (where(eps) - where(-eps)) / (2 * eps)
        Jp = bodies.point_jacobian(q, name, x)
        assert np.abs(Jp @ u - v_diff).max() < 1e-8
        assert np.abs(Jp[:, cols[k]] - values[k]).max() < 1e-15  # the sparse rows: the same numbers
        assert np.abs(Jp).sum() == pytest.approx(np.abs(values[k]).sum())
    assert not bodies.point_jacobian(q, "ground", points[0]).any()


def test_bad_bodies_are_named():
    with pytest.raises(ModelError, match="masses"):
        FreeBodies(["a"], [-1.0], [INERTIA])
    with pytest.raises(ModelError, match="body 'a'.*inertia"):
        FreeBodies(["a"], [1.0], [-INERTIA])
    with pytest.raises(ModelError, match="distinct"):
        FreeBodies(["a", "a"], [1.0, 1.0], [INERTIA, INERTIA])
    bodies = FreeBodies(["a"], [1.0], [INERTIA])
    with pytest.raises(ModelError, match="no body 'c'"):
        bodies.point_jacobian(np.r_[0, 0, 0, 1, 0, 0, 0.0], "c", [0, 0, 0])
    with pytest.raises(ModelError, match="body 'a': quaternion"):
        bodies.check_quaternions(np.r_[0, 0, 0, 2, 0, 0, 0.0])
