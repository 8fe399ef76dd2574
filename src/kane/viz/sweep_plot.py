"""Plots of a sweep's results file (issue 17): metric maps and histograms, one panel per metric.

The layout follows the sweep's axes (recorded in the file): one swept name gives each metric against it (a line
through the completed runs, in order of the parameter); two give a map, an image when the points fill the grid
of their values (a cell per point, blank where the run failed) and a scatter coloured by the metric otherwise;
random draws, or more than two swept names, give a histogram of each metric over the completed runs. Drawn
off-screen like :mod:`kane.viz.plots` (matplotlib's ``Figure``, pyplot never touched).
"""

from __future__ import annotations

import enum
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..errors import ArgumentError
from ..sweep import SweepTable, is_sweep_file, load_sweep

__all__ = ["Layout", "SweepPlot", "is_sweep_file", "plot_sweep"]

_MAX_PANELS = 9


class Layout(enum.Enum):
    """The kinds of panel: ``LINE``, ``IMAGE``, ``SCATTER`` and ``HISTOGRAM``."""

    LINE = "line"
    IMAGE = "image"
    SCATTER = "scatter"
    HISTOGRAM = "histogram"


@dataclass(frozen=True)
class SweepPlot:
    """What :func:`plot_sweep` drew: the image ``path``, the ``layout`` (a :class:`Layout`), the parameter
    names on the axes ``x`` and ``y`` (None where unused), the ``metrics`` (one panel each, in order) and the
    matplotlib ``figure``."""

    path: Path
    layout: Layout
    x: str | None
    y: str | None
    metrics: tuple[str, ...]
    figure: Figure


def _choose_metrics(table: SweepTable, done: np.ndarray, metrics, source: str) -> tuple[str, ...]:
    if metrics is not None:
        metrics = tuple(metrics)
        unknown = [m for m in metrics if m not in table.metric_names]
        if unknown or not metrics:
            raise ArgumentError(f"plot of {source}: no metric {', '.join(map(repr, unknown)) or '(none given)'}; "
                                f"the metrics: {', '.join(table.metric_names)}")
        return metrics
    varied = []
    for name in table.metric_names:
        v = table.column(name)[done]
        v = v[np.isfinite(v)]
        if v.size and np.ptp(v) > 0:
            varied.append(name)
    return tuple(varied[-_MAX_PANELS:])  # the last columns: user functions, events, energy drift, maxima


def _layout(table: SweepTable) -> tuple[Layout, str | None, str | None]:
    names = table.param_names
    if any(kind == "random" for kind, _ in table.axes) or len(names) > 2:
        return Layout.HISTOGRAM, None, None
    if len(names) == 1:
        return Layout.LINE, names[0], None
    x, y = table.column(names[0]), table.column(names[1])
    full = len(set(zip(x, y))) == len(table) == len(np.unique(x)) * len(np.unique(y))
    return (Layout.IMAGE if full else Layout.SCATTER), names[0], names[1]


def plot_sweep(sweep: SweepTable | str | os.PathLike, path: str | os.PathLike | None = None, *, metrics=None,
               dpi: int = 120) -> SweepPlot:
    """Plot a sweep (a results file, or a :class:`kane.sweep.SweepTable`) to the image ``path`` (default: the
    file with the extension .png) and return a :class:`SweepPlot`. ``metrics``: the metric columns to draw
    (default: those that vary over the completed runs, the last nine). ArgumentError when there is no completed
    run, a metric name is unknown or nothing varies."""
    source = "the sweep" if isinstance(sweep, SweepTable) else str(sweep)
    table = sweep if isinstance(sweep, SweepTable) else load_sweep(sweep)
    if path is None:
        if isinstance(sweep, SweepTable):
            raise ArgumentError("plot of a sweep table: give the image path")
        path = Path(sweep).with_suffix(".png")
    done = np.array([s == "done" for s in table.status], dtype=bool)
    if not done.any():
        raise ArgumentError(f"plot of {source}: no completed run to plot ({len(table)} runs in the file)")
    chosen = _choose_metrics(table, done, metrics, source)
    if not chosen:
        raise ArgumentError(f"plot of {source}: no metric varies over the completed runs; name one with metrics=")
    layout, xn, yn = _layout(table)
    cols = min(3, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    fig = Figure(figsize=(4.2 * cols, 3.4 * rows + 0.5), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(chosen):]:
        ax.set_visible(False)
    for ax, name in zip(axes, chosen):
        value = table.column(name)
        if layout is Layout.LINE:
            x = table.column(xn)[done]
            order = np.argsort(x, kind="stable")
            ax.plot(x[order], value[done][order], marker="o", ms=3, lw=1.0)
            ax.set_xlabel(xn)
            ax.set_ylabel(name)
        elif layout is Layout.IMAGE:
            ux, uy = np.unique(table.column(xn)), np.unique(table.column(yn))
            grid = np.full((len(uy), len(ux)), np.nan)
            grid[np.searchsorted(uy, table.column(yn)[done]), np.searchsorted(ux, table.column(xn)[done])] = \
                value[done]
            mesh = ax.pcolormesh(ux, uy, grid, shading="nearest")
            fig.colorbar(mesh, ax=ax, label=name)
            ax.set_xlabel(xn)
            ax.set_ylabel(yn)
        elif layout is Layout.SCATTER:
            dots = ax.scatter(table.column(xn)[done], table.column(yn)[done], c=value[done], s=14)
            fig.colorbar(dots, ax=ax, label=name)
            ax.set_xlabel(xn)
            ax.set_ylabel(yn)
        else:
            v = value[done]
            ax.hist(v[np.isfinite(v)], bins="auto")
            ax.set_xlabel(name)
            ax.set_ylabel("runs")
    failed = int((~done).sum())
    fig.suptitle(f"{Path(source).name}: {len(table)} runs" + (f", {failed} failed (not shown)" if failed else ""))
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    return SweepPlot(path, layout, xn, yn, chosen, fig)
