"""Screenshots of a run in the browser viewer (``make screenshots``): Debian's Chromium, headless, driven by
Playwright launched with ``executable_path`` set to the system Chromium (never Playwright's own download), draws
:class:`kane.viz.viewer.Viewer` at chosen times and writes one PNG per time.

    python -m kane.viz.screenshots out/cart.h5 -o out/ [--model MODEL] [--shots 3]
    python -m kane.viz.screenshots --urdf ur5 -o out/     # example-robot-data's UR5, its meshes, falling
"""

from __future__ import annotations

import shutil
import sysconfig
import threading
import time
from io import BytesIO
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from .scene import build_scene
from .viewer import Viewer, ViewOptions, open_run
from .visuals import loaded_shapes

__all__ = ["CHROMIUM_ARGS", "FrameProgress", "UR5", "chromium_path", "launch_chromium", "wait_until", "pixels",
           "settled", "changed", "take_screenshots", "urdf_screenshots", "shoot", "render_frames"]

# WebGL in software (SwiftShader) when there is no GPU, as on a CI machine
# example-robot-data's UR5, relative to the site-packages folder (the pip wheel lays it out under cmeel.prefix)
UR5 = "cmeel.prefix/share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf"
CHROMIUM_ARGS = ("--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--no-sandbox")


def chromium_path() -> str | None:
    """The system Chromium (Debian's ``chromium``), or None when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def launch_chromium(playwright, path: str):
    """A headless Chromium browser at ``path`` driven by ``playwright`` (a sync_playwright() context)."""
    return playwright.chromium.launch(executable_path=path, headless=True, args=list(CHROMIUM_ARGS))


def wait_until(condition, what: str, wait_s: float):
    """``condition()``'s first true value, polled every 0.1 s; a TimeoutError naming ``what`` after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(f"waited {wait_s:g} s for {what}")


def pixels(page, clip: dict | None = None) -> np.ndarray:
    """The page (or its ``clip`` rectangle {x, y, width, height} [px]) as an (h, w, 3) int array of RGB 0-255."""
    from PIL import Image

    return np.asarray(Image.open(BytesIO(page.screenshot(clip=clip))).convert("RGB")).astype(int)


def changed(a: np.ndarray, b: np.ndarray) -> int:
    """The number of pixels whose colour differs by more than 30 of 255 in some channel."""
    return int((np.abs(a - b).max(axis=2) > 30).sum())


def settled(page, clip: dict | None = None, previous: np.ndarray | None = None, wait_s: float = 20.0) -> np.ndarray:
    """The picture once two screenshots 0.2 s apart agree (and, given ``previous``, differ from it)."""
    last = [pixels(page, clip)]

    def same():
        time.sleep(0.2)
        now = pixels(page, clip)
        done = np.array_equal(now, last[0]) and (previous is None or changed(now, previous) > 0)
        last[0] = now
        return done

    wait_until(same, "the drawn scene to settle", wait_s)
    return last[0]


def take_screenshots(run, out_dir, model=None, shots: int = 3, size=(1000, 700), wait_s: float = 20.0) -> list:
    """Write ``shots`` PNGs of ``run`` in the viewer at times evenly spread over the run into ``out_dir``
    (``<run stem>_view_<i>.png``); returns their paths. An :class:`ArgumentError` when Chromium is missing."""
    return shoot(open_run(run, model).scene(), Path(run).stem, out_dir, shots, size, wait_s)


def urdf_screenshots(urdf, out_dir, shots: int = 3, t_end: float = 1.0, size=(1000, 700),
                     wait_s: float = 20.0, mesh_roots=()) -> list:
    """Screenshots of a robot read from the URDF file ``urdf`` (its ``<visual>`` meshes: :mod:`kane.viz.visuals`)
    falling from its zero pose under gravity for ``t_end`` [s]; the run is saved as ``<urdf stem>.h5`` in
    ``out_dir``, the PNGs as ``<urdf stem>_view_<i>.png``. ``urdf`` may be "ur5": example-robot-data's UR5.
    Meshes are read from the URDF's folder, its ROS package and ``mesh_roots`` only (:mod:`kane.viz.visuals`)."""
    import kane
    from ..io.model_file import LoadedModel
    from ..io.trajectory import TrajectoryWriter
    from ..io.urdf import load_urdf

    if str(urdf) == "ur5":
        urdf = Path(sysconfig.get_paths()["purelib"]) / UR5
    robot = load_urdf(urdf, massless="weld")
    loaded = LoadedModel.from_system(robot.system, path=urdf)
    equations = loaded.derive()
    dyn = equations.compile()
    q0, u0 = loaded.initial_state(dyn)
    run = Path(out_dir) / f"{Path(urdf).stem}.h5"
    options = kane.RunOptions(t_end=t_end, output_dt=t_end / 50, description=f"{loaded.name} ({urdf})")
    traj = kane.run(dyn, kane.State(q0, u0), options, TrajectoryWriter(run))
    return shoot(build_scene(equations, traj, loaded_shapes(loaded, mesh_roots=mesh_roots)), Path(urdf).stem, out_dir,
                 shots, size, wait_s)


def shoot(scene, stem: str, out_dir, shots: int = 3, size=(1000, 700), wait_s: float = 20.0) -> list:
    """Draw ``scene`` in the viewer in headless Chromium at ``shots`` times evenly spread over it and write
    ``<stem>_view_<i>.png`` into ``out_dir``; returns their paths."""
    from PIL import Image

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    times = np.linspace(scene.t[0], scene.t[-1], max(shots, 1))
    for i, frame in enumerate(render_frames(scene, times, size, wait_s)):
        written.append(out_dir / f"{stem}_view_{i}.png")
        Image.fromarray(frame.astype(np.uint8)).save(written[-1])
    return written


class FrameProgress:
    """A progress line for a long render: ``progress(done, total)`` after each frame writes "rendering frames:
    DONE of TOTAL (P %), S s" through ``write`` (a function of one line) for the first frame, the last, and at most
    every ``every_s`` [s] of ``clock`` (seconds) between; safe to call from several threads."""

    def __init__(self, write, every_s: float = 3.0, clock=time.monotonic):
        self._write, self._every, self._clock = write, float(every_s), clock
        self._lock = threading.Lock()
        self._start = self._last = None

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            now = self._clock()
            if self._start is None:
                self._start = now
            if done not in (1, total) and self._last is not None and now - self._last < self._every:
                return
            self._last = now
            self._write(f"rendering frames: {done} of {total} ({100 * done / total:.0f} %), "
                        f"{now - self._start:.0f} s")


def render_frames(scene, times, size=(1000, 700), wait_s: float = 20.0, page_only: bool = True,
                  browser=None, progress=None) -> list:
    """The viewer of ``scene`` drawn by headless Chromium at each of ``times`` [s] (the time slider set there):
    (h, w, 3) RGB 0-255 arrays, (w, h) = ``size`` [px]. ``page_only``: the whole page (side panel included) once
    the picture has settled; otherwise the 3D view alone, rendered by the page's three.js on request
    (viser's ``get_render``, PNG). ``browser``: a Playwright browser to open the page in (one launched by
    :func:`launch_chromium`, shared by several calls); by default Debian's Chromium is launched for the call.
    ``progress(done, total)``: called after each frame (e.g. a :class:`FrameProgress`)."""
    if browser is not None:
        return _render(scene, times, size, wait_s, page_only, browser, progress)
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise ArgumentError("screenshots: Debian's chromium is not installed (apt-get install -y chromium)")
    with sync_playwright() as p:
        browser = launch_chromium(p, path)
        try:
            return _render(scene, times, size, wait_s, page_only, browser, progress)
        finally:
            browser.close()


def _render(scene, times, size, wait_s, page_only, browser, progress=None) -> list:
    viewer = Viewer(scene, ViewOptions(port=8700))
    frames = []
    page = None
    try:
        page = browser.new_page(viewport={"width": size[0], "height": size[1]})
        page.goto(viewer.url, timeout=wait_s * 1000)
        page.get_by_role("slider").wait_for(timeout=wait_s * 1000)
        client = wait_until(lambda: list(viewer.server.get_clients().values()), "the page", wait_s)[0]
        if not page_only:  # the page's camera in place and two renders alike: the first frame is like the rest
            wait_until(lambda: client.camera.image_width > 0, "the page's camera", wait_s)
            last = [None]

            def steady():
                now = client.get_render(size[1], size[0], transport_format="png", timeout=wait_s)
                same, last[0] = last[0] is not None and np.array_equal(now, last[0]), now
                return same

            wait_until(steady, "the first render to settle", wait_s)
        for t in times:
            viewer.slider.value = float(t)
            viewer.show(viewer.index(float(t)))
            if page_only:
                frames.append(settled(page, wait_s=wait_s))
            else:
                rgba = client.get_render(size[1], size[0], transport_format="png", timeout=wait_s)
                alpha = rgba[..., 3:4] / 255.0  # the empty background is transparent: white there
                frames.append(np.rint(rgba[..., :3] * alpha + 255 * (1 - alpha)).astype(int))
            if progress is not None:
                progress(len(frames), len(times))
    finally:
        if page is not None:
            page.close()
        viewer.close()
    return frames


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="PNG screenshots of a run, or of a robot from a URDF, in the kane "
                                                 "browser viewer.")
    parser.add_argument("run", nargs="?", help="a run file (from kane simulate)")
    parser.add_argument("-o", "--out", default="out")
    parser.add_argument("--model", default=None)
    parser.add_argument("--urdf", default=None, help="a URDF file, or ur5 (example-robot-data's), instead of a run")
    parser.add_argument("--shots", type=int, default=3)
    parser.add_argument("--mesh-root", action="append", default=[], metavar="DIR",
                        help="a folder the URDF's meshes may also be read from (repeatable; by default only the "
                             "URDF's folder and its ROS package)")
    args = parser.parse_args()
    if args.urdf:
        written = urdf_screenshots(args.urdf, args.out, args.shots, mesh_roots=args.mesh_root)
    else:
        written = take_screenshots(args.run, args.out, args.model, args.shots)
    for w in written:
        print(f"wrote {w}")
