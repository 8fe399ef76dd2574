"""Plots of a real-time log (``kane realtime -o LOG.h5``; ``kane plot LOG.h5``): what the hand did, what it felt,
where the energy went, and whether the loop kept its deadlines.

Against time [s], sharing the axis: the hand's and the body point's positions [m] from the hand's first one; the
coupler force on the body [N]; the energy [J] the device put into the coupler (``port_energy``), the coupler
spring's, and the virtual system's change since the start; each period's compute time and wake-up lateness [us] on a
log axis, the period drawn across and the missed deadlines marked. Beside them: the wake-up lateness histogram of
the run (the log's jitter bins) and the histogram of compute times with p50 and p99. Mode changes are dashed
vertical lines named at the top; refused and missing device samples are marked under the position panel. Series
longer than ``2 * ENVELOPE_BINS`` points are drawn as the minimum and maximum of each of ``ENVELOPE_BINS`` bins, so
a single late period still shows on a 60 s run at 10 kHz. With the dynamics stepped every k periods, the virtual
system's energy is drawn at its own steps (the log's ``dynamics`` group), not from the rows' extrapolated states.
Drawn off-screen like :mod:`kane.viz.plots`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ..realtime.log import SAMPLE_MISSING, SAMPLE_REFUSED
from ..realtime.log_reader import RealtimeRecord, load_realtime_log
from ..realtime.stats import JITTER_EDGES_S

__all__ = ["ENVELOPE_BINS", "RealtimePlot", "envelope", "plot_realtime_log"]

ENVELOPE_BINS = 4000  # a long series is drawn as the min and max of this many bins
_US = 1e6
_FLOOR_US = 0.1  # [us] the log axis's floor (a lateness of 0 on the virtual clock)
_MOSAIC = [["position", "jitter"], ["force", "jitter"], ["energy", "compute"], ["timing", "compute"]]


@dataclass(frozen=True)
class RealtimePlot:
    """What :func:`plot_realtime_log` drew: the image ``path``, the ``axes`` by panel name ("position", "force",
    "energy", "timing", "jitter", "compute"), the ``missed`` deadlines marked, and the matplotlib ``figure``."""

    path: Path
    axes: dict
    missed: int
    figure: Figure


def envelope(t: np.ndarray, y: np.ndarray, bins: int = ENVELOPE_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(t, y) as drawn: unchanged up to 2 ``bins`` points; beyond, each of ``bins`` runs of points replaced by its
    minimum and its maximum in time order (at the run's first and last times), so that no extreme is lost."""
    n = t.shape[0]
    if n <= 2 * bins:
        return t, y
    edges = np.linspace(0, n, bins + 1).astype(int)
    lo, hi = np.minimum.reduceat(y, edges[:-1]), np.maximum.reduceat(y, edges[:-1])
    first, last = t[edges[:-1]], t[edges[1:] - 1]
    return np.column_stack([first, last]).ravel(), np.column_stack([lo, hi]).ravel()


def _lines(ax, t, columns, labels, styles=None) -> None:
    for k, (y, label) in enumerate(zip(columns, labels)):
        ax.plot(*envelope(t, y), lw=0.9, label=label, **(styles[k] if styles else {}))


def _varying(*arrays) -> list[int]:
    """The axes (0, 1, 2) along which any of the (N, 3) ``arrays`` moves."""
    return [k for k in range(3) if any(np.ptp(a[:, k]) > 0 for a in arrays)] or [0]


def _time_panels(ax, rec: RealtimeRecord) -> None:
    t, axis = rec.t, "xyz"
    hand, point = rec.hand_position - rec.hand_position[0], rec.point_position - rec.hand_position[0]
    moving = _varying(hand, point)
    _lines(ax["position"], t, [hand[:, k] for k in moving] + [point[:, k] for k in moving],
           [f"hand {axis[k]}" for k in moving] + [f"point {axis[k]}" for k in moving],
           [{"color": f"C{k}"} for k in moving] + [{"color": f"C{k}", "ls": "--"} for k in moving])
    ax["position"].set_ylabel("position from the\nhand's start [m]")
    for flag, colour, label in ((SAMPLE_REFUSED, "tab:orange", "sample refused"),
                                (SAMPLE_MISSING, "tab:red", "sample missing")):
        hit = rec.sample_status == flag
        if hit.any():
            ax["position"].plot(t[hit], np.zeros(int(hit.sum())), "|", color=colour, ms=8, label=label,
                                transform=ax["position"].get_xaxis_transform())
    pushing = _varying(rec.force)
    _lines(ax["force"], t, [rec.force[:, k] for k in pushing], [f"F{axis[k]}" for k in pushing],
           [{"color": f"C{k}"} for k in pushing])
    if rec.torque is not None:  # a full pose coupled: the torque beside the force
        turning = _varying(rec.torque)
        _lines(ax["force"], t, [rec.torque[:, k] for k in turning], [f"T{axis[k]} [N m]" for k in turning],
               [{"color": f"C{k}", "ls": "--"} for k in turning])
    saturated = rec.counts.get("saturated")
    ax["force"].set_ylabel("coupler force on\nthe body [N]" + (", torque [N m]" if rec.torque is not None else ""))
    if saturated:
        ax["force"].set_title(f"saturated in {saturated} periods", fontsize=7, loc="right")
    energy = [rec.port_energy, rec.spring_energy]
    labels = ["into the coupler from the device", "coupler spring"]
    steps = rec.steps
    if steps is None and np.isfinite(rec.energy).all():
        energy.append(rec.energy - rec.energy[0])
        labels.append("virtual system, change")
    _lines(ax["energy"], t, energy, labels, [{"color": "k"}, {"color": "tab:purple"}, {"color": "tab:green"}])
    if steps is not None and np.isfinite(steps.energy).all():  # multi-rate: the plant's own states, not the rows'
        ax["energy"].plot(*envelope(steps.t, steps.energy - steps.energy[0]), color="tab:green", lw=0.9,
                          label="virtual system at its steps, change")
    ax["energy"].set_ylabel("energy [J]")
    period_us = rec.period * _US
    _lines(ax["timing"], t, [np.maximum(rec.compute_time * _US, _FLOOR_US), np.maximum(rec.lateness * _US, _FLOOR_US)],
           ["compute time", "wake-up lateness"], [{"color": "tab:blue"}, {"color": "tab:gray"}])
    ax["timing"].set_yscale("log")
    ax["timing"].axhline(period_us, color="tab:red", lw=0.8, label=f"period {period_us:.0f} us")
    missed = rec.missed
    if missed.any():
        ax["timing"].plot(t[missed], (rec.lateness + rec.compute_time)[missed] * _US, "v", color="tab:red", ms=4,
                          label=f"missed ({int(missed.sum())})")
    ax["timing"].set_ylabel("per period [us]")
    ax["timing"].set_xlabel("time t [s]")
    for name in ("position", "force", "energy", "timing"):
        ax[name].grid(True, lw=0.3, alpha=0.6)
        for ev in rec.events:
            ax[name].axvline(ev.t, color="tab:red", ls="--", lw=0.8, alpha=0.7)
        ax[name].legend(loc="best", fontsize=7, ncol=2, framealpha=0.8)
    for ev in rec.events:
        ax["position"].annotate(f"{ev.kind} {ev.constraint}", (ev.t, 1.0), xycoords=("data", "axes fraction"),
                                fontsize=7, color="tab:red", rotation=90, va="top", ha="right")


def _histograms(ax, rec: RealtimeRecord) -> None:
    counts = np.asarray(rec.deadlines.jitter_counts, dtype=float)
    edges = [f"{e * _US:g}" for e in JITTER_EDGES_S[:-1]]
    names = [f"{a}-{b} us" for a, b in zip(edges[:-1], edges[1:])] + [f">= {edges[-1]} us"]
    ax["jitter"].barh(np.arange(counts.size), counts, color="tab:gray")
    ax["jitter"].set_yticks(np.arange(counts.size), names, fontsize=7)
    ax["jitter"].set_xscale("symlog", linthresh=1.0)
    ax["jitter"].set_xlabel("periods")
    ax["jitter"].set_title("wake-up lateness", fontsize=9)
    compute = np.maximum(rec.compute_time * _US, _FLOOR_US)
    bins = np.geomspace(max(_FLOOR_US, compute.min()), max(compute.max(), rec.period * _US) * 1.01, 60)
    ax["compute"].hist(compute, bins=bins, color="tab:blue")
    ax["compute"].set_xscale("log")
    ax["compute"].xaxis.set_minor_formatter(NullFormatter())
    ax["compute"].set_yscale("symlog", linthresh=1.0)
    for value, style, label in ((rec.deadlines.compute_p50, ":", "p50"), (rec.deadlines.compute_p99, "--", "p99")):
        ax["compute"].axvline(value * _US, color="k", ls=style, lw=0.8, label=f"{label} {value * _US:.1f} us")
    ax["compute"].axvline(rec.period * _US, color="tab:red", lw=0.8, label="period")
    ax["compute"].legend(fontsize=7)
    ax["compute"].set_xlabel("compute time per period [us]")
    ax["compute"].set_ylabel("periods")


def plot_realtime_log(log: RealtimeRecord | str | os.PathLike, path: str | os.PathLike | None = None, *,
                      title: str | None = None, dpi: int = 120) -> RealtimePlot:
    """Plot a real-time log (a :class:`kane.realtime.RealtimeRecord`, or the path of a log or of its partial
    file) to the image ``path`` (default: the log's path with .png; the format follows the extension) and return
    a :class:`RealtimePlot`."""
    rec = log if isinstance(log, RealtimeRecord) else load_realtime_log(log)
    path = Path(path) if path is not None else rec.path.with_suffix(".png")
    fig = Figure(figsize=(12.0, 9.5), layout="constrained")
    ax = fig.subplot_mosaic(_MOSAIC, width_ratios=[3.2, 1.0])
    for name in ("force", "energy", "timing"):
        ax[name].sharex(ax["position"])
    _time_panels(ax, rec)
    _histograms(ax, rec)
    d = rec.deadlines
    fig.suptitle(f"{title or rec.path.name}: {rec.status}\nmissed deadlines: {d.missed} of {d.periods} periods; "
                 f"compute p50 {d.compute_p50 * _US:.1f} us, p99 {d.compute_p99 * _US:.1f} us, max "
                 f"{d.compute_max * _US:.1f} us (period {d.period * _US:.0f} us)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return RealtimePlot(path, dict(ax), int(rec.missed.sum()), fig)
