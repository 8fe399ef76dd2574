"""Assembly with the user in the loop (seed 003): a four-bar and a slider-crank dragged along scripted paths stay
assembled every frame and follow the target where reachable; beyond reach they stop at the closed-form nearest
configuration and report the distance."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import kane
from kane import joints as J
from kane.errors import ArgumentError
from kane.simulate import assemble
from kane.simulate.drag import DragMethod, DragOptions, DragSolver, Target, orientation_error

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _four_bar import COUPLER, CRANK, GROUND, ROCKER, position_analysis  # noqa: E402

R_CRANK, ROD = 1.0, 2.5


@pytest.fixture(scope="module")
def four_bar():
    """The four-bar of test_assembly.py: crank, coupler, rocker hinged about z, the rocker's tip closed on the
    ground pivot at (2, 0, 0)."""
    s = kane.System("four_bar")
    parent, point = "ground", (0, 0, 0)
    for i, L in enumerate((CRANK, COUPLER, ROCKER)):
        s.add_body(f"l{i}", mass=1.0, com=(L / 2, 0, 0), inertia=(1e-3, L**2 / 12, L**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"])
        parent, point = f"l{i}", (L, 0, 0)
    s.add_loop_closure("closure", "l2", (ROCKER, 0, 0), "ground", (GROUND, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return kane.derive(s, dependent=["u2", "u3"]).compile()


@pytest.fixture(scope="module")
def slider_crank():
    """Crank R_CRANK about z at the origin, rod ROD hinged at its tip, a slider on x whose origin is closed on the
    rod's far end."""
    s = kane.System("slider_crank")
    s.add_body("crank", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
    s.add_joint("ground", "crank", J.Revolute("z"), coordinates=["th"], speeds=["w"])
    s.add_body("rod", mass=1.0, com=(1.0, 0, 0), inertia=(1e-3, 0.5, 0.5))
    s.add_joint("crank", "rod", J.Revolute("z"), parent_point=(R_CRANK, 0, 0), coordinates=["phi"], speeds=["wr"])
    s.add_body("slider", mass=1.0, com=(0, 0, 0), inertia=(1e-3, 1e-3, 1e-3))
    s.add_joint("ground", "slider", J.Prismatic("x"), coordinates=["x"], speeds=["v"])
    s.add_loop_closure("pin", "rod", (ROD, 0, 0), "slider", (0, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return kane.derive(s, dependent=["wr", "v"]).compile()


def four_bar_joint(q):
    """The coupler-rocker joint B from the angles (kane-independent forward kinematics)."""
    a2 = q[0] + q[1]
    return np.array([CRANK * np.cos(q[0]) + COUPLER * np.cos(a2), CRANK * np.sin(q[0]) + COUPLER * np.sin(a2)])


def four_bar_closure(q):
    a3 = q[0] + q[1] + q[2]
    return four_bar_joint(q) + ROCKER * np.array([np.cos(a3), np.sin(a3)]) - np.array([GROUND, 0.0])


def test_four_bar_dragged_by_the_crank_tip_around_a_circle_follows_the_closed_form(four_bar):
    q = assemble(four_bar, 0.0, np.array([0.7, -0.3, 2.0])).q
    A0 = CRANK * np.array([np.cos(0.7), np.sin(0.7)])
    ex = four_bar_joint(q) - A0
    d = np.array([GROUND, 0.0]) - A0
    branch = np.sign(d[0] * ex[1] - d[1] * ex[0])
    solver = DragSolver(four_bar, [Target("l0", (CRANK, 0, 0), position=(*A0, 0.0))])
    for theta in np.linspace(0.7, 0.7 + 2 * np.pi, 37)[1:]:
        solver.move(0, position=(CRANK * np.cos(theta), CRANK * np.sin(theta), 0.0))
        res = solver.solve(q)
        q = res.q
        assert res.residual < 1e-10 and np.abs(four_bar_closure(q)).max() < 1e-10
        assert res.reachable and res.converged and res.distance < 1e-9
        assert abs(np.angle(np.exp(1j * (q[0] - theta)))) < 1e-9
        assert np.abs(four_bar_joint(q) - position_analysis(theta, branch)).max() < 1e-9


def test_four_bar_target_beyond_reach_stops_with_the_crank_stretched_toward_it(four_bar):
    q = assemble(four_bar, 0.0, np.array([0.7, -0.3, 2.0])).q
    solver = DragSolver(four_bar, [Target("l0", (CRANK, 0, 0), position=(0.0, 0.0, 0.0))])
    for theta in np.linspace(0.8, 2.5, 8):
        solver.move(0, position=(3.0 * np.cos(theta), 3.0 * np.sin(theta), 0.0))
        res = solver.solve(q)
        q = res.q
        assert res.residual < 1e-10 and np.abs(four_bar_closure(q)).max() < 1e-10
        assert not res.reachable and res.converged
        assert abs(res.distance - (3.0 - CRANK)) < 1e-9  # the tip on its circle, on the line to the target
        assert abs(res.distances[0] - 2.0) < 1e-9
        assert abs(np.angle(np.exp(1j * (q[0] - theta)))) < 1e-8


def slider_position(theta):
    """Closed form of the slider-crank: x = r cos(theta) + sqrt(l^2 - r^2 sin^2(theta))."""
    return R_CRANK * np.cos(theta) + np.sqrt(ROD**2 - (R_CRANK * np.sin(theta)) ** 2)


def test_slider_crank_dragged_by_the_slider_gives_the_crank_angle_of_the_position_analysis(slider_crank):
    q = assemble(slider_crank, 0.0, np.array([0.5, -0.2, 3.0])).q
    assert q[0] == 0.5 and abs(q[2] - slider_position(0.5)) < 1e-12
    solver = DragSolver(slider_crank, [Target("slider", position=(q[2], 0.0, 0.0))])
    for x in np.linspace(q[2], ROD - R_CRANK + 0.05, 25)[1:]:
        solver.move(0, position=(x, 0.0, 0.0))
        res = solver.solve(q)
        q = res.q
        assert res.residual < 1e-10 and res.reachable and abs(q[2] - x) < 1e-9
        theta = np.arccos((x**2 + R_CRANK**2 - ROD**2) / (2 * R_CRANK * x))  # crank above the line, as started
        assert abs(q[0] - theta) < 1e-8
        tip = R_CRANK * np.array([np.cos(q[0]), np.sin(q[0])]) + ROD * np.array([np.cos(q[0] + q[1]),
                                                                              np.sin(q[0] + q[1])])
        assert np.abs(tip - [q[2], 0.0]).max() < 1e-10


def test_slider_pulled_beyond_reach_ends_fully_stretched(slider_crank):
    q = assemble(slider_crank, 0.0, np.array([0.5, -0.2, 3.0])).q
    res = DragSolver(slider_crank, [Target("slider", position=(5.0, 0.0, 0.0))]).solve(q)
    assert res.residual < 1e-10 and not res.reachable
    assert res.converged and abs(res.q[2] - (R_CRANK + ROD)) < 1e-10
    assert abs(res.distance - (5.0 - R_CRANK - ROD)) < 1e-10
    assert abs(res.q[0]) < 1e-7 and abs(res.q[1]) < 1e-7  # crank and rod in line along x (the dead centre)


def test_gradient_form_reaches_the_same_configuration(four_bar):
    q = assemble(four_bar, 0.0, np.array([0.7, -0.3, 2.0])).q
    target = Target("l0", (CRANK, 0, 0), position=(CRANK * np.cos(0.9), CRANK * np.sin(0.9), 0.0))
    newton = DragSolver(four_bar, [target]).solve(q)
    grad = DragSolver(four_bar, [target], DragOptions(method="gradient", gain=0.5, max_iter=500)).solve(q)
    assert grad.converged and grad.residual < 1e-10 and np.abs(grad.q - newton.q).max() < 1e-8
    assert grad.iterations > newton.iterations  # linear against quadratic convergence


def test_a_grasp_holds_the_crank_tip_exactly_while_a_soft_target_pulls_the_coupler(four_bar):
    q = assemble(four_bar, 0.0, np.array([0.7, -0.3, 2.0])).q
    tip = (CRANK * np.cos(0.7), CRANK * np.sin(0.7), 0.0)
    solver = DragSolver(four_bar, [Target("l0", (CRANK, 0, 0), position=tip, hard=True),
                                   Target("l1", (COUPLER, 0, 0), position=(0.0, 5.0, 0.0))])
    res = solver.solve(q)
    assert res.residual < 1e-10 and abs(res.q[0] - 0.7) < 1e-10  # one DOF, held by the grasp: nothing moves
    assert abs(res.distances[1] - np.linalg.norm(four_bar_joint(res.q) - [0.0, 5.0])) < 1e-10


def test_orientation_error_rows_match_finite_differences():
    w = np.array([0.3, -1.2, 0.7])
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    R0, Rt = Rotation.random(2, random_state=3).as_matrix()
    h = 1e-6
    e0, G = orientation_error(R0, Rt)
    e1, _ = orientation_error((np.eye(3) + h * K + 0.5 * h * h * K @ K) @ R0, Rt)
    em, _ = orientation_error((np.eye(3) - h * K + 0.5 * h * h * K @ K) @ R0, Rt)
    assert np.abs((e1 - em) / (2 * h) - G @ w).max() < 1e-8
    assert np.abs(orientation_error(Rt, Rt)[0]).max() < 1e-15


def test_bad_targets_and_options_are_refused_clearly(four_bar):
    with pytest.raises(ArgumentError, match="'nope' is not in the model"):
        DragSolver(four_bar, [Target("nope", position=(0, 0, 0))])
    with pytest.raises(ArgumentError, match="DragOptions.method 'newton'"):
        DragOptions(method="newton")
    solver = DragSolver(four_bar, [Target("l0", position=(0, 0, 0))])
    with pytest.raises(ArgumentError, match="same bodies and points"):
        solver.retarget([Target("l1", position=(0, 0, 0))])
    with pytest.raises(ArgumentError, match=r"q must be 3 finite numbers \(q1, q2, q3\)"):
        solver.solve(np.array([0.1, np.nan, 0.2]))
    with pytest.raises(ArgumentError, match="weight and length must be positive"):
        DragSolver(four_bar, [Target("l0", position=(0, 0, 0), weight=0.0)])
    assert DragOptions(method="gradient").method is DragMethod.GRADIENT


@pytest.fixture(scope="module")
def ball_joint():
    """A rod of 1 m on a spherical (quaternion) joint at the origin: no constraint but the unit quaternion."""
    s = kane.System("ball_joint")
    s.add_body("rod", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.1, 0.1))
    s.add_joint("ground", "rod", J.Spherical())
    return kane.derive(s).compile()


def test_a_pose_target_on_a_quaternion_joint_is_reached_exactly(ball_joint):
    R_target = Rotation.from_rotvec([0.3, -1.1, 0.8]).as_matrix()
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    solver = DragSolver(ball_joint, [Target("rod", (1.0, 0, 0), position=tuple(R_target[:, 0]),
                                            rotation=tuple(map(tuple, R_target)), length=0.5)])
    res = solver.solve(q0)
    assert res.reachable and res.converged and abs(np.linalg.norm(res.q) - 1.0) < 1e-14
    R = Rotation.from_quat([*res.q[1:], res.q[0]]).as_matrix()  # kane's quaternions are scalar first
    assert np.abs(R - R_target).max() < 1e-10


def test_a_point_of_a_ball_joint_pulled_beyond_reach_points_at_the_target(ball_joint):
    goal = np.array([1.0, 2.0, -2.0])  # 3 m away; the rod's tip reaches 1 m
    res = DragSolver(ball_joint, [Target("rod", (1.0, 0, 0), position=tuple(goal))]).solve(
        np.array([1.0, 0.0, 0.0, 0.0]))
    tip = Rotation.from_quat([*res.q[1:], res.q[0]]).as_matrix()[:, 0]
    assert not res.reachable and abs(res.distance - 2.0) < 1e-12
    assert np.abs(tip - goal / 3.0).max() < 1e-9
