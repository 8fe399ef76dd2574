"""The browser side of live mode (``kane view MODEL.toml --live``): a viser server drawing the
:class:`kane.viz.live.LiveSimulation` as it runs, with the drag gizmo (viser's transform controls, translation
only) at the handle of its :class:`kane.viz.live.GizmoDevice`, a line from the coupled body point to the gizmo,
and a side panel: pause, reset, record (to an HDF5 run file), one slider per parameter, and the time. The paths of
the points of ``options.traces`` are drawn over the last :data:`TRAIL` frames shown.

A thread advances the simulation in real time: at ``fps`` frames per second it runs the coupler periods due since
the last frame (at most 0.1 s of them, so a slow model runs slower than real time rather than falling behind
without end) and poses the bodies. A failure of the simulation pauses it and shows the message in the panel.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from pathlib import Path

import numpy as np

from ..analysis.kinematic_outputs import kinematic_outputs
from ..errors import KaneError
from .guard import guarded_server
from .live import LiveSimulation
from ..spatial import quaternion_to_rotation
from .scene import PALETTE, point_trace, poses_at, state_scene
from .viewer import ViewOptions, draw_scene
from .visuals import loaded_shapes

__all__ = ["TRAIL", "LiveViewer"]

TRAIL = 600  # the frames a live trace keeps (20 s at 30 frames per second)


class LiveViewer:
    """A viser server showing ``live`` (a :class:`LiveSimulation`); ``record`` is the run file the record
    checkbox writes. ``gizmo`` is the transform-controls handle, ``port`` the port served, :meth:`close` stops
    the thread and the server."""

    def __init__(self, live: LiveSimulation, options: ViewOptions = ViewOptions(), record="live.h5"):
        self.live, self.options, self.record_path = live, options, Path(record)
        t, q, u = live.state
        scene = state_scene(live.equations, t, q, u, live.params, loaded_shapes(live.loaded, live.params))
        self.scene = scene
        starts = [point_trace(scene, body, point)[0] for body, point in options.traces]  # checked before serving
        served = guarded_server(options.host, options.port)  # only the printed URL's user gets in
        self.server = server = served.server
        self.port, self.url = served.port, served.url
        self._frames, self.shapes = draw_scene(server, scene)
        self._outputs = kinematic_outputs(live.equations)
        port = live.port
        server.scene.add_icosphere(f"/bodies/{port.body}/coupled_point", radius=0.04 * scene.length,
                                   color=(240, 200, 40), position=port.point)
        home = live.home
        self.gizmo_scale = 0.6 * scene.length  # [m] the length of the gizmo's arrows
        self.gizmo = server.scene.add_transform_controls("/gizmo", scale=self.gizmo_scale, position=tuple(home),
                                                         disable_rotations=True, depth_test=False)
        self.gizmo.on_update(lambda _: live.device.move_to(self.gizmo.position))
        self._spring = server.scene.add_line_segments("/spring", points=np.array([[home, home]]),
                                                      colors=(240, 200, 40), thickness=2.0,
                                                      thickness_units="screen")
        self.pause = server.gui.add_checkbox("pause", initial_value=False)
        self.reset = server.gui.add_button("reset")
        self.reset.on_click(lambda _: self._reset())
        self.record = server.gui.add_checkbox("record", initial_value=False, hint=f"write {self.record_path}")
        self.record.on_update(lambda _: self._record(self.record.value))
        self.time = server.gui.add_markdown("t = 0 s")
        self.sliders = {}
        if live.params:
            with server.gui.add_folder("parameters"):
                for name, value in live.params.items():
                    span = abs(value) if value else 1.0
                    lo = 0.0 if value > 0 else value - span
                    slider = server.gui.add_slider(name, min=lo, max=value + span, step=span / 100,
                                                   initial_value=value)
                    slider.on_update(lambda event, n=name: self._set(n, event.target.value))
                    self.sliders[name] = slider
        self.message = server.gui.add_markdown("")
        self.trails, self._trail_lines = [], []
        for k, ((body, point), start) in enumerate(zip(options.traces, starts)):
            color = PALETTE[(k + 3) % len(PALETTE)]
            self.trails.append(deque([start], maxlen=TRAIL))
            self._trail_lines.append(server.scene.add_line_segments(
                f"/traces/{k}", np.array([[start, start]]), colors=color, thickness=2.0, thickness_units="screen"))
            server.scene.add_icosphere(f"/bodies/{body}/trace_{k}", radius=0.03 * scene.length, color=color,
                                       position=tuple(float(x) for x in point))
        self.frames_shown = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kane-view-live", daemon=True)
        self._thread.start()

    def _say(self, text: str) -> None:
        self.message.content = text

    def _reset(self) -> None:
        self.live.reset()
        self.record.value = False
        self.gizmo.position = tuple(self.live.home)
        for trail in self.trails:
            trail.clear()
        self._say("")

    def _record(self, on: bool) -> None:
        if on and self.live.recording is None:
            self.live.start_recording(self.record_path)
            self._say(f"recording to {self.record_path}")
        elif not on and self.live.recording is not None:
            self._say(f"recorded {self.live.stop_recording()}")

    def _set(self, name: str, value: float) -> None:
        try:
            self.live.set_parameter(name, value)
            self.record.value = False
        except KaneError as exc:
            self._say(f"parameter {name}: {exc}")

    def show(self) -> None:
        """Pose the bodies, the spring line and the traces at the simulation's current state."""
        t, q, u = self.live.state
        position, wxyz = poses_at(self._outputs, t, q, u, self.live.params)
        point = self.live.point()
        with self.server.atomic():
            for i, name in enumerate(self.scene.bodies):
                self._frames[name].position = position[i]
                self._frames[name].wxyz = wxyz[i]
            self._spring.points = np.array([[point, self.live.device.position]])
            for (body, p), trail, line in zip(self.options.traces, self.trails, self._trail_lines):
                i = self.scene.bodies.index(body)
                trail.append(position[i] + quaternion_to_rotation(wxyz[i]) @ np.asarray(p, dtype=float))
                path = np.array(trail if len(trail) > 1 else [trail[0], trail[0]])
                line.points = np.stack([path[:-1], path[1:]], axis=1)
            mode = self.live.mode
            self.time.content = f"t = {t:.2f} s" + ("" if mode is None else f", mode {mode}")
        self.frames_shown += 1

    def _run(self) -> None:
        period, frame = self.live.period, 1.0 / self.options.fps
        last, owed = time.perf_counter(), 0.0
        while not self._stop.wait(frame):
            now = time.perf_counter()
            owed, last = min(owed + now - last, 0.1), now
            if self.pause.value:
                owed = 0.0
                continue
            n = int(owed / period)
            owed -= n * period
            try:
                self.live.advance(n)
            except KaneError as exc:
                self.pause.value = True
                self._say(f"paused: {exc}")
            self.show()

    def close(self) -> None:
        """Stop the simulation thread (closing a recording) and the server."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.live.stop_recording()
        self.server.stop()
