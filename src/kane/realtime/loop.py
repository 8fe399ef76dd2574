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
import functools
import gc
import math
import os
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, KaneError
from .async_dynamics import AsyncDynamics
from .coupler import CouplerGains, VirtualCoupler, check_gains, torque_work
from .coupler_stability import check_stability, effective_inertia, effective_mass
from .devices import DeviceSample, check_sample
from .log import SAMPLE_MISSING, SAMPLE_REFUSED, SAMPLE_USED, RealtimeLog
from .multirate import SlowDynamics
from .native_loop import LoopPath, run_c, why_not_c
from ..protocol import Dynamics
from ..symbolic.dynamics import KaneDynamics
from .plants import CompiledPlant, PlantMaker, PythonPlant, input_holder
from .stats import DeadlineStats, DeadlineSummary

__all__ = ["ClockMode", "Engine", "LoopOptions", "LoopPath", "LoopResult", "MAX_REAL_RATE", "RealtimeLoop"]

_SWITCH_INTERVAL = 5e-5  # [s] the interpreter's thread switch interval while a loop runs
MAX_REAL_RATE = 100_000.0  # [Hz] the highest rate accepted on the real clock


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
    ``flush_every`` log rows per block handed to the log's writer, ``priority``: 0 (the default) runs the
    loop's thread at normal priority; 1..99 asks Linux for the real-time policy SCHED_FIFO at that priority (root or
    CAP_SYS_NICE; refused -> a warning and normal priority: the summary's lateness tells). ``dynamics_every`` k > 1:
    the dynamics step once every k periods over k T with the mean coupler force (multi-rate), in the loop's thread
    (:class:`SlowDynamics`) or, with ``dynamics_process``, one slow step behind (:class:`AsyncDynamics`) in a worker
    process on the real clock, so that no period waits for a step (in the loop's process on the virtual clock, each
    step taken back one interval after it was handed over). ``loop_path``: the period in Python (the default) or
    in C in a native thread (:class:`LoopPath`, :mod:`kane.realtime.native_loop`). ``pin_cpu`` (C period, real clock,
    >= 2 CPUs): the C thread alone on the last allowed CPU, the rest on the others (logged in ``counts["cpus"]``)."""

    rate: float = 1000.0
    substeps: int = 1
    duration: float = 10.0
    clock: ClockMode = ClockMode.REAL
    engine: Engine = Engine.AUTO
    spin: float = 1e-3
    device_timeout: float = 0.01
    flush_every: int = 1000
    dynamics_every: int = 1  # multi-rate: the dynamics step once every k periods, over k T (realtime.multirate)
    dynamics_process: bool = False  # with dynamics_every > 1: in a worker process, a step behind (async_dynamics)
    priority: int = 0
    loop_path: LoopPath = LoopPath.PYTHON
    pin_cpu: bool = False

    def __post_init__(self):
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise ArgumentError(f"loop options: rate must be a finite frequency > 0 Hz, got {self.rate!r}")
        if self.clock is ClockMode.REAL and self.rate > MAX_REAL_RATE:
            raise ArgumentError(f"loop options: rate {self.rate:g} Hz is above {MAX_REAL_RATE:g} Hz, the most the "
                                f"real clock runs (a period of {1e6 / MAX_REAL_RATE:g} us: the loop's own work takes "
                                "about 20 us); use the virtual clock for a finer step")
        if int(self.substeps) != self.substeps or self.substeps < 1:
            raise ArgumentError(f"loop options: substeps must be an integer >= 1, got {self.substeps!r}")
        if int(self.dynamics_every) != self.dynamics_every or self.dynamics_every < 1:
            raise ArgumentError(f"loop options: dynamics_every must be an integer >= 1, got {self.dynamics_every!r}")
        if self.dynamics_process and self.dynamics_every < 2:
            raise ArgumentError("loop options: dynamics_process steps the dynamics every dynamics_every periods in a "
                                f"worker; it needs dynamics_every >= 2, got {self.dynamics_every!r}")
        if not self.duration > 0:
            raise ArgumentError(f"loop options: duration must be > 0 s, got {self.duration!r}")
        if int(self.priority) != self.priority or not 0 <= self.priority <= 99:
            raise ArgumentError(f"loop options: priority must be an integer 0..99, got {self.priority!r}")
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
    the final state ``t`` [s], ``q``, ``u``, the ``engine`` used, the ``log`` path (or None) and what stepped the
    virtual system, ``plant`` ("compiled engine", "switched constraints, 4 modes compiled to C", ...)."""

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
    plant: str
    loop_path: str = "python"  # which period ran: "python" or "c" (kane.realtime.native_loop)


class RealtimeLoop:
    """The loop coupling ``device`` (a :class:`kane.realtime.Device`) to the virtual system of ``coupler``
    (a :class:`VirtualCoupler` bound to its dynamics), from (t0 [s], q0 (n_q,), u0 (n_u,)); ``params`` for the
    dynamics; ``log``: path of the HDF5 log, or None. The coupler's gains are checked when the loop is built
    (:meth:`_check_gains`: a :class:`PassivityWarning` names each bound they break). ``start()`` runs it in its
    own thread, ``stop()`` asks it to stop, ``join()`` waits and returns the :class:`LoopResult`; ``run()`` does
    all three (Ctrl-C stops it).
    ``inputs``: a callable inputs(t, q, u) -> {name: value} of the model's other inputs (a model file's [inputs]
    schedules, :meth:`kane.io.LoadedModel.input_function`), evaluated at each period's start and held over it, as
    the coupler's force is; None: they stay at their defaults. A value that is not finite stops the run ("failed")."""

    def __init__(self, coupler: VirtualCoupler, device, q0, u0, *, t0: float = 0.0, params=None,
                 options: LoopOptions = LoopOptions(), log=None, inputs=None):
        self.coupler, self.device, self.options = coupler, device, options
        if coupler.rotational and not (callable(getattr(device, "write_torque", None)) and
                                       getattr(device, "pose", True)):
            raise ArgumentError(f"real-time loop: the coupler couples a full pose but the device "
                                f"({type(device).__name__}) displays no torque (it needs write_torque(t, torque), "
                                "and pose True where it has that attribute: a pose UdpDevice or Replay)")
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
        dt = period * options.dynamics_every / n  # the dynamics' step [s]
        if isinstance(dyn, PlantMaker):  # switched constraints, rolling contacts: they step their own plant
            self.plant = dyn.make_plant(t0, q0, u0, params, coupler.port.inputs, dt)
        elif engine is Engine.COMPILED:
            self.plant = CompiledPlant(dyn, t0, q0, u0, params, coupler.input_index)
        else:
            self.plant = PythonPlant(dyn, t0, q0, u0, params, coupler.port.inputs, dt)
        if options.dynamics_every > 1 and options.dynamics_process:  # a worker process on the real clock
            self.plant = AsyncDynamics(self.plant, options.dynamics_every, dyn, params,
                                       process=options.clock is ClockMode.REAL)
        elif options.dynamics_every > 1:
            self.plant = SlowDynamics(self.plant, options.dynamics_every, dyn, params)
        self._check_gains(t0, q0)
        self._inputs = None if inputs is None else input_holder(inputs, dyn.model, coupler.port.inputs,
                                                                self.plant.w, t0, q0, u0)
        self._has_energy = dyn.capabilities.energy if isinstance(dyn, Dynamics) else bool(dyn.equations.has_potential)
        coupler.point_state(t0, q0, u0)  # compile what the periods call before the first one starts
        energy = None
        if self._has_energy:  # the log's energies of blocks of rows, (B,) times, (B, n_q), (B, n_u) -> (B,) [J]
            dyn.energy(t0, q0, u0, params)
            energy = (dyn.energy_rows(params) if isinstance(dyn, KaneDynamics)
                      else functools.partial(_block_energy, dyn, params))
        self.log = None if log is None else RealtimeLog(log, dyn.q_names, dyn.u_names,
                                                        flush_every=options.flush_every, energy=energy,
                                                        process=options.clock is ClockMode.REAL,
                                                        pose=coupler.rotational)
        if self.log is not None:
            self.log.warm_up(t0, q0, u0)
        self.stats = DeadlineStats(period, capacity=min(int(options.duration * options.rate) + 1, 1 << 20)
                                   if math.isfinite(options.duration) else 1024)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: LoopResult | None = None
        self._error: BaseException | None = None
        self._stop_status = "stopped"
        self._progress, self._progress_every = None, 0.25
        self._done = threading.Event()
        self.path_reason = None if options.loop_path is LoopPath.PYTHON else why_not_c(self, inputs)
        self.loop_path = (LoopPath.C if options.loop_path is not LoopPath.PYTHON and self.path_reason is None
                          else LoopPath.PYTHON)

    def _check_gains(self, t0, q0) -> None:
        """The coupler's gains at the dynamics' step h = k T: Colgate's passivity bound (:func:`check_gains`) and
        the stable region of this loop's scheme on the coupled point's smallest effective mass
        (:func:`check_stability`; from the dynamics' ``free_mode()`` where they have one: a switched system's free
        mode, the bodies free of their rolling contacts, a lower bound on the mass). Each warns, naming its bound."""
        opts, gains = self.options, self.coupler.gains
        h = opts.period * opts.dynamics_every
        check_gains(gains, h)
        free = self.dynamics.free_mode() if isinstance(self.dynamics, PlantMaker) else None
        mass = effective_mass(self.coupler, t0, q0, self.params, free)
        delayed = opts.dynamics_every > 1 and opts.dynamics_process
        check_stability(gains, h, mass, every=opts.dynamics_every, delayed=delayed)
        if self.coupler.rotational:  # the torque's gains on the body's smallest moment of inertia
            inertia = effective_inertia(self.coupler, t0, q0, self.params, free)
            check_stability(CouplerGains(gains.rotational_stiffness, gains.rotational_damping), h, inertia,
                            every=opts.dynamics_every, delayed=delayed, rotational=True)

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

    def run(self, progress=None, every: float = 0.25) -> LoopResult:
        """start(), then wait; Ctrl-C (and SIGTERM, when called from the main thread) stops the loop with zero
        force and the log saved (status "interrupted", "terminated"). ``progress(line)``, if given, is called
        about every ``every`` [s] with the live status line (:meth:`DeadlineStats.live_line`) from the loop's own
        thread, after a period whose work left at least half the period free: it must be quick (a terminal
        write). The calling thread sleeps in ``join`` meanwhile, woken only by a signal: a thread that wakes to
        poll takes the interpreter's lock from the loop and costs it periods of 100 us and more."""
        self._progress, self._progress_every = progress, float(every)
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, lambda signum, frame: self.stop("terminated"))
        try:
            self.start()
            while True:
                try:
                    self._done.wait()  # not Thread.join: Ctrl-C inside it marks a running thread stopped (3.11)
                except KeyboardInterrupt:
                    self.stop("interrupted")
                    continue
                return self.join()
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- the loop ------------------------------------------------------------------------------------------
    def _main(self) -> None:
        try:
            self._result = LoopResult(*run_c(self)) if self.loop_path is LoopPath.C else self._loop()
        except BaseException as exc:  # handed to join(): a bug must not vanish in the thread
            self._error = exc
        finally:
            self._done.set()

    def _loop(self) -> LoopResult:
        opts, dev, cpl, log, stats = self.options, self.device, self.coupler, self.log, self.stats
        period, n_sub = opts.period, int(opts.substeps)
        n_periods = int(round(opts.duration * opts.rate)) if math.isfinite(opts.duration) else None
        timeout_periods = max(1, int(math.ceil(opts.device_timeout * opts.rate - 1e-9)))
        virtual = opts.clock is ClockMode.VIRTUAL
        rot = cpl.rotational  # a full pose coupled: six inputs (force, torque), the orientations logged
        zero3, nan3 = (0.0, 0.0, 0.0), (math.nan, math.nan, math.nan)
        zero, nan_pose = (0.0,) * (6 if rot else 3), (math.nan,) * 12
        prev_r = None  # the handle's last orientation used (nine floats), for the torque's work
        refused = missing = saturated = bad_run = 0
        port_energy, prev_force, prev_x = 0.0, None, None
        status = "completed"
        t_start, q, u = self.plant.state()
        if isinstance(q, np.ndarray) and isinstance(u, np.ndarray):
            cpl.bind(q, u)  # the compiled stepper's state buffers: one C call per period, no allocation
        t = t_start
        stop, plant, clock, hold = self._stop, self.plant, time.perf_counter, self._inputs
        has_mode, modes, mode = hasattr(plant, "mode"), {"single": 0}, 0  # mode name -> its index in the log
        if has_mode:
            modes = {}
        try:
            dev.open()
        except BaseException as exc:  # no period ran: the log is closed empty, saying why
            if log is not None:
                log.close(f"failed: the device did not open: {exc}", stats.summary().as_dict(), {})
            raise
        switch = sys.getswitchinterval()
        sys.setswitchinterval(_SWITCH_INTERVAL)  # any other thread (a viewer) hands the GIL back within this
        _real_time_priority(opts.priority)
        self._rehearse(t, q, u)
        gc.freeze()  # what exists now (the model, sympy's objects) is never scanned again: no collection of ms
        wall0 = clock() + period  # the first period starts one period from now (its wait is a clean one)
        progress, next_line = self._progress, wall0 + self._progress_every
        k = 0
        try:
            while n_periods is None or k < n_periods:
                if stop.is_set():
                    status = self._stop_status
                    break
                t = t_start + k * period
                if virtual:
                    woke, lateness = clock(), 0.0
                else:
                    scheduled = wall0 + k * period
                    woke = _wait_until(scheduled, opts.spin)
                    lateness = woke - scheduled
                try:
                    sample = dev.read(t)
                except Exception:  # a device that fails to answer is a missing sample, counted below
                    sample = None
                why = "no answer" if sample is None else check_sample(sample, dev.workspace, rot)
                _, q, u = plant.state()
                point = cpl.point_floats(t, q, u)
                if why is None:
                    x_h, v_h = tuple(sample.position), tuple(sample.velocity)
                    if prev_force is not None and prev_x is not None:
                        port_energy += (prev_force[0] * (x_h[0] - prev_x[0]) + prev_force[1] * (x_h[1] - prev_x[1])
                                        + prev_force[2] * (x_h[2] - prev_x[2]))
                    if rot:
                        r_h = tuple(float(a) for row in sample.orientation for a in row)
                        w_h = tuple(float(a) for a in sample.angular_velocity)
                        if prev_force is not None and prev_r is not None:  # the held torque's work: tau . dtheta
                            port_energy += torque_work(prev_force[3:], prev_r, r_h)
                        force = cpl.wrench_floats(point, x_h, v_h, r_h, w_h)
                        sat, power, spring = force[6:]
                        force, prev_r = force[:6], r_h
                    else:
                        fx, fy, fz, sat, power, spring = cpl.force_floats(point, x_h, v_h)
                        force = (fx, fy, fz)
                    saturated += sat
                    flag, bad_run, prev_x = SAMPLE_USED, 0, x_h
                else:
                    x_h = v_h = nan3
                    r_h = w_h = prev_r = None
                    force, power, spring = zero, 0.0, math.nan
                    if sample is None:
                        missing, flag = missing + 1, SAMPLE_MISSING
                    else:
                        refused, flag = refused + 1, SAMPLE_REFUSED
                    bad_run, prev_x = bad_run + 1, None
                dev.write_force(t, (-force[0], -force[1], -force[2]))
                if rot:
                    dev.write_torque(t, (-force[3], -force[4], -force[5]))
                prev_force = force
                if log is not None:  # q, u before the step; the timing is filled in at the period's end
                    if has_mode:
                        mode = modes.setdefault(plant.mode, len(modes))
                    if rot:
                        log.record([t, *x_h, *v_h, *point[:6], *force[:3], power, port_energy, spring, flag, mode,
                                    0.0, 0.0, *force[3:], *(nan_pose if r_h is None else (*r_h, *w_h)),
                                    *point[6:]], q, u)
                    else:
                        log.record([t, *x_h, *v_h, *point, *force, power, port_energy, spring, flag, mode, 0.0,
                                    0.0], q, u)
                k += 1
                if bad_run >= timeout_periods and flag == SAMPLE_MISSING:
                    status = f"device stopped answering at t = {t - (bad_run - 1) * period:.6g} s"
                    self._timing(woke, lateness)
                    break
                try:
                    if hold is not None:
                        hold(t, q, u)
                    plant.advance(period, n_sub, force)
                except KaneError as exc:
                    status = f"failed: {exc}"
                    self._timing(woke, lateness)
                    break
                done = self._timing(woke, lateness)
                # the period's free time: the log's energies and blocks, the live line (no other thread takes the GIL)
                if log is not None:
                    log.housekeeping(None if virtual else wall0 + (k - 0.3) * period)
                if progress is not None and done >= next_line and clock() - woke + lateness < 0.5 * period:
                    progress(stats.live_line())
                    next_line = done + self._progress_every
        finally:
            sys.setswitchinterval(switch)
            gc.unfreeze()
            try:
                dev.write_force(t, zero3)
                if rot:
                    dev.write_torque(t, zero3)
            finally:
                dev.close()
        try:
            getattr(plant, "close", lambda: None)()  # a worker process's step in flight, taken back; the worker ends
        except KaneError as exc:
            status = f"failed: {exc}"
        t_end, q, u = self.plant.state()
        summary = stats.summary()
        path = None
        if log is not None:
            path = log.close(status, summary.as_dict(),
                             {"refused": refused, "missing": missing, "saturated": int(saturated),
                              "engine": self.engine.value, "plant": plant.kind, "substeps": n_sub,
                              "late_dynamics_steps": getattr(plant, "late_steps", 0),
                              "device": dict(getattr(dev, "counts", {})), "loop_path": "python",
                              "loop_path_reason": self.path_reason},
                             modes=list(modes), events=getattr(plant, "events", ()),
                             steps=getattr(plant, "steps", None))
            if log.writer_failure is not None:
                status = f"{status}; {log.writer_failure}"
        return LoopResult(status, summary, refused, missing, int(saturated), port_energy, float(t_end),
                          np.array(q), np.array(u), self.engine, path, plant.kind)

    def _rehearse(self, t, q, u) -> None:
        """Run what each period runs, without its effects, in the loop's thread before the first period: a new
        thread's first calls fault in its stack and numpy's per-thread state and meet cold caches, which cost the
        first period 100 us and more (the first periods at 10 kHz missed their deadlines). The device is not read
        (a read has effects); the plant steps by 0 where it can (and is set back)."""
        cpl = self.coupler
        point = cpl.point_floats(t, q, u)
        x, v = tuple(point[:3]), (0.0, 0.0, 0.0)
        if cpl.rotational:  # the handle at the body's own pose
            r, w = tuple(point[6:15]), tuple(point[15:18])
            R = (r[0:3], r[3:6], r[6:9])
            check_sample(DeviceSample(t, np.array(x), np.zeros(3), R, w), self.device.workspace, True)
            wrench = cpl.wrench_floats(point, x, v, r, w)
            torque_work(wrench[3:6], r, r)
            if self.log is not None:
                self.log.rehearse([t, *x, *v, *point[:6], *wrench[:3], wrench[7], 0.0, wrench[8], 0, 0, 0.0, 0.0,
                                   *wrench[3:6], *r, *w, *point[6:]], q, u)
        else:
            check_sample(DeviceSample(t, np.array(x), np.zeros(3)), self.device.workspace)
            fx, fy, fz, _, power, spring = cpl.force_floats(point, x, v)
            if self.log is not None:
                self.log.rehearse([t, *x, *v, *point, fx, fy, fz, power, 0.0, spring, 0, 0, 0.0, 0.0], q, u)
        getattr(self.plant, "rehearse", lambda: None)()
        time.perf_counter()

    def _timing(self, woke, lateness) -> float:
        """The period's statistics, also written into its log row; returns the time its work ended."""
        done = time.perf_counter()
        compute = done - woke
        self.stats.add(lateness, compute)
        if self.log is not None:
            self.log.set_timing(compute, lateness)
        return done


def _block_energy(dynamics, params, t, q, u):
    """The energy [J] (B,) of a block of the log, (B,) times, (B, n_q) and (B, n_u) states, in one batch call."""
    return dynamics.energy(t, q, u, params)


def _real_time_priority(priority: int) -> None:
    """SCHED_FIFO at ``priority`` for the calling thread (Linux applies the policy of pid 0 to the calling thread)."""
    if not priority:
        return
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (AttributeError, OSError) as exc:
        warnings.warn(f"real-time priority {priority} refused ({exc}); the loop runs at normal priority",
                      RuntimeWarning, stacklevel=3)


def _wait_until(deadline: float, spin: float) -> float:
    """Sleep until ``spin`` [s] before ``deadline`` (time.perf_counter), then spin; returns the wake-up time."""
    remaining = deadline - time.perf_counter()
    if remaining > spin:
        time.sleep(remaining - spin)
    now = time.perf_counter()
    while now < deadline:
        now = time.perf_counter()
    return now
