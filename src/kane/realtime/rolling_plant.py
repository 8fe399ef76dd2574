"""The real-time loop on a model file's rolling contacts (``[[contacts]]``, seed 003's surface-on-surface rolling):
the contacts are simulated in absolute coordinates by :func:`kane.io.model_surfaces.rolling_dynamics` (RK4 at the
loop's step, put back on the contacts every ``project_every`` steps), while the coupler, the log and the loop see
the kane model's joint coordinates (:meth:`~kane.algorithms.cartesian.CartesianDynamics.joint_coordinates`), as
the live viewer does.

    >>> dyn = RollingRealtime(loaded.derive().compile(), rolling_dynamics(loaded))   # after add_coupler
    >>> loop = RealtimeLoop(VirtualCoupler(dyn, port, gains), device, q0, u0, options=...)

The rolling dynamics are evaluated in numpy (about 0.9 ms for the ball in its bowl, so an RK4 step and the joint
coordinates take about 4 ms): such a model steps at about 100 Hz. Behind a 1 kHz coupler it runs in a process of
its own, a step behind (``LoopOptions(dynamics_every=10, dynamics_process=True)``, :mod:`.async_dynamics`).
"""

from __future__ import annotations

import numpy as np

from ..options import Method
from ..simulate.run import ProjectionMode, RunOptions, State, make_simulator

__all__ = ["RollingRealtime", "RollingPlant"]


class RollingRealtime:
    """A model with rolling contacts as the real-time loop and the coupler see it: ``joint``, the kane model's
    compiled Dynamics (state: q (n_q,), its independent u), gives the names, the kinematics, the energy [J] and
    q'; ``rolling``, its :class:`kane.io.model_surfaces.RollingModel` (absolute coordinates and the consistent
    start), is what :meth:`make_plant` steps."""

    backend = "numpy"

    def __init__(self, joint, rolling, *, project_every: int = 25):
        self.joint, self.rolling, self.project_every = joint, rolling, int(project_every)
        self.model, self.equations = joint.model, joint.equations
        self.n_q, self.n_u = joint.n_q, joint.n_u
        self.q_names, self.u_names, self.input_names = joint.q_names, joint.u_names, joint.input_names
        self.u_dependent_names = joint.u_dependent_names

    def free_mode(self):
        """The bodies free of their rolling contacts (the joint dynamics): the contacts only add mass at a point, so
        its effective mass there is a lower bound (:mod:`.coupler_stability`)."""
        return self.joint

    def full_speeds(self, t, q, u, params=None):
        return self.joint.full_speeds(t, q, u, params)

    def qdot(self, t, q, u, params=None, inputs=None):
        return self.joint.qdot(t, q, u, params, inputs)

    def energy(self, t, q, u, params=None):
        return self.joint.energy(t, q, u, params)

    def make_plant(self, t0: float, q0, u0, params, force_inputs, dt: float):
        """The plant from the rolling model's start (the model file's joint state made consistent with its
        contacts) at ``t0`` [s]; the coupler force enters as the inputs ``force_inputs``; RK4 steps ``dt`` [s]."""
        return RollingPlant(self, t0, params, force_inputs, dt)


class RollingPlant:
    """One period at a time of a :class:`RollingRealtime` (the plant protocol of kane.realtime.loop): ``state()``
    -> (t [s], q (n_q,), independent u) in joint coordinates; ``advance(period [s], n, force (3,) [N])``; ``w`` the
    inputs in the model's order (a scheduled input written there holds over the next period)."""

    kind = "rolling contacts in absolute coordinates"

    def __init__(self, dynamics: RollingRealtime, t0: float, params, force_inputs, dt: float):
        rolling = dynamics.rolling.dynamics
        self.rolling, self.params = rolling, params
        self.w = dynamics.model.input_values()
        self.index = tuple(rolling.input_names.index(n) for n in force_inputs)
        names = [str(s) for s in rolling.model.u]
        self._independent = [names.index(n) for n in dynamics.u_names]
        options = RunOptions(t_end=np.inf, method=Method.RK4, dt=dt, record=False, record_energy=False,
                             projection=ProjectionMode.DYNAMICS, project_every=dynamics.project_every)
        self.sim = make_simulator(rolling, State(dynamics.rolling.q0, dynamics.rolling.u0, t0), options,
                                  params=params, inputs=lambda t, q, u: self.w)
        self._state = None

    def state(self):
        t = self.sim.t
        if self._state is None or self._state[0] != t:  # the joint coordinates, fitted once per period
            q, u = self.sim.state
            qj, uj = self.rolling.joint_coordinates(q, u, t, self.params)
            self._state = (t, np.asarray(qj, dtype=float), np.asarray(uj, dtype=float)[self._independent])
        return self._state

    def advance(self, period: float, n: int, force) -> None:
        """Hold ``force`` (3,) [N] on the coupler's inputs over ``period`` [s] in ``n`` RK4 steps."""
        for i, f in zip(self.index, force):
            self.w[i] = float(f)
        for _ in range(n):
            self.sim.step()
