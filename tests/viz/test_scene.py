"""The viewer's scene: default shapes from inertia, joint frames, and body poses along a run checked against a
hand computation for a pendulum."""

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.spatial import quaternion_to_rotation
from kane.errors import ArgumentError
from kane.viz.scene import ShapeKind, build_scene, equivalent_box, point_trace

A, B, C, M = 0.6, 0.2, 0.1, 3.0  # box sides [m] and mass [kg] of the pendulum's rod
L, H = 0.5, 1.0                   # centre of mass along the link's x [m]; height of the pin [m]


def pendulum():
    s = kane.System("pendulum", gravity=(0, -9.81, 0))
    box = (M / 12 * (B**2 + C**2), M / 12 * (A**2 + C**2), M / 12 * (A**2 + B**2))  # a box's central moments
    s.add_body("rod", mass=M, com=(L, 0, 0), inertia=box)
    s.add_particle("tip", 0.5)
    s.add_joint("ground", "rod", J.Revolute("z"), name="pin", parent_point=(0, 0, H), coordinates=["th"],
                speeds=["w"], q0=[0.4])
    s.add_joint("rod", "tip", J.Weld(), name="glue", parent_point=(2 * L, 0, 0))
    return s


def test_equivalent_box_recovers_the_sides_of_a_rotated_box():
    R = quaternion_to_rotation(np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2]))
    inertia = R @ np.diag([M / 12 * (B**2 + C**2), M / 12 * (A**2 + C**2), M / 12 * (A**2 + B**2)]) @ R.T
    sides, axes = equivalent_box(M, inertia)
    order = np.argsort(sides)
    np.testing.assert_allclose(sides[order], [C, B, A], rtol=1e-12)
    np.testing.assert_allclose(np.abs(axes[:, order[2]] @ R[:, 0]), 1.0, rtol=1e-12)  # longest side along R's x
    assert np.linalg.det(axes) == pytest.approx(1.0)


def test_equivalent_box_turns_a_left_handed_eigenbasis_right_handed():
    """Rotations of the box for which LAPACK's eigenvectors come out left-handed (det -1): the axes returned are
    still a rotation, each column along the body axis (a column of R) whose side it carries."""
    rng = np.random.default_rng(8)
    box = np.diag([M / 12 * (B**2 + C**2), M / 12 * (A**2 + C**2), M / 12 * (A**2 + B**2)])
    turns = [quaternion_to_rotation(q / np.linalg.norm(q)) for q in rng.normal(size=(40, 4))]
    left = [R for R in turns if np.linalg.det(np.linalg.eigh(R @ box @ R.T)[1]) < 0]
    assert len(left) >= 5  # the branch that turns the basis right-handed is taken
    for R in left:
        sides, axes = equivalent_box(M, R @ box @ R.T)
        assert np.linalg.det(axes) == pytest.approx(1.0, abs=1e-12)
        for side, body_axis in zip((A, B, C), R.T):
            k = int(np.argmin(np.abs(sides - side)))
            assert sides[k] == pytest.approx(side, rel=1e-12)
            assert abs(axes[:, k] @ body_axis) == pytest.approx(1.0, abs=1e-12)


def test_pendulum_poses_shapes_and_frames_match_a_hand_computation(tmp_path):
    eqs = kane.derive(pendulum())
    dyn = eqs.compile()
    run = kane.simulate.simulate(dyn, (0.0, 0.5), [0.4], [0.0], output_dt=0.05, path=tmp_path / "run.h5")
    scene = build_scene(eqs, kane.load_trajectory(tmp_path / "run.h5"))
    assert scene.bodies == ("rod", "tip") and scene.up == (0.0, 1.0, 0.0)  # against gravity -y
    th = run.q[:, 0]
    assert scene.position.shape == (len(th), 2, 3) and np.ptp(th) > 0.1  # it swung
    # the rod's frame: origin at the pin, axes turned by th about z; the tip's 2L along the rod's x
    np.testing.assert_allclose(scene.position[:, 0], np.tile([0, 0, H], (len(th), 1)), atol=1e-12)
    tip = np.column_stack([2 * L * np.cos(th), 2 * L * np.sin(th), np.full_like(th, H)])
    np.testing.assert_allclose(scene.position[:, 1], tip, atol=1e-12)
    for k, angle in enumerate(th):
        for i in range(2):
            np.testing.assert_allclose(scene.wxyz[k, i] * np.sign(scene.wxyz[k, i, 0]),
                                       [np.cos(angle / 2), 0, 0, np.sin(angle / 2)], atol=1e-12)
    rod, tip_shape = scene.shapes
    assert rod.kind is ShapeKind.BOX and tip_shape.kind is ShapeKind.SPHERE
    np.testing.assert_allclose(sorted(rod.size), [C, B, A], rtol=1e-12)
    assert rod.position == (L, 0.0, 0.0)
    assert tip_shape.size[0] == pytest.approx(0.1 * 2 * L)  # a tenth of the model's largest offset
    frames = {(f.joint, f.which): f for f in scene.frames}
    assert frames["pin", "F"].body == "ground" and frames["pin", "F"].position == (0.0, 0.0, H)
    assert frames["glue", "F"].body == "rod" and frames["glue", "F"].position == (2 * L, 0.0, 0.0)
    np.testing.assert_allclose(scene.energy, run.energy)


def test_a_trace_follows_the_pendulum_tip_and_residuals_reach_the_scene(tmp_path):
    eqs = kane.derive(pendulum())
    dyn = eqs.compile()
    run = kane.simulate.simulate(dyn, (0.0, 0.5), [0.4], [0.0], output_dt=0.05, path=tmp_path / "run.h5",
                                 monitors={"tip_y": lambda t, q, u: 2 * L * np.sin(q[0])})
    scene = build_scene(eqs, kane.load_trajectory(tmp_path / "run.h5"))
    th = run.q[:, 0]
    trace = point_trace(scene, "rod", (2 * L, 0.0, 0.0))  # the rod's end, where the tip is welded
    np.testing.assert_allclose(trace, np.column_stack([2 * L * np.cos(th), 2 * L * np.sin(th), np.full_like(th, H)]),
                               atol=1e-12)
    np.testing.assert_allclose(scene.residuals["tip_y"], trace[:, 1], atol=1e-12)  # the run's monitor
    with pytest.raises(ArgumentError, match="no body named 'arm'; bodies: rod, tip"):
        point_trace(scene, "arm", (0, 0, 0))
