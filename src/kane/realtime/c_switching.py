"""A switching plant in the C period (issue 32, compiled switching modes): :func:`switch_plan` reads a real-time
loop's switching plant and returns its :class:`SwitchPlan`, the time-scheduled switches (each lock an impulse,
plastic or of restitution e; each unlock the identity on (q, u)) and, where the period cannot run in C, the reason
that names the rule, mode or switch at fault; :class:`SwitchContext` hands a :class:`ModePlant` to the C period
(:mod:`.c_switching_text`: the modes' compiled RK4 steppers and dependent-speed functions, the lock intervals, the
constraint rows, M and b for the impulse and the guard) and makes the plant's events and state from what C did.

What the C period runs: :class:`kane.switching.Lock` rules given by time intervals (at most 4, every mode of them
compiled). Not compiled: state events (a UnilateralContact or Coulomb rule, a Lock switched by a Python function
on(t, q, u)), modes that run on line (not compiled, or with slip), redundant constraint rows (the impulse in C
needs independent rows), the slow-rate scheme over a switching plant. Those stay on the Python path
(:mod:`kane.realtime.mode_plant`) and :func:`switch_plan` says why, for :func:`kane.realtime.native_loop.why_not_c`.

The conditioning guard of a compiled mode (:meth:`ModePlant._conditioned`) is evaluated in C with the same rows, at
the same periods; where it fires, the Python path would run the mode on line from then on, which the C period
cannot: the C loop stops there (status "failed", naming the time and the condition number).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..codegen.c_backend import CFunction
from ..switching import Lock
from .c_period import _address, model_free_library
from .c_switching_text import MAX_BLOCKS, MAX_N, MAX_RULES, SWITCHING_CDEF, SWITCHING_SOURCE
from .mode_plant import _GUARD_EVERY, ModePlant
from .switching_plant import SwitchingPlant

__all__ = ["SWITCHING_PLANTS", "ScheduledSwitch", "SwitchPlan", "switch_plan", "switching_library", "SwitchContext"]

SWITCHING_PLANTS = (ModePlant, SwitchingPlant)  # the plants whose modes switch inside the period


@dataclass(frozen=True)
class ScheduledSwitch:
    """One time-scheduled switch: at ``t`` [s] the Lock on ``constraint`` does ``kind`` ("lock" or "unlock");
    ``identity``: the state mapping at it leaves (q, u) unchanged (unlocking), else an impulse of ``restitution``."""

    t: float
    constraint: str
    kind: str
    identity: bool
    restitution: float


@dataclass(frozen=True)
class SwitchPlan:
    """The time-scheduled ``switches`` after the start, in time order, and ``reason`` (None when the C period can run
    them all)."""

    switches: tuple[ScheduledSwitch, ...]
    reason: str | None


def _modes_missing(plant: ModePlant) -> list:
    """The active sets of the switched constraints that have no compiled mode (sorted names)."""
    online = plant.runner.dynamics
    names = [n for n in online.transient if any(r.constraint == n for r in plant.runner.rules)]
    subsets = [frozenset(c) for k in range(len(names) + 1) for c in itertools.combinations(names, k)]
    return [sorted(s) for s in subsets if s not in plant.modes]


def switch_plan(plant, t0: float) -> SwitchPlan:
    """The :class:`SwitchPlan` of ``plant`` (a :class:`ModePlant` or :class:`SwitchingPlant`) for a run from
    ``t0`` [s]."""
    if isinstance(plant, SwitchingPlant):
        return SwitchPlan((), "the switching plant's modes are not compiled (SwitchingDynamics without its system "
                              "embeds the constraints on line)")
    if not isinstance(plant, ModePlant):
        return SwitchPlan((), f"the plant ({type(plant).__name__}) is not a switching plant")
    switches = []
    for rule in plant.runner.rules:
        kind, name = type(rule).__name__, rule.constraint
        if not isinstance(rule, Lock):
            return SwitchPlan((), f"the {kind} rule on {name!r} switches on state events, which are not compiled "
                                  "to C")
        if callable(rule.on):
            return SwitchPlan((), f"the Lock on {name!r} is switched by a Python function on(t, q, u), not by "
                                  "time intervals")
        e = float(rule.restitution)
        for a, b in rule.on:
            switches += [ScheduledSwitch(a, name, "lock", False, e)] if a > t0 else []
            switches += [ScheduledSwitch(b, name, "unlock", True, e)] if b > t0 else []
    switches.sort(key=lambda s: s.t)
    missing = _modes_missing(plant)
    if missing:
        return SwitchPlan(tuple(switches), f"mode {missing[0] or 'free'} is not compiled (it runs on line)")
    online = plant.runner.dynamics
    if len(plant.runner.rules) > MAX_RULES:
        return SwitchPlan(tuple(switches), f"{len(plant.runner.rules)} Lock rules; the C period runs at most "
                                           f"{MAX_RULES}")
    dropped = [n for n, b in online.layout.items() if b.dropped]
    if dropped:
        return SwitchPlan(tuple(switches), f"the constraint {dropped[0]!r} has redundant rows (the lock impulse in "
                                           "C needs independent rows)")
    rows = sum(b.rows.stop - b.rows.start for b in online.layout.values())
    if max(online.n_u, rows) > MAX_N or len(online.layout) > MAX_BLOCKS:
        return SwitchPlan(tuple(switches), f"{online.n_u} speeds and {rows} constraint rows in "
                                           f"{len(online.layout)} constraints; the C period runs at most {MAX_N} "
                                           f"and {MAX_BLOCKS} constraints")
    return SwitchPlan(tuple(switches), None)


def switching_library():
    """(ffi, lib) of :mod:`.c_switching_text`, built once per compiler and cached (CCompileError when no compiler
    works)."""
    return model_free_library("kane.realtime.c_switching", SWITCHING_SOURCE, SWITCHING_CDEF)


class SwitchContext:
    """The C side of a :class:`ModePlant` with time-scheduled locks for one run (``switch_plan(plant).reason`` must
    be None): ``state`` [t, q (n_q,), u (n_u,) all speeds, 0] the plant's state C advances, ``names`` the mode name of
    each mode index C writes into the log rows (a bit per Lock rule). :meth:`drain` hands each switch C made to the
    plant's on-line machinery (the same records, mode and switch count as the Python path; the largest difference
    between the two u+ is kept in ``impulse_gap``), :meth:`finish` puts C's final state into the plant."""

    def __init__(self, plant: ModePlant, ev_cap: int = 256):
        ffi, lib = switching_library()
        self.ffi, self.lib, self.plant = ffi, lib, plant
        self._keep: list = []
        s = self.s = ffi.new("kane_switching *")
        runner, online = plant.runner, plant.runner.dynamics
        self.rules = rules = tuple(runner.rules)
        nq, nu, nw = online.n_q, online.n_u, len(plant.w)
        t, q, u = plant.state()
        self.state = np.concatenate([[float(t)], q, u, [0.0]])
        s.nq, s.nu, s.nw, s.n_rules = nq, nu, nw, len(rules)
        s.state, s.x1, s.scratch = self._ptr(self.state), self._ptr(np.zeros(nq + nu + 2)), self._ptr(self.state.copy())
        s.w, s.w0 = self._ptr(np.array(plant.w, dtype=float)), self._ptr(np.array(plant._w0, dtype=float))
        s.dt, s.cond_max, s.guard_every = plant.dt, plant.cond_max, _GUARD_EVERY
        s.checks, s.switches_left = plant._checks, runner.max_switches - runner.n_switches
        names = [r.constraint for r in rules]
        self.names = []
        for mask in range(1 << len(rules)):
            key = frozenset(n for i, n in enumerate(names) if mask >> i & 1)
            self.names.append("+".join(n for n in online.transient if n in key) or "free")
            mode = plant.modes[key]
            x, pc = (b.copy() for b in mode.stepper.buffers)
            fn = mode.stepper.fn
            s.step_fn[mask] = ffi.cast("void *", _address(fn.ffi, fn.lib.kane_step))
            s.mx[mask], s.mpc[mask] = self._ptr(x), self._ptr(pc)
            dyn = mode.dynamics
            uf = dyn._fn("u_full", ["u_full"], False)
            p = dyn._default_params if mode.params is None else dyn.model.parameter_values(mode.params)
            s.uf_fn[mask] = ffi.cast("void *", _address(uf.ffi, uf.lib.kane_f))
            s.ufpc[mask] = ffi.cast("double *", _address(uf.ffi, self._hold(uf.constants(p))))
            s.mnu[mask], s.mnrows[mask], s.mndep[mask] = len(mode.idx), len(mode.rows), len(mode.dep)
            s.midx[mask], s.mrows[mask], s.mdep[mask] = (self._longs(a) for a in (mode.idx, mode.rows, mode.dep))
        for r, rule in enumerate(rules):
            iv = np.array([float(v) for ab in rule.on for v in ab])
            s.n_iv[r], s.iv[r], s.e[r] = len(iv) // 2, self._ptr(np.append(iv, 0.0)), float(rule.restitution)
        for k, (name, blk) in enumerate(online.layout.items()):
            s.blk_start[k], s.blk_len[k] = blk.rows.start, blk.rows.stop - blk.rows.start
            s.blk_rule[k] = names.index(name) if name in names else (-1 if not blk.transient else -2)
        s.n_blocks = len(online.layout)
        mab = CFunction(online.equations.full_program, ["M", "A", "b"])
        offsets = {name: a for name, a, _ in mab.layout}
        s.mab_fn = ffi.cast("void *", _address(mab.ffi, mab.lib.kane_f))
        s.mab_pc = ffi.cast("double *", _address(mab.ffi, self._hold(mab.constants(np.asarray(plant._p, float)))))
        s.mab_out = self._ptr(np.zeros(mab.sizes["nout"] + 1))
        s.off_M, s.off_A, s.off_b = offsets["M"], offsets["A"], offsets["b"]
        self._mab = mab
        s.active = sum(1 << i for i, n in enumerate(names) if n in online.active)
        s.mode_now = float(s.active)
        skip = plant._skip
        s.skip_rule, s.skip_t = -1, 0.0
        if skip is not None and skip[0].split(":", 1)[1] in names:
            s.skip_rule, s.skip_t = names.index(skip[0].split(":", 1)[1]), float(skip[1])
        self.width = 3 + nq + 2 * nu
        self.events = np.zeros((ev_cap, self.width))
        s.ev, s.ev_width, s.ev_cap = self._ptr(self.events), self.width, ev_cap
        self.impulse_gap = 0.0
        self.switches = 0

    def _ptr(self, a: np.ndarray):
        self._keep.append(a)
        return self.ffi.cast("double *", self.ffi.from_buffer(a))

    def _longs(self, a):
        arr = np.append(np.asarray(a, dtype=np.int64), 0)
        self._keep.append(arr)
        return self.ffi.cast("long *", self.ffi.from_buffer(arr))

    def _hold(self, cdata):
        self._keep.append(cdata)
        return cdata

    def addresses(self) -> tuple:
        """(the period function, the struct, its current mode index) as integers for the C period's struct."""
        ffi, s = self.ffi, self.s
        return (_address(ffi, self.lib.kane_switching_period), _address(ffi, s),
                _address(ffi, ffi.addressof(s, "mode_now")))

    def drain(self) -> int:
        """Hand each switch C published and Python has not seen to the plant's on-line machinery, in order (the
        event records, the runner's mode); returns how many."""
        ffi, lib, s = self.ffi, self.lib, self.s
        head, tail = lib.kane_sw_load(ffi.addressof(s, "ev_head")), s.ev_tail
        nq, nu = int(s.nq), int(s.nu)
        start = tail
        while tail < head:
            ev = self.events[tail % self.events.shape[0]].copy()
            lib.kane_sw_store(ffi.addressof(s, "ev_tail"), tail + 1)
            t, r, crossing = float(ev[0]), int(ev[1]), int(ev[2])
            q, u_minus, u_plus = ev[3:3 + nq], ev[3 + nq:3 + nq + nu], ev[3 + nq + nu:]
            _, u_py = self.plant._switch(f"lock:{self.rules[r].constraint}", crossing, t, q, u_minus)
            self.impulse_gap = max(self.impulse_gap, float(np.max(np.abs(np.asarray(u_py) - u_plus))))
            tail += 1
        self.switches += tail - start
        return tail - start

    def failure(self, code: int) -> str:
        """What stopped the C loop (its status ``code``, 5 to 7), in a phrase."""
        s = self.s
        if code == 5:
            key = self.names[int(s.active)]
            return (f"at t = {s.fail_t:.6g} s the dependent speeds of mode {key} have condition number "
                    f"{s.fail_value:.3g} > cond_max = {float(s.cond_max):g}: the Python path runs the mode on line "
                    "from there, the C period cannot (run with --loop python)")
        if code == 6:
            return f"the lock impulse at t = {s.fail_t:.9g} s: M or A M^-1 A^T is not positive definite"
        return (f"switching simulation failed at t = {s.fail_t:.6g} s in mode {self.names[int(s.active)]!r}: more "
                f"than {self.plant.runner.max_switches} mode changes (Zeno behaviour?)")

    def finish(self) -> None:
        """After the C loop ended (joined) and :meth:`drain`: C's state, guard count and last event into the
        plant."""
        self.drain()
        plant, s = self.plant, self.s
        nq = int(s.nq)
        plant._t, plant._q, plant._u = float(self.state[0]), self.state[1:1 + nq].copy(), self.state[1 + nq:-1].copy()
        plant._checks = int(s.checks)
        plant._skip = (f"lock:{self.rules[s.skip_rule].constraint}", float(s.skip_t)) if s.skip_rule >= 0 else None
