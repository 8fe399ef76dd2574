"""The plants of the real-time loop that step a plain (unswitched) model: :class:`CompiledPlant`, the C backend's
fixed-step RK4 stepper advanced in place, and :class:`PythonPlant`, the step-wise :class:`kane.simulate.Simulator`;
and :func:`input_holder`, the model's scheduled inputs held over each period.

A plant (the protocol :class:`kane.realtime.RealtimeLoop` steps; the switching, rolling and multi-rate plants
follow it too): ``state()`` -> (t [s], q (n_q,), u (n_u,)); ``advance(period [s], n, force (3,) [N])`` over one
period in n RK4 sub-steps with the coupler's force held; ``w`` its inputs in the model's order (written in place);
``kind``, what the log calls it; optionally ``rehearse()``, the period's first run without its effects.

The loop steps a :class:`kane.Dynamics` in one of these plants; dynamics that step their own plant (switched
constraints, rolling contacts in absolute coordinates) follow :class:`PlantMaker`.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

from ..errors import ArgumentError, KaneError
from ..options import Method
from ..simulate.run import RunOptions, State, make_simulator

__all__ = ["CompiledPlant", "PlantMaker", "PythonPlant", "input_holder"]


def input_holder(inputs, model, coupled, w, t0, q0, u0):
    """hold(t, q, u): the scheduled ``inputs`` (a callable (t, q, u) -> {name: value}) evaluated and written into
    ``w``, a plant's inputs in the order of ``model``'s; ``coupled`` names the coupler's inputs, which a schedule
    may not set. An ArgumentError names schedules of unknown inputs (checked at (t0, q0, u0)); a value that is
    not finite raises KaneError with the input's name and the time."""
    names = tuple(inputs(t0, q0, u0))
    known = tuple(str(s) for s in model.inputs)
    bad = [n for n in names if n not in known or n in coupled]
    if bad:
        raise ArgumentError(f"real-time loop: inputs {', '.join(bad)} are not inputs of the model other than the "
                            f"coupler's; its inputs: {', '.join(n for n in known if n not in coupled) or 'none'}")
    where = tuple(zip(names, (known.index(n) for n in names)))

    def hold(t, q, u):
        values = inputs(t, q, u)
        for name, i in where:
            v = values[name]
            if not math.isfinite(v):
                raise KaneError(f"the input {name} is {v!r} at t = {t:.9g} s")
            w[i] = v

    return hold



@runtime_checkable
class PlantMaker(Protocol):
    """Dynamics that step their own plant in the real-time loop instead of being a :class:`kane.Dynamics` stepped
    by :class:`CompiledPlant` or :class:`PythonPlant` (:class:`kane.realtime.switching_plant.SwitchingRealtime`,
    :class:`kane.realtime.rolling_plant.RollingRealtime`): names, sizes, ``model``, ``equations`` (their
    :class:`kane.Equations`: ``has_potential`` says whether ``energy`` [J] is the full mechanical energy), ``qdot``
    and ``energy`` as a Dynamics has them, plus the two members below."""

    n_q: int
    n_u: int
    q_names: tuple
    u_names: tuple
    input_names: tuple
    model: Any
    equations: Any

    def free_mode(self) -> Any:
        """A :class:`kane.Dynamics` of the bodies free of the constraints this one switches or rolls on: its
        effective mass at a point is a lower bound on this one's (:mod:`kane.realtime.coupler_stability`)."""

    def make_plant(self, t0: float, q0, u0, params, force_inputs, dt: float) -> Any:
        """The plant (see the module docstring) from (t0 [s], q0 (n_q,), u0 (n_u,)), the coupler's force entering
        as the inputs ``force_inputs`` (3,), integrated in steps ``dt`` [s]."""


class CompiledPlant:
    """The C backend's RK4 ``stepper`` of ``dynamics`` from (t [s], q, u) with ``params``; the coupler's force into
    its inputs at ``index`` (3,). Its state is the stepper's own buffers, advanced in place."""

    kind = "compiled engine"  # what the log and the closing summary call the plant

    def __init__(self, dynamics, t, q, u, params, index):
        self.stepper = dynamics.stepper(t, q, u, params, dynamics.model.input_values())
        self.w = self.stepper.inputs  # the stepper's own inputs: written in place, copied nowhere
        self.index = tuple(int(i) for i in index)

    def state(self):
        return self.stepper.t, self.stepper.q, self.stepper.u

    def advance(self, period, n, force):
        w = self.w
        for i, f in zip(self.index, force):
            w[i] = f
        self.stepper.step(n, period / n)

    def rehearse(self):
        """One step of length 0 (the state set back after it): the C step's first run, before the loop's first
        period."""
        t, q, u = self.stepper.t, self.stepper.q.copy(), self.stepper.u.copy()
        self.stepper.step(1, 0.0)
        self.stepper.set_state(t, q, u)


class PythonPlant:
    """The step-wise RK4 :class:`kane.simulate.Simulator` of ``dynamics`` from (t [s], q, u) with ``params``, its
    step ``dt`` [s]; the coupler's force into the inputs named ``names`` (3,)."""

    kind = "Python engine"

    def __init__(self, dynamics, t, q, u, params, names, dt):
        self.w = dynamics.model.input_values()  # model order, written in place: no name look-ups per evaluation
        self.index = tuple(dynamics.input_names.index(n) for n in names)
        options = RunOptions(t_end=math.inf, method=Method.RK4, dt=dt, record=False, record_energy=False)
        self.sim = make_simulator(dynamics, State(q, u, t), options, params=params, inputs=lambda t, q, u: self.w)

    def state(self):
        q, u = self.sim.state
        return self.sim.t, q, u

    def advance(self, period, n, force):
        w = self.w
        for i, f in zip(self.index, force):
            w[i] = f
        for _ in range(n):
            self.sim.step()
