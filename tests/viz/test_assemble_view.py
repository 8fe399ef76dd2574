"""Assembly with the user in the loop in the viewer (``kane view MODEL --assemble PART``): the gizmo's callback
moved along a path on a four-bar keeps the loop closed, follows the closed-form position analysis, draws the bodies
at the solver's q; a target beyond reach shows the nearest configuration and its distance; frames are recorded."""

import sys
from pathlib import Path

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.io.model_file import load_model
from kane.io.trajectory import load_trajectory
from kane.spatial import quaternion_to_rotation
from kane.viz.assemble_view import AssembleSession, AssembleViewer
from kane.viz.viewer import ViewOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _four_bar import COUPLER, CRANK, GROUND, ROCKER, position_analysis  # noqa: E402


FOUR_BAR = f'''
[model]
name = "four_bar"

[[bodies]]
name = "crank"
mass = 1.0
com = [{CRANK / 2}, 0, 0]
inertia = [0.001, 0.1, 0.1]

[[bodies]]
name = "coupler"
mass = 1.0
com = [{COUPLER / 2}, 0, 0]
inertia = [0.001, 0.3, 0.3]

[[bodies]]
name = "rocker"
mass = 1.0
com = [{ROCKER / 2}, 0, 0]
inertia = [0.001, 0.2, 0.2]

[[joints]]
name = "a"
parent = "ground"
child = "crank"
type = "revolute"
axis = "z"
coordinates = ["q1"]
speed_names = ["u1"]
q0 = [0.7]

[[joints]]
name = "b"
parent = "crank"
child = "coupler"
type = "revolute"
axis = "z"
parent_point = [{CRANK}, 0, 0]
coordinates = ["q2"]
speed_names = ["u2"]
q0 = [-0.3]

[[joints]]
name = "c"
parent = "coupler"
child = "rocker"
type = "revolute"
axis = "z"
parent_point = [{COUPLER}, 0, 0]
coordinates = ["q3"]
speed_names = ["u3"]
q0 = [2.0]

[[constraints]]
name = "closure"
type = "loop_closure"
body_a = "rocker"
point_a = [{ROCKER}, 0, 0]
body_b = "ground"
point_b = [{GROUND}, 0, 0]
directions = [[1, 0, 0], [0, 1, 0]]

[simulation]
dependent = ["u2", "u3"]
'''


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    path = tmp_path_factory.mktemp("assemble") / "four_bar.toml"
    path.write_text(FOUR_BAR)
    return AssembleSession(load_model(path), f"crank:{CRANK},0,0")


def closure(q):
    """The rocker's tip minus the ground pivot, by hand from the angles (kane-independent)."""
    a1, a2, a3 = np.cumsum(q)
    tip = CRANK * np.array([np.cos(a1), np.sin(a1)]) + COUPLER * np.array([np.cos(a2), np.sin(a2)]) \
        + ROCKER * np.array([np.cos(a3), np.sin(a3)])
    return tip - np.array([GROUND, 0.0])


def body_frames(q):
    """The body frames' origins (3, 2) [m] and z rotation angles (3,) of crank, coupler, rocker, by hand."""
    a = np.cumsum(q)
    A = CRANK * np.array([np.cos(a[0]), np.sin(a[0])])
    B = A + COUPLER * np.array([np.cos(a[1]), np.sin(a[1])])
    return np.array([[0.0, 0.0], A, B]), a


def test_the_gizmo_moved_around_the_crank_circle_keeps_the_loop_closed_and_follows_the_closed_form(session):
    viewer = AssembleViewer(session, ViewOptions(port=8730))
    try:
        q = session.q
        assert np.abs(closure(q)).max() < 1e-10 and session.start.residual < 1e-10  # assembled from q0
        np.testing.assert_allclose(session.home, [CRANK * np.cos(q[0]), CRANK * np.sin(q[0]), 0.0], atol=1e-12)
        A0 = session.home[:2]
        d, ex = np.array([GROUND, 0.0]) - A0, body_frames(q)[0][2] - A0
        branch = np.sign(d[0] * ex[1] - d[1] * ex[0])
        for theta in q[0] + np.linspace(0.0, 2 * np.pi, 25)[1:]:
            res = viewer.drag((CRANK * np.cos(theta), CRANK * np.sin(theta), 0.0))  # the gizmo's callback
            assert res is session.last and res.reachable and res.residual < 1e-10
            q = res.q
            assert np.abs(closure(q)).max() < 1e-10
            assert abs(np.angle(np.exp(1j * (q[0] - theta)))) < 1e-8  # the crank angle is the gizmo's
            origins, angles = body_frames(q)
            np.testing.assert_allclose(origins[2], position_analysis(theta, branch), atol=1e-8)
            # the drawn body frames are the solver's q through the scene's pose function, and by hand
            position, wxyz = session.poses()
            for i, name in enumerate(viewer.scene.bodies):
                np.testing.assert_allclose(viewer._frames[name].position, position[i], atol=1e-12)
                np.testing.assert_allclose(viewer._frames[name].wxyz, wxyz[i], atol=1e-12)
                np.testing.assert_allclose(position[i], [*origins[i], 0.0], atol=1e-10)
                R = quaternion_to_rotation(wxyz[i])
                c, s = np.cos(angles[i]), np.sin(angles[i])
                np.testing.assert_allclose(R, [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-10)
        assert "residual" in viewer.status.content and "reachable" in viewer.status.content
    finally:
        viewer.close()
        session.reset()


def test_a_target_beyond_reach_shows_the_nearest_configuration_and_its_distance(session):
    viewer = AssembleViewer(session, ViewOptions(port=8731))
    try:
        target = np.array([2.5, 1.0, 0.0])  # the crank tip can only reach its unit circle
        res = None
        for s in np.linspace(0.0, 1.0, 6)[1:]:
            res = viewer.drag(session.home + s * (target - session.home))
        nearest = target[:2] / np.linalg.norm(target[:2])
        expected = np.linalg.norm(target[:2]) - CRANK
        assert not res.reachable and res.residual < 1e-10 and np.abs(closure(res.q)).max() < 1e-10
        np.testing.assert_allclose(session.part_point()[:2], nearest, atol=1e-8)
        assert abs(res.distance - expected) < 1e-8
        assert f"distance to target {expected:.6g} m" in viewer.status.content
        assert "out of reach" in viewer.status.content
        np.testing.assert_allclose(viewer._reach.points[0], [session.part_point(), target], atol=1e-12)
    finally:
        viewer.close()
        session.reset()


def test_saving_records_the_frames_to_hdf5_and_resets(session, tmp_path):
    with pytest.raises(ArgumentError, match="no frames to record"):
        session.save(tmp_path / "none.h5")
    thetas = session.q[0] + np.array([0.2, 0.4, 0.6])
    results = [session.move_to((np.cos(t), np.sin(t), 0.0)) for t in thetas]
    out = session.save(tmp_path / "frames.h5")
    traj = load_trajectory(out)
    np.testing.assert_array_equal(traj.t, [0.0, 1.0, 2.0])
    np.testing.assert_allclose(traj.q, [r.q for r in results], atol=0)
    np.testing.assert_allclose(traj.q[:, 0], thetas, atol=1e-8)
    assert traj.residuals["constraint_residual"].max() < 1e-10
    assert session.frames == [] and np.array_equal(session.q, session.start.q)  # reset
    with pytest.raises(ArgumentError, match="three finite numbers"):
        session.move_to((0.0, np.nan, 0.0))


def test_an_unknown_part_names_the_bodies(tmp_path):
    path = tmp_path / "four_bar.toml"
    path.write_text(FOUR_BAR)
    with pytest.raises(ArgumentError, match="no body 'wheel'; bodies: crank, coupler, rocker"):
        AssembleSession(load_model(path), "wheel")


def test_the_view_command_refuses_a_bad_part_in_one_line(tmp_path):
    from click.testing import CliRunner

    from kane.cli import main

    path = tmp_path / "four_bar.toml"
    path.write_text(FOUR_BAR)
    for part, said in (("wheel", "no body 'wheel'; bodies: crank, coupler, rocker"),
                       ("crank:1,2", "--assemble 'crank:1,2': the point must be three finite numbers")):
        result = CliRunner().invoke(main, ["view", str(path), "--assemble", part])
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and said in lines[0], result.output


@pytest.mark.browser
def test_dragging_the_gizmo_with_the_mouse_turns_the_crank_toward_it(session, chromium):
    """Debian's Chromium drags the gizmo's x arrow out of the crank's reach; the crank turns to the point of its
    circle nearest the gizmo's last position (closed form: the crank angle is the gizmo's polar angle)."""
    from kane.viz.screenshots import wait_until

    from .test_live_browser import drag_x_arrow

    wait_s = 20.0
    viewer = AssembleViewer(session, ViewOptions(port=8732))
    try:
        page = chromium.new_page(viewport={"width": 800, "height": 600})
        try:
            page.goto(viewer.url, timeout=wait_s * 1000)
            page.get_by_role("button", name="reset").wait_for(timeout=wait_s * 1000)
            client = wait_until(lambda: list(viewer.server.get_clients().values()), "the page", wait_s)[0]
            home = np.asarray(viewer.server.initial_camera.position)
            wait_until(lambda: client.camera.image_width > 0 and np.allclose(client.camera.position, home, atol=1e-3),
                       "the page's camera at the scene's view", wait_s)
            g0, p0 = session.home.copy(), session.part_point()
            drag_x_arrow(page, client.camera, g0, viewer.gizmo_scale)

            last = [g0]

            def settled():  # the gizmo unchanged over a 0.1 s poll, and the last frame solved for where it is
                goal = np.asarray(viewer.gizmo.position, dtype=float)
                same, last[0] = np.array_equal(goal, last[0]), goal
                frames = list(session.frames)
                return same and bool(frames) and np.array_equal(frames[-1].target, goal)

            wait_until(lambda: np.linalg.norm(np.asarray(viewer.gizmo.position) - g0) > 0.05,
                       "the server to hear the drag", wait_s)
            wait_until(settled, "the drag's last frame", wait_s)
        finally:
            page.close()
        goal, res = np.asarray(viewer.gizmo.position, dtype=float), session.last
    finally:
        viewer.close()
        session.reset()
    step = goal - g0
    assert step[0] > 0.05 and abs(step[1]) < 1e-9 and abs(step[2]) < 1e-9  # along the dragged x arrow only
    assert res.residual < 1e-10 and np.abs(closure(res.q)).max() < 1e-10
    assert abs(np.angle(np.exp(1j * (res.q[0] - np.arctan2(goal[1], goal[0]))))) < 1e-8
    p = CRANK * np.array([np.cos(res.q[0]), np.sin(res.q[0]), 0.0])
    assert (p - p0) @ step > 0 and np.linalg.norm(goal - p) < np.linalg.norm(goal - p0)  # moved toward it
