"""The hybrid state machine (seed 000 Figure 2's alternative to on-line recombination; issue 5 item 5).

When the modes are known in advance, every mode's embedded equations are derived beforehand: :func:`kane.derive`
of the System with that mode's transient constraints made permanent (the others left out), compiled once, each
with its own minimal state (q (n_q,), the mode's independent speeds (p,)). :class:`HybridSimulator` integrates one
mode at a time and switches at events. The rules, their events and the bookkeeping are those of
:class:`~kane.switching.SwitchingSimulator` (whose machinery it reuses): at an event the mode's speeds
are mapped to the full speeds u = C u_i + c (the mode's own u_dep = D u_i + E), the jump is resolved by the
on-line impulse (u+ = u- + M^-1 A^T Lambda, generalized momentum kept in the permitted directions, restitution
e), and the next mode's independent speeds are read off u+. Constraint forces (for the deletion and stick/slip
rules and the "lambda_<name>" records) come from the kinetostatic equations of the on-line machinery, evaluated
only where a rule or an output sample needs them.

Modes in which Coulomb friction slips carry a kinetic force proportional to a multiplier, which no derivation can
hold: they are integrated on line (OnlineDynamics, all speeds). A mode that was not listed is derived on its first
entry (``on_missing="derive"``), integrated on line (``"online"``) or refused (``"error"``).

The trajectory records the full speeds of the model (as simulate_switching does), every mode interval and every
event; ``mode_equations`` holds the derived modes, ``n_derived`` counts derivations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from collections.abc import Callable, Iterable

import numpy as np

from ..errors import ArgumentError, KaneError, ModelError
from ..mechanics.constraints import select_dependent
from ..model.system import System
from ..symbolic.derive import Immobile, derive
from ..io.trajectory import Stats, Trajectory
from ..simulate.events import Event
from ..protocol import Dynamics
from ..simulate.run import ProjectionMode, RunOptions
from ..simulate.simulator import Simulator
from .rules import Coulomb, Lock, UnilateralContact, lock_step_limit
from .settings import SwitchingSettings, runner_options
from .simulator import SwitchingSimulator, run_and_save

__all__ = ["HybridSimulator", "mode_system", "robust_dependent", "simulate_hybrid"]


def mode_system(system: System, active: Iterable[str]) -> System:
    """A copy of ``system`` whose transient constraints named in ``active`` are permanent and whose other
    transient constraints are left out (the permanent ones stay): the System of one mode."""
    active = set(active)
    transient = {c[0] for c in system._constraints if c[3]}
    unknown = sorted(active - transient)
    if unknown:
        raise ModelError(f"mode {sorted(active)}: {unknown} are not transient constraints of system "
                         f"{system.name!r}; transient constraints: {', '.join(sorted(transient)) or '(none)'}")
    cons = [(n, k, d, False) for n, k, d, tr in system._constraints if not tr or n in active]
    return dataclasses.replace(system, _constraints=cons)


_mode_system = mode_system


def robust_dependent(online, active, q0, samples: int = 64, seed: int = 0) -> tuple:
    """The dependent speeds of the mode ``active`` (names of transient constraints of ``online``, the model's
    :class:`~kane.switching.OnlineDynamics`) best conditioned over the
    configuration space, not only at q0: of every set of m speeds (m the rank of the mode's constraint rows at q0),
    the one whose block of the rows has the largest least sigma_min / ||A|| over q0 and ``samples``
    configurations q0 + uniform(-pi, pi) per coordinate (fixed ``seed``). A mode's equations are derived once; a
    block that turns singular along the motion (e.g. the yaw rate of a cart as the dependent speed of its caster's
    rolling constraint, singular where the caster lines up) would spoil them where the on-line embedding re-chooses."""
    names = list(online.permanent) + [n for n in online.transient if n in set(active)]
    q0 = np.asarray(q0, dtype=float)
    if not names:
        return ()
    A0 = online.constraint_rows(0.0, q0, names)[0]
    choice = select_dependent(A0, online.u_names, tol=online.rank_tol)
    rows, m = list(choice.rows), len(choice.dependent)
    if m == 0:
        return ()
    rng = np.random.default_rng(seed)
    qs = [q0] + list(q0 + rng.uniform(-np.pi, np.pi, size=(samples, q0.size)))
    blocks = []
    for q in qs:
        A = online.constraint_rows(0.0, q, names)[0][rows]
        norm = float(np.linalg.norm(A))
        if norm > 0 and np.all(np.isfinite(A)):
            blocks.append(A / norm)
    best, score = tuple(choice.dependent), -1.0
    for dep in itertools.combinations(range(len(online.u_names)), m):
        worst = min(float(np.linalg.svd(A[:, dep], compute_uv=False)[-1]) for A in blocks)
        if worst > score * (1.0 + 1e-9):
            best, score = dep, worst
    return tuple(online.u_names[i] for i in best)


@dataclasses.dataclass
class _Mode:
    """One mode: ``dynamics`` (a pre-derived Dynamics, or the shared OnlineDynamics when ``online``) and ``idx``,
    the positions of its speeds among the model's."""

    key: tuple
    name: str
    dynamics: object
    online: bool
    idx: np.ndarray | None = None

    def state(self, u_full: np.ndarray) -> np.ndarray:
        """The integrated speeds of this mode from the full speeds."""
        return np.array(u_full, dtype=float) if self.online else np.asarray(u_full, dtype=float)[self.idx]

    def full(self, t, q, u, params) -> np.ndarray:
        """The full speeds (n_u of the model) from this mode's speeds."""
        if self.online:
            return np.asarray(u, dtype=float)
        return np.asarray(self.dynamics.full_speeds(t, q, u, params), dtype=float)


class HybridSimulator(SwitchingSimulator):
    """Run ``system`` (a kane.System, the switched constraints declared ``transient=True``) under ``rules`` from
    (t0 [s], q0 (n_q,), u0 (all n_u speeds of the model,)) with pre-derived modes.

    ``modes``: the active sets to derive beforehand (iterables of transient-constraint names; None: derive each
    mode on first entry). ``mode_system(system, active) -> System`` builds a mode's System (default
    :func:`mode_system`). ``mode_equations``: modes derived already, active set -> Equations or Dynamics (e.g.
    another runner's ``mode_equations``, to run again without deriving). ``equations``: kane.derive(system) if
    at hand (used for impulses, forces and slip modes). ``on_missing``: "derive", "online" or "error" for a mode
    not derived yet. ``inputs_need_speeds``: a callable ``inputs(t, q, u)`` receives the full speeds (True) or
    the integrated speeds as they are (False, no conversion cost; for inputs that do not read u). ``options`` (a
    :class:`kane.simulate.run.RunOptions`) and ``settings`` (a :class:`kane.switching.SwitchingSettings`) as for
    :class:`~kane.switching.SwitchingSimulator` (the earlier keyword options too, with a FutureWarning); a
    projection corrects the positions of a pre-derived mode onto its active holonomic constraints every
    ``project_every`` steps. A hybrid run keeps its samples in memory (no writer).
    """

    _segments: tuple | list = ()  # (mode, Simulator) of each interval, once started

    def __init__(self, system: System, q0, u0, rules=(), options: RunOptions | None = None,
                 settings: SwitchingSettings | None = None, *, modes=None, mode_system: Callable | None = None,
                 mode_equations=None, equations=None, on_missing: str = "derive", inputs_need_speeds: bool = True,
                 t0: float = 0.0, params=None, inputs=None, **legacy):
        if not isinstance(system, System):
            raise ModelError(f"HybridSimulator: expected the kane.System of the run, got {type(system).__name__}")
        if on_missing not in ("derive", "online", "error"):
            raise ModelError(f"on_missing must be 'derive', 'online' or 'error', got {on_missing!r}")
        options, settings = runner_options(type(self).__name__, options, settings, legacy)
        if not options.record:
            raise ArgumentError("HybridSimulator: run options: record=False is not taken (a hybrid run keeps its "
                                "samples in memory, one Simulator per mode interval)")
        self.system = system
        self.mode_system = mode_system or _mode_system
        self.on_missing = on_missing
        self.inputs_need_speeds = bool(inputs_need_speeds)
        equations = derive(system) if equations is None else equations
        super().__init__(equations, q0, u0, rules, dataclasses.replace(options, monitors=(), standard_monitors=False),
                         dataclasses.replace(settings, record_forces=False), t0=t0, params=params, inputs=inputs)
        self.options, self.settings = options, settings
        self._options = {"method": options.method, "rtol": options.rtol, "atol": options.atol_value, "dt": options.dt,
                         "params": params,
                         "max_step": min(options.max_step, lock_step_limit(self.rules)),  # no step spans a lock
                         "output_dt": options.output_dt, "project_every": options.project_every,
                         "description": self.sim.description}
        self._project = options.projection is not ProjectionMode.NONE
        self._user_monitors = dict(options.monitors)
        self._record_forces = settings.record_forces
        self._t_start, self._t_end = float(t0), math.inf
        q, u = self.sim.state  # the consistent initial state of the on-line machinery
        self.mode_equations: dict = {}
        self.n_derived = 0
        for active, given in dict(mode_equations or {}).items():
            self._add(self._names(active), given if isinstance(given, Dynamics) else given.compile())
        for active in (modes or ()):
            names = self._names(active)
            if names not in self.mode_equations:
                self._derive(names, q)
        self._segments: list = []
        self._start(float(t0), q, u)

    # ---- modes ---------------------------------------------------------------------------------------------
    def _key(self) -> tuple:
        dyn = self.dynamics
        return tuple(dyn.active), tuple((s.constraint, s.sign) for s in dyn.slips)

    def _names(self, active) -> tuple:
        """The mode key: the names of ``active`` in declaration order, checked."""
        dyn = self.dynamics
        names = tuple(n for n in dyn.transient if n in set(active))
        if set(active) - set(names):
            raise ModelError(f"mode {sorted(active)}: {sorted(set(active) - set(names))} are not transient "
                             f"constraints; transient constraints: {', '.join(dyn.transient) or '(none)'}")
        return names

    def _derive(self, active: tuple, q_ref) -> None:
        """Derive and compile the mode with the transient constraints ``active`` made permanent."""
        system, q_ref = self.mode_system(self.system, active), np.asarray(q_ref, dtype=float)
        held = Immobile.ALLOW  # a mode may hold everything (a brake on a rolling disk)
        try:  # dependent speeds conditioned over the configuration space: the mode's equations are derived once
            eqs = derive(system, dependent=robust_dependent(self.dynamics, active, q_ref) or None, reference_q=q_ref,
                         immobile=held)
        except ModelError:  # a mode_system of the user's whose constraints are not the model's
            eqs = derive(system, reference_q=q_ref, immobile=held)
        self._add(active, eqs.compile())
        self.n_derived += 1

    def _add(self, active: tuple, compiled) -> None:
        dyn = self.dynamics
        if compiled.q_names != dyn.q_names or not set(compiled.u_names) <= set(dyn.u_names):
            raise ModelError(f"mode {list(active)}: its model has coordinates {compiled.q_names} and speeds "
                             f"{compiled.u_names}; expected the coordinates {dyn.q_names} and speeds among "
                             f"{dyn.u_names} of the run's model")
        self.mode_equations[active] = compiled

    def _mode(self, q) -> _Mode:
        dyn = self.dynamics
        key = self._key()
        online = bool(dyn.slips)
        if not online and key[0] not in self.mode_equations:
            if self.on_missing == "error":
                raise KaneError(f"mode '{dyn.mode_name}' was not derived beforehand (modes: "
                                f"{[list(k) for k in self.mode_equations]}) and on_missing='error'")
            if self.on_missing == "derive":
                self._derive(key[0], q)
            else:
                online = True
        if online:
            return _Mode(key, dyn.mode_name, dyn, True)
        compiled = self.mode_equations[key[0]]
        idx = np.array([dyn.u_names.index(n) for n in compiled.u_names], dtype=int)
        return _Mode(key, dyn.mode_name, compiled, False, idx)

    # ---- one Simulator per mode interval -------------------------------------------------------------------
    def _full_u(self, mode, fn):
        params = self.params
        if mode.online:
            return fn
        return lambda t, q, u: fn(t, q, mode.full(t, q, u, params))

    def _mode_events(self, mode) -> list:
        """The events that can fire in this mode (the others are constant in it), on this mode's state."""
        events, active = [], set(self.dynamics.active)
        for rule in self.rules:
            c = rule.constraint
            if isinstance(rule, UnilateralContact):
                if c in active:
                    events.append(Event(f"delete:{c}", self._full_u(mode, self._g_delete(rule)), -1, True))
                else:
                    events.append(Event(f"impose:{c}", lambda t, q, u, g=rule.gap: g(t, q), -1, True))
            elif isinstance(rule, Coulomb):
                if c in active:
                    events.append(Event(f"slip:{c}", self._full_u(mode, self._g_slip(rule)), -1, True))
                elif c in self.slipping:
                    events.append(Event(f"stick:{c}", self._full_u(mode, self._g_stick(rule)), -1, True))
            elif isinstance(rule, Lock):
                g = self._g_lock(rule)
                events.append(Event(f"lock:{c}", g if not callable(rule.on) else self._full_u(mode, g), 0, True))
        return events

    def _start(self, t, q, u_full) -> None:
        """Start a mode interval at (t [s], q, full speeds u) in the current mode."""
        mode = self._mode(q)
        o = self._options
        monitors = {**(self._force_monitors() if self._record_forces else {}), **self._user_monitors}
        monitors = {k: self._full_u(mode, f) for k, f in monitors.items()}
        inputs = self.inputs
        if callable(inputs) and self.inputs_need_speeds:
            inputs = self._full_u(mode, inputs)
        projection = None
        if self._project and mode.online:
            projection = lambda t, q, u: self.dynamics.projection(t, q, u, self.params)
        elif self._project and any(self.dynamics.layout[n].holonomic is not None for n in self.dynamics.active_all):
            projection = lambda t, q, u: (self.dynamics.project_positions(t, q, params=self.params), u)
        sim = Simulator(mode.dynamics, t0=t, q0=q, u0=mode.state(u_full), method=o["method"], rtol=o["rtol"],
                        atol=o["atol"], dt=o["dt"], max_step=o["max_step"], t_end=self._t_end, params=o["params"],
                        inputs=inputs, events=self._mode_events(mode), monitors=monitors, output_dt=o["output_dt"],
                        projection=projection, project_every=o["project_every"], mode=mode.name,
                        description=o["description"])
        if o["output_dt"] is not None:  # samples on the run's grid, not the interval's
            sim._grid_t0 = self._t_start
            sim._grid_k = max(1, math.floor((t - self._t_start) / o["output_dt"]) + 1)
        sim.record_loop(*self._loop)
        self.sim, self._mode_now = sim, mode
        self._segments.append((mode, sim))

    def _resume(self, t, q, u_full) -> None:
        """Go on after an event: the same Simulator if the mode is unchanged, else a new interval."""
        if self._key() == self._mode_now.key:
            self.sim.reset(t, q, self._mode_now.state(u_full), mode=self.dynamics.mode_name)
        else:
            self._start(t, q, u_full)

    # ---- running: SwitchingSimulator.advance and step, with these hooks --------------------------------------
    def _event_state(self) -> tuple:
        t, (q, u_m) = self.sim.t, self.sim.state
        return t, q, self._mode_now.full(t, q, u_m, self.params)

    def trajectory(self, status: str | None = None) -> Trajectory:
        """The samples so far (speeds: all the model's), the event records and the mode intervals."""
        if not self._segments:
            return super().trajectory(status)
        parts = [(mode, sim.trajectory(status)) for mode, sim in self._segments]
        ts, qs, us, es, res, modes = [], [], [], [], {}, []
        last = None
        for mode, tr in parts:
            u = np.array([mode.full(t, q, uk, self.params) for t, q, uk in zip(tr.t, tr.q, tr.u)])
            u = u.reshape(tr.t.size, self.dynamics.n_u)
            keep = np.ones(tr.t.size, bool)
            if last is not None and tr.t.size and tr.t[0] == last[0]:  # the interval's first sample repeats the
                x0 = np.concatenate([tr.q[0], u[0]])                    # previous one's last (no jump): drop it
                keep[0] = not np.allclose(x0, last[1], rtol=1e-12, atol=1e-14)
            ts.append(tr.t[keep])
            qs.append(tr.q[keep])
            us.append(u[keep])
            es.append(tr.energy[keep] if tr.energy is not None else np.full(keep.sum(), np.nan))
            for k, v in tr.residuals.items():
                res.setdefault(k, []).append(v[keep])
            for a, b, m in tr.modes:
                if modes and modes[-1][2] == m and modes[-1][1] == a:
                    modes[-1] = (modes[-1][0], b, m)
                else:
                    modes.append((a, b, m))
            if tr.t.size:
                last = (tr.t[-1], np.concatenate([tr.q[-1], u[-1]]))
        stats = [tr.stats for _, tr in parts]
        rejected = [s.n_rejected for s in stats]
        total = Stats(n_fev=sum(s.n_fev for s in stats), n_steps=sum(s.n_steps for s in stats),
                      n_accepted=sum(s.n_accepted for s in stats),
                      n_rejected=None if None in rejected else sum(rejected),
                      wall_time_s=sum(s.wall_time_s for s in stats), method=stats[-1].method,
                      n_jev=sum(s.n_jev for s in stats), n_lu=sum(s.n_lu for s in stats), loop=self._loop[0],
                      loop_reason=self._loop[1])
        energy = np.concatenate(es)
        tr = parts[-1][1]
        return Trajectory(t=np.concatenate(ts), q=np.concatenate(qs), u=np.concatenate(us),
                          energy=None if np.isnan(energy).all() else energy,
                          residuals={k: np.concatenate(v) for k, v in res.items()}, events=list(self.records),
                          modes=modes, stats=total, q_names=self.dynamics.q_names, u_names=self.dynamics.u_names,
                          description=tr.description, params=tr.params, status=tr.status)


def simulate_hybrid(system: System, t_span, q0, u0, rules=(), *, path: str | os.PathLike | None = None,
                    **options) -> Trajectory:
    """Integrate ``system`` over ``t_span`` = (t0, t1) [s] under ``rules`` with pre-derived modes (see
    :class:`HybridSimulator` for ``options``); with ``path`` the trajectory is saved to HDF5, also on failure."""
    return run_and_save(HybridSimulator, system, t_span, q0, u0, rules, path, options)
