"""A run exported as an MP4 video (``kane view RUN.h5 --mp4 out.mp4``), for papers and talks.

The frames are those of the GIF (:mod:`kane.viz.gif`): the browser viewer drawn by Debian's headless Chromium, the
3D view rendered by the page's three.js at each frame's time (:func:`kane.viz.screenshots.render_frames`). They are
encoded as H.264 (yuv420p, what every player reads) by the ffmpeg binary that the imageio-ffmpeg wheel ships, at
the frame rate that replays the run at ``speed`` (simulated seconds per second).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ArgumentError
from .gif import frame_times
from .screenshots import render_frames

__all__ = ["Mp4Result", "write_mp4", "encode_mp4"]


@dataclass(frozen=True)
class Mp4Result:
    """The video written: its ``path``, the number of ``frames``, their ``times`` (frames,) [s] in the run, the
    frame rate ``fps`` [1/s] and the frame ``size`` (width, height) [px]."""

    path: Path
    frames: int
    times: np.ndarray
    fps: float
    size: tuple[int, int]


def write_mp4(scene, path, frames: int = 60, speed: float = 1.0, size=(800, 600), wait_s: float = 20.0,
              browser=None, progress=None) -> Mp4Result:
    """Write ``scene`` (a :class:`kane.viz.scene.Scene` of a run) as an H.264 MP4 of ``frames`` frames evenly
    spread over the run to ``path``, played at ``speed``, each ``size`` (width, height) [px], both even (the
    yuv420p pixel format halves the colour resolution); ``browser`` as for
    :func:`kane.viz.screenshots.render_frames`, ``progress(done, total)`` called after each frame."""
    times = frame_times(scene, frames, speed, "mp4")
    width, height = (int(s) for s in size)
    if width <= 0 or height <= 0 or width % 2 or height % 2:
        raise ArgumentError(f"mp4: the frame size must be two even positive numbers of pixels, got {size!r}")
    fps = float(speed) / float(times[1] - times[0])
    images = render_frames(scene, times, (width, height), wait_s, False, browser)
    return Mp4Result(encode_mp4(images, path, fps), len(images), times, fps, (width, height))


def encode_mp4(images, path, fps: float) -> Path:
    """Encode ``images`` ((h, w, 3) RGB 0-255 arrays, all of one even size) as an H.264 MP4 at ``fps`` [1/s] to
    ``path`` (its folder made); returns the path."""
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ArgumentError("mp4: the encoder is not installed; install it with pip install 'kane[video]' "
                            "(imageio-ffmpeg), or write a GIF with --gif") from None
    height, width = np.shape(images[0])[:2]
    if width % 2 or height % 2 or any(np.shape(im) != (height, width, 3) for im in images):
        raise ArgumentError(f"mp4: the frames must be (h, w, 3) of one even size, got {np.shape(images[0])}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = imageio_ffmpeg.write_frames(str(path), (width, height), fps=fps, codec="libx264", macro_block_size=1,
                                         output_params=["-frames:v", str(len(images))])
    writer.send(None)  # start ffmpeg
    try:
        for image in images:
            writer.send(np.ascontiguousarray(image, dtype=np.uint8))
    finally:
        writer.close()
    return path
