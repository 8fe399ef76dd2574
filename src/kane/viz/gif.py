"""A run exported as an animated GIF (``kane view RUN.h5 --gif out.gif``), for papers and slides.

How the frames are made: the run is drawn by the browser viewer (:class:`kane.viz.viewer.Viewer`, three.js) in
Debian's headless Chromium (software WebGL); for each frame the time slider is set to the frame's time and the
page's three.js renders the 3D view alone (no side panel) on request, sent back as PNG (viser's ``get_render``:
:func:`kane.viz.screenshots.render_frames`); Pillow writes the frames as a looping GIF whose frame durations
replay the run at ``speed`` (simulated seconds per second).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from .screenshots import render_frames

__all__ = ["GifResult", "frame_times", "write_gif"]


@dataclass(frozen=True)
class GifResult:
    """The GIF written: its ``path``, the number of ``frames``, their ``times`` (frames,) [s] in the run and the
    ``frame_ms`` each is shown [ms]."""

    path: Path
    frames: int
    times: np.ndarray
    frame_ms: int


def frame_times(scene, frames: int, speed: float, what: str) -> np.ndarray:
    """The times (frames,) [s] of ``frames`` frames evenly spread over ``scene``'s run; an :class:`ArgumentError`
    prefixed ``what`` (the export's name) when ``frames`` is not an integer >= 2 or ``speed`` is not > 0."""
    if int(frames) != frames or frames < 2:
        raise ArgumentError(f"{what}: frames must be an integer >= 2, got {frames!r}")
    if not (np.isfinite(speed) and speed > 0):
        raise ArgumentError(f"{what}: speed must be > 0, got {speed!r}")
    return np.linspace(scene.t[0], scene.t[-1], int(frames))


def write_gif(scene, path, frames: int = 40, speed: float = 1.0, size=(800, 600), wait_s: float = 20.0,
              browser=None, progress=None) -> GifResult:
    """Write ``scene`` (a :class:`kane.viz.scene.Scene` of a run) as a GIF of ``frames`` frames evenly spread over
    the run to ``path``, played at ``speed``, each ``size`` (width, height) [px]; ``browser`` as for
    :func:`kane.viz.screenshots.render_frames`, ``progress(done, total)`` called after each frame."""
    from PIL import Image

    times = frame_times(scene, frames, speed, "gif")
    frame_ms = max(20, int(round(1000 * (times[1] - times[0]) / speed)))  # GIF players ignore less than 20 ms
    rendered = render_frames(scene, times, size, wait_s, False, browser, progress)
    images = [Image.fromarray(f.astype(np.uint8)) for f in rendered]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:], duration=frame_ms, loop=0)
    return GifResult(path, len(images), times, frame_ms)
