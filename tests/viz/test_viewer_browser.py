"""`kane view` in a real browser: Debian's Chromium (headless, driven by Playwright with ``executable_path`` set to
the system Chromium; never Playwright's own download) opens the viewer on a shopping-cart run; the screenshot
differs from the empty scene where the bodies are drawn, moving the time slider in the page moves them, and the
wheels' constraint-force arrows are drawn (hiding them changes the picture). One browser serves the module."""

import numpy as np
import pytest

from kane.viz.screenshots import changed, settled, wait_until
from kane.viz.viewer import Viewer, ViewOptions, open_run

pytestmark = pytest.mark.browser

CLIP = {"x": 0, "y": 150, "width": 850, "height": 450}  # the 3D view below the notice, left of the panel [px]
WAIT_S = 20.0  # bounded waits, generous for a loaded 2-core machine


@pytest.fixture(scope="module")
def cart_scene(make_cart_run):
    return open_run(make_cart_run(2.0, 0.1)).scene()  # the model found from the path the run records


def test_the_cart_is_drawn_and_the_time_slider_moves_it(cart_scene, chromium):
    viewer = Viewer(cart_scene, ViewOptions(port=8690))
    try:
        page = chromium.new_page(viewport={"width": 1200, "height": 600})  # the wheels' arrows clear of the panel
        try:
            page.goto(viewer.url, timeout=WAIT_S * 1000)
            slider = page.get_by_role("slider")
            slider.wait_for(timeout=WAIT_S * 1000)  # the panel arrived over the websocket
            wait_until(lambda: viewer.server.get_clients(), "the page to connect", WAIT_S)
            drawn = settled(page, CLIP, wait_s=WAIT_S)
            page.get_by_role("checkbox", name="bodies").click()
            wait_until(lambda: viewer.bodies.value is False, "the server to hear the checkbox", WAIT_S)
            empty = settled(page, CLIP, drawn, WAIT_S)
            assert changed(drawn, empty) > 2000, "the bodies are not drawn"
            page.get_by_role("checkbox", name="bodies").click()
            again = settled(page, CLIP, empty, WAIT_S)
            assert changed(drawn, again) < 50  # the same picture back

            slider.focus()
            page.keyboard.press("End")  # move the time slider to the run's end, in the page
            last = len(viewer.scene.t) - 1
            wait_until(lambda: viewer.current == last, "the slider to reach the last sample", WAIT_S)
            moved = settled(page, CLIP, again, WAIT_S)
            at_end = viewer.slider.value

            k = int(np.argmax(np.linalg.norm(cart_scene.forces.force[:, 0], axis=1)))  # the largest wheel force
            viewer.slider.value = float(cart_scene.t[k])
            wait_until(lambda: viewer.current == k, "the slider to reach the largest force", WAIT_S)
            pushed = settled(page, CLIP, moved, WAIT_S)
            page.get_by_role("checkbox", name="forces").click()
            wait_until(lambda: viewer.forces.visible is False, "the server to hear the forces checkbox", WAIT_S)
            bare = settled(page, CLIP, pushed, WAIT_S)
        finally:
            page.close()
    finally:
        viewer.close()
    assert at_end == pytest.approx(viewer.scene.t[-1])
    assert np.linalg.norm(viewer.scene.position[-1, 0] - viewer.scene.position[0, 0]) > 0.1  # the cart went
    assert changed(again, moved) > 2000, "the drawn pose did not change with the time slider"
    assert changed(pushed, bare) > 300, "the wheels' constraint-force arrows are not drawn"


def test_a_run_exported_as_a_gif_and_its_frames_as_an_mp4(cart_scene, chromium, tmp_path):
    import imageio_ffmpeg
    from PIL import Image

    from kane.viz.gif import write_gif
    from kane.viz.mp4 import encode_mp4

    reported = []
    done = write_gif(cart_scene, tmp_path / "cart.gif", frames=3, speed=2.0, size=(320, 240), wait_s=WAIT_S,
                     browser=chromium, progress=lambda k, n: reported.append((k, n)))
    assert reported == [(1, 3), (2, 3), (3, 3)]  # progress after every frame
    assert done.frames == 3 and done.frame_ms == 500  # 1 s of the run between frames, played twice as fast
    with Image.open(done.path) as gif:
        assert gif.n_frames == 3 and gif.size == (320, 240) and gif.info["duration"] == 500
        frames = []
        for k in range(3):
            gif.seek(k)
            frames.append(np.asarray(gif.convert("RGB")).astype(int))
    assert changed(frames[0], frames[-1]) > 300, "the cart does not move between the first and the last frame"

    # the MP4 export encodes the same rendered frames (write_mp4 = render_frames + encode_mp4): read back
    mp4 = encode_mp4(frames, tmp_path / "cart.mp4", fps=2.0)
    reader = imageio_ffmpeg.read_frames(str(mp4))
    meta = next(reader)
    video = [np.frombuffer(f, dtype=np.uint8).reshape(240, 320, 3).astype(int) for f in reader]
    assert meta["size"] == (320, 240) and meta["fps"] == pytest.approx(2.0) and len(video) == 3
    for picture, drawn in zip(video, frames):  # lossy, but the same pictures: a few levels of 255 on average
        assert np.mean(np.abs(picture - drawn)) < 4.0 and changed(picture, drawn) < 0.02 * picture.size / 3


def test_kane_view_mp4_checks_its_frames_before_drawing(make_cart_run, tmp_path):
    from click.testing import CliRunner

    from kane.cli import main

    result = CliRunner().invoke(main, ["view", str(make_cart_run(0.2, 0.1)), "--mp4", str(tmp_path / "a.mp4"),
                                       "--frames", "1"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and lines == ["error: mp4: frames must be an integer >= 2, got 1"], result.output
    assert not (tmp_path / "a.mp4").exists()


@pytest.mark.parametrize("gravity, up", [((0, -9.81, 0), (0, 1, 0)), ((0, 0, -9.81), (0, 0, 1))])
def test_the_browsers_camera_is_up_against_gravity(chromium, gravity, up):
    """The camera up that the page itself reports (viser's per-client camera state, sent by three.js)."""
    import kane
    from kane import joints as J
    from kane.viz.scene import state_scene

    s = kane.System("bar", gravity=gravity)
    s.add_body("bar", mass=1.0, com=(0.5, 0, 0), inertia=(0.001, 0.08, 0.081))
    s.add_joint("ground", "bar", J.Revolute("z"), name="pin", coordinates=["th"], speeds=["w"])
    viewer = Viewer(state_scene(kane.derive(s), 0.0, [0.3], [0.0]), ViewOptions(port=8695))
    try:
        page = chromium.new_page(viewport={"width": 800, "height": 600})
        try:
            page.goto(viewer.url, timeout=WAIT_S * 1000)
            client = wait_until(lambda: next(iter(viewer.server.get_clients().values()), None),
                                "the page to connect", WAIT_S)
            def unit_up():
                v = np.asarray(client.camera.up_direction, dtype=float)
                return v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else v

            # the page reports its camera first with three.js's default up, then with the scene's once it applied
            # it: wait for the one expected (a page that never applies it times out and fails below)
            try:
                wait_until(lambda: np.allclose(unit_up(), up, atol=1e-6), "the page's camera up", WAIT_S)
            except TimeoutError:
                pass
            camera_up = unit_up()
        finally:
            page.close()
    finally:
        viewer.close()
    np.testing.assert_allclose(camera_up / np.linalg.norm(camera_up), up, atol=1e-6)


FILL_TEXT = """
window.__drawn = [];
const fill = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
  const m = this.getTransform();
  window.__drawn.push([String(text), Math.round(m.a * x + m.c * y + m.e), Math.round(m.b * x + m.d * y + m.f),
                       this.canvas.width]);
  return fill.call(this, text, x, y, ...rest);
};
"""


def test_the_energy_charts_tick_labels_differ_in_the_page(chromium):
    """The energy of a bar conserved to ~1e-9 of its 4.689 J: the texts uPlot draws on its canvas (fillText,
    recorded in the page) at one axis position are all different, the axis's label names the offset."""
    import kane
    from kane import joints as J
    from kane.simulate.run import RunOptions, State, run
    from kane.viz.scene import build_scene

    s = kane.System("bar", gravity=(0, -9.81, 0))
    s.add_body("bar", mass=1.0, com=(0.5, 0, 0), inertia=(0.1**2 / 12, 1 / 12, 1.01 / 12))
    s.add_joint("ground", "bar", J.Revolute("z"), name="pin", coordinates=["th"], speeds=["w"])
    eqs = kane.derive(s)
    traj = run(eqs.compile(), State([0.0], [np.sqrt(2 * 4.689 / (1.01 / 12 + 0.25))]),
               RunOptions(t_end=0.5, rtol=1e-8, atol=1e-10, output_dt=0.01))
    assert 1e-10 < np.ptp(traj.energy) / 4.689 < 1e-7
    viewer = Viewer(build_scene(eqs, traj), ViewOptions(port=8696))
    try:
        page = chromium.new_page(viewport={"width": 1200, "height": 800})
        try:
            page.add_init_script(FILL_TEXT)
            page.goto(viewer.url, timeout=WAIT_S * 1000)
            page.get_by_role("slider").wait_for(timeout=WAIT_S * 1000)
            label = viewer.charts["energy"].title
            wait_until(lambda: any(d[0] == label for d in page.evaluate("window.__drawn")), "the energy chart",
                       WAIT_S)
            drawn = page.evaluate("window.__drawn")
        finally:
            page.close()
    finally:
        viewer.close()
    columns = {}  # the texts drawn at one x: a y axis's tick labels, one per height
    for text, x, y, _ in drawn:
        columns.setdefault(x, {})[y] = text
    ticks = max(columns.values(), key=len)
    assert len(ticks) >= 2 and len(set(ticks.values())) == len(ticks), ticks
