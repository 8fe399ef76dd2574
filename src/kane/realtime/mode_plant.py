"""Compiled modes in the real-time loop (Gillespie 2003, seed 000, Figure 2: the hybrid state machine, each mode's
equations embedded beforehand, run once per haptic period): the switching plant of
:mod:`kane.realtime.switching_plant` with every mode of the switched constraints derived and compiled to C before
the run (:func:`kane.switching.mode_system`), so that a period steps the current mode's RK4 stepper in C instead of
embedding the constraints on line at each evaluation.

Each period, from (t, q, u) (u all the model's speeds):

1. settle the mode for the new held force where a contact or a stick is active (as
   :meth:`kane.switching.SwitchingSimulator.restart` does);
2. step the mode's compiled equations over what is left of the period (its own independent speeds, the dependent
   ones recovered by u = D u_i + E at the end);
3. evaluate the rules' event functions (those of :class:`~kane.switching.SwitchingSimulator`) at the step's end;
   on a crossing, locate it by Brent's method on the step length (each trial one RK4 step in C from the period's
   start), step there, and let the on-line machinery handle the event (impulse, new mode, records); go on from
   there in the new mode (back to 2).

A mode's dependent speeds are fixed when it is derived: :func:`kane.switching.robust_dependent` picks those whose
block of the constraint rows is best conditioned over the configuration space, and every 8th step a guard checks
the block's condition number against ``cond_max``; a mode beyond it is dropped with a warning and runs on line
from then on (where the independent speeds are chosen again). A mode with Coulomb slip (a kinetic force
proportional to a multiplier) or one whose derivation failed runs on line (the on-line SwitchingSimulator over the
rest of the period). Within a mode both formulations integrate the same equations with RK4 at the same step; they
differ by the integration error of the step.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
from scipy.optimize import brentq

from ..errors import KaneError, ModelError
from ..codegen.c_backend import CFunction
from ..switching.online import _sigma_min
from ..switching import Coulomb, UnilateralContact, mode_system, robust_dependent
from ..symbolic.derive import Immobile, RedundantConstraintWarning, derive

__all__ = ["CompiledMode", "ModePlant", "compile_modes"]

_MAX_MODES = 16  # all subsets of up to four switched constraints are derived beforehand
_GUARD_EVERY = 8  # the conditioning of a compiled mode's dependent block is checked every this many steps


class CompiledMode:
    """One mode's compiled equations: ``dynamics`` (C backend) with its RK4 ``stepper``, ``idx`` the positions of
    its independent speeds among the model's and ``inputs`` the stepper's input buffer (model order)."""

    def __init__(self, dynamics, model_u_names, t0, q0, params, constraints=()):
        self.dynamics = dynamics
        self.idx = np.array([model_u_names.index(n) for n in dynamics.u_names], dtype=int)
        self.dep = np.array([i for i in range(len(model_u_names)) if i not in set(self.idx)], dtype=int)
        self.constraints = tuple(constraints)  # the names of its constraints (permanent and active transient)
        self.stepper = dynamics.stepper(t0, q0, np.zeros(dynamics.n_u), params, dynamics.model.input_values())
        self.inputs = self.stepper.inputs
        self.params = params
        self.advance(t0, q0, np.zeros(len(model_u_names)), 1e-6, 1)  # load what a period calls before the run

    def advance(self, t: float, q, u_full, h: float, n: int):
        """(t + h, q, all speeds) after ``n`` RK4 steps of h / n from (t [s], q, u_full)."""
        st = self.stepper
        st.set_state(t, q, u_full[self.idx])
        st.step(n, h / n)
        q1 = st.q.copy()
        return st.t, q1, np.asarray(self.dynamics.full_speeds(st.t, q1, st.u, self.params), dtype=float)


def compile_modes(system, online, rules, q0, *, limit: int = _MAX_MODES) -> dict:
    """Every mode of the transient constraints the ``rules`` switch (all subsets, when at most ``limit``), each
    derived from :func:`kane.switching.mode_system` and compiled on the C backend: frozenset of active names ->
    Dynamics. A mode whose derivation or compilation fails is left out (with a warning): it runs on line."""
    names = [n for n in online.transient if any(r.constraint == n for r in rules)]
    subsets = [()]
    if 2 ** len(names) <= limit:
        subsets = [c for k in range(len(names) + 1) for c in itertools.combinations(names, k)]
    modes = {}
    dropped = any(b.dropped for b in online.equations.constraint_layout.values())
    for active in subsets:
        try:
            dependent = robust_dependent(online, active, q0)
            with warnings.catch_warnings():  # rows the model's derivation dropped (and said so) are dropped again
                warnings.simplefilter("ignore", RedundantConstraintWarning)
                eqs = derive(mode_system(system, active), dependent=dependent or None,
                             reference_q=np.asarray(q0, dtype=float), redundant="drop" if dropped else "error",
                             immobile=Immobile.ALLOW)
            dyn = eqs.compile("c")
            if dyn.backend != "c":
                raise KaneError("no C stepper for it")
        except (KaneError, ModelError) as exc:
            warnings.warn(f"real-time loop: mode {list(active) or 'free'} runs on line ({exc})", RuntimeWarning,
                          stacklevel=3)
            continue
        modes[frozenset(active)] = dyn
    return modes


def _kept_rows(online, mode) -> np.ndarray:
    """The rows (in the on-line constraint rows A) of the mode's constraints that its derivation kept: rows it
    dropped as redundant (``redundant="drop"``) are left out of the guard's dependent block."""
    layout = mode.dynamics.equations.constraint_layout
    rows = []
    for name, block in online.layout.items():
        if name in mode.constraints:
            gone = layout[name].dropped if name in layout else ()
            rows += [block.rows.start + k for k in range(block.rows.stop - block.rows.start) if k not in gone]
    return np.array(rows, dtype=int)


class ModePlant:
    """The switching plant with compiled modes (the plant protocol of kane.realtime.loop): ``state()``,
    ``advance(period, n, force)``, ``mode``, ``events``. Built on ``base``, the on-line
    :class:`~kane.realtime.switching_plant.SwitchingPlant` of the run (its SwitchingSimulator keeps the mode, the
    rules and the records, and runs the periods of modes without compiled equations); ``modes`` the compiled modes
    by active set (from :func:`compile_modes`), ``online_periods`` the periods that ran on line."""

    @property
    def kind(self) -> str:
        """What the log and the closing summary call this plant."""
        n = len(self.modes)
        return f"switched constraints, {n} mode{'s' if n != 1 else ''} compiled to C (any other on line)"

    def __init__(self, base, modes: dict, t0: float, q0, params, dt: float):
        self.base, self.runner, self.w, self.index = base, base.runner, base.w, base.index
        runner = self.runner
        u_names = list(runner.dynamics.u_names)
        self.dt = float(dt)
        online = runner.dynamics
        self.modes = {key: CompiledMode(dyn, u_names, t0, q0, params,
                                        list(online.permanent) + [n for n in online.transient if n in key])
                      for key, dyn in modes.items()}
        self.cond_max = float(online.cond_max)
        self._fn_A = CFunction(online.equations.full_program, ["A"])  # the guard's constraint rows, in C
        self._p, self._w0 = online._p0 if params is None else online.model.parameter_values(params), online._w0
        for mode in self.modes.values():
            mode.rows = _kept_rows(online, mode)
        self._u0 = np.zeros(online.n_u)
        self._checks = 0
        inputs = tuple(str(s) for s in runner.dynamics.model.inputs)
        for mode in self.modes.values():
            if tuple(mode.dynamics.input_names) != inputs:
                raise ModelError(f"compiled mode: its inputs {mode.dynamics.input_names} are not the model's "
                                 f"{inputs}")
        self._events = runner._events()  # the rules' event functions g(t, q, u full), following runner's mode
        # each mode's on-line partition chosen now, not at its first event in a period
        for key in self.modes:
            online.set_mode(key)
            online.udot(t0, *runner.sim.state)
        runner._apply_mode()
        self._settles = any(isinstance(r, (UnilateralContact, Coulomb)) for r in runner.rules)
        t, (q, u) = runner.sim.t, runner.sim.state
        self._t, self._q, self._u = float(t), q.copy(), u.copy()
        self.online_periods = 0
        self._skip = None  # (the event last handled, its time) when a period ended on it

    @property
    def mode(self) -> str:
        """The current mode's name ("free" when no transient constraint is active)."""
        return self.base.mode

    @property
    def events(self) -> list:
        """The mode changes so far (kane.io.trajectory EventRecord)."""
        return self.base.events

    def state(self):
        return self._t, self._q, self._u

    def _compiled(self):
        """The current mode's compiled equations, or None (slip, or not compiled)."""
        dyn = self.runner.dynamics
        return None if dyn.slips else self.modes.get(frozenset(dyn.active))

    def advance(self, period: float, n: int, force) -> None:
        """Hold ``force`` (3,) [N] over ``period`` [s] (see the module's steps)."""
        runner = self.runner
        for i, f in zip(self.index, force):
            self.w[i] = float(f)
        t, q, u = self._t, self._q, self._u
        t_end = t + period
        if self._settles and any(r.constraint in runner.active for r in runner.rules
                                 if isinstance(r, (UnilateralContact, Coulomb))):
            runner._settle(t, q, u)
        # the event just handled, on its surface where the next step starts (also when it ended the last period)
        skip = self._skip[0] if self._skip is not None and self._skip[1] == t else None
        handled = None
        while t_end - t > 1e-12 * max(1.0, abs(t_end)):
            mode = self._compiled()
            if mode is None:
                t, q, u = self._online_until(t, q, u, t_end)
                break
            mode.inputs[:] = self.w  # the coupler's force and any scheduled inputs, held over the period
            h = t_end - t
            m = max(1, math.ceil(h / self.dt - 1e-9))
            g0 = [ev.function(t, q, u) for ev in self._events]
            t1, q1, u1 = mode.advance(t, q, u, h, m)
            hit = self._first_crossing(mode, t, q, u, g0, t1, q1, u1, h, skip)
            if hit is None:
                self._checks += 1
                if self._checks % _GUARD_EVERY == 0 and not self._conditioned(mode, t1, q1):  # step again on line
                    t, q, u = self._online_until(t, q, u, t_end)
                    break
                t, q, u = t1, q1, u1
                break
            name, crossing, s = hit
            t, q, u = mode.advance(t, q, u, s, max(1, math.ceil(s / self.dt - 1e-9)))
            t, u = self._switch(name, crossing, t, q, u)
            skip, handled = name, (name, t)
        self._skip = handled if handled is not None and handled[1] == t else None
        self._t, self._q, self._u = float(t), np.array(q, dtype=float), np.array(u, dtype=float)

    def _conditioned(self, mode, t: float, q) -> bool:
        """Whether the mode's dependent block stays within ``cond_max`` at (t, q): ||A||_F / sigma_min(A_dep) of
        its constraint rows (checked after every 8th step: conditioning changes over many periods). Where it does
        not, the mode is dropped from ``modes`` with a warning naming the time and the condition number: its periods
        run on line from then on, where the independent speeds are chosen again (a mode's compiled equations keep
        the dependent speeds they were derived with)."""
        if not mode.dep.size:
            return True
        A = self._fn_A.one(t, q, self._u0, self._p, self._w0)[0][mode.rows]
        block = A[:, mode.dep]
        if block.shape[0] == block.shape[1]:
            s_min = _sigma_min(block)
        else:
            s_min = float(np.linalg.svd(block, compute_uv=False)[-1]) if block.shape[0] > block.shape[1] else 0.0
        cond = math.sqrt(float(np.sum(A * A))) / s_min if s_min > 0.0 else math.inf
        if cond <= self.cond_max:
            return True
        key = next(k for k, m in self.modes.items() if m is mode)
        del self.modes[key]
        names = [self.runner.dynamics.u_names[i] for i in mode.dep]
        warnings.warn(f"real-time loop: at t = {t:.6g} s the dependent speeds {names} of mode {sorted(key) or 'free'} "
                      f"have condition number {cond:.3g} > cond_max = {self.cond_max:g}; the mode runs on line from "
                      f"now on", RuntimeWarning, stacklevel=3)
        return False

    def _first_crossing(self, mode, t, q, u, g0, t1, q1, u1, h, skip):
        """(event name, crossing sign, step length to it) of the earliest event crossed over the step, or None;
        the event ``skip`` (just handled at t) is on its surface there."""
        best = None
        for ev, a in zip(self._events, g0):
            if ev.name == skip:
                continue
            b = ev.function(t1, q1, u1)
            if a == 0.0 or not (a * b < 0.0 or b == 0.0):
                continue  # on its surface at the start, or no sign change
            crossing = 1 if b > a else -1
            if ev.direction and ev.direction != crossing:
                continue
            if b == 0.0:
                s = h
            else:
                def g(s_, ev=ev):
                    ts, qs, us = mode.advance(t, q, u, s_, max(1, math.ceil(s_ / self.dt - 1e-9)))
                    return ev.function(ts, qs, us)
                s = brentq(g, 0.0, h, xtol=1e-14, rtol=4 * np.finfo(float).eps)
            if best is None or s < best[2]:
                best = (ev.name, crossing, s)
        return best

    def _switch(self, name: str, crossing: int, t: float, q, u):
        """The on-line machinery handles the event at (t, q, u): returns (t, the speeds after it)."""
        runner = self.runner
        runner.n_switches += 1
        if runner.n_switches > runner.max_switches:
            raise runner._error(t, q, u, f"more than {runner.max_switches} mode changes (Zeno behaviour?)")
        info = _Hit(name, crossing)
        out = []
        runner._switch(info, t, q, u, out.append)
        return t, out[0]

    def _online_until(self, t, q, u, t_end):
        """The on-line SwitchingSimulator from (t, q, u) to ``t_end`` (a slip mode, or one not compiled)."""
        runner = self.runner
        self.online_periods += 1
        sim = runner.sim
        if sim.t != t or not (np.array_equal(sim.state[0], q) and np.array_equal(sim.state[1], u)):
            sim.reset(t, q, u, mode=runner.dynamics.mode_name)
        runner.restart()
        runner.advance(t_end)
        t, (q, u) = sim.t, sim.state
        return t, q, u


class _Hit:
    """What SwitchingSimulator._switch reads of a step's event: ``events[-1].name`` and its crossing sign."""

    def __init__(self, name: str, crossing: int):
        self.events = [_Record(name, {"direction": crossing})]


class _Record:
    def __init__(self, name, data):
        self.name, self.data = name, data
