"""Every example model (examples/*.toml) opens in the viewer, live and from a run file: the live viewer is built
and the model stepped with the gizmo moved; a short run written by simulate() is played back; the two routes
agree on the bodies' poses at the initial state. A model with [[contacts]] is simulated with its rolling contacts
(kane.io.model_surfaces.rolling_dynamics): live, and played back from a run converted to joint coordinates."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import kane
from kane.io.model_file import load_model
from kane.io.model_surfaces import rolling_dynamics
from kane.io.trajectory import TrajectoryWriter
from kane.switching import switching_simulation
from kane.viz.live import LiveSimulation
from kane.viz.live_view import LiveViewer
from kane.simulate.rolling_run import rolling_run
from kane.viz.viewer import Viewer, ViewOptions, open_run

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))
SWITCHED = [p for p in EXAMPLES if "[[switching]]" in p.read_text()]  # run under their rules (kane.switching)


def _bowl_gap(q, params):
    """|ball centre - bowl centre| - (R - r) [m] of joint coordinates q (N, 7) of examples/ball_in_bowl.toml: the
    bowl's centre is (0, 0, R) (its lowest point at the origin), so a ball rolling in it keeps this at 0."""
    return np.linalg.norm(np.atleast_2d(q)[:, :3] - [0.0, 0.0, params["R"]], axis=1) - (params["R"] - params["r"])


def test_the_ball_stays_in_its_bowl_live_recorded_and_played_back(tmp_path):
    """The [[contacts]] example is simulated with its rolling contact (rolling_dynamics), not as a free ball
    falling through the bowl: live while the gizmo pulls it, in a live recording and in a run file played back."""
    path = EXAMPLES[0].with_name("ball_in_bowl.toml")
    live = LiveSimulation(load_model(path))
    assert live.rolling is not None and set(live.port.inputs) <= set(live.rolling.input_names)
    p = live.params
    assert abs(_bowl_gap(live.q0, p)[0]) < 1e-12
    live.device.move_to(live.home + [0.2, 0.3, 0.0])
    live.start_recording(tmp_path / "live.h5")
    live.advance(60)
    recorded = kane.load_trajectory(live.stop_recording())
    t, q, u = live.state
    assert q[1] > 0.1 and q[2] > live.q0[2]  # pulled towards the gizmo, up the bowl's side (not through it)
    assert abs(_bowl_gap(q, p)[0]) < 1e-6
    np.testing.assert_allclose(live.point(), q[:3], atol=1e-12)  # the coupled point: the ball's centre
    assert recorded.q_names == ("x", "y", "z", "e0", "e1", "e2", "e3") and recorded.n_samples == 61
    assert np.max(np.abs(_bowl_gap(recorded.q, p))) < 1e-6

    np.testing.assert_allclose(open_run(recorded.source).scene().position[:, 0], recorded.q[:, :3], atol=1e-12)

    run = rolling_run(rolling_dynamics(load_model(path)), (0.0, 0.5), tmp_path / "run.h5", params=p,
                      output_dt=0.05, description=f"ball_in_bowl ({path})")
    traj = kane.load_trajectory(run)
    scene = open_run(run).scene()  # as `kane view RUN.h5` opens it: the model named in the run
    playback = Viewer(scene, ViewOptions(port=8740))
    try:
        playback.show(len(scene.t) - 1)
    finally:
        playback.close()
    assert traj.n_samples == 11 and np.max(np.abs(_bowl_gap(traj.q, p))) < 1e-6
    np.testing.assert_allclose(scene.position[:, 0], traj.q[:, :3], atol=1e-12)
    assert traj.q[-1, 0] < traj.q[0, 0] - 0.05  # released up the side, it rolls down towards the bottom


def test_the_caster_lock_example_runs_its_rules_live_and_in_its_recording(tmp_path):
    """examples/shopping_cart_caster_lock.toml in the live viewer: the switching plant of kane realtime locks the
    caster's swivel at 2 s (w4 = 0 and q4 still while locked, the time shown with the mode) and unlocks it at 4 s;
    the recording holds the mode intervals and the events."""
    assert [p.stem for p in SWITCHED] == ["disk_on_ramp_held", "shopping_cart_caster_lock"]
    live = LiveSimulation(load_model(SWITCHED[1]))
    viewer = LiveViewer(live, ViewOptions(port=8750), record=tmp_path / "live.h5")
    try:
        viewer.pause.value = True  # the test steps the model itself
        live.device.move_to(live.home + [0.3, 0.1, 0.0])  # pull the basket forward and to the side
        live.start_recording(tmp_path / "live.h5")
        live.advance(int(round(2.5 / live.period)))
        viewer.show()
        assert live.mode == "caster_lock" and viewer.time.content == "t = 2.50 s, mode caster_lock"
        t, q, u = live._raw()
        assert u[live.dynamics.u_names.index("w4")] == 0.0
        q4 = q[live.dynamics.q_names.index("q4")]
        live.advance(int(round(2.0 / live.period)))
        t, q, u = live._raw()
        assert live.mode == "free" and abs(u[live.dynamics.u_names.index("w4")]) > 1e-6
        run = kane.load_trajectory(live.stop_recording())
    finally:
        viewer.close()
    assert [(e.kind, e.t) for e in run.events] == [("lock", 2.0), ("unlock", 4.0)]
    assert [m for _, _, m in run.modes] == ["free", "caster_lock", "free"]
    locked = (run.t > 2.0 + 1e-9) & (run.t < 4.0 - 1e-9)
    assert np.all(run.u[locked, run.u_names.index("w4")] == 0.0)
    np.testing.assert_allclose(run.q[locked, run.q_names.index("q4")], q4, rtol=0, atol=1e-12)
    assert run.events[0].data["delta_kinetic"] < 0  # the lock is a plastic impulse


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_example_opens_live_and_from_a_run_file(path, tmp_path):
    live = LiveSimulation(load_model(path))
    viewer = LiveViewer(live, ViewOptions(port=8720), record=tmp_path / "live.h5")
    try:
        viewer.pause.value = True  # the test steps the model itself
        start = viewer.scene
        live.device.move_to(live.home + 0.1 * start.length)
        live.advance(5)
        viewer.show()
        t, q, u = live.state
        assert t == pytest.approx(5 * live.period) and np.all(np.isfinite(q)) and np.all(np.isfinite(u))
        assert np.all(np.isfinite(live.point()))
    finally:
        viewer.close()

    dyn = live.dynamics
    q0, u0 = live.q0, live.u0
    if live.rolling is not None:  # [[contacts]]: the rolling dynamics' run, in joint coordinates
        rolling_run(rolling_dynamics(load_model(path)), (0.0, 0.05), tmp_path / "run.h5", params=live.params,
                    output_dt=0.01, description=f"{live.loaded.name} ({path})")
    elif live.switching is not None:  # [[switching]]: kane simulate's run, every speed kept
        lm = load_model(path)
        switching_simulation(lm, replace(lm.simulation, t_end=0.05, output_dt=0.01)).start(
            TrajectoryWriter(tmp_path / "run.h5"))
    else:
        kane.simulate.simulate(dyn, (0.0, 0.05), q0, u0, params=live.params, output_dt=0.01, path=tmp_path / "run.h5",
                               description=f"{live.loaded.name} ({path})")
    scene = open_run(tmp_path / "run.h5", path).scene()
    playback = Viewer(scene, ViewOptions(port=8730))
    try:
        playback.show(len(scene.t) - 1)
    finally:
        playback.close()
    assert scene.position.shape == (6, len(scene.bodies), 3) and np.all(np.isfinite(scene.position))
    if scene.forces is not None:  # the constraint forces drawn as arrows at finite points
        assert np.all(np.isfinite(scene.forces.force)) and np.all(np.isfinite(scene.forces.point))
    np.testing.assert_allclose(scene.position[0], start.position[0], atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(scene.wxyz[0] * start.wxyz[0], axis=1)), 1.0, atol=1e-12)
