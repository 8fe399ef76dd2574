"""Per-run metrics of a sweep: final state, maxima, energy drift, event times and user functions of a trajectory.

Every metric is one float column; a failed run fills ``final.*`` and ``t_final`` with the last good state (from
:class:`kane.SimulationError`) and the other columns with NaN.
"""

from __future__ import annotations

import math

import numpy as np

from .spec import Metrics, RunSettings

__all__ = ["metric_columns", "evaluate_metrics", "failed_metrics"]


def metric_columns(metrics: Metrics, run: RunSettings, q_names, u_names) -> tuple[str, ...]:
    """The column names, in order, for a model of coordinates ``q_names`` and independent speeds ``u_names``."""
    cols = []
    if metrics.final:
        cols += ["t_final", *(f"final.q.{n}" for n in q_names), *(f"final.u.{n}" for n in u_names)]
    if metrics.maxima:
        cols += [*(f"max.q.{n}" for n in q_names), *(f"max.u.{n}" for n in u_names)]
    if metrics.energy_drift:
        cols.append("energy_drift")
    cols += [f"event.{e.name}" for e in run.events]
    cols += [f.name for f in metrics.functions]
    return tuple(cols)


def evaluate_metrics(metrics: Metrics, run: RunSettings, traj) -> list[float]:
    """The metrics of one completed run ``traj`` (a kane.Trajectory), in the order of :func:`metric_columns`."""
    out: list[float] = []
    if metrics.final:
        out += [float(traj.t[-1]), *map(float, traj.q[-1]), *map(float, traj.u[-1])]
    if metrics.maxima:
        out += [*map(float, np.max(np.abs(traj.q), axis=0)), *map(float, np.max(np.abs(traj.u), axis=0))]
    if metrics.energy_drift:
        e = traj.energy
        out.append(math.nan if e is None or len(e) == 0 else float(np.max(np.abs(np.asarray(e) - e[0]))))
    first = {}
    for rec in traj.events:
        first.setdefault(rec.name, float(rec.t))
    out += [first.get(e.name, math.nan) for e in run.events]
    out += [float(f.fn(traj)) for f in metrics.functions]
    return out


def failed_metrics(metrics: Metrics, n_columns: int, t_good: float | None, q, u) -> list[float]:
    """The metrics of a failed run: the last good state ``q``, ``u`` at ``t_good`` [s] (None: unknown), NaN
    elsewhere; ``n_columns`` is the length of :func:`metric_columns`."""
    out = [math.nan] * n_columns
    if metrics.final and t_good is not None and q is not None and u is not None:
        head = [float(t_good), *map(float, q), *map(float, u)]
        out[: len(head)] = head
    return out
