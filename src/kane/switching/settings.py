"""The settings of a switching run: ``SwitchingSettings`` (the rules' own) beside a :class:`kane.RunOptions`.

A switching run (:class:`kane.switching.SwitchingSimulator`, :class:`kane.switching.HybridSimulator`,
:class:`kane.switching.SwitchedDynamics` under :func:`kane.run`) takes its integration settings as one
:class:`kane.simulate.run.RunOptions` and the settings of the on-line embedding and the rules as one
:class:`SwitchingSettings`. :func:`split_options` turns the keyword options of the earlier API (``rtol=...,
project=..., cond_max=...``) into the two.
"""

from __future__ import annotations

import math
import warnings

from dataclasses import dataclass

from ..errors import ArgumentError
from ..io.trajectory import Trajectory
from ..simulate.run import ProjectionMode, RunOptions
from ..simulate.simulator import SimulationError

__all__ = ["SwitchingSettings", "RUN_KEYWORDS", "SETTINGS_KEYWORDS", "split_options", "switching_run_options",
           "runner_options", "run_and_save"]


@dataclass(frozen=True)
class SwitchingSettings:
    """The rules' and the on-line embedding's settings: ``cond_max`` and ``dependent`` (preferred dependent speeds,
    names) of :class:`kane.switching.OnlineDynamics`; ``force_tol`` [N]: multipliers within it of a limit count as
    on it; ``max_switches``: the most mode changes of a run (Zeno guard); ``record_forces``: record every
    constraint's multipliers at every output sample as residuals "lambda_<name>"."""

    cond_max: float = 1e6
    dependent: tuple[str, ...] | None = None
    force_tol: float = 1e-9
    max_switches: int = 10000
    record_forces: bool = True

    def __post_init__(self):
        if not (isinstance(self.cond_max, (int, float)) and self.cond_max > 1 and not math.isnan(self.cond_max)):
            raise ArgumentError(f"switching settings: cond_max must be a condition number > 1, got {self.cond_max!r}")
        if not (isinstance(self.force_tol, (int, float)) and 0 <= self.force_tol < math.inf):
            raise ArgumentError(f"switching settings: force_tol must be a finite force >= 0 N, got {self.force_tol!r}")
        if isinstance(self.max_switches, bool) or int(self.max_switches) != self.max_switches or \
                self.max_switches < 1:
            raise ArgumentError(f"switching settings: max_switches must be an integer >= 1, got "
                                f"{self.max_switches!r}")
        object.__setattr__(self, "max_switches", int(self.max_switches))
        if self.dependent is not None:
            dep = (self.dependent,) if isinstance(self.dependent, str) else tuple(self.dependent)
            if not all(isinstance(n, str) for n in dep):
                raise ArgumentError(f"switching settings: dependent must be speed names, got {self.dependent!r}")
            object.__setattr__(self, "dependent", dep or None)
        object.__setattr__(self, "record_forces", bool(self.record_forces))


RUN_KEYWORDS = ("method", "rtol", "atol", "max_step", "dt", "output_dt", "monitors", "project", "project_every",
                "record_balance", "description", "t_end", "max_steps", "max_wall_time")
"""The earlier keyword options that are now :class:`RunOptions` fields (``project`` -> ``projection``,
``record_balance`` -> ``standard_monitors``)."""

SETTINGS_KEYWORDS = ("cond_max", "dependent", "force_tol", "max_switches", "record_forces")
"""The earlier keyword options that are now :class:`SwitchingSettings` fields."""

_OPEN_END = 1e12
"""t_end [s] of a run whose end is set later (``advance(t)``, ``run(t)``): beyond any run."""


def switching_run_options(*, t_end: float = _OPEN_END, method="dopri5", rtol: float = 1e-9, atol=1e-11,
                          max_step: float = math.inf, dt=None, output_dt=None, monitors=None, project: bool = True,
                          project_every: int = 1, record_balance: bool = False, description=None,
                          max_steps=None, max_wall_time=None) -> RunOptions:
    """The :class:`RunOptions` of the earlier keyword options, with their defaults (rtol 1e-9, atol 1e-11, the
    projection onto the active constraints on, an open end)."""
    return RunOptions(t_end=math.copysign(_OPEN_END, t_end) if math.isinf(t_end) else t_end, method=method,
                      rtol=rtol, atol=atol, max_step=max_step, dt=dt, output_dt=output_dt, monitors=monitors or (),
                      projection=ProjectionMode.DYNAMICS if project else ProjectionMode.NONE,
                      project_every=project_every, standard_monitors=bool(record_balance), description=description,
                      max_steps=max_steps, max_wall_time=max_wall_time)


def split_options(caller: str, kwargs: dict, *, warn: bool) -> tuple[RunOptions, SwitchingSettings]:
    """(RunOptions, SwitchingSettings) of the earlier keyword options ``kwargs`` of ``caller``; an unknown keyword
    is an ArgumentError naming it. ``warn``: say (FutureWarning) that the keywords go after one release."""
    unknown = sorted(set(kwargs) - set(RUN_KEYWORDS) - set(SETTINGS_KEYWORDS))
    if unknown:
        raise ArgumentError(f"{caller}: unknown options {', '.join(unknown)}; run options: {', '.join(RUN_KEYWORDS)};"
                            f" switching settings: {', '.join(SETTINGS_KEYWORDS)}")
    if warn and kwargs:
        warnings.warn(f"{caller}: the keyword options {', '.join(sorted(kwargs))} are deprecated; pass "
                      f"options=kane.RunOptions(...) and settings=kane.switching.SwitchingSettings(...)",
                      FutureWarning, stacklevel=4)
    run = switching_run_options(**{k: v for k, v in kwargs.items() if k in RUN_KEYWORDS})
    return run, SwitchingSettings(**{k: v for k, v in kwargs.items() if k in SETTINGS_KEYWORDS})


def runner_options(caller: str, options, settings, legacy: dict) -> tuple[RunOptions, SwitchingSettings]:
    """(RunOptions, SwitchingSettings) of a switching runner: those given, or of the earlier keyword options
    (FutureWarning); a switching run takes no events (its rules make them)."""
    if legacy:
        if options is not None or settings is not None:
            raise ArgumentError(f"{caller}: give options= and settings=, or the earlier keyword options "
                                f"({', '.join(sorted(legacy))}), not both")
        return split_options(caller, legacy, warn=True)
    if options is None:
        options, _ = split_options(caller, {}, warn=False)
    if not isinstance(options, RunOptions):
        raise ArgumentError(f"{caller}: options must be a kane.RunOptions, got {type(options).__name__}")
    settings = SwitchingSettings() if settings is None else settings
    if not isinstance(settings, SwitchingSettings):
        raise ArgumentError(f"{caller}: settings must be a kane.switching.SwitchingSettings, got "
                            f"{type(settings).__name__}")
    if options.events:
        raise ArgumentError(f"{caller}: run options: events are not taken by a switching run (its rules make the "
                            f"events); got {len(options.events)}")
    return options, settings


def run_and_save(runner_class, model, t_span, q0, u0, rules, path, options) -> Trajectory:
    """Run ``runner_class(model, q0, u0, rules, run_options, settings, t0=..., **rest)`` over ``t_span`` [s], the
    keyword ``options`` split into the RunOptions and SwitchingSettings they name and the runner's own (``rest``:
    params, inputs, ...); with ``path`` the trajectory is saved to HDF5 there, also when the run fails."""
    t0, t1 = (float(v) for v in t_span)
    if not t1 >= t0:
        raise ValueError(f"t_span = {t_span!r}: the end must not precede the start")
    named = {k: v for k, v in options.items() if k in RUN_KEYWORDS or k in SETTINGS_KEYWORDS}
    run_options, settings = split_options(runner_class.__name__, named, warn=False)
    rest = {k: v for k, v in options.items() if k not in named}
    runner = runner_class(model, q0, u0, rules, run_options, settings, t0=t0, **rest)
    try:
        traj = runner.run(t1)
    except SimulationError as exc:
        if path is not None and exc.trajectory is not None:
            exc.trajectory.save(path)
        raise
    if path is not None:
        traj.save(path)
    return traj
