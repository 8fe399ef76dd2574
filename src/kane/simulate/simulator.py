"""Step-wise simulation of a dynamics object (``Simulator``); :mod:`kane.simulate.run` runs one to the end.

The simulator owns the integrator, the event detector, the monitors (energy [J] when the dynamics provides it,
user residual functions), the optional projection hook (constraint drift correction every ``project_every``
accepted steps), the current mode name and the recording of samples, in memory and/or to a TrajectoryWriter.
A failing step (NaN/inf state, a step below the minimum, an exception from the dynamics, an event function
returning NaN) stops the run with a :class:`SimulationError` giving the time, the mode and the last good state;
the trajectory so far is attached to the error and, when a writer is given, saved to its path.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from kane.errors import KaneError
from kane.protocol import Dynamics
from kane.simulate.events import Event, EventDetector, EventFunctionError
from kane.simulate.integrators import Integrator, IntegratorError, Method, Rhs, Step, make_integrator
from kane.simulate.run_limits import limit_reached, run_limits
from kane.io.trajectory import EventRecord, Stats, Trajectory, TrajectoryWriter, load_trajectory

__all__ = ["SimulationError", "StepInfo", "Simulator", "InconsistentStartWarning"]

Residual = Callable[[float, np.ndarray, np.ndarray], float]
Projection = Callable[[float, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class SimulationError(KaneError, RuntimeError):
    """A run stopped on a failure. Attributes: ``t`` [s] where it failed, ``mode``, ``t_good`` [s], ``q``, ``u``
    (the last good state), ``reason`` and ``trajectory`` (the samples so far, status "failed: ...", or None)."""

    def __init__(self, message: str, *, reason: str, t: float, mode: str, t_good: float, q: np.ndarray,
                 u: np.ndarray, trajectory: Trajectory | None = None):
        super().__init__(message)
        self.reason = reason
        self.t = t
        self.mode = mode
        self.t_good = t_good
        self.q = q
        self.u = u
        self.trajectory = trajectory


@dataclass(frozen=True)
class StepInfo:
    """What one ``Simulator.step()`` did: the step from ``t_old`` to ``t_new`` [s] (``t_new`` is the event time
    when a terminal event cut it), the event records, whether it terminated or projected, and the integrator's
    ``step`` (dense output over the whole integrator step)."""

    t_old: float
    t_new: float
    events: tuple[EventRecord, ...]
    terminated: bool
    projected: bool
    step: Step


def _names(dynamics: Any, attr: str, n: int, prefix: str) -> tuple[str, ...]:
    names = tuple(getattr(dynamics, attr, ()) or ())
    if not names:
        return tuple(f"{prefix}{i}" for i in range(n))
    if len(names) != n:
        raise ValueError(f"dynamics.{attr} has {len(names)} names but the dynamics has {n} entries")
    return names


def _check_quaternions(dynamics: Any, q0: np.ndarray) -> None:
    """Refuse non-unit quaternions in q0 by the dynamics' own check (its state's layout), else (an object outside
    the protocol) by its model's where q0 is in the model's joint coordinates: never the model's joint slices on a
    state of another layout."""
    if isinstance(dynamics, Dynamics):
        dynamics.check_quaternions(q0, "q0")
        return
    model = getattr(dynamics, "model", None)
    if callable(getattr(dynamics, "check_quaternions", None)):
        dynamics.check_quaternions(q0, "q0")
    elif hasattr(model, "check_quaternions") and len(model.q) == len(q0) and \
            tuple(getattr(dynamics, "q_names", ()) or map(str, model.q)) == tuple(map(str, model.q)):
        model.check_quaternions(q0, "q0")


def _vector(value: Any, n: int, what: str) -> np.ndarray:
    v = np.zeros(n) if value is None else np.array(value, dtype=float).reshape(-1)
    if v.shape != (n,):
        raise ValueError(f"{what} has {v.size} entries, expected {n}")
    if not np.isfinite(v).all():
        raise ValueError(f"{what} is not finite: {v}")
    return v


def _float_params(params: Any) -> dict[str, float]:
    if not isinstance(params, Mapping):
        return {}
    out = {}
    for k, v in params.items():
        try:
            out[str(k)] = float(v)
        except (TypeError, ValueError):
            continue
    return out


class Simulator:
    """Advance ``dynamics`` one accepted step at a time from (t0 [s], q0 (n_q,), u0 (n_u,)).

    ``method``: a Method (or its name). Adaptive methods use ``rtol``, ``atol``, ``max_step``, ``min_step``,
    ``first_step`` [s]; fixed-step ones need ``dt`` [s]. ``t_end`` [s] bounds the steps (``run`` sets it).
    ``params`` and ``inputs`` (mapping, or callable inputs(t, q, u) -> mapping) are passed to the dynamics.
    ``events``: Event objects. ``monitors``: residual functions name -> f(t, q, u) -> float, recorded with every
    sample, as is the energy [J] when ``record_energy`` and the dynamics implements ``energy``.
    Samples are taken every ``output_dt`` [s] from t0 (dense output) or, if None, at every step; kept in memory
    when ``record`` and sent to ``writer`` when given, as are the event crossings when ``record_events`` (False
    where the caller keeps records of its own, as :mod:`kane.switching` does). ``projection(t, q, u) -> (q, u)``
    runs every ``project_every`` accepted steps. ``mode`` names the initial mode.
    A runaway run stops with a SimulationError, samples saved, after ``max_steps`` attempted steps or
    ``max_wall_time`` [s] in ``step()`` (None: 1,000,000 steps for adaptive methods, no other limit).
    """

    def __init__(self, dynamics: Any, *, t0: float = 0.0, q0: Any = None, u0: Any = None,
                 method: Method | str = Method.DOPRI5, rtol: float = 1e-8, atol: float | np.ndarray = 1e-10,
                 dt: float | None = None, t_end: float = np.inf, params: Any = None,
                 inputs: Mapping[str, float] | Callable | None = None, events: Iterable[Event] = (),
                 monitors: Mapping[str, Residual] | None = None, record_energy: bool = True,
                 output_dt: float | None = None, record: bool = True, writer: TrajectoryWriter | None = None,
                 projection: Projection | None = None, project_every: int = 1, max_step: float = np.inf,
                 min_step: float = 0.0, first_step: float | None = None, mode: str = "default",
                 description: str | None = None, max_steps: int | None = None,
                 max_wall_time: float | None = None, record_events: bool = True):
        self.dynamics = dynamics
        self._record_events = bool(record_events)
        self.method = Method.parse(method)
        self.n_q, self.n_u = int(dynamics.n_q), int(dynamics.n_u)
        self.q_names = _names(dynamics, "q_names", self.n_q, "q")
        self.u_names = _names(dynamics, "u_names", self.n_u, "u")
        self.params = params
        t0 = float(t0)
        x0 = np.concatenate([_vector(q0, self.n_q, "q0"), _vector(u0, self.n_u, "u0")])
        _check_quaternions(dynamics, x0[: self.n_q])  # a zero quaternion is no rotation
        if output_dt is not None and not (output_dt > 0 and math.isfinite(output_dt)):
            raise ValueError(f"output_dt must be a finite time > 0 [s], got {output_dt!r}")
        if int(project_every) < 1:
            raise ValueError(f"project_every must be >= 1 accepted step, got {project_every!r}")
        if description is None:
            description = getattr(dynamics, "description", "")
        self.description = description if isinstance(description, str) else ""
        self._rhs = Rhs(dynamics, params, inputs)
        try:  # evaluate once, so that a state where the dynamics fail gives a SimulationError, not a traceback
            f0 = self._rhs(t0, x0)
            if not np.all(np.isfinite(f0)):
                raise FloatingPointError("the state derivative is NaN or inf")
        except Exception as exc:
            self._fail_at_start(t0, x0, str(mode), exc)
        self._rhs.n_fev = 0
        self._max_steps, self._max_wall = run_limits(self.method, max_steps, max_wall_time)
        try:
            self._integrator = make_integrator(self.method, self._rhs, t0, x0, t_bound=t_end, rtol=rtol,
                                               atol=atol, dt=dt, max_step=max_step, min_step=min_step,
                                               first_step=first_step)
        except IntegratorError as exc:
            self._fail_at_start(t0, x0, str(mode), exc)
        self._events = EventDetector(events, self.n_q)
        self._events.start(t0, x0)
        self._monitors = dict(monitors or {})
        if "energy" in self._monitors:
            raise ValueError("monitor name 'energy' is reserved for the dynamics' energy")
        self._has_energy = bool(record_energy) and self._probe_energy(t0, x0)
        self._projection = projection
        self._project_every = int(project_every)
        self._since_projection = 0
        self._output_dt = None if output_dt is None else float(output_dt)
        self._grid_t0 = t0
        self._grid_k = 1
        self._t, self._x = t0, x0
        self._terminal: tuple[str, int, float] | None = None
        self.failed: str | None = None
        self.finished = False
        self._wall = 0.0
        self._loop = ("python", "stepped by Simulator.step()")
        self._record = bool(record)
        self._rows_t: list[float] = []
        self._rows_x: list[np.ndarray] = []
        self._rows_e: list[float] = []
        self._rows_r: list[tuple[float, ...]] = []
        self._t_sampled = -math.inf
        self._x_sampled = x0
        self._event_records: list[EventRecord] = []
        self._modes: list[list] = [[t0, None, str(mode)]]
        self._writer = writer
        if writer is not None:
            writer.open(q_names=self.q_names, u_names=self.u_names, residual_names=tuple(self._monitors),
                        has_energy=self._has_energy, description=self.description,
                        params=_float_params(params), method=self.method.value)
            writer.start_mode(t0, str(mode))
        try:
            self._sample(t0, x0)
        except Exception as exc:
            self._fail(f"{type(exc).__name__} raised by a monitor at the start: {exc}", t0, t0, x0, exc)

    def _fail_at_start(self, t0: float, x0: np.ndarray, mode: str, exc: BaseException) -> None:
        q, u = x0[: self.n_q].copy(), x0[self.n_q:].copy()
        fmt = ", ".join
        reason = (f"no first step can be chosen: {exc.reason}" if isinstance(exc, IntegratorError) else
                  f"the dynamics cannot be evaluated at the initial state ({type(exc).__name__}: {exc})")
        message = (f"simulation failed at t = {t0!r} s in mode '{mode}': {reason}\n"
                   f"  q: {fmt(f'{n}={v:.12g}' for n, v in zip(self.q_names, q))}\n"
                   f"  u: {fmt(f'{n}={v:.12g}' for n, v in zip(self.u_names, u))}")
        raise SimulationError(message, reason=reason, t=t0, mode=mode, t_good=t0, q=q, u=u,
                              trajectory=None) from exc

    def _probe_energy(self, t: float, x: np.ndarray) -> bool:
        if isinstance(self.dynamics, Dynamics) and not self.dynamics.capabilities.energy:
            return False
        energy = getattr(self.dynamics, "energy", None)
        if energy is None:
            return False
        try:
            energy(t, x[: self.n_q], x[self.n_q:], params=self.params)
        except NotImplementedError:
            return False
        return True

    @property
    def t(self) -> float:
        """Current time [s]."""
        return self._t

    @property
    def x(self) -> np.ndarray:
        """Current state concat(q, u), shape (n_q + n_u,) (a copy)."""
        return self._x.copy()

    @property
    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """Current (q (n_q,), u (n_u,)) (copies)."""
        return self._x[: self.n_q].copy(), self._x[self.n_q:].copy()

    @property
    def mode(self) -> str:
        """Name of the current mode."""
        return self._modes[-1][2]

    @property
    def terminated(self) -> bool:
        """True after a terminal event, until ``reset()``."""
        return self._terminal is not None

    @property
    def integrator(self) -> Integrator:
        """The integrator in use."""
        return self._integrator

    @property
    def projects(self) -> bool:
        """Whether a projection onto the constraints runs after accepted steps."""
        return self._projection is not None

    @property
    def event_detector(self) -> EventDetector:
        """The detector of this run's events (its ``events`` and their last values)."""
        return self._events

    @property
    def has_energy(self) -> bool:
        """Whether the energy [J] is recorded with every sample."""
        return self._has_energy

    @property
    def monitors(self) -> Mapping[str, Residual]:
        """The residual monitors recorded with every sample, name -> f(t, q, u) (read-only)."""
        return MappingProxyType(self._monitors)

    @property
    def max_steps(self) -> int | None:
        """The most attempted steps before the run stops (None: no limit)."""
        return self._max_steps

    def record_samples(self, t: np.ndarray, x: np.ndarray, energy: np.ndarray | None, residuals: np.ndarray) -> None:
        """Record k samples taken elsewhere (the compiled loop): t (k,) [s], x (k, n_q + n_u), energy (k,) [J] (None
        without), residuals (k, number of monitors) in :attr:`monitors` order; in memory and to the writer."""
        k = len(t)
        if not k:
            return
        if self._record:
            self._rows_t.extend(t.tolist())
            self._rows_x.extend(x)
            self._rows_e.extend(energy.tolist() if energy is not None else [None] * k)
            self._rows_r.extend(map(tuple, residuals.tolist()))
        if self._writer is not None:
            self._writer.append_block(t, x[:, :self.n_q], x[:, self.n_q:], energy,
                                      {name: residuals[:, j] for j, name in enumerate(self._monitors)})
        self._t_sampled, self._x_sampled = float(t[-1]), x[-1]

    @property
    def event_records(self) -> list[EventRecord]:
        """Events so far."""
        return list(self._event_records)

    @property
    def stats(self) -> Stats:
        """Work so far (evaluations, steps) and wall time [s] spent in ``step()``."""
        c = self._integrator.counters
        return Stats(n_fev=c.n_fev, n_steps=c.n_steps, n_accepted=c.n_accepted, n_rejected=c.n_rejected,
                     wall_time_s=self._wall, method=self.method.value, n_jev=c.n_jev, n_lu=c.n_lu,
                     loop=self._loop[0], loop_reason=self._loop[1])

    def record_loop(self, loop: str, reason: str = "") -> None:
        """Record which loop steps this run ("compiled" or "python") and why not the compiled one (``reason``,
        "" when it runs), as :attr:`stats` and the file report it (:func:`kane.simulate.run` calls it)."""
        self._loop = (str(loop), str(reason))

    def set_mode(self, mode: str) -> None:
        """Start mode ``mode`` at the current time (recorded in the trajectory's ``modes``)."""
        if mode == self.mode:
            return
        self._modes[-1][1] = self._t
        self._modes.append([self._t, None, str(mode)])
        if self._writer is not None and self._writer.is_open:
            self._writer.start_mode(self._t, str(mode))

    def reset(self, t: float | None = None, q: Any = None, u: Any = None, mode: str | None = None) -> None:
        """Continue from (t, q, u) (each defaults to the current value), e.g. after a terminal event and an
        impulse; clears the terminated flag. An event that just fired at this time is taken as on its surface.
        A changed state is recorded as a sample at t (so a jump shows as two samples at the same time)."""
        t = self._t if t is None else float(t)
        q = self._x[: self.n_q] if q is None else q
        u = self._x[self.n_q:] if u is None else u
        x = np.concatenate([_vector(q, self.n_q, "q"), _vector(u, self.n_u, "u")])
        on_surface = [self._terminal[1]] if self._terminal and self._terminal[2] == t else []
        changed = t != self._t or not np.array_equal(x, self._x)
        self._integrator.reset(t, x)
        self._events.start(t, x, on_surface)
        self._t, self._x, self._terminal = t, x, None
        if self._output_dt is not None:
            self._grid_k = max(1, math.floor((t - self._grid_t0) / self._output_dt) + 1)
        if mode is not None:
            self.set_mode(mode)
        if changed and (t != self._t_sampled or not np.array_equal(x, self._x_sampled)):
            self._sample(t, x)  # a restart where the run stands (a held force's new period) records nothing

    def step(self) -> StepInfo:
        """Take one accepted step (cut at a terminal event); raises SimulationError on failure."""
        if self.failed is not None:
            raise RuntimeError(f"the simulation failed ({self.failed}) and cannot continue")
        if self._terminal is not None:
            raise RuntimeError(f"the simulation stopped on terminal event '{self._terminal[0]}' at "
                               f"t = {self._t!r} s; call reset() to continue")
        if not self._t < self._integrator.t_bound:
            raise RuntimeError(f"the simulation reached its end t = {self._t!r} s; call run(t_end) with a later "
                               f"t_end to go on")
        self.check_limits()
        start = time.perf_counter()
        t_good, x_good = self._t, self._x
        try:
            return self._advance()
        except IntegratorError as exc:
            self._fail(exc.reason, exc.t, t_good, x_good, exc)
        except EventFunctionError as exc:
            self._fail(str(exc), exc.t, t_good, x_good, exc)
        except Exception as exc:
            self._fail(f"{type(exc).__name__} raised during the step from t = {t_good!r} s: {exc}",
                       t_good, t_good, x_good, exc)
        finally:
            self._wall += time.perf_counter() - start

    def check_limits(self) -> None:
        """Stop the run (SimulationError, samples saved) when its step or wall-time limit is reached."""
        reason = limit_reached(self._integrator.counters.n_steps, self._wall, self._t, self._max_steps, self._max_wall)
        if reason is not None:
            self._fail(reason, self._t, self._t, self._x, None)

    def _advance(self) -> StepInfo:
        integ = self._integrator
        step = integ.step()
        x_new = step.x_new
        if not np.isfinite(x_new).all():
            raise IntegratorError("the state became NaN or inf", step.t_new)
        hits = self._events.check(step, step.t_old, step.t_new, x_new) if self._events else []
        terminal = hits[-1] if hits and hits[-1].event.terminal else None
        t_stop, x_stop = (terminal.t, terminal.x) if terminal else (step.t_new, x_new)
        projected = False
        if terminal is not None:
            self._terminal = (terminal.event.name, terminal.index, t_stop)
        elif self._projection is not None:
            self._since_projection += 1
            if self._since_projection >= self._project_every:
                self._since_projection = 0
                x_stop = self._project(t_stop, x_stop)
                integ.reset(t_stop, x_stop)
                self._events.start(t_stop, x_stop)
                projected = True
        self._t, self._x = t_stop, x_stop
        self._sample_step(step, t_stop, x_stop, terminal is not None)
        records = tuple(EventRecord(h.t, h.event.name, "terminal" if h.event.terminal else "crossing",
                                    {"direction": h.crossing}) for h in hits)
        for rec in records if self._record_events else ():
            self._event_records.append(rec)
            if self._writer is not None:
                self._writer.add_event(rec)
        return StepInfo(step.t_old, t_stop, records, terminal is not None, projected, step)

    def _project(self, t: float, x: np.ndarray) -> np.ndarray:
        q, u = self._projection(t, x[: self.n_q].copy(), x[self.n_q:].copy())
        x_p = np.concatenate([np.asarray(q, dtype=float).reshape(-1), np.asarray(u, dtype=float).reshape(-1)])
        if x_p.shape != x.shape or not np.isfinite(x_p).all():
            raise IntegratorError(f"the projection returned q, u of sizes {np.size(q)}, {np.size(u)} "
                                  f"(expected {self.n_q}, {self.n_u}) or non-finite values", t)
        return x_p

    def _sample_step(self, step: Step, t_stop: float, x_stop: np.ndarray, force_end: bool) -> None:
        dt_out = self._output_dt
        if dt_out is None:
            self._sample(t_stop, x_stop)
            return
        tol = 1e-9 * dt_out
        while True:
            tk = self._grid_t0 + self._grid_k * dt_out
            if tk > t_stop + tol:
                break
            self._grid_k += 1
            if tk >= t_stop - tol:
                self._sample(t_stop, x_stop)
            elif self._projection is not None:  # an interpolated sample is put back on the constraints too
                self._sample(tk, self._project(tk, step(tk)))
            else:
                self._sample(tk, step(tk))
        if force_end and self._t_sampled < t_stop:
            self._sample(t_stop, x_stop)

    def _sample(self, t: float, x: np.ndarray) -> None:
        q, u = x[: self.n_q], x[self.n_q:]
        energy = float(self.dynamics.energy(t, q, u, params=self.params)) if self._has_energy else None
        res = tuple(float(f(t, q, u)) for f in self._monitors.values())
        self._t_sampled, self._x_sampled = t, x
        if self._record:
            self._rows_t.append(t)
            self._rows_x.append(x)
            self._rows_e.append(energy)
            self._rows_r.append(res)
        if self._writer is not None:
            self._writer.append(t, q, u, energy, res)

    def run(self, t_end: float) -> Trajectory | None:
        """Step until ``t_end`` [s] or a terminal event; the last sample is at the final time. Returns the
        trajectory so far (None when ``record=False``)."""
        if not t_end >= self._t:
            raise ValueError(f"t_end = {t_end!r} s is before the current time {self._t!r} s")
        self._integrator.t_bound = t_end
        while self._t < t_end and self._terminal is None:
            self.step()
        if self._t_sampled < self._t:
            try:
                self._sample(self._t, self._x)
            except Exception as exc:
                self._fail(f"{type(exc).__name__} raised by a monitor: {exc}", self._t, self._t, self._x, exc)
        return self.trajectory() if self._record else None

    def trajectory(self, status: str | None = None) -> Trajectory:
        """The samples recorded in memory so far (needs ``record=True``)."""
        if not self._record:
            raise RuntimeError("this Simulator was created with record=False; read the writer's file instead")
        if status is None:
            status = f"failed: {self.failed}" if self.failed is not None else "completed"
        n = len(self._rows_t)
        x = np.array(self._rows_x, dtype=float).reshape(n, self.n_q + self.n_u)
        res = np.array(self._rows_r, dtype=float).reshape(n, len(self._monitors))
        modes = [(a, self._t if b is None else b, m) for a, b, m in self._modes]
        return Trajectory(t=np.array(self._rows_t), q=x[:, : self.n_q], u=x[:, self.n_q:],
                          energy=np.array(self._rows_e, dtype=float) if self._has_energy else None,
                          residuals={k: res[:, i] for i, k in enumerate(self._monitors)},
                          events=list(self._event_records), modes=modes, stats=self.stats,
                          q_names=self.q_names, u_names=self.u_names, description=self.description,
                          params=_float_params(self.params), status=status)

    def finish(self, status: str = "completed") -> Trajectory | None:
        """End the run: close the writer (renaming its file to the final path) and return the trajectory
        (None when ``record=False``)."""
        if self._writer is not None and self._writer.is_open:
            self._writer.close(status, self.stats)
        self.finished = True
        return self.trajectory(status) if self._record else None

    def _fail(self, reason: str, t_fail: float, t_good: float, x_good: np.ndarray, exc: BaseException | None):
        self.failed = reason
        status = f"failed: {reason}"
        traj = self.trajectory(status) if self._record else None
        if self._writer is not None and self._writer.is_open:
            path = self._writer.close(status, self.stats)
            if traj is None:
                traj = load_trajectory(path)
        q, u = x_good[: self.n_q].copy(), x_good[self.n_q:].copy()
        fmt = ", ".join
        message = (f"simulation failed at t = {t_fail!r} s in mode '{self.mode}': {reason}\n"
                   f"last good state at t = {t_good!r} s:\n"
                   f"  q: {fmt(f'{n}={v:.12g}' for n, v in zip(self.q_names, q))}\n"
                   f"  u: {fmt(f'{n}={v:.12g}' for n, v in zip(self.u_names, u))}")
        if self._writer is not None:
            message += f"\nresults so far saved to {self._writer.path}"
        raise SimulationError(message, reason=reason, t=t_fail, mode=self.mode, t_good=t_good, q=q, u=u,
                              trajectory=traj) from exc


class InconsistentStartWarning(UserWarning):
    """The initial configuration violates a holonomic constraint (the run starts off the constraint manifold)."""
