"""The fixed-rate haptic loop (DESIGN.md, "The interactive loop"; Gillespie 2003, seed 000, Figure 2 with a
virtual coupler): each period read the device, compute the coupler force, write its opposite to the device, advance
the virtual system over the period with that force held (sub-steps of the compiled RK4 stepper, or of the Python
:class:`kane.simulate.Simulator`), log.

Scheduling runs on the monotonic clock ``time.perf_counter`` in the loop's own thread: sleep until shortly before
the period's start, then spin. In :attr:`ClockMode.VIRTUAL` the same code runs without waiting (faster than real
time; what the tests use, so that no result depends on the machine's timing). Stopping (``stop()``, Ctrl-C in
``run()``, the end of the run, a failure or a device that stops answering) writes zero force to the device, closes
it and saves the log.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, KaneError
from ..options import Method
from ..simulate import Simulator
from .coupler import VirtualCoupler
from .devices import check_sample
from .log import SAMPLE_MISSING, SAMPLE_REFUSED, SAMPLE_USED, RealtimeLog
from .stats import DeadlineStats, DeadlineSummary

__all__ = ["ClockMode", "Engine", "LoopOptions", "LoopResult", "RealtimeLoop"]


class ClockMode(enum.Enum):
    """REAL: periods start on the wall clock; VIRTUAL: no waiting, the loop's time advances by one period per
    iteration (same code path otherwise)."""

    REAL = "real"
    VIRTUAL = "virtual"


class Engine(enum.Enum):
    """Which integrator advances the virtual system: AUTO (the compiled C stepper when the dynamics use the C
    backend, else Python), COMPILED, PYTHON (RK4 of :class:`kane.simulate.Simulator`)."""

    AUTO = "auto"
    COMPILED = "compiled"
    PYTHON = "python"


@dataclass(frozen=True)
class LoopOptions:
    """``rate`` [Hz] of the loop, ``substeps`` RK4 steps of the dynamics per period, ``duration`` [s] (np.inf: until
    stopped), ``clock``, ``engine``, ``spin`` [s] spent spinning before each period's start (REAL clock),
    ``device_timeout`` [s]: consecutive periods without a usable sample after which the loop stops,
    ``flush_every`` log rows per write to disk."""

    rate: float = 1000.0
    substeps: int = 1
    duration: float = 10.0
    clock: ClockMode = ClockMode.REAL
    engine: Engine = Engine.AUTO
    spin: float = 2e-4
    device_timeout: float = 0.01
    flush_every: int = 250

    def __post_init__(self):
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise ArgumentError(f"loop options: rate must be a finite frequency > 0 Hz, got {self.rate!r}")
        if int(self.substeps) != self.substeps or self.substeps < 1:
            raise ArgumentError(f"loop options: substeps must be an integer >= 1, got {self.substeps!r}")
        if not self.duration > 0:
            raise ArgumentError(f"loop options: duration must be > 0 s, got {self.duration!r}")
        if not self.device_timeout > 0:
            raise ArgumentError(f"loop options: device_timeout must be > 0 s, got {self.device_timeout!r}")

    @property
    def period(self) -> float:
        """T = 1 / rate [s]."""
        return 1.0 / self.rate


@dataclass(frozen=True)
class LoopResult:
    """The end of a run: ``status`` ("completed", "stopped", "interrupted", "device stopped answering at t = ...",
    "failed: ..."), ``deadlines`` (DeadlineSummary), counts of ``refused`` and ``missing`` device samples and
    ``saturated`` periods, ``port_energy`` [J] the device put into the coupler (up to the last period's start),
    the final state ``t`` [s], ``q``, ``u``, the ``engine`` used and the ``log`` path (or None)."""

    status: str
    deadlines: DeadlineSummary
    refused: int
    missing: int
    saturated: int
    port_energy: float
    t: float
    q: np.ndarray
    u: np.ndarray
    engine: Engine
    log: Path | None


class _CompiledPlant:
    def __init__(self, dynamics, t, q, u, params, index):
        self.w = dynamics.model.input_values().copy()
        self.stepper = dynamics.stepper(t, q, u, params, self.w)
        self.index = index

    def state(self):
        return self.stepper.t, self.stepper.q, self.stepper.u

    def advance(self, period, n, force):
        self.w[self.index] = force
        self.stepper.step(n, period / n, self.w)


class _PythonPlant:
    def __init__(self, dynamics, t, q, u, params, names, dt):
        self.w = dict(zip(dynamics.input_names, dynamics.model.input_values()))
        self.names = names
        self.sim = Simulator(dynamics, t0=t, q0=q, u0=u, method=Method.RK4, dt=dt, params=params,
                             inputs=lambda t, q, u: self.w, record=False, record_energy=False)

    def state(self):
        q, u = self.sim.state
        return self.sim.t, q, u

    def advance(self, period, n, force):
        for name, f in zip(self.names, force):
            self.w[name] = float(f)
        for _ in range(n):
            self.sim.step()


class RealtimeLoop:
    """The loop coupling ``device`` (a :class:`kane.realtime.Device`) to the virtual system of ``coupler``
    (a :class:`VirtualCoupler` bound to its dynamics), from (t0 [s], q0 (n_q,), u0 (n_u,)); ``params`` for the
    dynamics; ``log``: path of the HDF5 log, or None. ``start()`` runs it in its own thread, ``stop()`` asks it to
    stop, ``join()`` waits and returns the :class:`LoopResult`; ``run()`` does all three (Ctrl-C stops it)."""

    def __init__(self, coupler: VirtualCoupler, device, q0, u0, *, t0: float = 0.0, params=None,
                 options: LoopOptions = LoopOptions(), log=None):
        self.coupler, self.device, self.options = coupler, device, options
        dyn = coupler.dynamics
        self.dynamics = dyn
        q0, u0 = np.array(q0, dtype=float).reshape(-1), np.array(u0, dtype=float).reshape(-1)
        if q0.shape != (dyn.n_q,) or u0.shape != (dyn.n_u,):
            raise ArgumentError(f"real-time loop: q0 has shape {q0.shape} and u0 {u0.shape}; expected "
                                f"({dyn.n_q},) and ({dyn.n_u},)")
        self.params = params
        engine = options.engine
        if engine is Engine.AUTO:
            engine = Engine.COMPILED if dyn.backend == "c" else Engine.PYTHON
        if engine is Engine.COMPILED and dyn.backend != "c":
            raise ArgumentError(f"real-time loop: engine 'compiled' needs dynamics on the C backend (these use "
                                f"{dyn.backend!r}); use Engine.PYTHON or AUTO")
        self.engine = engine
        period, n = options.period, int(options.substeps)
        if engine is Engine.COMPILED:
            self.plant = _CompiledPlant(dyn, t0, q0, u0, params, coupler.input_index)
        else:
            self.plant = _PythonPlant(dyn, t0, q0, u0, params, coupler.port.inputs, period / n)
        self._has_energy = bool(getattr(dyn.equations, "has_potential", False))
        coupler.point_state(t0, q0, u0)  # compile what the periods call before the first one starts
        if self._has_energy:
            dyn.energy(t0, q0, u0, params)
        self.log = None if log is None else RealtimeLog(log, dyn.q_names, dyn.u_names,
                                                        flush_every=options.flush_every)
        self.stats = DeadlineStats(period, capacity=min(int(options.duration * options.rate) + 1, 1 << 20)
                                   if math.isfinite(options.duration) else 1024)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: LoopResult | None = None
        self._error: BaseException | None = None
        self._stop_status = "stopped"

    # ---- control -------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Run the loop in its own thread."""
        if self._thread is not None:
            raise KaneError("real-time loop: already started; a loop runs once")
        self._thread = threading.Thread(target=self._main, name="kane-realtime", daemon=True)
        self._thread.start()

    def stop(self, status: str = "stopped") -> None:
        """Ask the loop to stop at its next period (zero force, log saved)."""
        self._stop_status = status
        self._stop.set()

    def join(self, timeout: float | None = None) -> LoopResult | None:
        """Wait for the loop's end; its result (None if still running after ``timeout`` [s])."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            return None
        if self._error is not None:
            raise self._error
        return self._result

    def run(self) -> LoopResult:
        """start(), then wait; Ctrl-C stops the loop with zero force and the log saved (status "interrupted")."""
        self.start()
        while True:
            try:
                result = self.join(0.05)
            except KeyboardInterrupt:
                self.stop("interrupted")
                continue
            if result is not None:
                return result

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- the loop ------------------------------------------------------------------------------------------
    def _main(self) -> None:
        try:
            self._result = self._loop()
        except BaseException as exc:  # handed to join(): a bug must not vanish in the thread
            self._error = exc

    def _loop(self) -> LoopResult:
        opts, dev, cpl = self.options, self.device, self.coupler
        period, n_sub = opts.period, int(opts.substeps)
        n_periods = int(round(opts.duration * opts.rate)) if math.isfinite(opts.duration) else None
        timeout_periods = max(1, int(math.ceil(opts.device_timeout * opts.rate - 1e-9)))
        virtual = opts.clock is ClockMode.VIRTUAL
        zero = np.zeros(3)
        refused = missing = saturated = bad_run = 0
        port_energy, prev_force, prev_x = 0.0, None, None
        status = "completed"
        t_start = self.plant.state()[0]
        t = t_start
        dev.open()
        wall0 = time.perf_counter()
        k = 0
        try:
            while n_periods is None or k < n_periods:
                if self._stop.is_set():
                    status = self._stop_status
                    break
                t = t_start + k * period
                scheduled = wall0 + k * period
                if virtual:
                    woke, lateness = time.perf_counter(), 0.0
                else:
                    woke = _wait_until(scheduled, opts.spin)
                    lateness = woke - scheduled
                try:
                    sample = dev.read(t)
                except Exception:  # a device that fails to answer is a missing sample, counted below
                    sample = None
                why = "no answer" if sample is None else check_sample(sample, dev.workspace)
                _, q, u = self.plant.state()
                if why is None:
                    x_h, v_h = np.asarray(sample.position, dtype=float), np.asarray(sample.velocity, dtype=float)
                    if prev_force is not None and prev_x is not None:
                        port_energy += float(prev_force @ (x_h - prev_x))
                    c = cpl.force(t, q, u, x_h, v_h)
                    force, power, spring = c.force, c.power, c.spring_energy
                    x_b, v_b = c.position, c.velocity
                    saturated += c.saturated
                    flag, bad_run, prev_x = SAMPLE_USED, 0, x_h
                else:
                    x_h = v_h = np.full(3, np.nan)
                    x_b, v_b = cpl.point_state(t, q, u)
                    force, power, spring = zero, 0.0, math.nan
                    if sample is None:
                        missing, flag = missing + 1, SAMPLE_MISSING
                    else:
                        refused, flag = refused + 1, SAMPLE_REFUSED
                    bad_run, prev_x = bad_run + 1, None
                dev.write_force(t, -force)
                prev_force = force
                energy = self.dynamics.energy(t, q, u, self.params) if self._has_energy else math.nan
                row = {"t": t, "hand_position": x_h, "hand_velocity": v_h, "point_position": x_b,
                       "point_velocity": v_b, "force": force, "power": power, "port_energy": port_energy,
                       "spring_energy": spring, "energy": energy, "q": q.copy(), "u": u.copy(),
                       "sample_status": flag}
                if bad_run >= timeout_periods and flag == SAMPLE_MISSING:
                    status = f"device stopped answering at t = {t - (bad_run - 1) * period:.6g} s"
                    self._finish_row(row, woke, lateness)
                    k += 1
                    break
                try:
                    self.plant.advance(period, n_sub, force)
                except KaneError as exc:
                    status = f"failed: {exc}"
                    self._finish_row(row, woke, lateness)
                    k += 1
                    break
                self._finish_row(row, woke, lateness)
                k += 1
        finally:
            try:
                dev.write_force(t, zero)
            finally:
                dev.close()
        t_end, q, u = self.plant.state()
        summary = self.stats.summary()
        path = None
        if self.log is not None:
            path = self.log.close(status, summary.as_dict(),
                                  {"refused": refused, "missing": missing, "saturated": int(saturated),
                                   "engine": self.engine.value, "substeps": n_sub})
        return LoopResult(status, summary, refused, missing, int(saturated), port_energy, float(t_end),
                          np.array(q), np.array(u), self.engine, path)

    def _finish_row(self, row, woke, lateness) -> None:
        if self.log is not None and self.log.due:  # writing the log is part of this period's work
            self.log.flush()
        compute = time.perf_counter() - woke
        self.stats.add(lateness, compute)
        if self.log is not None:
            row["compute_time"], row["lateness"] = compute, lateness
            self.log.append(row)


def _wait_until(deadline: float, spin: float) -> float:
    """Sleep until ``spin`` [s] before ``deadline`` (time.perf_counter), then spin; returns the wake-up time."""
    remaining = deadline - time.perf_counter()
    if remaining > spin:
        time.sleep(remaining - spin)
    now = time.perf_counter()
    while now < deadline:
        now = time.perf_counter()
    return now
