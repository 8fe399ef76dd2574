"""Screenshots of a run in the browser viewer (``make screenshots``): Debian's Chromium, headless, driven by
Playwright launched with ``executable_path`` set to the system Chromium (never Playwright's own download), draws
:class:`kane.viz.viewer.Viewer` at chosen times and writes one PNG per time.

    python -m kane.viz.screenshots out/cart.h5 -o out/ [--model MODEL] [--shots 3]
"""

from __future__ import annotations

import shutil
import time
from io import BytesIO
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from .scene import build_scene
from .viewer import Viewer, ViewOptions, open_run

__all__ = ["CHROMIUM_ARGS", "chromium_path", "launch_chromium", "wait_until", "pixels", "settled", "changed",
           "take_screenshots"]

# WebGL in software (SwiftShader) when there is no GPU, as on a CI machine
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
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise ArgumentError("screenshots: Debian's chromium is not installed (apt-get install -y chromium)")
    traj, eqs = open_run(run, model)
    viewer = Viewer(build_scene(eqs, traj), ViewOptions(port=8700))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p, path)
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            page.goto(viewer.url, timeout=wait_s * 1000)
            page.get_by_role("slider").wait_for(timeout=wait_s * 1000)
            for i, t in enumerate(np.linspace(traj.t[0], traj.t[-1], max(shots, 1))):
                viewer.slider.value = float(t)
                settled(page, wait_s=wait_s)
                written.append(out_dir / f"{Path(run).stem}_view_{i}.png")
                page.screenshot(path=str(written[-1]))
            browser.close()
    finally:
        viewer.close()
    return written


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="PNG screenshots of a run in the kane browser viewer.")
    parser.add_argument("run")
    parser.add_argument("-o", "--out", default="out")
    parser.add_argument("--model", default=None)
    parser.add_argument("--shots", type=int, default=3)
    args = parser.parse_args()
    for written in take_screenshots(args.run, args.out, args.model, args.shots):
        print(f"wrote {written}")
