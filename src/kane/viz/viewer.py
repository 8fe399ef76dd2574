"""The browser viewer of a run (``kane view RUN.h5``): a viser server (Python) whose three.js client draws the
scene of :mod:`kane.viz.scene` with +up against gravity, a time slider, play and pause, playback speed, the run's
energy (its deviation in a power of ten, so the ticks differ) and its monitors, one chart per kind with its unit
(constraint residuals, power [W], condition number), and the paths of chosen points (``--trace BODY:X,Y,Z``).

The run file records the model it came from: ``kane simulate`` writes ``description`` = "NAME (MODEL PATH)". The
viewer reads that path (relative to the working directory, else to the run file's directory) unless ``--model``
names the model file; a run written from Python (whose description names no file) needs ``--model``.

A data file never runs code: a model file (TOML) named in a run is read by the TOML reader alone; a Python script
named in a run is never run on the file's word. The user names it (``--model SCRIPT.py``), or says yes to the
question ``kane view`` asks on a terminal (``script_consent`` of :func:`open_run`); otherwise the run is refused
with a message saying how to pass ``--model``. (There is no view without the model: the bodies' poses come from
its kinematics.)
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import ArgumentError
from ..io.h5_probe import probe
from ..io.trajectory import load_trajectory
from .forces import ARROW_KINDS
from .guard import guarded_server
from .readable import monitor_panels, spread_of
from .scene import PALETTE, Scene, ShapeKind, build_scene, point_trace, scene_size
from .visuals import loaded_shapes, shape_mesh

__all__ = ["OpenedRun", "ViewOptions", "Viewer", "draw_scene", "add_shape", "model_path_of_run", "open_run"]


@dataclass(frozen=True)
class ViewOptions:
    """Where the server listens (``host``, localhost unless asked; ``port``, the next free one when it is taken)
    and the playback ``speed`` (simulated seconds per second) and frame rate ``fps`` [1/s]; ``traces``: the points
    whose paths are drawn, ((body, (x, y, z) [m] in body axes), ...)."""

    host: str = "127.0.0.1"
    port: int = 8080
    speed: float = 1.0
    fps: float = 30.0
    traces: tuple = ()


def model_path_of_run(run_path, description: str) -> Path:
    """The model file named in a run's ``description`` ("NAME (PATH)", as ``kane simulate`` writes it), found
    relative to the working directory or to the run file's directory; an :class:`ArgumentError` when none is."""
    match = re.search(r"\(([^()]+\.(?:toml|xml|urdf|py))\)\s*$", description or "", re.IGNORECASE)
    if match:
        for candidate in (Path(match.group(1)), Path(run_path).parent / match.group(1)):
            if candidate.is_file():
                return candidate
        raise ArgumentError(f"run {run_path}: its model file {match.group(1)} is not found; give it with --model")
    raise ArgumentError(f"run {run_path}: the run does not name its model file (description "
                        f"{description!r}); give the model with --model MODEL")


def _hex(rgb) -> str:
    return "#%02x%02x%02x" % tuple(rgb)


class OpenedRun(NamedTuple):
    """A run file and its model: the ``trajectory``, the ``equations`` derived with its independent speeds,
    the bodies' ``shapes`` (visuals, defaults for the rest: :func:`kane.viz.visuals.loaded_shapes`) and the
    ``loaded`` model (its input schedules drive the recomputed constraint forces)."""

    trajectory: object
    equations: object
    shapes: tuple
    loaded: object = None

    def scene(self) -> Scene:
        """The run's :class:`Scene` (:func:`kane.viz.scene.build_scene`), its constraint forces included."""
        dyn = inputs = None
        if getattr(self.loaded, "input_laws", None) and any(
                c.kind in ARROW_KINDS and not c.transient for c in self.equations.model.constraints):
            dyn = self.equations.compile("numpy")  # a few hundred calls: not worth a C compile
            inputs = self.loaded.input_function(dyn)
        return build_scene(self.equations, self.trajectory, self.shapes, inputs, dyn)


def _named_model(run_path, description: str, load_model, script_consent):
    """The model the run names (:func:`model_path_of_run`): a model file (TOML, MJCF, URDF) read as data; a script
    run by ``load_model`` only when ``script_consent(path)`` says yes, else an :class:`ArgumentError`."""
    from ..io.model_file import MODEL_DATA_SUFFIXES, load_model_data

    path = model_path_of_run(run_path, description)
    if path.suffix.lower() in MODEL_DATA_SUFFIXES:
        return load_model_data(path)
    if script_consent is not None and script_consent(path.resolve()):
        return load_model(path)
    raise ArgumentError(f"run {run_path}: it was made from the Python script {str(path.resolve())!r}, and kane "
                        f"never runs a script named in a data file; if you trust that script, view the run with "
                        f"--model {str(path)!r}")


def open_run(run_path, model_path=None, load_model=None, script_consent=None, collisions: bool = False) -> OpenedRun:
    """The :class:`OpenedRun` of the run file ``run_path`` and its model: ``model_path`` (the user's choice)
    loaded by ``load_model`` (path -> LoadedModel; default the TOML reader), else the model the run names, a model
    file read by the TOML reader, a script only when ``script_consent`` (resolved path -> bool; None: never) says
    yes (a data file never runs code on its own word). ``collisions`` also draws the model's collision shapes."""
    if load_model is None:
        from ..io.model_file import load_model
    probe(run_path)  # a damaged file that hangs or crashes the HDF5 library is refused by name (kane.io.h5_probe)
    traj = load_trajectory(run_path)
    if traj.n_samples == 0:
        raise ArgumentError(f"run {run_path}: it holds no samples")
    lm = (load_model(Path(model_path)) if model_path else
          _named_model(run_path, traj.description, load_model, script_consent))
    model = lm.system.compile()
    coordinates, speeds = [str(q) for q in model.q], [str(u) for u in model.u]
    if list(traj.q_names) != coordinates or not set(traj.u_names) <= set(speeds):
        raise ArgumentError(f"run {run_path}: its coordinates ({', '.join(traj.q_names)}) and speeds "
                            f"({', '.join(traj.u_names)}) are not those of model {lm.name!r} "
                            f"({', '.join(coordinates)}; {', '.join(speeds)}); is --model the model of this run?")
    dependent = [u for u in speeds if u not in traj.u_names]
    params = {k: v for k, v in traj.params.items() if k in {str(p) for p in model.parameters}} or None
    equations = lm.derive(dependent or None)
    independent = tuple(str(u) for u in equations.u_independent)
    if traj.u_names != independent:  # a switching run keeps every speed: the scene takes the independent ones
        traj = replace(traj, u=traj.u[:, [traj.u_names.index(n) for n in independent]], u_names=independent)
    return OpenedRun(traj, equations, loaded_shapes(lm, params, collisions=collisions), lm)


def draw_scene(server, scene: Scene) -> tuple[dict, list]:
    """Draw ``scene`` on the viser ``server``: up direction (the scene's and the initial camera's: against gravity,
    :attr:`kane.viz.scene.Scene.up`), camera aimed at the run's span, a ground grid, one
    frame per body (``/bodies/NAME``) carrying its shapes and joint frames. Returns (body name -> frame handle,
    shape handles)."""
    up = np.asarray(scene.up, dtype=float)
    server.scene.set_up_direction(scene.up)
    server.initial_camera.up = scene.up  # the camera's up too, not the client's default
    server.scene.configure_environment_map(hdri=None)  # plain lights: the image map takes seconds to render
    span = scene.position.reshape(-1, 3)
    centre = 0.5 * (span.min(axis=0) + span.max(axis=0))
    reach = float(np.ptp(span, axis=0).max()) + 2 * scene.length
    side = np.cross(up, [1.0, 0.0, 0.0] if abs(up[0]) < 0.9 else [0.0, 1.0, 0.0])
    server.initial_camera.look_at = tuple(centre)
    server.initial_camera.position = tuple(centre + reach * (0.9 * side + 0.4 * np.cross(side, up) + 0.6 * up))
    plane = ("yz", "xz", "xy")[int(np.argmax(np.abs(up)))]
    server.scene.add_grid("/grid", width=2 * reach, height=2 * reach, plane=plane,
                          position=tuple(centre * (1 - np.abs(up))))
    frames = {name: server.scene.add_frame(f"/bodies/{name}", axes_length=0.3 * scene.length,
                                           axes_radius=0.01 * scene.length) for name in scene.bodies}
    shapes = [add_shape(server, f"/bodies/{s.body}/shape_{i}", s) for i, s in enumerate(scene.shapes)]
    for f in scene.frames:
        root = "" if f.body == "ground" else f"/bodies/{f.body}"
        server.scene.add_frame(f"{root}/joint_{f.joint}_{f.which}", position=f.position, wxyz=f.wxyz,
                               axes_length=0.15 * scene.length, axes_radius=0.006 * scene.length)
    return frames, shapes


def add_shape(server, path: str, s):
    """Add the shape ``s`` (a :class:`kane.viz.scene.BodyShape`) at scene node ``path``; its handle."""
    if s.kind is ShapeKind.BOX:
        return server.scene.add_box(path, color=s.color, dimensions=s.size, position=s.position, wxyz=s.wxyz)
    if s.kind is ShapeKind.SPHERE:
        return server.scene.add_icosphere(path, radius=0.5 * s.size[0], color=s.color, position=s.position)
    vertices, faces = shape_mesh(s)
    return server.scene.add_mesh_simple(path, vertices, faces, color=s.color, position=s.position, wxyz=s.wxyz)


class Viewer:
    """A viser server showing ``scene``: body frames carrying their shapes and joint frames, a ground grid, a
    time slider, play/pause, a checkbox hiding the bodies, speed, the energy and monitor charts (``charts``:
    title -> handle), the paths of ``options.traces`` (``traces``: their (N, 3) [m] points) and the constraint
    forces as arrows at their contact points (``forces``, :meth:`force_points`). ``port`` is the port it listens
    on (the next free one after ``options.port`` when that is taken); :meth:`show` poses the bodies at a sample,
    :meth:`close` stops the server."""

    def __init__(self, scene: Scene, options: ViewOptions = ViewOptions()):
        self.scene, self.options = scene, options
        self.traces = [point_trace(scene, body, point) for body, point in options.traces]  # checked before serving
        served = guarded_server(options.host, options.port)  # only the printed URL's user gets in
        self.server = server = served.server
        self.port, self.url = served.port, served.url
        self._frames, self.shapes = draw_scene(server, scene)
        t = scene.t
        step = float(np.min(np.diff(t))) if len(t) > 1 else 1.0
        self.slider = server.gui.add_slider("time [s]", min=float(t[0]), max=float(t[-1]) if len(t) > 1 else
                                            float(t[0]) + 1.0, step=step, initial_value=float(t[0]))
        self.play = server.gui.add_checkbox("play", initial_value=False)
        self.bodies = server.gui.add_checkbox("bodies", initial_value=True)
        self.bodies.on_update(lambda _: self._show_bodies(self.bodies.value))
        self.speed = server.gui.add_number("speed", initial_value=options.speed, min=0.01, max=100.0, step=0.01)
        self.charts = self._add_charts() if len(t) > 1 else {}
        for k, ((body, point), path) in enumerate(zip(options.traces, self.traces)):
            color = PALETTE[(k + 3) % len(PALETTE)]
            server.scene.add_line_segments(f"/traces/{k}", np.stack([path[:-1], path[1:]], axis=1), colors=color,
                                           thickness=2.0, thickness_units="screen")
            server.scene.add_icosphere(f"/bodies/{body}/trace_{k}", radius=0.03 * scene.length, color=color,
                                       position=tuple(float(x) for x in point))
        self.forces = self._add_forces(scene.forces) if scene.forces is not None else None
        self.slider.on_update(lambda _: self.show(self.index(self.slider.value)))
        self.show(0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._playback, name="kane-view-playback", daemon=True)
        self._thread.start()

    def _add_charts(self) -> dict:
        """The energy chart (its spread readable: :func:`kane.viz.readable.spread_of`) and one chart per kind of
        monitor, each with its unit (:func:`kane.viz.readable.monitor_panels`); title -> uPlot handle."""
        import viser.uplot as uplot

        scene, charts = self.scene, {}
        time = (uplot.Series(label="t [s]"),)
        x_axis, time_axis = {"x": uplot.Scale(time=False)}, uplot.Axis(label="time t [s]")
        if scene.energy is not None:
            energy = spread_of(scene.energy, "energy", "J")
            charts["energy"] = self.server.gui.add_uplot(
                data=(scene.t, energy.values), series=(*time, uplot.Series(label=energy.label, stroke="red", width=2)),
                title=energy.label, scales=x_axis, axes=(time_axis, uplot.Axis(label=energy.label)), aspect=1.6)
        for panel in monitor_panels(scene.residuals):
            values = [np.abs(scene.residuals[n]) if panel.log else scene.residuals[n] for n in panel.names]
            scales = {**x_axis, "y": uplot.Scale(distr=3, log=10)} if panel.log else x_axis
            charts[panel.title] = self.server.gui.add_uplot(
                data=(scene.t, *values), series=(*time, *(
                    uplot.Series(label=n, stroke=_hex(PALETTE[k % len(PALETTE)]), width=2)
                    for k, n in enumerate(panel.names))),
                title=f"{panel.title}: {panel.ylabel}", scales=scales,
                axes=(time_axis, uplot.Axis(label=panel.ylabel)), aspect=1.6)
        return charts

    def index(self, time_s: float) -> int:
        """The sample nearest ``time_s`` [s]."""
        k = int(np.searchsorted(self.scene.t, time_s))
        if k > 0 and (k == len(self.scene.t) or time_s - self.scene.t[k - 1] <= self.scene.t[k] - time_s):
            k -= 1
        return k

    def _add_forces(self, forces):
        """The arrows of the constraint forces (``/forces``), drawn ``force_scale`` [m/N] x ``arrow_gain`` long:
        the largest force of the run 1.5 x the model's size (:func:`kane.viz.scene.scene_size`), their thickness
        a fraction of it; the bodies turn see-through while the arrows show (an arrow inside a body shows), a
        checkbox hides the arrows and a number lengthens them."""
        size = scene_size(self.scene)
        largest = float(np.nanmax(np.linalg.norm(forces.force, axis=-1), initial=0.0))
        self.force_scale = 1.5 * size / largest if largest > 0 else 0.0
        note = self.server.gui.add_markdown("")
        check = self.server.gui.add_checkbox("forces", initial_value=True)
        self.arrow_gain = self.server.gui.add_number("force arrows x", initial_value=1.0, min=0.01, max=1000.0,
                                                     step=0.01)
        r = 0.02 * size
        handle = self.server.scene.add_arrows("/forces", self.force_points(0), colors=(220, 20, 60),
                                              shaft_radius=r, head_radius=2.5 * r, head_length=5 * r)

        def describe():
            scale = self.force_scale * float(self.arrow_gain.value)
            note.content = f"constraint forces ({', '.join(forces.names)}): 1 m = {1 / scale if scale else 0:.4g} N"

        def lengthen(_):
            describe()
            self.show(self.current)

        def hide(_):
            handle.visible = bool(check.value)
            self._see_through(bool(check.value))

        check.on_update(hide)
        self.arrow_gain.on_update(lengthen)
        describe()
        self._see_through(True)
        return handle

    def _see_through(self, see: bool) -> None:
        """The bodies' shapes half see-through (``see``) or opaque."""
        with self.server.atomic():
            for shape in self.shapes:
                shape.opacity = 0.5 if see else 1.0

    def force_points(self, k: int) -> np.ndarray:
        """The arrows (k, 2, 3) [m] of the constraint forces at sample ``k``: from each contact point to the point
        plus ``force_scale`` x ``arrow_gain`` x the force."""
        f = self.scene.forces
        scale = float(self.arrow_gain.value) * self.force_scale
        tips = f.point[k] + scale * np.nan_to_num(f.force[k])  # an undefined (NaN) force: no arrow
        return np.stack([f.point[k], tips], axis=1).astype(np.float32)

    def show(self, k: int) -> None:
        """Pose every body, and the constraint-force arrows, as at sample ``k``."""
        with self.server.atomic():
            for i, name in enumerate(self.scene.bodies):
                self._frames[name].position = self.scene.position[k, i]
                self._frames[name].wxyz = self.scene.wxyz[k, i]
            if self.forces is not None:
                self.forces.points = self.force_points(k)
        self.current = k

    def _show_bodies(self, visible: bool) -> None:
        with self.server.atomic():
            for handle in self._frames.values():
                handle.visible = bool(visible)

    def _playback(self) -> None:
        t, period = self.scene.t, 1.0 / self.options.fps
        while not self._stop.wait(period):
            if self.play.value and len(t) > 1:
                now = self.slider.value + float(self.speed.value) * period
                self.slider.value = float(t[0]) if now > t[-1] else now

    def close(self) -> None:
        """Stop playback and the server."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.server.stop()

