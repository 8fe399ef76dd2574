"""Simulation loops in C (issue 12, item 3): ``simulate()`` runs whole stretches of RK4, semi-implicit Euler or
DOPRI5 in C when the dynamics are Kane's equations compiled with the C backend, the inputs are constants, no
monitor is a Python function, and every event function is an :class:`EventExpression` (compiled into the model's
program). Control comes back to Python only to store samples, at event candidates (a compiled g changing sign or
sitting on zero: the step is then checked and sampled by the Python detector, which locates the time by Brent's
method as in the Python loop), for each projection, at failures and at the end. The steps, evaluations and states
are those of the Python loop (same controller, same arithmetic order); a NaN, a singular mass matrix or a step
below the minimum stops the run with the same :class:`SimulationError`, the HDF5 file readable.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from kane.codegen.c_backend import CCompileError, CFunction
from kane.codegen.c_loops import CLoop, LoopStatus
from kane.codegen.numpy_backend import compile_program
from kane.codegen.program import Program
from kane.errors import KaneError, NotSupportedError
from kane.simulate.dopri5 import _dopri_dense
from kane.simulate.fixed_step import _hermite
from kane.simulate.monitors import BatchMonitor
from kane.simulate.stepping import Counters, Integrator, IntegratorError, Method, Rhs, Step
from kane.symbolic.dynamics import KaneDynamics

__all__ = ["EventExpression", "CompiledIntegrator", "CompiledRunner", "compiled_runner", "compiled_loop_choice"]

_LOOP_METHODS = (Method.DOPRI5, Method.RK4, Method.SEMI_IMPLICIT_EULER)
PROGRESS_S = 0.05  # [s] of stepping in C between two calls of a run's progress callback (about)
_functions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # dynamics -> its energy and event functions


def _with_output(program: Program, name: str, exprs) -> Program:
    """``program`` with one more vector output ``name`` (its expressions in the program's symbols)."""
    known = {s for group in program.inputs.values() for s in group} | {s for s, _ in program.assignments}
    exprs = [sp.sympify(e) for e in exprs]
    unknown = sorted({str(s) for e in exprs for s in e.free_symbols} - {str(s) for s in known})
    if unknown:
        raise KaneError(f"event expression: symbols {unknown} are not t, q, the independent speeds, parameters or "
                        f"inputs of the equations")
    outs = dict(program.outputs, **{name: sp.ImmutableMatrix(exprs)})
    return Program(program.inputs, program.assignments, outs, program.vectors | {name}).select([name])


class EventExpression:
    """An event function g(t [s], q (n_q,), u (n_u,)) -> float given as a sympy expression of the equations'
    symbols (t, q, independent u, parameters, inputs), e.g. the height of a point. It is callable like any event
    function (numpy backend, for the Python loop) and is compiled into C by the compiled loop.

    ``params`` (mapping or array, default the model's) and ``inputs`` are fixed when it is made."""

    def __init__(self, dynamics: KaneDynamics, expr, params=None, inputs=None):
        self.dynamics = dynamics
        self.expr = sp.sympify(expr)
        model = dynamics.model
        self.params = model.parameter_values(params)
        self.inputs = model.input_values(inputs)
        self.program = _with_output(dynamics.equations.program, "g", [self.expr])
        self._fn = compile_program(self.program, ["g"])

    def __call__(self, t: float, q: np.ndarray, u: np.ndarray) -> float:
        return float(self._fn(t, np.asarray(q, dtype=float), np.asarray(u, dtype=float), self.params,
                              self.inputs)[0][0])


class CompiledIntegrator(Integrator):
    """The Integrator interface over a :class:`kane.codegen.c_loops.CLoop`: ``step()`` takes one step in C (or
    hands over the step that C left to Python) and returns it with its dense output."""

    def __init__(self, rhs: Rhs, loop: CLoop, method: Method, t_bound: float):
        super().__init__(rhs, loop.s.t, loop.x, t_bound)
        self.loop = loop
        self.method = method
        self.pending = False
        self._serial = 0

    @property
    def t(self) -> float:
        return float(self.loop.s.t)

    @property
    def x(self) -> np.ndarray:
        return self.loop.x.copy()

    @property
    def counters(self) -> Counters:
        s = self.loop.s
        return Counters(int(s.n_fev), 0, 0, int(s.n_acc), int(s.n_rej))

    def reset(self, t: float, x: np.ndarray) -> None:
        self.loop.restart(t, self._own(x))
        self.pending = False
        if not self.loop.started:
            raise self.error()

    def error(self) -> IntegratorError:
        """The failure C reported, worded as the Python integrators and Simulator word it."""
        s = self.loop.s
        if s.fail == 1:
            return IntegratorError(f"the dynamics returned NaN or inf: the step size shrank to {s.fail_h:.3g} s "
                                   f"without a finite result", s.fail_t)
        if s.fail == 2:
            return IntegratorError(f"step size {s.fail_h:.3g} s fell below the minimum {s.fail_floor:.3g} s",
                                   s.fail_t)
        if s.fail == 4:
            return IntegratorError("the state derivative is too large or changes too fast for the tolerances: no "
                                   "first step > 0 s exists", s.fail_t)
        return IntegratorError("the state became NaN or inf", s.fail_t)

    def step(self) -> Step:
        if not self.pending:
            self._check_room()
            status = self.loop.advance(self.t_bound, one_step=True)
            if status == LoopStatus.FAILED:
                raise self.error()
        self.pending = False
        self._serial += 1
        return self._last_step()

    def _check_room(self) -> None:
        if not self.t < self.t_bound:
            raise IntegratorError(f"cannot step past t_bound = {self.t_bound!r} s", self.t)

    def _last_step(self) -> Step:
        loop, serial = self.loop, self._serial
        t0, t1, x0, x1 = float(loop.s.t_old), float(loop.s.t), loop.x_old.copy(), loop.x.copy()
        if self.method is Method.DOPRI5:
            K = loop.Kd.copy()
            return Step(t0, t1, x0, x1, lambda: _dopri_dense(t0, t1 - t0, x0, x1, K))

        def build():
            if serial == self._serial and not self.pending:
                loop.dense(t0)  # f at the step's ends, evaluated (and counted) only when not known yet
                f0, f1 = loop.f0.copy(), loop.f1.copy()
            else:  # an old step: evaluate its ends afresh
                f0, f1 = self.rhs(t0, x0), self.rhs(t1, x1)
            return _hermite(t0, x0, f0, t1, x1, f1)

        return Step(t0, t1, x0, x1, build)


class CompiledRunner:
    """Runs a :class:`kane.simulate.Simulator` with its integrator replaced by a :class:`CompiledIntegrator`:
    ``run(t_end)`` as ``Simulator.run``, whole stretches in C."""

    def __init__(self, sim, integrator: CompiledIntegrator):
        self.sim = sim
        self.integrator = integrator
        sim._integrator = integrator

    def _store(self) -> None:
        """Record the samples C took since the last call: the monitors at them (a :class:`BatchMonitor` in one
        call, any other at each sample), then memory and the writer in one block. A monitor that raises stops the
        run at its sample, the samples before it kept, as in the Python loop."""
        sim, loop = self.sim, self.integrator.loop
        k = loop.taken
        if not k:
            return
        rows = loop.samples[:k].copy()
        loop.clear_samples()
        n, n_q = loop.n, loop.n_q
        t, x, e = rows[:, 0], rows[:, 1:n + 1], rows[:, n + 1]
        try:
            res = self._residuals(t, x, n_q)
            failed = None
        except Exception:
            res, failed = self._residuals_until_failure(t, x, n_q)
            t, x, e = t[:len(res)], x[:len(res)], e[:len(res)]
        sim.record_samples(t, x, e if sim.has_energy else None, res)
        if failed is not None:
            t_bad, exc = failed
            sim._fail(f"{type(exc).__name__} raised by a monitor at t = {t_bad!r} s: {exc}", t_bad,
                      sim._t_sampled, sim._x_sampled, exc)

    def _residuals(self, t, x, n_q) -> np.ndarray:
        """(k, number of monitors) at the k samples (t, x)."""
        monitors = tuple(self.sim.monitors.values())
        out = np.empty((len(t), len(monitors)))
        q, u = x[:, :n_q], x[:, n_q:]
        for j, f in enumerate(monitors):
            out[:, j] = f.batch(t, q, u) if isinstance(f, BatchMonitor) else [
                float(f(t[i], q[i], u[i])) for i in range(len(t))]
        return out

    def _residuals_until_failure(self, t, x, n_q):
        """(the monitors at the samples before the first where one raises, (its time, the exception))."""
        monitors, out = tuple(self.sim.monitors.values()), []
        for i in range(len(t)):
            try:
                out.append([float(f(t[i], x[i, :n_q], x[i, n_q:])) for f in monitors])
            except Exception as exc:
                return np.array(out, dtype=float).reshape(i, len(monitors)), (float(t[i]), exc)
        return np.array(out, dtype=float).reshape(len(t), len(monitors)), None

    def run(self, t_end: float, progress=None):
        """As ``Simulator.run``; ``progress(sim)``, when given, is called after every stretch in C (at most
        ``capacity`` samples, and as many steps as took about PROGRESS_S [s] in the stretch before) and every step
        handed to Python. A stretch ends before a step, so the steps are those of one long stretch."""
        sim, integ = self.sim, self.integrator
        loop, events = integ.loop, sim.event_detector
        chunk = 64  # steps of a stretch when progress is asked for, sized from the stretch before
        nev = len(events.events)
        if not t_end >= sim._t:
            raise ValueError(f"t_end = {t_end!r} s is before the current time {sim._t!r} s")
        integ.t_bound = t_end
        while (sim._t < t_end or loop.s.sampling_open) and sim._terminal is None:  # open: samples still due
            if sim._projection is not None or sim.failed is not None:
                sim.step()  # one step in C, the projection and the sampling in Python
                if progress is not None:
                    progress(sim)
                continue
            start = time.perf_counter()
            if nev:
                loop.g[:nev] = events._g
            loop.s.grid_k = sim._grid_k
            limit = sim.max_steps  # the Simulator's step limit, checked before every step
            done = int(loop.s.n_acc + loop.s.n_rej)
            bounds = [b for b in (limit, None if progress is None else done + chunk) if b is not None]
            loop.s.step_limit = int(min(bounds)) if bounds else -1
            status = loop.advance(t_end)
            if progress is not None:
                taken, spent = int(loop.s.n_acc + loop.s.n_rej) - done, time.perf_counter() - start
                chunk = int(min(65536, max(16, PROGRESS_S * taken / spent))) if taken and spent > 0 else chunk
            integ._serial += 1  # the steps handed out before are no longer C's last step
            self._store()
            sim._grid_k = int(loop.s.grid_k)
            if nev:
                events._g = loop.g[:nev].copy()
            if status == LoopStatus.STEP or (status == LoopStatus.FAILED and loop.s.fail == 3):  # before the step
                sim._t, sim._x = float(loop.s.t_old), loop.x_old.copy()
            else:
                sim._t, sim._x = float(loop.s.t), loop.x.copy()
            sim._wall += time.perf_counter() - start
            if status == LoopStatus.STEP:
                integ.pending = True
                sim.step()  # the Python detector checks the step; samples and events as in the Python loop
            elif status == LoopStatus.FAILED:
                error = integ.error()
                sim._fail(error.reason, error.t, sim._t, sim._x, error)
            elif status == LoopStatus.FULL and sim._t < t_end:
                sim.check_limits()  # the step and wall-time limits, as before a step of the Python loop
            if progress is not None:
                progress(sim)
        return sim.run(t_end)


def _constant_inputs(inputs: Any) -> bool:
    return inputs is None or isinstance(inputs, Mapping)


def compiled_runner(sim, dynamics: Any, method: Method | str, *, params=None, inputs=None,
                    rtol=1e-8, atol=1e-10, dt=None, t_end=np.inf, max_step=np.inf, min_step=0.0,
                    first_step=None) -> CompiledRunner | None:
    """A runner of ``sim`` in C when the run allows it (Kane's equations with the C backend, constant inputs, only
    EventExpression events of these dynamics, RK4/Euler/DOPRI5), else None (:func:`compiled_loop_choice` says
    why). Monitors (Python functions) are evaluated in Python at the samples C takes."""
    return compiled_loop_choice(sim, dynamics, method, params=params, inputs=inputs, rtol=rtol, atol=atol, dt=dt,
                                t_end=t_end, max_step=max_step, min_step=min_step, first_step=first_step)[0]


def compiled_loop_choice(sim, dynamics: Any, method: Method | str, *, params=None, inputs=None,
                         rtol=1e-8, atol=1e-10, dt=None, t_end=np.inf, max_step=np.inf, min_step=0.0,
                         first_step=None) -> tuple[CompiledRunner | None, str]:
    """(runner, "") when the run of ``sim`` can go in C (see :func:`compiled_runner`), else (None, why not): a
    phrase such as "the inputs are a function of (t, q, u)"."""
    method = Method.parse(method)
    events = sim.event_detector.events
    if not isinstance(dynamics, KaneDynamics):
        return None, f"the C loop runs Kane's equations (KaneDynamics), not {type(dynamics).__name__}"
    caps = dynamics.capabilities
    if not caps.compiled_loop:
        return None, caps.compiled_loop_reason
    if method not in _LOOP_METHODS:
        return None, (f"method {method.value} has no compiled loop (only "
                      f"{', '.join(m.value for m in _LOOP_METHODS)} do)")
    if not _constant_inputs(inputs):
        return None, "the inputs are a function of (t, q, u), evaluated in Python"
    fns = [ev.function for ev in events]
    w = dynamics.model.input_values(inputs)
    for ev, f in zip(events, fns):
        if not isinstance(f, EventExpression):
            return None, f"event {ev.name!r} is a Python function (an EventExpression is compiled)"
        if not (f.dynamics is dynamics and np.array_equal(f.inputs, w) and np.array_equal(f.params, fns[0].params)):
            return None, f"event {ev.name!r} was made for other dynamics, inputs or parameters than the run's"
    eqs = dynamics.equations
    try:
        rhs = dynamics.loop_function()
        known = _functions.setdefault(dynamics, {})
        if sim.has_energy and "energy" not in known:
            known["energy"] = CFunction(eqs.program, ["kinetic", "potential"])
        exprs = tuple(f.expr for f in fns)
        if fns and exprs not in known:
            known[exprs] = CFunction(_with_output(eqs.program, "g", exprs), ["g"])
        energy, g = known.get("energy") if sim.has_energy else None, known.get(exprs) if fns else None
    except NotSupportedError as exc:
        return None, str(exc)
    except CCompileError as exc:
        return None, f"the C compiler failed ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    p = dynamics.model.parameter_values(params)
    loop = CLoop(rhs, p, w, method=method.value, t=sim._t, x=sim._x,
                 t_bound=t_end, energy=energy, energy_params=p, events=g,
                 event_params=fns[0].params if fns else None, rtol=rtol, atol=atol, dt=dt, max_step=max_step,
                 min_step=min_step, first_step=first_step, output_dt=sim._output_dt, grid_t0=sim._grid_t0)
    if not loop.started:  # the Python integrator found a first step at this state: C agrees, or the run stays
        return None, "the compiled loop found no first step where the Python integrator did"
    return CompiledRunner(sim, CompiledIntegrator(sim._rhs, loop, method, t_end)), ""
