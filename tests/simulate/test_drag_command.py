"""``kane assemble``: scripted drags of a slider-crank written as a model file; the frames file holds
configurations that satisfy the closure and follow the closed-form position analysis."""

import re

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.optimize import minimize_scalar

from kane.cli import main
from kane.errors import ArgumentError
from kane.io.trajectory import load_trajectory
from kane.simulate.drag_command import scripted_path

SLIDER_CRANK = '''
[model]
name = "slider_crank"

[[bodies]]
name = "crank"
mass = 1.0
com = [0.5, 0, 0]
inertia = [0.001, 0.1, 0.1]

[[bodies]]
name = "rod"
mass = 1.0
com = [1.25, 0, 0]
inertia = [0.001, 0.5, 0.5]

[[bodies]]
name = "slider"
mass = 1.0
com = [0, 0, 0]
inertia = [0.001, 0.001, 0.001]

[[joints]]
name = "crank_pin"
parent = "ground"
child = "crank"
type = "revolute"
axis = "z"
coordinates = ["th"]
speed_names = ["w"]
q0 = [0.5]

[[joints]]
name = "rod_pin"
parent = "crank"
child = "rod"
type = "revolute"
axis = "z"
parent_point = [1.0, 0, 0]
coordinates = ["phi"]
speed_names = ["wr"]
q0 = [-0.2]

[[joints]]
name = "guide"
parent = "ground"
child = "slider"
type = "prismatic"
axis = "x"
coordinates = ["x"]
speed_names = ["v"]
q0 = [3.0]

[[constraints]]
name = "pin"
type = "loop_closure"
body_a = "rod"
point_a = [2.5, 0, 0]
body_b = "slider"
point_b = [0, 0, 0]
directions = [[1, 0, 0], [0, 1, 0]]

[simulation]
dependent = ["wr", "v"]
'''


@pytest.fixture()
def model(tmp_path):
    path = tmp_path / "slider_crank.toml"
    path.write_text(SLIDER_CRANK)
    return path


def test_dragging_the_slider_past_its_reach_writes_assembled_frames_and_reports_the_distance(model, tmp_path):
    out = tmp_path / "frames.h5"
    res = CliRunner().invoke(main, ["assemble", str(model), "--drag", "slider", "--path", "line", "--to", "5", "0",
                                    "0", "--frames", "21", "-o", str(out)])
    assert res.exit_code == 0, res.output
    traj = load_trajectory(out)
    th, phi, x = traj.q.T
    assert traj.q.shape == (21, 3) and traj.residuals["constraint_residual"].max() < 1e-10
    tip = np.stack([np.cos(th) + 2.5 * np.cos(th + phi), np.sin(th) + 2.5 * np.sin(th + phi)], axis=1)
    assert np.abs(tip - np.stack([x, 0 * x], axis=1)).max() < 1e-10  # the closure, by hand
    # the slider follows the line while it can (x = cos th + sqrt(2.5^2 - sin^2 th)), then stays at 3.5 m
    targets = np.linspace(x[0], 5.0, 21)
    assert np.abs(np.minimum(targets, 3.5) - x).max() < 1e-9
    assert np.abs(np.cos(th) + np.sqrt(6.25 - np.sin(th) ** 2) - x).max() < 1e-10
    assert np.abs(traj.residuals["distance"] - np.maximum(targets - 3.5, 0.0)).max() < 1e-9
    unreachable = int(np.sum(targets > 3.5 + 1e-8))
    assert f"unreachable frames: {unreachable}" in res.output and "distance to the target: max 1.5 m" in res.output
    st = traj.stats  # kane info shows the method, a step per frame and how it ran (it showed "method ?")
    assert (st.method, st.n_accepted, st.loop) == ("drag/gauss_newton", 21, "python") and st.wall_time_s > 0
    info = CliRunner().invoke(main, ["info", str(out)])
    assert info.exit_code == 0 and "drag/gauss_newton" in info.output and "method │ ?" not in info.output


def rod_middle(th):
    """The rod's middle point at crank angle th, from the closed-form position analysis (slider on +x)."""
    x = np.cos(th) + np.sqrt(6.25 - np.sin(th) ** 2)
    return np.stack([(np.cos(th) + x) / 2, np.sin(th) / 2], axis=-1)


def test_a_circle_drag_of_the_rod_ends_each_frame_at_the_nearest_point_of_its_coupler_curve(model, tmp_path):
    out = tmp_path / "circle.h5"
    res = CliRunner().invoke(main, ["assemble", str(model), "--drag", "rod", "--point", "1.25", "0", "0",
                                    "--radius", "0.05", "--frames", "24", "--method", "gauss_newton", "-o", str(out)])
    assert res.exit_code == 0, res.output
    traj = load_trajectory(out)
    th, phi, x = traj.q.T
    mid = np.stack([np.cos(th) + 1.25 * np.cos(th + phi), np.sin(th) + 1.25 * np.sin(th + phi)], axis=1)
    assert np.abs(mid - rod_middle(th)).max() < 1e-10 and traj.residuals["constraint_residual"].max() < 1e-10
    targets = scripted_path("circle", [*mid[0], 0.0], 24, radius=0.05)[:, :2]
    grid = np.linspace(-np.pi, np.pi, 2001)  # one DOF: the middle moves on its coupler curve only
    curve, nearest = rod_middle(grid), []
    for p in targets:  # the nearest point of the curve: a grid search polished by a bounded scalar minimization
        k = np.argmin(np.linalg.norm(curve - p, axis=1))
        found = minimize_scalar(lambda a: np.linalg.norm(rod_middle(a) - p), bounds=(grid[k] - 0.01, grid[k] + 0.01),
                                method="bounded", options={"xatol": 1e-12})
        nearest.append(found.fun)
    assert np.abs(traj.residuals["distance"] - nearest).max() < 1e-9
    assert np.abs(np.linalg.norm(mid - targets, axis=1) - nearest).max() < 1e-9


def test_bad_drags_are_refused_clearly(model, tmp_path):
    res = CliRunner().invoke(main, ["assemble", str(model), "--drag", "handle", "-o", str(tmp_path / "x.h5")])
    assert res.exit_code == 2 and "target body 'handle' is not in the model" in res.output
    res = CliRunner().invoke(main, ["assemble", str(model), "--drag", "slider", "--path", "line", "-o",
                                    str(tmp_path / "y.h5")])
    assert res.exit_code == 2 and "--path line needs --to X Y Z" in res.output
    with pytest.raises(ArgumentError, match="--frames must be at least 2"):
        scripted_path("line", (0, 0, 0), 1, to=(1, 0, 0))


ARM_ON_FLOOR = '''
[model]
name = "arm_on_floor"

[parameters]
r = 0.1

[[bodies]]
name = "upper"
mass = 1.0
com = [0.5, 0, 0]
inertia = [0.001, 0.1, 0.1]

[[bodies]]
name = "fore"
mass = 1.0
com = [0.5, 0, 0]
inertia = [0.001, 0.1, 0.1]

[[joints]]
name = "shoulder"
parent = "ground"
child = "upper"
type = "revolute"
axis = "z"
coordinates = ["a"]
speed_names = ["wa"]
q0 = [-0.3]

[[joints]]
name = "elbow"
parent = "upper"
child = "fore"
type = "revolute"
axis = "z"
parent_point = [1.0, 0, 0]
coordinates = ["b"]
speed_names = ["wb"]
q0 = [0.2]

[[surfaces]]
name = "ball"
body = "fore"
primitive = "sphere"
radius = "r"
origin = [1.0, 0, 0]

[[surfaces]]
name = "floor"
body = "ground"
control_points = [[[-3, -0.5, -1], [3, -0.5, -1]], [[-3, -0.5, 1], [3, -0.5, 1]]]
knots_u = [0, 0, 1, 1]
knots_v = [0, 0, 1, 1]
degree_u = 1
degree_v = 1

[[contacts]]
name = "foot"
surface_a = "ball"
surface_b = "floor"
parameters_a = [-1.5, 0]    # the ball's lowest point (the common normal also holds at its top)
parameters_b = [0.5, 0.7]
'''


def test_the_model_files_sphere_contact_holds_while_the_ball_is_dragged_into_the_floor(tmp_path):
    path = tmp_path / "arm.toml"
    path.write_text(ARM_ON_FLOOR)
    out = tmp_path / "arm.h5"
    res = CliRunner().invoke(main, ["assemble", str(path), "--drag", "fore", "--point", "1", "0", "0", "--path",
                                    "line", "--to", "0.5", "-1", "0", "--frames", "11", "-o", str(out)])
    assert res.exit_code == 0, res.output
    a, b = load_trajectory(out).q.T
    centre = np.stack([np.cos(a) + np.cos(a + b), np.sin(a) + np.sin(a + b)], axis=1)
    assert np.abs(centre[:, 1] - (-0.5 + 0.1)).max() < 1e-10  # resting on the floor y = -0.5 every frame
    targets = np.linspace(centre[0], [0.5, -1.0], 11)
    assert np.abs(centre[:, 0] - targets[:, 0]).max() < 1e-9  # straight above each target
    # the floor cut to x >= 0.8: the ball's contact leaves the patch on the way to x = 0.5, named with its value
    path.write_text(ARM_ON_FLOOR.replace("[[[-3, -0.5, -1], [3, -0.5, -1]], [[-3, -0.5, 1], [3, -0.5, 1]]]",
                                         "[[[0.8, -0.5, -1], [3, -0.5, -1]], [[0.8, -0.5, 1], [3, -0.5, 1]]]"))
    bad = tmp_path / "bad.h5"
    res = CliRunner().invoke(main, ["assemble", str(path), "--drag", "fore", "--point", "1", "0", "0", "--path",
                                    "line", "--to", "0.5", "-1", "0", "--frames", "11", "-o", str(bad)])
    assert res.exit_code == 2
    assert re.search(r"surface contact 'foot': parameter v2 of surface 'floor' = -[0-9.e-]+ left the patch "
                     r"\[0.0, 1.0\]", " ".join(res.output.split())), res.output
    kept = load_trajectory(bad)  # the frames before the ball reached the edge x = 0.8 are kept
    x_kept = np.cos(kept.q[:, 0]) + np.cos(kept.q[:, 0] + kept.q[:, 1])
    assert len(kept.t) == int(np.sum(targets[:, 0] >= 0.8)) and x_kept.min() >= 0.8
