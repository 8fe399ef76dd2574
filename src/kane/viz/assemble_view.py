"""Assembly with the user in the loop in the browser (seed 003; ``kane view MODEL.toml --assemble PART``): the model
drawn in its assembled configuration, a transform gizmo (translation only) at a point of PART, and on every move of
the gizmo one :class:`kane.simulate.drag.DragSolver` frame toward it from the previous frame's configuration
(joints, loop closures and the model file's surface contacts held exactly, the gizmo a soft target), the bodies
redrawn at the new q. The side panel shows the constraint residual max |C| [m], the distance from the part's point
to the gizmo [m] and whether the gizmo is within reach (beyond reach: the nearest configuration, and how far it
is); a button writes the frames since the last reset to HDF5 (:class:`kane.io.trajectory.TrajectoryWriter`,
t = frame number, as ``kane assemble`` writes them) and resets, another only resets.

:class:`AssembleSession` is the part without a browser (what the gizmo's callback calls, and what tests drive);
:class:`AssembleViewer` is the viser server around it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..analysis.kinematic_outputs import kinematic_outputs
from ..errors import ArgumentError, KaneError
from ..io.trajectory import TrajectoryWriter
from ..realtime.command import parse_couple
from ..simulate.drag import DragOptions, DragResult, DragSolver, Target
from ..simulate.drag_command import surface_contacts
from .guard import guarded_server
from .scene import poses_at, state_scene
from .viewer import ViewOptions, draw_scene
from .visuals import loaded_shapes

__all__ = ["AssembleFrame", "AssembleSession", "AssembleViewer", "status_text"]


@dataclass(frozen=True)
class AssembleFrame:
    """One drag frame: the gizmo's ``target`` (3,) [m, ground axes] and the solver's ``result``."""

    target: np.ndarray
    result: DragResult


def status_text(result: DragResult) -> str:
    """The panel's text for one frame: residual [m], distance to the target [m], reachable or not."""
    reach = "reachable" if result.reachable else "**out of reach**: nearest configuration shown"
    return (f"residual {result.residual:.3g} m  \ndistance to target {result.distance:.6g} m  \n{reach}  \n"
            f"{result.iterations} iterations")


class AssembleSession:
    """Drag assembly of ``loaded`` (a :class:`kane.io.model_file.LoadedModel`): ``part`` is "BODY" (its origin) or
    "BODY:X,Y,Z" (a point in body axes [m]). The model is assembled from its q0 on construction (``q``, ``home``
    the part's point there [m, ground axes]); :meth:`move_to` runs one frame toward a gizmo position,
    :meth:`reset` returns to the assembled start, :meth:`save` writes the frames. Thread-safe (the GUI calls it)."""

    def __init__(self, loaded, part: str, options: DragOptions = DragOptions()):
        self.loaded = loaded
        try:
            self.body, self.point = parse_couple(part)
        except ArgumentError as exc:
            raise ArgumentError(str(exc).replace("--couple", "--assemble", 1)) from None
        self.equations = loaded.derive()
        self.dynamics = dyn = self.equations.compile()
        bodies = [b.name for b in dyn.model.bodies]
        if self.body not in bodies:
            raise ArgumentError(f"--assemble {part!r}: model {loaded.name!r} has no body {self.body!r}; bodies: "
                                f"{', '.join(bodies)}")
        self.params = {k: float(v) for k, v in loaded.parameters.items()}
        self.solver = DragSolver(dyn, [Target(self.body, tuple(self.point))], options, params=self.params,
                                 contacts=surface_contacts(loaded))
        q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names], dtype=float)
        self._u = np.zeros(len(dyn.u_names))
        self._outputs = kinematic_outputs(self.equations)
        self._lock = threading.RLock()
        self.start = self.solver.solve(q0)
        self.home = self.solver.positions(0.0, self.start.q)[0]
        self.reset()

    def reset(self) -> None:
        """Back to the assembled start, the target at ``home``, the frames forgotten."""
        with self._lock:
            self.solver.move(0, position=self.home)
            self.q, self.last, self.frames = self.start.q.copy(), self.start, []

    def move_to(self, position) -> DragResult:
        """One frame: the configuration nearest the target ``position`` (3,) [m, ground axes] from the last one,
        kept as ``q`` and ``last`` and appended to ``frames``. A contact leaving its patch raises its
        :class:`~kane.simulate.surface_pair.ContactPatchError` with q unchanged."""
        target = np.array(position, dtype=float).reshape(-1)
        if target.shape != (3,) or not np.all(np.isfinite(target)):
            raise ArgumentError(f"assemble target: three finite numbers [m] expected, got {position!r}")
        with self._lock:
            self.solver.move(0, position=target)
            res = self.solver.solve(self.q)
            self.q, self.last = res.q, res
            self.frames.append(AssembleFrame(target, res))
            return res

    def part_point(self) -> np.ndarray:
        """The dragged point (3,) [m, ground axes] at the current q."""
        with self._lock:
            return self.solver.positions(0.0, self.q)[0]

    def poses(self) -> tuple[np.ndarray, np.ndarray]:
        """(position (n_b, 3) [m], wxyz (n_b, 4)) of the body frames at the current q (the scene's
        :func:`kane.viz.scene.poses_at`)."""
        with self._lock:
            return poses_at(self._outputs, 0.0, self.q, self._u, self.params)

    def scene(self):
        """The one-sample scene at the current q (:func:`kane.viz.scene.state_scene`)."""
        return state_scene(self.equations, 0.0, self.q, self._u, self.params,
                           loaded_shapes(self.loaded, self.params))

    def save(self, path) -> Path:
        """Write the frames since the last reset to the HDF5 file ``path`` (t = frame number, q, residuals
        ``constraint_residual`` [m], ``distance`` [m], ``iterations``), then reset; returns the path. An
        :class:`ArgumentError` when there is no frame."""
        with self._lock:
            if not self.frames:
                raise ArgumentError("assemble: no frames to record yet; move the gizmo first")
            writer = TrajectoryWriter(path)
            writer.open(q_names=self.dynamics.q_names, u_names=self.dynamics.u_names,
                        residual_names=("constraint_residual", "distance", "iterations"),
                        description=f"{self.loaded.name} ({self.loaded.path})", params=self.params,
                        method=f"drag/{self.solver.options.method.value}")
            try:
                for k, frame in enumerate(self.frames):
                    r = frame.result
                    writer.append(float(k), r.q, self._u, None, (r.residual, r.distance, float(r.iterations)))
            finally:
                out = writer.close()
            self.reset()
            return out


class AssembleViewer:
    """A viser server showing ``session`` (an :class:`AssembleSession`): the bodies, a marker at the dragged
    point, a line from it to the gizmo (its length the distance), the gizmo (``gizmo``) at the point, and the
    panel (``status``, the buttons ``save`` writing ``record`` and ``reset``). :meth:`drag` is the gizmo's
    callback; :meth:`close` stops the server."""

    def __init__(self, session: AssembleSession, options: ViewOptions = ViewOptions(), record="assemble.h5"):
        self.session, self.options, self.record_path = session, options, Path(record)
        self.scene = scene = session.scene()
        served = guarded_server(options.host, options.port)  # only the printed URL's user gets in
        self.server = server = served.server
        self.port, self.url = served.port, served.url
        self._frames, self.shapes = draw_scene(server, scene)
        home = tuple(float(x) for x in session.home)
        server.scene.add_icosphere(f"/bodies/{session.body}/dragged_point", radius=0.04 * scene.length,
                                   color=(240, 200, 40), position=tuple(float(x) for x in session.point))
        self.gizmo_scale = 0.6 * scene.length  # [m] the length of the gizmo's arrows
        self.gizmo = server.scene.add_transform_controls("/gizmo", scale=self.gizmo_scale, position=home,
                                                         disable_rotations=True, depth_test=False)
        self._reach = server.scene.add_line_segments("/reach", points=np.array([[home, home]]),
                                                     colors=(240, 200, 40), thickness=2.0, thickness_units="screen")
        server.gui.add_markdown(f"dragging **{session.body}** at {tuple(float(x) for x in session.point)} m")
        self.status = server.gui.add_markdown(status_text(session.last))
        self.save = server.gui.add_button("save frames and reset", hint=f"write {self.record_path}")
        self.save.on_click(lambda _: self._save())
        self.reset = server.gui.add_button("reset")
        self.reset.on_click(lambda _: self._reset())
        self.message = server.gui.add_markdown("")
        self.gizmo.on_update(lambda _: self.drag(self.gizmo.position))
        self.show()

    def drag(self, position) -> DragResult | None:
        """One assembly frame toward ``position`` (3,) [m] (what moving the gizmo does), then redraw; a failure
        (a contact leaving its patch) is shown in the panel and returns None."""
        try:
            res = self.session.move_to(position)
        except KaneError as exc:
            self.message.content = f"frame refused: {exc}"
            return None
        self.message.content = ""
        self.show(position)
        return res

    def show(self, target=None) -> None:
        """Pose the bodies at the session's q, the line from the dragged point to ``target`` (default: the
        point itself), and the panel's status."""
        position, wxyz = self.session.poses()
        point = self.session.part_point()
        goal = point if target is None else np.asarray(target, dtype=float)
        with self.server.atomic():
            for i, name in enumerate(self.scene.bodies):
                self._frames[name].position = position[i]
                self._frames[name].wxyz = wxyz[i]
            self._reach.points = np.array([[point, goal]])
            self.status.content = status_text(self.session.last)

    def _reset(self) -> None:
        self.session.reset()
        self.gizmo.position = tuple(float(x) for x in self.session.home)
        self.message.content = ""
        self.show()

    def _save(self) -> None:
        try:
            n = len(self.session.frames)
            path = self.session.save(self.record_path)
        except KaneError as exc:
            self.message.content = str(exc)
            return
        self.gizmo.position = tuple(float(x) for x in self.session.home)
        self.show()
        self.message.content = f"recorded {n} frames to {path}"

    def close(self) -> None:
        """Stop the server."""
        self.server.stop()
