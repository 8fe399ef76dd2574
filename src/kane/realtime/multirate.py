"""Multi-rate real-time loop (issue 14, item 6): the dynamics stepped every k-th haptic period while the coupler runs
at the haptic rate against the body point extrapolated from the last dynamics step (first order in q, the speeds
held), the common scheme of haptic rendering with a slow simulation (e.g. Barbagli, Prattichizzo and Salisbury
2003, multirate coupling).

Over the k periods between two dynamics steps the loop computes one coupler force per period; the dynamics then
advance over k T [s] with the mean of those k forces held (the impulse the coupler delivered over the k periods).
With k = 1 the wrapper is not used and the loop is single-rate. The coupler acts on the dynamics sampled at k T:
passivity needs at least B >= K k T / 2 (Colgate's bound at the slow period), and the sampled spring and damper
must stay stable on the coupled body's mass (:mod:`.coupler_stability` gives the exact limits of this scheme on a
point mass). A stiff virtual contact (the tests' 0.1 kg particle on a 1e5 N/m spring) is not displayable with slow
dynamics at all: at k = 4 its own RK4 step is h w = 4 with w = 1000 rad/s, beyond RK4's stable 2.8, whatever the
coupler; use ``substeps`` instead (dynamics faster than the coupler).
"""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError

__all__ = ["SlowDynamics"]


class SlowDynamics:
    """Wraps a plant (``state()`` -> (t [s], q (n_q,), u (n_u,)), ``advance(period [s], n, force (3,) [N])``) so
    that it is advanced once every ``every`` calls of ``advance``, over ``every`` periods with the mean force;
    between its steps ``state()`` is the extrapolation q + (t - t_j) q'(t_j, q_j, u_j), u_j from its last state
    (t_j, q_j, u_j). ``dynamics.qdot(t, q, u, params)`` gives q' (n_q,). ``steps``: the plant's own states
    (t [s], q, u) at the start and after each of its steps."""

    def __init__(self, plant, every: int, dynamics, params=None):
        if int(every) != every or every < 1:
            raise ArgumentError(f"multi-rate loop: dynamics_every must be an integer >= 1, got {every!r}")
        self.plant, self.every = plant, int(every)
        self.dynamics, self.params = dynamics, params
        self._m = 0  # periods since the last dynamics step
        self._sum = 0.0
        self._qdot = None
        self._period = 0.0
        t, q, u = plant.state()
        self.steps = [(float(t), np.array(q, dtype=float), np.array(u, dtype=float))]  # the plant's own states

    def state(self):
        t, q, u = self.plant.state()
        if self._m == 0:
            return t, q, u
        h = self._m * self._period
        return t + h, q + h * self._qdot, u

    def advance(self, period: float, n: int, force) -> None:
        """Period ``period`` [s] with the coupler ``force`` (3,) [N]; every ``every``-th call the plant advances
        over every * period in ``n`` sub-steps with the mean force of the calls since its last step."""
        if self._m == 0:
            t, q, u = self.plant.state()
            self._qdot = np.asarray(self.dynamics.qdot(t, q, u, self.params), dtype=float).reshape(-1)
        self._period = float(period)
        self._sum = self._sum + np.asarray(force, dtype=float)
        self._m += 1
        if self._m == self.every:
            mean = self._sum / self.every
            self._m, self._sum = 0, 0.0
            self.plant.advance(self.every * period, n, mean)
            t, q, u = self.plant.state()
            self.steps.append((float(t), np.array(q, dtype=float), np.array(u, dtype=float)))

    @property
    def w(self):
        """The wrapped plant's inputs (model order): a scheduled input written there holds over its next step."""
        return self.plant.w

    @property
    def kind(self) -> str:
        """The wrapped plant's kind (what the log calls it)."""
        return self.plant.kind

    @property
    def mode(self) -> str:
        """The wrapped plant's mode ("single" when it has none)."""
        return getattr(self.plant, "mode", "single")

    @property
    def events(self) -> list:
        """The wrapped plant's mode changes (empty when it has none)."""
        return list(getattr(self.plant, "events", ()))
