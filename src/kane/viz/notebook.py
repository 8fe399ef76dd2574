"""The viewer in a Jupyter notebook cell: a run's scene recorded with viser's scene serializer (every pose update
with its time, at ``speed`` simulated seconds per second) and embedded as a self-contained HTML page that plays
it back, through viser's ``StateSerializer.show`` (an inline IFrame in Jupyter; a browser tab from a script).

    >>> from kane.viz.notebook import show_run
    >>> show_run("out/cart.h5")          # in a notebook cell
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from .viewer import Viewer, ViewOptions, open_run

__all__ = ["Recording", "record_scene", "show_run"]


@dataclass(frozen=True)
class Recording:
    """A recorded scene: ``html`` (a standalone page that plays it), its ``duration`` [s] of playback and the
    number of ``samples`` posed."""

    html: str
    duration: float
    samples: int


def _record(scene, speed: float):
    if not (np.isfinite(speed) and speed > 0):
        raise ArgumentError(f"notebook view: speed must be > 0, got {speed!r}")
    viewer = Viewer(scene, ViewOptions(port=8760))
    serializer = viewer.server.get_scene_serializer()
    for k in range(len(scene.t)):
        if k:
            serializer.insert_sleep(float(scene.t[k] - scene.t[k - 1]) / speed)
        viewer.show(k)
    return viewer, serializer


def record_scene(scene, speed: float = 1.0) -> Recording:
    """Record ``scene`` (a :class:`kane.viz.scene.Scene`) played at ``speed`` as a :class:`Recording`."""
    viewer, serializer = _record(scene, speed)
    try:
        return Recording(serializer.as_html(), float(scene.t[-1] - scene.t[0]) / speed, len(scene.t))
    finally:
        viewer.close()


def show_run(run, model=None, speed: float = 1.0, height: int = 400) -> None:
    """Show the run file ``run`` (its model found as :func:`kane.viz.viewer.open_run` finds it, or ``model``) in
    the current notebook cell, ``height`` [px] high, played at ``speed``."""
    viewer, serializer = _record(open_run(run, model).scene(), speed)
    try:
        serializer.show(height=height)
    finally:
        viewer.close()
