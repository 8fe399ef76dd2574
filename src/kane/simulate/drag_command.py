"""The work of ``kane assemble MODEL --drag PART [--point X Y Z] --path line|circle [--to X Y Z] [--radius R]
--frames N -o FRAMES.h5``: drag a body point of a model along a scripted path (a straight line to ``--to``, or a
circle of ``--radius`` in the ground x-y plane starting at the point), assemble every frame with
:class:`kane.simulate.drag.DragSolver` (warm-started from the previous frame), write the frames to HDF5 and
return a per-frame summary (constraint residual, distance to the target, iterations). The click command itself is
in cli.py."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

import click
import numpy as np

from ..errors import ArgumentError
from ..io.model_surfaces import contacts_of
from ..io.trajectory import Stats, TrajectoryWriter
from ..options import parse_enum
from .drag import DragOptions, DragResult, DragSolver, Target
from .surface_pair import SurfaceOnSurface

__all__ = ["DragPath", "scripted_path", "surface_contacts", "AssembleRun", "run_assemble", "assemble_command"]


class DragPath(enum.Enum):
    """``LINE``: straight from the point's start to the end point; ``CIRCLE``: one turn in the ground x-y plane."""

    LINE = "line"
    CIRCLE = "circle"


def scripted_path(kind, start, frames: int, to=None, radius: float = 0.1) -> np.ndarray:
    """(frames, 3) target positions [m]: frame 0 is ``start`` (3,); a line ends at ``to`` (3,), a circle of
    ``radius`` [m] through ``start`` (centre start + (0, radius, 0)) closes on it."""
    path = parse_enum(DragPath, kind)
    if path is None:
        raise ArgumentError(f"--path {kind!r}: expected one of {', '.join(p.value for p in DragPath)}")
    if frames < 2:
        raise ArgumentError(f"--frames must be at least 2, got {frames}")
    start = np.asarray(start, dtype=float)
    s = np.linspace(0.0, 1.0, frames)[:, None]
    if path is DragPath.LINE:
        if to is None:
            raise ArgumentError("--path line needs --to X Y Z, the end point in ground axes [m]")
        return start + s * (np.asarray(to, dtype=float) - start)
    if not radius > 0:
        raise ArgumentError(f"--radius must be positive [m], got {radius!r}")
    a = 2 * np.pi * s[:, 0]
    return start + radius * np.stack([np.sin(a), 1 - np.cos(a), np.zeros_like(a)], axis=1)


def surface_contacts(loaded) -> list[SurfaceOnSurface]:
    """The model file's ``[[contacts]]`` as assembly constraints: each pair of surfaces kept touching and tangent
    (:class:`SurfaceOnSurface`: surface_a, surface_b on their bodies or the ground), the contact parameters
    starting at ``parameters_a``, ``parameters_b``: give them near the intended contact point (the common-normal
    conditions also hold at the far side of a convex surface, a ball touching the floor with its top)."""
    return [SurfaceOnSurface(name, c.surface_a.body, c.surface_a.surface, c.surface_b.body, c.surface_b.surface,
                             np.array([*c.parameters_a, *c.parameters_b])) for name, c in contacts_of(loaded).items()]


@dataclass(frozen=True)
class AssembleRun:
    """The frames' results and the summary ``lines``."""

    results: tuple[DragResult, ...]
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def run_assemble(loaded, part: str, output, *, point=(0.0, 0.0, 0.0), path: str = "circle", to=None,
                 radius: float = 0.1, frames: int = 50, method: str = "gauss_newton") -> AssembleRun:
    """Drag ``point`` (body axes [m]) of body ``part`` of ``loaded`` (a :class:`kane.io.model_file.LoadedModel`)
    along the scripted path, the model file's surface contacts held (:func:`surface_contacts`); frames go
    to ``output`` (HDF5: t is the frame number, q the configuration, residuals
    ``constraint_residual`` [m], ``distance`` [m] and ``iterations``). A contact leaving its patch raises
    :class:`~kane.simulate.surface_pair.ContactPatchError` naming the surface, parameter and value; the frames
    before it are kept in ``output``."""
    dyn = loaded.derive().compile()
    params = dict(loaded.parameters)
    q = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names], dtype=float)
    solver = DragSolver(dyn, [Target(part, tuple(point))], DragOptions(method=method), params=params,
                        contacts=surface_contacts(loaded))
    start = solver.positions(0.0, solver.solve(q).q)[0]
    targets = scripted_path(path, start, frames, to, radius)
    writer = TrajectoryWriter(output)
    writer.open(q_names=dyn.q_names, u_names=dyn.u_names, residual_names=("constraint_residual", "distance",
                                                                           "iterations"),
                description=f"kane assemble: {part} point {tuple(point)} dragged along a {path}", params=params,
                method=f"drag/{solver.options.method.value}")
    results, status, start_s = [], "completed", time.perf_counter()
    try:
        for k, target in enumerate(targets):
            solver.move(0, position=target)
            res = solver.solve(q)
            q = res.q
            results.append(res)
            writer.append(float(k), q, np.zeros(len(dyn.u_names)), None,
                          (res.residual, res.distance, float(res.iterations)))
    except BaseException as exc:
        status = f"failed: {type(exc).__name__}: {exc}"
        raise
    finally:  # what kane info shows: the method, a step per frame, the wall time, how it ran
        writer.close(status, Stats(n_steps=len(results), n_accepted=len(results), n_rejected=None,
                                   wall_time_s=time.perf_counter() - start_s,
                                   method=f"drag/{solver.options.method.value}", loop="python",
                                   loop_reason="assembly: Newton iterations on the constraints per frame, "
                                               "no time integration"))
    res_max = max(r.residual for r in results)
    far = int(np.argmax([r.distance for r in results]))
    unreachable = sum(not r.reachable for r in results)
    its = np.array([r.iterations for r in results])
    lines = [f"{len(results)} frames of {part} along a {path}: max constraint residual {res_max:.3g} m",
             f"distance to the target: max {results[far].distance:.3g} m (frame {far}); unreachable frames: "
             f"{unreachable}", f"iterations per frame: mean {its.mean():.2f}, max {its.max()}",
             f"frames: {writer.path}"]
    return AssembleRun(tuple(results), tuple(lines))


def assemble_command(load, errors) -> click.Command:
    """The ``kane assemble`` click command; ``load(path)`` reads a model file or script, ``errors`` wraps the
    command as cli.py's other commands."""

    @click.command("assemble", short_help="Drag a part of a mechanism along a path, assembling every frame.")
    @click.argument("model", type=click.Path(exists=True, dir_okay=False))
    @click.option("--drag", "part", required=True, metavar="PART", help="The dragged body.")
    @click.option("--point", nargs=3, type=float, default=(0.0, 0.0, 0.0), help="Dragged point, body axes [m].")
    @click.option("--path", type=click.Choice([p.value for p in DragPath]), default="circle", show_default=True,
                  help="Path of the dragged point: a circle in the ground x-y plane, or a line to --to.")
    @click.option("--to", nargs=3, type=float, default=None, help="End of a line path, ground axes [m].")
    @click.option("--radius", type=float, default=0.1, show_default=True, help="Radius of a circle path [m].")
    @click.option("--frames", type=int, default=50, show_default=True, help="Number of frames.")
    @click.option("--method", type=click.Choice(["gauss_newton", "gradient"]), default="gauss_newton",
                  show_default=True, help="How each frame is assembled: gauss_newton (damped least squares, few "
                                          "steps near the answer) or gradient (many cheap steps).")
    @click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="HDF5 frames file.")
    @errors
    def assemble(model, part, point, path, to, radius, frames, method, output):
        """Drag PART's point along a line or circle; print the residual and distance summary."""
        run = run_assemble(load(model), part, output, point=point, path=path, to=to, radius=radius,
                           frames=frames, method=method)
        click.echo(run.text, nl=False)

    return assemble
