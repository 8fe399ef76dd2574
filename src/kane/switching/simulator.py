"""Constraints that come and go during a run: the simulation loop of seed 000 Figure 2.

Rules, declared with small frozen records (defined in :mod:`kane.switching.rules`, exported here too), decide
the active set of the transient constraints of a model:

* :class:`UnilateralContact`: active while its normal multiplier is compressive (>= 0, the row oriented along the
  gap's rate so that lambda > 0 pushes the gap open), deleted when it would pull; imposed when ``gap`` falls
  through zero, with an impact impulse of restitution e. A rebound slower than ``v_min`` [m/s] is made plastic
  (e = 0) and the contact imposed: this ends the Zeno chatter of a bouncing ball.
* :class:`Coulomb`: friction along a one-row stick constraint whose row is the slip velocity [m/s]: stick while
  |lambda_t| <= mu_s N; slip with the kinetic force -mu_k N sign(v_t) along the row (a generalized force
  A_t^T F); stick again when the slip velocity crosses zero (or slip the other way if sticking needs more than
  mu_s N). N is the multiplier of a contact constraint (friction acts only while it is active), a callable
  N(t, q, u) [N] or a constant [N].
* :class:`Lock`: a constraint switched on and off by a callable on(t, q, u) -> bool or by time intervals; locking
  is a plastic impulse (or one of restitution e).

:class:`SwitchingSimulator` runs the existing :class:`~kane.simulate.Simulator` on an
:class:`~kane.switching.online.OnlineDynamics`; every rule contributes terminal events whose functions follow the
current mode. At each change it resolves the impulse, re-embeds with new independent speeds and restarts the
integrator; it checks the new mode for consistency (a contact that would pull is deleted, a stick that needs
more than mu_s N slips). The trajectory records every mode interval and every event as an EventRecord whose
``name`` is the constraint, ``kind`` one of "impact", "impose", "delete", "stick", "slip", "reverse", "lock",
"unlock", "reselect", "initial", and ``data`` holds the impulse (generalized impulse multipliers, N s for rows
in m/s), the change of kinetic energy [J], the new mode and the independent speeds.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from ..errors import KaneError, ModelError
from ..io.trajectory import EventRecord, Trajectory
from ..simulate.events import Event, EventFunctionError
from ..simulate.run import ProjectionMode, RunOptions
from ..simulate.simulator import SimulationError, Simulator
from .online import OnlineDynamics, SlipForce
from .rules import Coulomb, Lock, UnilateralContact, check_rules, gap_value, lock_step_limit
from .settings import SwitchingSettings, run_and_save, runner_options

__all__ = ["UnilateralContact", "Coulomb", "Lock", "SwitchingSimulator", "simulate_switching", "run_and_save"]


class SwitchingSimulator:
    """Run ``equations`` (from :func:`kane.derive`, the switched constraints declared ``transient=True``) under
    ``rules`` from (t0 [s], q0 (n_q,), u0 (n_u of the model,)).

    ``options``: a :class:`kane.simulate.run.RunOptions`: the method, tolerances, steps, ``output_dt``,
    ``monitors``, ``max_steps``, ``max_wall_time`` go to the Simulator; ``t_end`` [s] bounds the steps of
    :meth:`step`; ``projection`` NONE runs without one, a function (t, q, u) -> (q, u) is used as it is, any other
    mode puts the state back on the active constraints every ``project_every`` accepted steps;
    ``standard_monitors`` records ``power`` and ``constraint`` for the work-energy balance of ``kane simulate``
    (:meth:`_balance_monitors`); a switching run takes no ``events`` (its rules make them) and no ``mode`` (its
    rules name them). ``settings``: a :class:`SwitchingSettings` (``cond_max``, ``dependent``, ``force_tol``,
    ``max_switches``, ``record_forces``: the residuals "lambda_<name>" of :meth:`_force_monitors`). ``params`` and
    ``inputs`` (mapping or callable inputs(t, q, u)) go to the dynamics. ``writer``: a
    :class:`kane.io.TrajectoryWriter` that receives the samples, modes and event records as the run goes (closed
    with the status when it fails or :meth:`finish` ends it). The keyword options of the earlier API (``rtol=...,
    project=..., cond_max=...``, see :func:`kane.switching.settings.split_options`) still work for one release,
    with a FutureWarning. Raises :class:`kane.ModelError` for bad rules before the run, :class:`SimulationError`
    during it.
    """

    def __init__(self, equations, q0, u0, rules=(), options: RunOptions | None = None,
                 settings: SwitchingSettings | None = None, *, t0: float = 0.0, params=None, inputs=None,
                 writer=None, **legacy):
        options, settings = runner_options(type(self).__name__, options, settings, legacy)
        self.options, self.settings = options, settings
        self.dynamics = dyn = OnlineDynamics(equations, cond_max=settings.cond_max, dependent=settings.dependent)
        self.rules = tuple(rules)
        self.params, self.inputs = params, inputs
        self.force_tol = settings.force_tol
        self.max_switches = settings.max_switches
        t0 = float(t0)
        q0 = np.array(q0, dtype=float).reshape(-1)
        u0 = np.array(u0, dtype=float).reshape(-1)
        if q0.shape != (dyn.n_q,) or u0.shape != (dyn.n_u,):
            raise ModelError(f"q0 and u0 need {dyn.n_q} and {dyn.n_u} entries (all the model's speeds), got "
                             f"{q0.size} and {u0.size}")
        check_rules(self.rules, dyn, t0, q0, params)
        self.records: list[EventRecord] = []
        self._writer, self._n_written = writer, 0  # records sent to the writer
        self.active: set = set()
        self.slipping: dict = {}
        self.n_switches = 0
        self._n_selections = 0
        self._loop, self._started = ("python", ""), False
        q0, u0 = self._initial_mode(t0, q0, u0)
        monitors = {**(self._force_monitors() if settings.record_forces else {}),
                    **(self._balance_monitors() if options.standard_monitors else {}), **dict(options.monitors)}
        max_step = min(options.max_step, lock_step_limit(self.rules))  # no step spans a whole lock interval
        self._t_end = options.t_end
        self.sim = Simulator(dyn, t0=t0, q0=q0, u0=u0, method=options.method, rtol=options.rtol,
                             atol=options.atol_value, max_step=max_step, min_step=options.min_step,
                             first_step=options.first_step, dt=options.dt, params=params, inputs=inputs,
                             events=self._events(), monitors=monitors, output_dt=options.output_dt,
                             projection=self._projection(), project_every=options.project_every,
                             mode=dyn.mode_name, writer=writer, t_end=options.t_end, max_steps=options.max_steps,
                             max_wall_time=options.max_wall_time, record_events=False, record=options.record,
                             record_energy=options.record_energy,
                             description=options.description if options.description is not None
                             else equations.model.name)
        self._started = True
        self._log_selections()
        self._write_records()

    def _projection(self):
        """The projection hook of ``options.projection`` (None: none)."""
        choice, dyn, params = self.options.projection, self.dynamics, self.params
        if callable(choice):
            return choice
        if choice is ProjectionMode.NONE:
            return None
        return lambda t, q, u: dyn.projection(t, q, u, params)

    def record_loop(self, loop: str, reason: str = "") -> None:
        """Record which loop steps this run and why not the compiled one (:func:`kane.run` calls it)."""
        self._loop = (str(loop), str(reason))
        self.sim.record_loop(loop, reason)

    # ---- the mode and its quantities -----------------------------------------------------------------------
    def _inputs_at(self, t, q, u):
        return self.inputs(t, q, u) if callable(self.inputs) else self.inputs

    def _friction_on(self, rule: Coulomb) -> bool:
        n = rule.normal
        return not isinstance(n, str) or n in self.active or n in self.dynamics.permanent

    def _apply_mode(self) -> None:
        slips = []
        for rule in self.rules:
            if isinstance(rule, Coulomb) and rule.stick_constraint in self.slipping:
                slips.append(SlipForce(rule.stick_constraint, float(rule.mu_k), self.slipping[rule.stick_constraint],
                                       rule.normal, rule.normal_row))
        self.dynamics.set_mode(self.active, slips)

    def _forces(self, t, q, u) -> dict:
        return self.dynamics.constraint_forces(t, q, u, self.params, self._inputs_at(t, q, u))

    def _normal(self, rule: Coulomb, t, q, u, forces=None) -> float:
        if isinstance(rule.normal, str):
            if not self._friction_on(rule):
                return 0.0
            forces = self._forces(t, q, u) if forces is None else forces
            return float(forces[rule.normal][rule.normal_row])
        return float(rule.normal(t, q, u)) if callable(rule.normal) else float(rule.normal)

    def _slip_velocity(self, rule, t, q, u) -> float:
        return float(self.dynamics.constraint_residual(t, q, u, [rule.constraint], self.params)[0])

    def _contact_rate(self, rule, t, q, u) -> float:
        return float(self.dynamics.constraint_residual(t, q, u, [rule.constraint], self.params)[rule.row])

    def _force_monitors(self) -> dict:
        """Monitors "lambda_<constraint>" (and "_<row>" for several rows): the constraint forces at every output
        sample, 0 while a constraint is inactive, the kinetic friction force while it slips."""
        out = {}
        for name, blk in self.dynamics.layout.items():
            n = blk.rows.stop - blk.rows.start
            for k in range(n):
                def force(t, q, u, name=name, k=k):
                    return float(self._forces(t, q, u).get(name, np.zeros(n))[k])
                out[f"lambda_{name}" if n == 1 else f"lambda_{name}_{k}"] = force
        return out

    def _balance_monitors(self) -> dict:
        """Monitors "power" [W] (:meth:`OnlineDynamics.power`: the loads without a potential and kinetic friction;
        where the potential is known) and "constraint", the largest |A u + b| of the active constraints."""
        dyn = self.dynamics
        out = {"power": lambda t, q, u: dyn.power(t, q, u, self.params, self._inputs_at(t, q, u))} \
            if dyn.equations.has_potential else {}
        out["constraint"] = lambda t, q, u: float(np.max(np.abs(dyn.constraint_residual(t, q, u, params=self.params)),
                                                         initial=0.0))
        return out

    # ---- events (their functions follow the current mode; 1.0 where a rule has nothing to watch) ------------
    def _events(self) -> list:
        events = []
        for rule in self.rules:
            c = rule.constraint
            if isinstance(rule, UnilateralContact):
                events.append(Event(f"impose:{c}", self._g_impose(rule), direction=-1, terminal=True))
                events.append(Event(f"delete:{c}", self._g_delete(rule), direction=-1, terminal=True))
            elif isinstance(rule, Coulomb):
                events.append(Event(f"slip:{c}", self._g_slip(rule), direction=-1, terminal=True))
                events.append(Event(f"stick:{c}", self._g_stick(rule), direction=-1, terminal=True))
            else:
                events.append(Event(f"lock:{c}", self._g_lock(rule), direction=0, terminal=True))
        return events

    def _g_impose(self, rule):
        def g(t, q, u):
            return 1.0 if rule.constraint in self.active else rule.gap(t, q)
        return g

    def _g_delete(self, rule):
        def g(t, q, u):
            if rule.constraint not in self.active:
                return 1.0
            return float(self._forces(t, q, u)[rule.constraint][rule.row])
        return g

    def _g_slip(self, rule):
        def g(t, q, u):
            if rule.stick_constraint not in self.active:
                return 1.0
            f = self._forces(t, q, u)
            return float(rule.mu_s) * self._normal(rule, t, q, u, f) - abs(float(f[rule.stick_constraint][0]))
        return g

    def _g_stick(self, rule):
        def g(t, q, u):
            sign = self.slipping.get(rule.stick_constraint)
            return 1.0 if sign is None else sign * self._slip_velocity(rule, t, q, u)
        return g

    @staticmethod
    def _g_lock(rule):
        if not callable(rule.on):  # distance [s] to the nearest interval boundary, > 0 inside: exact roots
            def g(t, q, u):
                return max(min(t - a, b - t) for a, b in rule.on)
            return g

        def g(t, q, u):
            return 1.0 if rule.is_on(t, q, u) else -1.0
        return g

    # ---- records -------------------------------------------------------------------------------------------
    def _record(self, t, constraint, kind, **data) -> None:
        data = {"constraint": constraint, "impulse": [], **data, "mode": self.dynamics.mode_name}
        self.records.append(EventRecord(float(t), constraint, kind, data))

    def _write_records(self) -> None:
        writer = self._writer
        if writer is not None and writer.is_open:
            for rec in self.records[self._n_written:]:
                writer.add_event(rec)
        self._n_written = len(self.records)

    def _log_selections(self) -> None:
        for t, names, cond, reason in self.dynamics.selections[self._n_selections:]:
            if reason == "condition":
                self.records.append(EventRecord(t, "reselect", "reselect",
                                                {"independent": list(names), "condition_number": cond,
                                                 "mode": self.dynamics.mode_name}))
        self._n_selections = len(self.dynamics.selections)

    def _jump(self, t, q, u, names, e_of, constraint, kind, **extra):
        res = self.dynamics.resolve_impulse(q, u, names, e_of, t=t, params=self.params)
        impulse = res.impulses.get(constraint, np.zeros(0)).tolist() if constraint else []
        self._pending = (constraint, kind, {"impulse": impulse, "delta_kinetic": res.delta_kinetic, **extra})
        return res.u_plus

    # ---- the initial mode and consistency checks -----------------------------------------------------------
    def _initial_mode(self, t, q, u):
        dyn = self.dynamics
        for rule in self.rules:
            if isinstance(rule, Lock) and rule.is_on(t, q, u):
                self.active.add(rule.constraint)
        for rule in self.rules:
            if isinstance(rule, UnilateralContact) and gap_value(rule, t, q) <= 1e-12:
                if self._contact_rate(rule, t, q, u) <= rule.v_min:
                    self.active.add(rule.constraint)
        self._apply_mode()
        q = dyn.project_positions(t, q, params=self.params)
        for rule in self.rules:
            if isinstance(rule, Coulomb) and self._friction_on(rule):
                self._start_friction(rule, t, q, u)
        self._apply_mode()
        res = dyn.resolve_impulse(q, u, (), 0.0, t=t, params=self.params)
        if np.max(np.abs(res.u_plus - u), initial=0.0) > 1e-12 * (1.0 + np.max(np.abs(u), initial=0.0)):
            self.records.append(EventRecord(t, "initial", "initial",
                                            {"delta_kinetic": res.delta_kinetic, "mode": dyn.mode_name,
                                             "impulse": {k: v.tolist() for k, v in res.impulses.items()}}))
        u = res.u_plus
        self._settle(t, q, u)
        return q, self.dynamics.project_velocity(q, u, t=t, params=self.params)

    def _settle(self, t, q, u) -> None:
        """Change the mode until it is consistent at (t, q, u): no pulling contact, no stick beyond mu_s N."""
        for _ in range(4 * len(self.rules) + 4):
            changed = False
            forces = self._forces(t, q, u)
            for rule in self.rules:
                c = rule.constraint
                if isinstance(rule, UnilateralContact) and c in self.active:
                    if forces[c][rule.row] < -self.force_tol:
                        self._delete(t, rule)
                        changed = True
                        break
                if isinstance(rule, Coulomb) and c in self.active:
                    lam = float(forces[c][0])
                    N = self._normal(rule, t, q, u, forces)
                    if abs(lam) > float(rule.mu_s) * max(N, 0.0) + self.force_tol:
                        self.active.discard(c)
                        self.slipping[c] = -1.0 if lam > 0 else 1.0
                        self._apply_mode()
                        self._record(t, c, "slip", multiplier=lam, normal=N)
                        changed = True
                        break
            if not changed:
                self._log_selections()
                return
        raise self._error(t, q, u, "no consistent mode: the contact and friction rules keep changing it")

    def _delete(self, t, rule) -> None:
        c = rule.constraint
        self.active.discard(c)
        for other in self.rules:  # friction on a contact that opens stops
            if isinstance(other, Coulomb) and other.normal == c:
                self.active.discard(other.stick_constraint)
                self.slipping.pop(other.stick_constraint, None)
        self._apply_mode()
        self._record(t, c, "delete")

    # ---- handling an event ---------------------------------------------------------------------------------
    def _handle(self, name: str, crossing: int, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        action, c = name.split(":", 1)
        rule = next(r for r in self.rules if r.constraint == c)
        self._pending = None
        if action == "impose":
            u = self._impose(rule, t, q, u)
        elif action == "delete":
            self._delete(t, rule)
        elif action == "slip":
            lam = float(self._forces(t, q, u)[c][0])
            N = self._normal(rule, t, q, u)
            self.active.discard(c)
            self.slipping[c] = -1.0 if lam > 0 else 1.0
            self._apply_mode()
            self._record(t, c, "slip", multiplier=lam, normal=N)
        elif action == "stick":
            u = self._stick(rule, t, q, u)
        elif crossing > 0:  # the lock's function rose through zero: it turns on
            self.active.add(c)
            self._apply_mode()
            u = self._jump(t, q, u, [c], {c: rule.restitution}, c, "lock")
        else:
            self.active.discard(c)
            self._apply_mode()
            self._record(t, c, "unlock")
        if self._pending is not None:
            constraint, kind, data = self._pending
            self._record(t, constraint, kind, **data)
        self._settle(t, q, u)
        return u

    def _impose(self, rule: UnilateralContact, t, q, u) -> np.ndarray:
        c = rule.constraint
        v_in = self._contact_rate(rule, t, q, u)
        e = float(rule.restitution)
        plastic = e * abs(v_in) < rule.v_min
        if plastic:
            self.active.add(c)
            self._apply_mode()
            u = self._jump(t, q, u, [c], {c: 0.0}, c, "impose", approach_speed=v_in, restitution=0.0)
            for other in self.rules:  # friction starts with the contact
                if isinstance(other, Coulomb) and other.normal == c:
                    self._start_friction(other, t, q, u)
                    self._apply_mode()
            return self.dynamics.project_velocity(q, u, t=t, params=self.params)
        return self._jump(t, q, u, [c], {c: e}, c, "impact", approach_speed=v_in, restitution=e)

    def _start_friction(self, rule: Coulomb, t, q, u) -> None:
        """Friction that starts is stuck when the contact point barely slides, else slipping in its direction."""
        v = self._slip_velocity(rule, t, q, u)
        if abs(v) <= rule.v_stick:
            self.active.add(rule.stick_constraint)
        else:
            self.slipping[rule.stick_constraint] = 1.0 if v > 0 else -1.0

    def _stick(self, rule: Coulomb, t, q, u) -> np.ndarray:
        c = rule.stick_constraint
        old = self.slipping.pop(c)
        self.active.add(c)
        self._apply_mode()
        u = self.dynamics.project_velocity(q, u, t=t, params=self.params)
        f = self._forces(t, q, u)
        lam, N = float(f[c][0]), self._normal(rule, t, q, u, f)
        if abs(lam) <= float(rule.mu_s) * max(N, 0.0) + self.force_tol:
            self._record(t, c, "stick", multiplier=lam, normal=N)
            return u
        self.active.discard(c)
        self.slipping[c] = -1.0 if lam > 0 else 1.0
        self._apply_mode()
        self._record(t, c, "reverse", multiplier=lam, normal=N, previous_sign=old)
        return u

    # ---- running -------------------------------------------------------------------------------------------
    def _error(self, t, q, u, reason, exc=None) -> SimulationError:
        traj = self._so_far(f"failed: {reason}")
        names = self.dynamics
        fmt = ", ".join
        message = (f"switching simulation failed at t = {t!r} s in mode '{names.mode_name}': {reason}\n"
                   f"last good state:\n  q: {fmt(f'{n}={v:.12g}' for n, v in zip(names.q_names, q))}\n"
                   f"  u: {fmt(f'{n}={v:.12g}' for n, v in zip(names.u_names, u))}")
        err = SimulationError(message, reason=reason, t=t, mode=names.mode_name, t_good=t, q=np.array(q),
                              u=np.array(u), trajectory=traj)
        err.__cause__ = exc
        return err

    @property
    def t(self) -> float:
        """Current time [s]."""
        return self.sim.t

    @property
    def terminated(self) -> bool:
        """False: :meth:`step` handles every event (the interface of :class:`kane.simulate.Simulator`)."""
        return False

    @property
    def stats(self):
        """Work so far (evaluations, steps, wall time) of the integrator, over every mode."""
        return self.sim.stats

    def run(self, t_end: float) -> Trajectory | None:
        """Integrate to ``t_end`` [s] through every mode change; returns the trajectory (its last sample at the
        final time; None when ``options.record`` is False)."""
        self.advance(t_end)
        self.sim.run(t_end)
        return self._so_far(None)

    def advance(self, t_end: float) -> None:
        """Integrate to ``t_end`` [s] through every mode change without building the trajectory (a real-time
        loop's period)."""
        self._t_end = float(t_end)
        while self.sim.t < t_end:
            self.sim.integrator.t_bound = self._t_end  # (a hybrid run's Simulator changes with its mode)
            self.step()

    def step(self) -> None:
        """Take one accepted step, cut at an event, and make the mode change the event calls for. A failure raises
        :class:`SimulationError` with the trajectory so far; the writer, if any, is closed with the status."""
        sim = self.sim
        try:
            info = sim.step()
        except SimulationError as exc:
            exc.trajectory = self._so_far(f"failed: {exc.reason}") or exc.trajectory
            raise
        self._log_selections()
        if info.terminated:
            self.n_switches += 1
            t, q, u = self._event_state()
            try:
                if self.n_switches > self.max_switches:
                    raise self._error(t, q, u, f"more than {self.max_switches} mode changes (Zeno behaviour?)")
                self._switch(info, t, q, u, lambda u_new: self._resume(t, q, u_new))
            except SimulationError as exc:
                self._write_records()
                if self._writer is not None and self._writer.is_open:
                    self._writer.close(f"failed: {exc.reason}", sim.stats)
                raise
        self._write_records()

    def _event_state(self) -> tuple:
        """(t [s], q, u of all the model's speeds) where the last step stopped."""
        t, (q, u) = self.sim.t, self.sim.state
        return t, q, u

    def _resume(self, t, q, u) -> None:
        """Go on from an event at (t, q, the speeds after its impulse) in the mode the rules chose."""
        self.sim.reset(t, q, u, mode=self.dynamics.mode_name)

    def restart(self) -> None:
        """Go on from the current state after the inputs changed there discontinuously (a force held per period,
        as in the real-time loop): settle the mode for the new inputs (a contact that would pull is deleted, a
        stick that needs more than mu_s N slips) and restart the integrator and the event functions there."""
        t, (q, u) = self.sim.t, self.sim.state
        if any(isinstance(r, (UnilateralContact, Coulomb)) and r.constraint in self.active for r in self.rules):
            self._settle(t, q, u)  # only an active contact or stick can be inconsistent with the new inputs
        self.sim.reset(t, q, u, mode=self.dynamics.mode_name)

    def _switch(self, info, t, q, u, resume) -> None:
        """Handle the event that ended the step (the new speeds go to ``resume``); a failure of the rules or of the
        next mode becomes a :class:`SimulationError` with the time, the state and the trajectory so far."""
        name, crossing = info.events[-1].name, info.events[-1].data["direction"]
        try:
            resume(self._handle(name, crossing, t, q, u))
        except EventFunctionError as exc:
            raise self._error(t, q, u, str(exc), exc) from exc
        except SimulationError as exc:  # the next mode cannot start (e.g. its equations fail there)
            if exc.trajectory is None:
                exc.trajectory = self._so_far(f"failed: {exc.reason}")
            raise
        except (KaneError, np.linalg.LinAlgError, ValueError) as exc:
            raise self._error(t, q, u, f"{type(exc).__name__} while switching on '{name}': {exc}", exc) from exc

    def trajectory(self, status: str | None = None) -> Trajectory:
        """The samples so far with this run's event records and modes."""
        traj = self.sim.trajectory(status)
        return dataclasses.replace(traj, events=list(self.records))

    def finish(self, status: str = "completed") -> Trajectory | None:
        """End the run: close the writer, if any, with ``status``; returns the trajectory (None when
        ``options.record`` is False: read the writer's file)."""
        self._write_records()
        self.sim.finish(status)
        return self._so_far(status)

    def _so_far(self, status: str | None) -> Trajectory | None:
        """The trajectory so far with ``status``; None before the start or when the samples are not in memory."""
        return self.trajectory(status) if self._started and self.options.record else None


def simulate_switching(equations, t_span, q0, u0, rules=(), *, path: str | os.PathLike | None = None,
                       **options) -> Trajectory:
    """Integrate ``equations`` over ``t_span`` = (t0, t1) [s] under ``rules``: a :class:`SwitchingSimulator` of
    ``options`` spelled as keywords (``method``, ``rtol`` (1e-9), ``atol`` (1e-11), ``project`` (True),
    ``cond_max``, ``params``, ``inputs``, ...: :data:`kane.switching.settings.RUN_KEYWORDS` and ``SETTINGS_KEYWORDS``,
    as :func:`kane.simulate` spells :func:`kane.run`'s options); with ``path`` the trajectory is saved to HDF5 there, also when the run fails."""
    return run_and_save(SwitchingSimulator, equations, t_span, q0, u0, rules, path, options)
