"""`kane view` in a real browser: Debian's Chromium (headless, driven by Playwright with ``executable_path`` set to
the system Chromium; never Playwright's own download) opens the viewer on a shopping-cart run; the screenshot
differs from the empty scene where the bodies are drawn, and moving the time slider in the page moves them."""

import numpy as np
import pytest

from kane.viz.screenshots import changed, chromium_path, launch_chromium, settled, wait_until
from kane.viz.viewer import Viewer, ViewOptions, open_run

pytestmark = pytest.mark.browser

CLIP = {"x": 0, "y": 150, "width": 460, "height": 450}  # the 3D view below the notice, left of the panel [px]
WAIT_S = 20.0  # bounded waits, generous for a loaded 2-core machine


def _chromium() -> str:
    path = chromium_path()
    if path is None:
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium (.ci/run and `make install` "
                    "install it); the browser tests are never skipped")
    return path


@pytest.fixture(scope="module")
def viewer(make_cart_run):
    run = make_cart_run(2.0, 0.02)
    v = Viewer(open_run(run).scene(), ViewOptions(port=8690))  # the model found from the path the run records
    yield v
    v.close()


def test_the_cart_is_drawn_and_the_time_slider_moves_it(viewer):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p, _chromium())
        try:
            page = browser.new_page(viewport={"width": 800, "height": 600})
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
        finally:
            browser.close()
    assert viewer.slider.value == pytest.approx(viewer.scene.t[-1])
    assert np.linalg.norm(viewer.scene.position[-1, 0] - viewer.scene.position[0, 0]) > 0.1  # the cart went
    assert changed(again, moved) > 2000, "the drawn pose did not change with the time slider"


def test_a_run_exported_as_a_gif(make_cart_run, tmp_path):
    from PIL import Image

    from kane.viz.gif import write_gif

    _chromium()
    scene = open_run(make_cart_run(2.0, 0.1)).scene()
    done = write_gif(scene, tmp_path / "cart.gif", frames=3, speed=2.0, size=(400, 300), wait_s=WAIT_S)
    assert done.frames == 3 and done.frame_ms == 500  # 1 s of the run between frames, played twice as fast
    with Image.open(done.path) as gif:
        assert gif.n_frames == 3 and gif.size == (400, 300) and gif.info["duration"] == 500
        first = np.asarray(gif.convert("RGB")).astype(int)
        gif.seek(2)
        last = np.asarray(gif.convert("RGB")).astype(int)
    assert changed(first, last) > 500, "the cart does not move between the first and the last frame"
