"""Constraint changes inside the real-time loop's period (Gillespie 2003, seed 000, Figure 2 run once per haptic
period): the virtual system is advanced over the period with the coupler force held, by
:class:`kane.switching.SwitchingSimulator`, whose rules (contact, Coulomb stick/slip, locks) locate their events
inside the period, resolve the impulses and re-embed the constraints on line; the hand feels each change through
the coupler at the next period.

    >>> eqs = kane.derive(system)                     # the caster's lock declared transient=True
    >>> sd = SwitchingDynamics(eqs, [Lock("caster_stick", on=[(0.4, 0.9)])])
    >>> coupler = VirtualCoupler(sd, port, gains)     # u: all the model's speeds
    >>> loop = RealtimeLoop(coupler, hand, q0, u0_all, options=...)   # the loop picks the switching plant

The state is (q (n_q,), u (n_u,) all the model's speeds), as in kane.switching. Each period the plant sets the three
coupler inputs to the held force, lets the simulator settle the mode for the new force
(:meth:`SwitchingSimulator.restart`) and runs it to the period's end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..options import Method
from ..switching import OnlineDynamics, SwitchingSettings, SwitchingSimulator
from ..switching.settings import switching_run_options

__all__ = ["SwitchingOptions", "SwitchingDynamics", "SwitchingPlant"]

_FIXED = (Method.RK4, Method.SEMI_IMPLICIT_EULER)


@dataclass(frozen=True)
class SwitchingOptions:
    """How the switching plant integrates: ``method`` (RK4 by default, its step the loop's period / substeps; an
    adaptive method uses ``rtol`` and ``atol`` and steps at most one sub-step), ``cond_max`` and ``dependent`` of
    the on-line embedding (kane.switching.OnlineDynamics), ``max_switches`` over the whole run (Zeno guard)."""

    method: Method = Method.RK4
    rtol: float = 1e-9
    atol: float = 1e-11
    cond_max: float = 1e6
    dependent: tuple | None = None
    max_switches: int = 100000

    def __post_init__(self):
        object.__setattr__(self, "method", Method.parse(self.method))
        if int(self.max_switches) != self.max_switches or self.max_switches < 1:
            raise ArgumentError(f"switching options: max_switches must be an integer >= 1, got {self.max_switches!r}")


class SwitchingDynamics:
    """A switched system as the real-time loop and the coupler see it: ``equations`` (from kane.derive, the switched
    constraints declared transient) under ``rules`` (kane.switching UnilateralContact, Coulomb, Lock records);
    ``system``, the kane.System of ``equations``: given, every mode is derived and compiled to C before the run and
    the loop steps the current one in C (about ten times faster per period; modes with slip run on line).
    u holds all n_u speeds of the model (no dependent speeds are eliminated once for all); ``energy`` [J] is the
    mechanical energy (mode independent). :meth:`make_plant` is what :class:`kane.realtime.RealtimeLoop` calls."""

    backend = "numpy"
    u_dependent_names = ()

    def __init__(self, equations, rules=(), options: SwitchingOptions = SwitchingOptions(), *, system=None):
        self.equations, self.rules, self.options = equations, tuple(rules), options
        self.system = system  # given: every mode compiled beforehand (kane.realtime.mode_plant)
        self.modes: dict = {}
        self.model = model = equations.model
        self._online = OnlineDynamics(equations, cond_max=options.cond_max, dependent=options.dependent)
        self.n_q, self.n_u = self._online.n_q, self._online.n_u
        self.q_names, self.u_names = self._online.q_names, self._online.u_names
        self.input_names = tuple(str(s) for s in model.inputs)

    @property
    def point_backend(self) -> str:
        """How the coupler compiles its body point: "c" when the modes are compiled to C (the ``system`` given, RK4:
        the period can then run in C, kane.realtime.c_switching), else "numpy"."""
        return "c" if self.system is not None and self.options.method is Method.RK4 else "numpy"

    def qdot(self, t, q, u, params=None, inputs=None) -> np.ndarray:
        """q' (n_q,) = W(q) u + X."""
        return self._online.qdot(t, q, u, params, inputs)

    def free_mode(self) -> OnlineDynamics:
        """The equations with no transient constraint active (the permanent ones embedded), the mode of the least
        effective mass at any point: ``udot`` (n_u,) of all the model's speeds (:mod:`.coupler_stability`)."""
        return OnlineDynamics(self.equations, cond_max=self.options.cond_max, dependent=self.options.dependent)

    def energy(self, t, q, u, params=None):
        """Kinetic + potential energy [J] at one state (a float), or at N states: t (N,), q (N, n_q), u (N, n_u)
        give (N,)."""
        q, u = np.asarray(q, dtype=float), np.asarray(u, dtype=float)
        if q.ndim == 1:
            return self._online.energy(float(t), q, u, params)
        t = np.broadcast_to(np.asarray(t, dtype=float), q.shape[:1])
        return np.array([self._online.energy(float(a), b, c, params) for a, b, c in zip(t, q, u)])

    def make_plant(self, t0: float, q0, u0, params, force_inputs, dt: float, rules=None):
        """The plant advancing this system from (t0 [s], q0 (n_q,), u0 (n_u,)), the coupler force entering as the
        inputs named ``force_inputs`` (3,), integrated with steps ``dt`` [s] (the loop's period / substeps). With
        the ``system`` given (and the RK4 method), its modes are derived and compiled to C first (once; kept in
        ``modes``) and the plant steps them in C (:class:`kane.realtime.mode_plant.ModePlant`). ``rules``: this
        plant's rule records, on the same constraints (default the system's; e.g. evaluated at changed parameters)."""
        plant = SwitchingPlant(self, t0, q0, u0, params, force_inputs, dt, rules)
        if self.system is None or self.options.method is not Method.RK4:
            return plant
        from .mode_plant import ModePlant, compile_modes

        if not self.modes:
            self.modes = compile_modes(self.system, self._online, self.rules, q0)
        return ModePlant(plant, self.modes, t0, q0, params, dt)


class SwitchingPlant:
    """One period at a time of a :class:`SwitchingDynamics` (the plant protocol of kane.realtime.loop): ``state()``
    -> (t [s], q (n_q,), u (n_u,)); ``advance(period [s], n, force (3,) [N])``; ``mode`` (the current mode's name,
    e.g. "free" or "caster_stick") and ``events`` (kane.io.trajectory EventRecord list: lock, unlock, impact,
    stick, slip..., with the impulses and the change of kinetic energy) for the log."""

    kind = "switched constraints, on line"

    def __init__(self, dynamics: SwitchingDynamics, t0, q0, u0, params, force_inputs, dt: float, rules=None):
        if not (math.isfinite(dt) and dt > 0):
            raise ArgumentError(f"switching plant: the step dt must be a finite time > 0 s, got {dt!r}")
        opts = dynamics.options
        model = dynamics.model
        names = dynamics.input_names
        missing = [n for n in force_inputs if n not in names]
        if missing:
            raise ArgumentError(f"switching plant: the model has no input {', '.join(missing)}; inputs: "
                                f"{', '.join(names) or 'none'}")
        self.w = model.input_values().copy()  # in model order: no name look-ups in the evaluations
        self.index = tuple(names.index(n) for n in force_inputs)
        fixed = opts.method in _FIXED
        # samples only at events (output_dt beyond any run): the loop logs the state, memory stays bounded
        rules = dynamics.rules if rules is None else tuple(rules)
        run = switching_run_options(method=opts.method, rtol=opts.rtol, atol=opts.atol, dt=dt if fixed else None,
                                    max_step=np.inf if fixed else dt, output_dt=1e12)
        settings = SwitchingSettings(cond_max=opts.cond_max, dependent=opts.dependent,
                                     max_switches=opts.max_switches, record_forces=False)
        self.runner = SwitchingSimulator(dynamics.equations, q0, u0, rules, run, settings, t0=t0, params=params,
                                         inputs=lambda t, q, u: self.w)

    def state(self):
        q, u = self.runner.sim.state
        return self.runner.sim.t, q, u

    def advance(self, period: float, n: int, force) -> None:
        """Hold ``force`` (3,) [N] on the coupler's inputs over ``period`` [s], running the switching rules inside
        it (``n``, the sub-steps, is fixed by the step given at construction). Raises SimulationError (with the
        time, mode and last good state) when the run fails."""
        for i, f in zip(self.index, force):
            self.w[i] = float(f)
        runner = self.runner
        runner.restart()
        runner.advance(runner.sim.t + period)

    @property
    def mode(self) -> str:
        """The current mode's name ("free" when no transient constraint is active)."""
        return self.runner.dynamics.mode_name

    @property
    def events(self) -> list:
        """The mode changes so far (EventRecord: t [s], constraint name, kind, data with impulse and mode)."""
        return list(self.runner.records)
