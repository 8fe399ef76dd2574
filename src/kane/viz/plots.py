"""Plots of a simulation run: coordinates, speeds, energy and the recorded monitors against time [s].

Figures are drawn off-screen (matplotlib's ``Figure`` with the Agg canvas; pyplot and its global backend are
never touched), so plotting works without a display and from threads.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..io.trajectory import Trajectory, load_trajectory
from .contact_plot import CONTACT_PANELS, draw_contact_panel, is_contact_series
from .readable import monitor_panels, spread_formatter

__all__ = ["plot_trajectory", "trajectory_figure"]


def _legend(ax, n: int) -> None:
    if n:
        ax.legend(loc="best", fontsize=7, ncol=min(4, max(1, (n + 5) // 6)), framealpha=0.8)


def plot_trajectory(traj: Trajectory | str | os.PathLike, path: str | os.PathLike, *, title: str | None = None,
                    dpi: int = 120) -> Path:
    """Plot ``traj`` (a Trajectory, or the path of a trajectory file) to the image ``path`` and return it.

    Subplots, sharing the time axis [s]: coordinates q; speeds u; total energy [J] when recorded; the recorded
    monitors one kind per panel with its unit (:func:`kane.viz.readable.monitor_panels`: constraint residuals and
    condition numbers as absolute values on log axes, power [W] and other monitors on linear ones). Tick labels
    show the spread (:func:`kane.viz.readable.spread_formatter`). Events are marked by dashed vertical lines and
    mode changes by dotted ones. The format follows the extension of ``path`` (.png, .svg, .pdf, ...).
    """
    if not isinstance(traj, Trajectory):
        traj = load_trajectory(traj)
    path = Path(path)
    fig = trajectory_figure(traj, title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


def trajectory_figure(traj: Trajectory, title: str | None = None) -> Figure:
    """The off-screen matplotlib Figure that :func:`plot_trajectory` saves, one Axes per panel, top to bottom."""
    from ..switching.contact_run import contact_series

    contact = contact_series(traj)  # a contact run's pair outputs: their own panels, not monitors
    monitors = [name for name in traj.residuals if not is_contact_series(name, contact)]
    panels = ["q", "u"] + (["energy"] if traj.energy is not None else []) + list(monitor_panels(monitors)) + \
        (list(CONTACT_PANELS) if contact is not None else [])
    fig = Figure(figsize=(9.0, 2.3 * len(panels) + 0.8), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    t = traj.t
    for ax, panel in zip(axes, panels):
        if panel == "q":
            for k, name in enumerate(traj.q_names):
                ax.plot(t, traj.q[:, k], lw=1.0, label=name)
            ax.set_ylabel("coordinates q [m, rad]")
            _legend(ax, len(traj.q_names))
        elif panel == "u":
            for k, name in enumerate(traj.u_names):
                ax.plot(t, traj.u[:, k], lw=1.0, label=name)
            ax.set_ylabel("speeds u [m/s, rad/s]")
            _legend(ax, len(traj.u_names))
        elif panel in CONTACT_PANELS:
            draw_contact_panel(ax, panel, contact)
        elif panel == "energy":
            ax.plot(t, traj.energy, lw=1.0, color="k", label="total energy")
            ax.set_ylabel("energy [J]")
        elif panel.log:
            for name in panel.names:
                ax.semilogy(t, np.maximum(np.abs(traj.residuals[name]), panel.floor), lw=1.0, label=name)
            finite = [np.abs(r[np.isfinite(r)]) for r in (traj.residuals[n] for n in panel.names)]
            top = max((float(np.max(r, initial=0.0)) for r in finite), default=0.0)
            ax.set_ylim(panel.floor / 2, max(10 * top, 1e5 * panel.floor))
            ax.set_ylabel(panel.ylabel)
            _legend(ax, len(panel.names))
        else:
            for name in panel.names:
                ax.plot(t, traj.residuals[name], lw=1.0, label=name)
            ax.set_ylabel(panel.ylabel)
            _legend(ax, len(panel.names))
        if panel != "contact_mode" and (isinstance(panel, str) or not panel.log):  # the modes keep their names
            ax.yaxis.set_major_formatter(spread_formatter())
        ax.grid(True, lw=0.3, alpha=0.6)
        for ev in traj.events:
            ax.axvline(ev.t, color="tab:red", ls="--", lw=0.8, alpha=0.7)
        for t_start, _, _ in traj.modes[1:]:
            ax.axvline(t_start, color="0.4", ls=":", lw=0.8)
    for ev in traj.events:
        axes[0].annotate(ev.name, (ev.t, 1.0), xycoords=("data", "axes fraction"), fontsize=7, color="tab:red",
                         rotation=90, va="top", ha="right")
    axes[-1].set_xlabel("time t [s]")
    fig.suptitle(title or traj.description or "kane run", fontsize=10)
    if traj.status != "completed":
        axes[0].set_title(f"status: {traj.status}", fontsize=8, color="tab:red", loc="left")
    return fig
