"""The sampled coupler's stability on the coupled body's mass: the upper limits on the gains that the passivity
bound B >= K h / 2 (:func:`kane.realtime.check_gains`) does not give.

A coupler force held over each step h [s] of the dynamics (the loop's period T, or k T with ``dynamics_every`` k),
acting on a point of effective mass m [kg] (the smallest over the directions: 1 / the largest eigenvalue of the
point's mobility J M^-1 J^T), with a = K h^2 / m and b = B h / m:

* the force computed from the state at the step's start (the single-rate loop and :class:`SlowDynamics`): the
  step's map (x, h v) -> [[1 - a/2, 1 - b/2], [-a, 1 - b]] has trace 2 - a/2 - b and determinant 1 - b + a/2, so by
  Jury's test it is stable for a/2 < b < 2 (the lower limit is Colgate's passivity bound);
* the dynamics a step behind (:class:`AsyncDynamics`, the coupler extrapolating the state of up to 2 h ago): no
  closed form; the same point mass run through that scheme is stable (tests/realtime/test_coupler_stability.py)
  inside a/2 <= b <= 1 - 2.5 a with a <= 0.2, the region :func:`check_stability` checks.
"""

from __future__ import annotations

import warnings

import numpy as np

from .coupler import PassivityWarning

__all__ = ["point_mobility", "effective_mass", "check_stability"]


def point_mobility(coupler, t: float, q, params=None, dynamics=None) -> np.ndarray | None:
    """(3, 3) [1/kg]: the coupled point's acceleration (ground axes) per unit coupler force at (t [s], q) at rest,
    J M^-1 J^T, from ``dynamics`` (default the coupler's; its ``udot`` with the coupler's inputs set in turn, and
    the point's velocity for unit speeds); None when they have no ``udot``. ``dynamics`` with fewer constraints on
    the same coordinates (the bodies free of their rolling contacts) give an upper bound: constraints only take
    mobility away."""
    dyn = coupler.dynamics if dynamics is None else dynamics
    if not hasattr(dyn, "udot"):
        return None
    q = np.asarray(q, dtype=float)
    n = dyn.n_u
    v0 = coupler.point_state(t, q, np.zeros(n))[1]
    J = np.array([coupler.point_state(t, q, e)[1] - v0 for e in np.eye(n)]).T  # (3, n_u)
    w = dyn.model.input_values()
    a0 = dyn.udot(t, q, np.zeros(n), params, w)
    columns = []
    for i in coupler.input_index:
        w1 = w.copy()
        w1[i] += 1.0
        columns.append(J @ (np.asarray(dyn.udot(t, q, np.zeros(n), params, w1)) - a0))
    return np.array(columns).T


def effective_mass(coupler, t: float, q, params=None, dynamics=None) -> float | None:
    """The coupled point's smallest effective mass [kg] at (t, q): 1 / the largest eigenvalue of its mobility
    (:func:`point_mobility`, ``dynamics`` as there: with fewer constraints, a lower bound); None when unknown."""
    mobility = point_mobility(coupler, t, q, params, dynamics)
    if mobility is None:
        return None
    largest = float(np.linalg.eigvalsh(0.5 * (mobility + mobility.T))[-1])
    return 1.0 / largest if largest > 0 else np.inf


def check_stability(gains, step: float, mass: float, *, delayed: bool = False) -> bool:
    """True when the coupler ``gains`` (K [N/m], B [N s/m]) held over ``step`` h [s] stay inside the stable region
    on a point of effective ``mass`` m [kg] (see the module: b < 2; with ``delayed``, a <= 0.2 and
    b <= 1 - 2.5 a); otherwise a :class:`PassivityWarning` naming the limits and the values, and False."""
    if mass is None or not np.isfinite(mass):
        return True
    a, b = gains.stiffness * step ** 2 / mass, gains.damping * step / mass
    values = (f"a = K h^2 / m = {a:.3g} and b = B h / m = {b:.3g} with K = {gains.stiffness:g} N/m, "
              f"B = {gains.damping:g} N s/m, h = {step:g} s and the coupled point's smallest effective mass "
              f"m = {mass:.4g} kg")
    if delayed and (a > 0.2 or b > 1.0 - 2.5 * a):
        warnings.warn(f"virtual coupler: with the dynamics a step behind, the coupler is stable for a <= 0.2 and "
                      f"b <= 1 - 2.5 a; here {values}: lower K, or step the dynamics more often", PassivityWarning,
                      stacklevel=2)
        return False
    if not delayed and b >= 2.0:
        warnings.warn(f"virtual coupler: the sampled coupler is stable for b < 2; here {values}: lower B, or step "
                      f"the dynamics more often", PassivityWarning, stacklevel=2)
        return False
    return True
