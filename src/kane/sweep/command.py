"""The work of ``kane sweep MODEL --grid NAME=START:STOP:N --random NAME~uniform(A,B) -n N --seed S
[--points FILE.csv] [--scheduler ADDRESS] [--workers N | --in-process] [--trajectories] [--max-points N]
-o sweep.h5``: parse the options (numbers only, never evaluated text), run the sweep with the model file's
``[simulation]`` settings and a progress bar, and return the closing lines: the warnings the runs raised, counted
per kind (``warnings: KIND N, ...``, only when there were some), then ``runs: N done, M skipped, K failed``."""

from __future__ import annotations

import re

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..errors import ArgumentError
from ..io.model_surfaces import refuse_contacts
from ..switching.contact_run import refuse_collisions
from ..options import Method
from .table import printable
from .execute import Backend, Execution, run_sweep
from .spec import MAX_POINTS, Draws, Grid, Normal, Points, RunSettings, Sweep, Uniform

__all__ = ["parse_grid", "parse_random", "sweep_command"]

_RANDOM = re.compile(r"^\s*([^~\s]+)\s*~\s*(uniform|normal)\s*\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)\s*$")


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ArgumentError(f"{what}: expected a number, got {text!r}") from None


def parse_grid(text: str) -> Grid:
    """``"NAME=START:STOP:N"`` -> Grid."""
    name, sep, rng = text.partition("=")
    parts = rng.split(":")
    if not sep or not name.strip() or len(parts) != 3:
        raise ArgumentError(f"--grid {text!r}: expected NAME=START:STOP:N, such as r=0.2:0.6:5")
    what = f"--grid {name.strip()}"
    n = _float(parts[2], f"{what} N")
    if n != int(n):
        raise ArgumentError(f"{what} N: expected a whole number, got {parts[2]!r}")
    return Grid(name.strip(), _float(parts[0], f"{what} START"), _float(parts[1], f"{what} STOP"), int(n))


def parse_random(text: str) -> Uniform | Normal:
    """``"NAME~uniform(A,B)"`` or ``"NAME~normal(MEAN,STD)"`` -> Uniform or Normal."""
    m = _RANDOM.match(text)
    if not m:
        raise ArgumentError(f"--random {text!r}: expected NAME~uniform(A,B) or NAME~normal(MEAN,STD)")
    name, kind, a, b = m.groups()
    what = f"--random {name}"
    cls = Uniform if kind == "uniform" else Normal
    return cls(name, _float(a, f"{what} {kind} first value"), _float(b, f"{what} {kind} second value"))


def sweep_command(lm, output, grids=(), randoms=(), n=100, seed=0, t_end=None, scheduler=None, workers=2,
                  in_process=False, console=None, points=None, trajectories=False, max_points=MAX_POINTS) -> str:
    """Run the sweep of ``lm`` (a :class:`kane.io.model_file.LoadedModel`) into ``output`` and return the
    closing lines. ``grids`` and ``randoms`` are option strings; ``n`` random points with ``seed``; ``points`` the
    path of a CSV file of points (one more axis); ``trajectories``: keep each run's samples in the file;
    ``max_points``: the most points the sweep may have (checked before anything is allocated)."""
    refuse_contacts(lm, "kane sweep")
    refuse_collisions(lm, "kane sweep")
    axes = [parse_grid(g) for g in grids]
    if randoms:
        axes.append(Draws(tuple(parse_random(r) for r in randoms), n, seed))
    if points is not None:
        axes.append(Points.from_csv(points))
    if not axes:
        raise ArgumentError("kane sweep: give at least one --grid NAME=START:STOP:N, --random NAME~uniform(A,B) or "
                            "--points FILE.csv")
    s = lm.simulation
    end = s.t_end if t_end is None else t_end
    run = RunSettings((s.t_start, end), Method.parse(s.method), s.rtol, s.atol, s.dt, s.output_dt, s.max_step)
    execution = Execution(Backend.IN_PROCESS) if in_process else Execution(Backend.DASK, scheduler, workers)
    columns = (TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("runs", total=None)
        result = run_sweep(Sweep(lm, tuple(axes), run, max_points=max_points), output, execution,
                           progress=lambda done, total: bar.update(task, completed=done, total=total),
                           trajectories=trajectories)
    closing = f"runs: {result.done} done, {result.skipped} skipped, {result.failed} failed"
    if not result.warnings:
        return closing
    kinds = ", ".join(f"{printable(kind)} {count}" for kind, count in result.warnings.items())
    return f"warnings raised by the runs: {kinds}\n{closing}"
