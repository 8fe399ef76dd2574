"""Live mode in a real browser: Debian's Chromium (headless, Playwright with ``executable_path``) opens the live
viewer of a puck on a table; the test drags the gizmo's x arrow with the mouse, where the client's own camera
projects it on the page, and checks from the simulation's state that the gizmo went along +x and the puck's
coupled point followed it."""

import numpy as np
import pytest

from kane.spatial import quaternion_to_rotation
from kane.viz.live import LiveSimulation
from kane.viz.live_view import LiveViewer
from kane.viz.screenshots import wait_until
from kane.viz.viewer import ViewOptions

from .test_live import puck

pytestmark = pytest.mark.browser

WAIT_S = 20.0


def _pixel(camera, point) -> np.ndarray:
    """Where the client's ``camera`` (viser: OpenCV axes, x right, y down, z forward; ``fov`` vertical [rad])
    draws ``point`` (3,) [m], in page pixels."""
    c = quaternion_to_rotation(np.asarray(camera.wxyz)).T @ (np.asarray(point) - np.asarray(camera.position))
    f = 0.5 * camera.image_height / np.tan(0.5 * camera.fov)
    return np.array([0.5 * camera.image_width + f * c[0] / c[2], 0.5 * camera.image_height + f * c[1] / c[2]])


def drag_x_arrow(page, camera, gizmo, scale: float) -> None:
    """Drag the gizmo at ``gizmo`` (3,) [m] by its x arrow (length ``scale`` [m]) with the page's mouse: press 0.6
    along the arrow as ``camera`` draws it, then move 120 pixels along it in ten steps and release."""
    a = _pixel(camera, gizmo)
    tip = _pixel(camera, np.asarray(gizmo) + [scale, 0.0, 0.0])  # the x arrow's end
    start, along = a + 0.6 * (tip - a), (tip - a) / np.linalg.norm(tip - a)
    page.mouse.move(*start)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(*(start + 12 * k * along))
    page.mouse.up()


def test_dragging_the_gizmo_with_the_mouse_pulls_the_body(chromium, tmp_path):
    live = LiveSimulation(puck())
    viewer = LiveViewer(live, ViewOptions(port=8710), record=tmp_path / "live.h5")
    try:
        page = chromium.new_page(viewport={"width": 800, "height": 600})
        try:
            page.goto(viewer.url, timeout=WAIT_S * 1000)
            page.get_by_role("checkbox", name="pause").wait_for(timeout=WAIT_S * 1000)
            client = wait_until(lambda: list(viewer.server.get_clients().values()), "the page", WAIT_S)[0]
            wait_until(lambda: client.camera.image_width > 0, "the page's camera", WAIT_S)
            x0, g0 = live.point(), live.device.position.copy()
            drag_x_arrow(page, client.camera, g0, viewer.gizmo_scale)
            moved = wait_until(lambda: np.linalg.norm(live.device.position - g0) > 0.05,
                               "the server to hear the drag", WAIT_S)
            last = [live.device.position.copy()]

            def still():  # unchanged over a 0.1 s poll: the drag's last update arrived
                now = live.device.position.copy()
                same, last[0] = np.array_equal(now, last[0]), now
                return same

            wait_until(still, "the gizmo to stop", WAIT_S)
            goal = last[0]
            d0 = np.linalg.norm(goal - x0)
            near = wait_until(lambda: np.linalg.norm(live.point() - goal) < 0.2 * d0, "the body to follow",
                              WAIT_S)
        finally:
            page.close()
    finally:
        viewer.close()
    assert moved and near
    step = goal - g0
    assert step[0] > 0.05 and abs(step[1]) < 1e-9 and abs(step[2]) < 1e-9  # along the dragged x arrow only
    x = live.point()
    assert (x - x0) @ step > 0.5 * step @ step  # the body went most of the way the gizmo went
