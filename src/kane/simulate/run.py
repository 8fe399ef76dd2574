"""The one run pipeline (issue 28): ``RunOptions``, ``State`` and ``run(dynamics, state, options, writer)``.

``run`` builds the :class:`kane.simulate.Simulator`, takes the compiled loop (:mod:`kane.simulate.compiled`)
whenever the dynamics, the inputs and the events allow it and the Python loop otherwise, and records which and why
in the trajectory's and the file's stats (``loop``: "compiled" / "python", ``loop_reason``). ``simulate()`` is
``run`` with its options spelled as keyword arguments.

    >>> opts = RunOptions(t_end=10.0, rtol=1e-10, atol=1e-10, output_dt=0.01)
    >>> traj = run(dynamics, State(q0, u0), opts, TrajectoryWriter("run.h5"))
    >>> traj.stats.loop_text  # "compiled loop" or "python loop: the inputs are a function of (t, q, u), ..."
"""

from __future__ import annotations

import enum
import math
import os
import signal
import warnings
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from kane.errors import ArgumentError, KaneError
from kane.io.trajectory import Trajectory, TrajectoryWriter, load_trajectory
from kane.options import Method, parse_enum
from kane.protocol import Dynamics
from kane.simulate.assembly import make_projection
from kane.simulate.compiled import compiled_loop_choice
from kane.simulate.events import Event
from kane.simulate.monitors import standard_monitors
from kane.simulate.run_limits import interrupt_signals, interrupted_status
from kane.simulate.simulator import InconsistentStartWarning, Residual, SimulationError, Simulator
from kane.symbolic.dynamics import KaneDynamics

__all__ = ["Loop", "ProjectionMode", "RunOptions", "State", "RunRequest", "make_simulator", "run", "simulate"]


class Loop(enum.Enum):
    """Which loop steps a run: AUTO the compiled loop where the run allows it, else the Python loop; COMPILED the
    compiled loop or an :class:`kane.errors.ArgumentError` naming why not; PYTHON the Python loop."""

    AUTO = "auto"
    COMPILED = "compiled"
    PYTHON = "python"


class ProjectionMode(enum.Enum):
    """The projection onto the constraints a run makes from its dynamics: NONE; DYNAMICS its own
    (``make_projection``); ASSEMBLY positions onto C(q) = 0 by :func:`kane.simulate.make_projection` from its
    holonomic rows; AUTO its own where it has one, else ASSEMBLY where it declares holonomic rows, else none."""

    NONE = "none"
    AUTO = "auto"
    DYNAMICS = "dynamics"
    ASSEMBLY = "assembly"


def _positive_time(name: str, value, allow_none: bool = False, allow_inf: bool = False):
    if value is None and allow_none:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (v > 0 and (math.isfinite(v) or (allow_inf and v == math.inf))):
        raise ArgumentError(f"run options: {name} must be a {'' if allow_inf else 'finite '}time > 0 s"
                            f"{' (or None)' if allow_none else ''}, got {value!r}")
    return v


@dataclass(frozen=True, eq=False)
class RunOptions:
    """How to run: to ``t_end`` [s] (inf: no end, for a step-wise :func:`make_simulator`) by ``method`` (a
    :class:`kane.Method` or its name) with ``rtol`` and ``atol`` (adaptive methods; atol a number or one per state
    entry), ``max_step``, ``min_step``, ``first_step`` [s]; ``dt`` [s] the step of fixed-step methods. Samples
    every ``output_dt`` [s] (None: every step); ``record`` keeps them in memory (the returned Trajectory),
    ``record_energy`` records the energy [J] where the dynamics has one.
    ``max_steps`` attempted steps and ``max_wall_time`` [s] stop a runaway run (None: the Simulator's defaults).
    ``projection``: a :class:`ProjectionMode` (or its name) or a hook ``projection(t, q, u) -> (q, u)``, run every
    ``project_every`` accepted steps. ``standard_monitors``: record ``kane simulate``'s monitors (constraint
    residuals, power, dependent-block condition; Kane's equations only); ``monitors``: more, name -> f(t, q, u).
    ``events``: :class:`kane.simulate.Event` objects. ``mode`` names the first mode; ``description`` is stored
    with the run (None: the dynamics'). ``loop``: a :class:`Loop` (or its name).
    """

    t_end: float
    method: Method | str = Method.DOPRI5
    rtol: float = 1e-8
    atol: Any = 1e-10
    dt: float | None = None
    output_dt: float | None = None
    max_step: float = math.inf
    min_step: float = 0.0
    first_step: float | None = None
    max_steps: int | None = None
    max_wall_time: float | None = None
    projection: ProjectionMode | str | Callable = ProjectionMode.NONE
    project_every: int = 1
    standard_monitors: bool = False
    monitors: Any = ()
    events: Iterable[Event] = ()
    record_energy: bool = True
    record: bool = True
    mode: str = "default"
    description: str | None = None
    loop: Loop | str = Loop.AUTO

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        try:
            t_end = float(self.t_end)
        except (TypeError, ValueError):
            t_end = math.nan
        if not (math.isfinite(t_end) or t_end == math.inf):
            raise ArgumentError(f"run options: t_end must be a finite time [s] (or inf: a step-wise Simulator "
                                f"without an end, see make_simulator), got {self.t_end!r}")
        put("t_end", t_end)
        try:
            put("method", Method.parse(self.method))
        except ValueError as exc:
            raise ArgumentError(f"run options: method: {exc}") from None
        if not (isinstance(self.rtol, (int, float)) and self.rtol > 0 and math.isfinite(self.rtol)):
            raise ArgumentError(f"run options: rtol must be a finite number > 0 (relative, no unit), got "
                                f"{self.rtol!r}")
        atol = np.asarray(self.atol, dtype=float) if not isinstance(self.atol, str) else np.array(np.nan)
        if atol.ndim > 1 or not (np.isfinite(atol).all() and (atol > 0).all()):
            raise ArgumentError(f"run options: atol must be a finite number > 0 [state units] or one per state "
                                f"entry, got {self.atol!r}")
        put("atol", float(atol) if atol.ndim == 0 else tuple(atol.tolist()))
        put("dt", _positive_time("dt", self.dt, allow_none=True))
        put("output_dt", _positive_time("output_dt", self.output_dt, allow_none=True))
        put("max_step", _positive_time("max_step", self.max_step, allow_inf=True))
        put("first_step", _positive_time("first_step", self.first_step, allow_none=True))
        put("max_wall_time", _positive_time("max_wall_time", self.max_wall_time, allow_none=True, allow_inf=True))
        if not (isinstance(self.min_step, (int, float)) and 0 <= self.min_step < math.inf):
            raise ArgumentError(f"run options: min_step must be a finite time >= 0 s, got {self.min_step!r}")
        for name, v in (("max_steps", self.max_steps), ("project_every", self.project_every)):
            if not (v is None and name == "max_steps") and not (
                    isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1):
                raise ArgumentError(f"run options: {name} must be an integer >= 1 "
                                    f"{'step' if name == 'max_steps' else 'accepted step'}, got {v!r}")
        if not callable(self.projection):
            mode = parse_enum(ProjectionMode, self.projection)
            if mode is None:
                raise ArgumentError(f"run options: projection must be one of {[m.value for m in ProjectionMode]} "
                                    f"or a function (t, q, u) -> (q, u), got {self.projection!r}")
            put("projection", mode)
        loop = parse_enum(Loop, self.loop)
        if loop is None:
            raise ArgumentError(f"run options: loop must be one of {[m.value for m in Loop]}, got {self.loop!r}")
        put("loop", loop)
        monitors = tuple(self.monitors.items() if isinstance(self.monitors, Mapping) else self.monitors or ())
        bad = [m for m in monitors if not (isinstance(m, tuple) and len(m) == 2 and isinstance(m[0], str)
                                           and callable(m[1]))]
        if bad:
            raise ArgumentError(f"run options: monitors must map names to functions f(t, q, u) -> float, got "
                                f"{bad[0]!r}")
        put("monitors", monitors)
        put("events", tuple(self.events or ()))
        if not isinstance(self.mode, str) or not self.mode:
            raise ArgumentError(f"run options: mode must be a non-empty name, got {self.mode!r}")

    @property
    def atol_value(self):
        """``atol`` as the integrators take it: a number, or an array (n,) of one per state entry."""
        return np.asarray(self.atol) if isinstance(self.atol, tuple) else self.atol


@dataclass(frozen=True, eq=False)
class State:
    """The start of a run: coordinates ``q`` (n_q,), speeds ``u`` (n_u,) (None: zeros) at time ``t`` [s]."""

    q: Any
    u: Any = None
    t: float = 0.0

    def __post_init__(self):
        for name, v in (("q", self.q), ("u", self.u)):
            if v is not None:
                v = np.array(v, dtype=float).reshape(-1)
                v.setflags(write=False)
                object.__setattr__(self, name, v)
        try:
            t = float(self.t)
        except (TypeError, ValueError):
            t = math.nan
        if not math.isfinite(t):
            raise ArgumentError(f"state: t must be a finite time [s], got {self.t!r}")
        object.__setattr__(self, "t", t)


@dataclass(frozen=True, eq=False)
class RunRequest:
    """A run made ready but not started (what ``kane simulate`` builds from a model file): ``dynamics``, ``state``,
    ``options``, ``params`` and ``inputs`` for :func:`run`; :meth:`start` runs it with a writer and progress."""

    dynamics: Any
    state: State
    options: RunOptions
    params: Any = None
    inputs: Any = None

    def start(self, writer: TrajectoryWriter | None = None, progress: Callable | None = None) -> Trajectory:
        """:func:`run` of this request."""
        return run(self.dynamics, self.state, self.options, writer, params=self.params, inputs=self.inputs,
                   progress=progress)


def _warn_inconsistent_start(dynamics, t0, q0, params, projection) -> None:
    """Say so when q0 violates a holonomic constraint by more than 1e-9 (a projection, if any, corrects it)."""
    if isinstance(dynamics, Dynamics):
        if not dynamics.capabilities.holonomic:
            return
        rows = dynamics.holonomic_rows
    else:
        rows = getattr(dynamics, "holonomic_rows", None)  # an object outside the protocol (a user's own class)
        if rows is None:
            return
    C = np.asarray(rows(t0, q0, params)[0])
    if C.size and float(np.max(np.abs(C))) > 1e-9:
        fix = "the projection corrects it at the first step" if projection is not None else \
            "kane.assemble(dyn, t, q) gives a consistent q0"
        warnings.warn(f"the initial configuration violates the holonomic constraints: max |C(q0)| = "
                      f"{float(np.max(np.abs(C))):.3g}; {fix}", InconsistentStartWarning, stacklevel=5)


def _projection(dynamics, options: RunOptions, t0: float, q0, params):
    """The projection hook of ``options`` for ``dynamics`` (None: none)."""
    choice = options.projection
    if callable(choice):
        return choice
    caps = dynamics.capabilities if isinstance(dynamics, Dynamics) else None
    if choice is ProjectionMode.AUTO:
        if caps is not None and caps.projection:
            choice = ProjectionMode.DYNAMICS
        elif caps is not None and caps.holonomic and q0 is not None and \
                np.size(dynamics.holonomic_rows(t0, q0, params)[0]):
            choice = ProjectionMode.ASSEMBLY
        else:
            return None
    if choice is ProjectionMode.NONE:
        return None
    if caps is None:
        raise ArgumentError(f"run options: projection {choice.value} needs a kane.Dynamics; "
                            f"{type(dynamics).__name__} is not one (pass a function (t, q, u) -> (q, u))")
    if choice is ProjectionMode.DYNAMICS:
        if not caps.projection:
            raise ArgumentError(f"run options: projection dynamics needs a projection of the dynamics' own; "
                                f"{type(dynamics).__name__} has none")
        return dynamics.make_projection(params)
    if not caps.holonomic:
        raise ArgumentError(f"run options: projection assembly needs holonomic rows; {type(dynamics).__name__} "
                            "has none")
    return make_projection(dynamics, params=params)


def _monitors(dynamics, options: RunOptions, params, inputs) -> dict[str, Residual]:
    out = {}
    if options.standard_monitors:
        if not isinstance(dynamics, KaneDynamics):
            raise ArgumentError(f"run options: standard_monitors are those of Kane's equations; "
                                f"{type(dynamics).__name__} has none")
        out.update(standard_monitors(dynamics, params, inputs))
    for name, fn in options.monitors:
        if name in out:
            raise ArgumentError(f"run options: monitor {name!r} is one of the standard monitors")
        out[name] = fn
    return out


def _python_loop(sim: Simulator, t_end: float, progress) -> None:
    """Step ``sim`` to t_end, calling ``progress(sim)`` after every step (it keeps its own pace)."""
    if progress is None:
        sim.run(t_end)
        return
    sim.integrator.t_bound = t_end
    while sim.t < t_end and not sim.terminated:
        sim.step()
        progress(sim)
    sim.run(t_end)  # the closing sample at the final time


def _run_stepper(dynamics, state: State, options: RunOptions, writer, params, inputs, progress) -> Trajectory:
    """:func:`run` of a dynamics whose capabilities say ``steps_itself``: the Python loop over the object its
    ``stepper(state, options, writer, params, inputs)`` returns (see :class:`kane.protocol.Capabilities`)."""
    why, t1 = dynamics.capabilities.compiled_loop_reason, options.t_end
    if options.loop is Loop.COMPILED:
        raise ArgumentError(f"run options: loop=compiled, but this run cannot take the compiled loop: {why}")
    stepper = dynamics.stepper(state, options, writer, params, inputs)
    stepper.record_loop("python", why)
    with _closing_on_interrupt(writer, stepper):
        while progress is not None and stepper.t < t1 and not stepper.terminated:
            stepper.step()
            progress(stepper)
        stepper.run(t1)
    traj = stepper.finish()
    return load_trajectory(writer.path) if traj is None and writer is not None else traj


@contextmanager
def _closing_on_interrupt(writer, sim):
    """Run the body with SIGTERM taken as an interrupt where a file is written; an interrupt or error other than a
    :class:`SimulationError` (which saves its own) closes the writer's file with the status and ``sim.stats``."""
    try:
        with interrupt_signals(signals=(signal.SIGTERM,), only_default=True) if writer else nullcontext():
            yield
    except SimulationError:
        raise
    except BaseException as exc:
        if writer is not None and writer.is_open:
            writer.close(interrupted_status(exc), sim.stats)
        raise


def _check_start(state: State, options: RunOptions) -> float:
    """The start time t0 [s] of ``state`` after checking the types of ``state`` and ``options`` and that
    ``options.t_end`` is not before it."""
    if not isinstance(options, RunOptions):
        raise ArgumentError(f"run: options must be a kane.RunOptions, got {type(options).__name__}")
    if not isinstance(state, State):
        raise ArgumentError(f"run: state must be a kane.State(q, u, t), got {type(state).__name__}")
    if not options.t_end >= state.t:
        raise ArgumentError(f"run options: t_end = {options.t_end!r} s is before the state's time t = {state.t!r} s")
    return state.t


def make_simulator(dynamics: Any, state: State, options: RunOptions, writer: TrajectoryWriter | None = None, *,
                   params: Any = None, inputs: Mapping[str, float] | Callable | None = None) -> Simulator:
    """The step-wise :class:`Simulator` of ``dynamics`` from ``state`` with ``options`` (what :func:`run` steps;
    interactive callers, a live viewer or a realtime plant, step it themselves; ``options.t_end`` may be inf).
    ``options.loop`` is not used. Unlike :func:`run` it does not warn of a start off the holonomic constraints (a
    viewer rebinds mid-run, between projections)."""
    return _simulator(dynamics, state, options, writer, params, inputs, warn_start=False)


def _simulator(dynamics, state: State, options: RunOptions, writer, params, inputs, warn_start: bool) -> Simulator:
    """The one place that turns ``options`` into a :class:`Simulator` (see :func:`make_simulator`)."""
    t0 = _check_start(state, options)
    projection = _projection(dynamics, options, t0, state.q, params)
    if warn_start:
        _warn_inconsistent_start(dynamics, t0, state.q, params, projection)
    try:
        return Simulator(dynamics, t0=t0, q0=state.q, u0=state.u, method=options.method, rtol=options.rtol,
                         atol=options.atol_value,
                         dt=options.dt, t_end=options.t_end, params=params, inputs=inputs, events=options.events,
                         monitors=_monitors(dynamics, options, params, inputs), record_energy=options.record_energy,
                         output_dt=options.output_dt, record=options.record, writer=writer, projection=projection,
                         project_every=options.project_every, max_step=options.max_step, min_step=options.min_step,
                         first_step=options.first_step, mode=options.mode, description=options.description,
                         max_steps=options.max_steps, max_wall_time=options.max_wall_time)
    except ValueError as exc:  # an argument refused by an integrator or numpy
        if isinstance(exc, KaneError):
            raise
        raise ArgumentError(str(exc)) from exc


def run(dynamics: Any, state: State, options: RunOptions, writer: TrajectoryWriter | None = None, *,
        params: Any = None, inputs: Mapping[str, float] | Callable | None = None,
        progress: Callable[[Simulator], None] | None = None) -> Trajectory:
    """Run ``dynamics`` (a :class:`kane.Dynamics`) from ``state`` to ``options.t_end`` [s] and return the
    Trajectory (in memory when ``options.record``; else read back from the writer's file).

    ``writer``: a :class:`kane.io.trajectory.TrajectoryWriter` the samples stream to; its file is renamed to its
    final path at the end, also when the run fails (status "failed: ...") or is interrupted (Ctrl-C, or SIGTERM
    unless the program handles it: "interrupted: ..."). ``params`` and ``inputs`` (a mapping, or a function
    inputs(t, q, u) -> mapping) go to the dynamics. ``progress(sim)``: called between stretches of the compiled
    loop and after every step of the Python loop (it keeps its own pace); it may raise KeyboardInterrupt to stop
    the run (the file is closed as interrupted and the exception goes on). A failure raises :class:`SimulationError`.
    """
    _check_start(state, options)
    if options.t_end == math.inf:
        raise ArgumentError("run options: t_end = inf: run needs a finite end [s] (step a make_simulator() "
                            "Simulator for a run without one)")
    if isinstance(dynamics, Dynamics) and dynamics.capabilities.steps_itself:
        return _run_stepper(dynamics, state, options, writer, params, inputs, progress)
    sim = _simulator(dynamics, state, options, writer, params, inputs, warn_start=True)
    t1 = options.t_end
    with _closing_on_interrupt(writer, sim):
        runner, why = None, "requested (loop=python)"
        if options.loop is not Loop.PYTHON:
            runner, why = compiled_loop_choice(
                sim, dynamics, options.method, params=params, inputs=inputs, rtol=options.rtol,
                atol=options.atol_value,
                dt=options.dt, t_end=t1, max_step=options.max_step, min_step=options.min_step,
                first_step=options.first_step)
            if runner is None and options.loop is Loop.COMPILED:
                raise ArgumentError(f"run options: loop=compiled, but this run cannot take the compiled loop: "
                                    f"{why}")
        if runner is None:
            sim.record_loop("python", why)
        else:  # with a projection, C takes one step at a time and Python projects after each
            sim.record_loop("compiled", "" if not sim.projects else
                            "one step at a time, the projection onto the constraints in Python after each")
        if runner is not None:
            runner.run(t1, progress)
        else:
            _python_loop(sim, t1, progress)
    traj = sim.finish()
    if traj is None and writer is not None:
        traj = load_trajectory(writer.path)
    return traj


def simulate(dynamics: Any, t_span: tuple[float, float], q0: Any, u0: Any, method: Method | str = Method.DOPRI5,
             rtol: float = 1e-8, atol: float | np.ndarray = 1e-10, dt: float | None = None,
             events: Iterable[Event] = (), params: Any = None, inputs: Mapping[str, float] | Callable | None = None,
             output_dt: float | None = None, monitors: Mapping[str, Residual] | None = None,
             path: str | os.PathLike | None = None, *, record_energy: bool = True,
             projection: Callable | None = None, project_every: int = 1, max_step: float = np.inf,
             min_step: float = 0.0, first_step: float | None = None, mode: str = "default",
             description: str | None = None, flush_every: int = 1000, flush_seconds: float = 1.0,
             max_steps: int | None = None, max_wall_time: float | None = None) -> Trajectory:
    """Integrate ``dynamics`` over ``t_span`` = (t0, t1) [s] from q0 (n_q,), u0 (n_u,) and return the Trajectory:
    :func:`run` with ``RunOptions`` of these arguments (see :class:`kane.simulate.Simulator` for them). With
    ``path``, samples are written during the run to ``path + '.partial'`` (flushed every ``flush_every`` samples
    or ``flush_seconds`` [s]) and the file is renamed to ``path`` at the end, also when the run fails or is
    interrupted."""
    try:
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError):
        raise ArgumentError(f"t_span = {t_span!r}: expected (t0, t1), two real numbers [s]") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and t1 >= t0):
        raise ArgumentError(f"t_span = {t_span!r}: expected finite times, the end not before the start")
    options = RunOptions(t_end=t1, method=method, rtol=rtol, atol=atol, dt=dt, output_dt=output_dt,
                         max_step=max_step, min_step=min_step, first_step=first_step, max_steps=max_steps,
                         max_wall_time=max_wall_time,
                         projection=ProjectionMode.NONE if projection is None else projection,
                         project_every=project_every, monitors=monitors or {}, events=events,
                         record_energy=record_energy, mode=mode, description=description)
    writer = TrajectoryWriter(path, flush_every=flush_every, flush_seconds=flush_seconds) if path else None
    return run(dynamics, State(q0, u0, t0), options, writer, params=params, inputs=inputs)
