"""Sweeps of a model file with ``[[switching]]`` tables: each point runs seed 000's loop
(:class:`kane.switching.SwitchingSimulator`) under the rules evaluated at the point's parameters, from a state of
all the model's speeds (the columns ``final.u.NAME`` and ``max.u.NAME`` name every speed, ``u0.NAME`` sets any)."""

from __future__ import annotations

import json

import numpy as np

from ..errors import ArgumentError
from ..switching import SwitchingSettings, SwitchingSimulator
from ..switching.settings import switching_run_options

__all__ = ["switching_text", "run_switched"]


def switching_text(loaded, run) -> str | None:
    """The canonical text of ``loaded``'s ``[[switching]]`` tables (for the points' keys); None without them.
    Raises ArgumentError for ``run`` (RunSettings) events, which a switching run does not take."""
    tables = loaded.tables.get("switching")
    if not tables:
        return None
    if run.events:
        raise ArgumentError(f"sweep of {loaded.path or loaded.name}: run events are not taken by a switching run "
                            f"(its [[switching]] rules make the events); give the sweep no events")
    return json.dumps(tables, sort_keys=True, default=str)


def run_switched(task, equations, run, schedule=None):
    """The trajectory of ``task`` (its params, q0 (n_q,), u0 (all n_u speeds), rules) under ``run`` (RunSettings);
    ``schedule`` (an InputSchedule) gives the inputs. Raises SimulationError (with the last good state) or
    KaneError as a run does."""
    inputs = None if schedule is None else schedule.bind(None, task.params)  # (u: every speed of the model)
    options = switching_run_options(method=run.method, rtol=run.rtol, atol=run.atol, dt=run.dt,
                                    max_step=run.max_step, output_dt=run.output_dt)
    sim = SwitchingSimulator(equations, np.array(task.q0), np.array(task.u0), task.rules, options,
                             SwitchingSettings(record_forces=False), t0=run.t_span[0], params=task.params,
                             inputs=inputs)
    return sim.run(run.t_span[1])
