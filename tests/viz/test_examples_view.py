"""Every example model (examples/*.toml) opens in the viewer, live and from a run file: the live viewer is built
and the model stepped with the gizmo moved; a short run written by simulate() is played back; the two routes
agree on the bodies' poses at the initial state."""

from pathlib import Path

import numpy as np
import pytest

import kane
from kane.io.model_file import load_model
from kane.viz.live import LiveSimulation
from kane.viz.live_view import LiveViewer
from kane.viz.scene import build_scene
from kane.viz.viewer import Viewer, ViewOptions

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))


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
    kane.simulate(dyn, (0.0, 0.05), q0, u0, params=live.params, output_dt=0.01, path=tmp_path / "run.h5",
                  description=f"{live.loaded.name} ({path})")
    scene = build_scene(live.equations, kane.load_trajectory(tmp_path / "run.h5"), start.shapes)
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
