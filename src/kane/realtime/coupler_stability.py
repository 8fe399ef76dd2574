"""The sampled coupler's stability on the coupled body's mass: the upper limits on the gains that the passivity
bound B >= K h / 2 (:func:`kane.realtime.check_gains`) does not give.

The coupled point is taken as a point mass m [kg] (its smallest effective mass over the directions: 1 / the largest
eigenvalue of its mobility J M^-1 J^T, :func:`effective_mass`) tied to a still handle by the spring K [N/m] and
damper B [N s/m]. The dynamics step h [s] (the loop's period T, or k T with ``dynamics_every`` k) with the force held
over the step, integrated exactly. In the dimensionless state (x, w = h v) and with a = K h^2 / m and b = B h / m,
each scheme of the loop is then a linear map over one dynamics step, and the coupler is stable when its spectral
radius is below 1 (:func:`spectral_radius`):

* single rate (k = 1): the force from the state at the step's start; the map [[1 - a/2, 1 - b/2], [-a, 1 - b]]
  has trace 2 - a/2 - b and determinant 1 - b + a/2, so by Jury's test it is stable for a/2 < b < 2 (the lower
  limit is Colgate's passivity bound);
* :class:`SlowDynamics` (k > 1, in the loop's thread): the mean of the k forces computed from the state at the
  step's start extrapolated by i T, i = 0..k-1;
* :class:`AsyncDynamics` (k > 1, the dynamics a step behind): the mean of the k forces of an interval, the first
  r of them computed from the state of two steps before extrapolated by (k + i) T, the rest from the state of one
  step before extrapolated by i T, r = 1..k the period in which the worker's step comes back (r = k on the virtual
  clock); the map acts on the two states and the coupler is stable when it is for every r.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..protocol import Dynamics
from .coupler import PassivityWarning

__all__ = ["point_mobility", "angular_mobility", "effective_mass", "effective_inertia", "spectral_radius",
           "CouplerStability", "coupler_stability", "check_stability"]

_STABLE = 1.0 - 1e-12  # a radius at or above this is not stable (1 itself: the point is not held at all)


def point_mobility(coupler, t: float, q, params=None, dynamics=None) -> np.ndarray | None:
    """(3, 3) [1/kg]: the coupled point's acceleration (ground axes) per unit coupler force at (t [s], q) at rest,
    J M^-1 J^T, from ``dynamics`` (default the coupler's; its ``udot`` with the coupler's inputs set in turn, and
    the point's velocity for unit speeds); None when they have no ``udot``. ``dynamics`` with fewer constraints on
    the same coordinates (the bodies free of their rolling contacts, a switched system's free mode) give an upper
    bound: constraints only take mobility away."""
    return _mobility(coupler, t, q, params, dynamics, coupler.input_index[:3], coupler.point_state)


def angular_mobility(coupler, t: float, q, params=None, dynamics=None) -> np.ndarray | None:
    """(3, 3) [1/(kg m^2)]: the coupled body's angular acceleration (ground axes) per unit coupler torque at
    (t [s], q) at rest, W M^-1 W^T, with a full pose coupled; ``dynamics`` as in :func:`point_mobility`."""
    return _mobility(coupler, t, q, params, dynamics, coupler.input_index[3:6], coupler.pose_state)


def _mobility(coupler, t, q, params, dynamics, inputs, state):
    """(3, 3): the velocity of ``state(t, q, u)[1]`` (a point's or the body's angular) per unit speed, times the
    acceleration per unit of each of the ``inputs`` at rest; None without ``udot``."""
    dyn = coupler.dynamics if dynamics is None else dynamics
    if not isinstance(dyn, Dynamics):  # (a PlantMaker: rolling contacts or switched constraints)
        return None
    q = np.asarray(q, dtype=float)
    n = dyn.n_u
    v0 = state(t, q, np.zeros(n))[1]
    J = np.array([state(t, q, e)[1] - v0 for e in np.eye(n)]).T  # (3, n_u)
    w = dyn.model.input_values()
    a0 = dyn.udot(t, q, np.zeros(n), params, w)
    columns = []
    for i in inputs:
        w1 = w.copy()
        w1[i] += 1.0
        columns.append(J @ (np.asarray(dyn.udot(t, q, np.zeros(n), params, w1)) - a0))
    return np.array(columns).T


def effective_mass(coupler, t: float, q, params=None, dynamics=None) -> float | None:
    """The coupled point's smallest effective mass [kg] at (t, q): 1 / the largest eigenvalue of its mobility
    (:func:`point_mobility`, ``dynamics`` as there: with fewer constraints, a lower bound); None when unknown."""
    return _smallest(point_mobility(coupler, t, q, params, dynamics))


def effective_inertia(coupler, t: float, q, params=None, dynamics=None) -> float | None:
    """The coupled body's smallest effective moment of inertia [kg m^2] at (t, q) with a full pose coupled: 1 / the
    largest eigenvalue of its :func:`angular_mobility`; None when unknown."""
    return _smallest(angular_mobility(coupler, t, q, params, dynamics))


def _smallest(mobility) -> float | None:
    if mobility is None:
        return None
    largest = float(np.linalg.eigvalsh(0.5 * (mobility + mobility.T))[-1])
    return 1.0 / largest if largest > 0 else np.inf


def _step_maps(a: float, b: float, k: int, delayed: bool, timings) -> np.ndarray:
    """The scheme's linear maps over one dynamics step on (x, w) of the newest state (and, ``delayed``, of the one
    before), one per return period r in ``timings``: (len, 2, 2) or (len, 4, 4)."""
    # the step with f = h^2 F / m held: x+ = x + w + f / 2, w+ = w + f; period i's f_i = -a x_seen - b w_seen
    i = np.arange(k)
    r = np.asarray(timings)[:, None]
    late = delayed & (i[None, :] < r)  # (len, k): the step not back yet, the state of two steps ago (k + i) T ahead
    own = np.stack([-a * np.sum(~late, 1), -np.sum(np.where(late, 0.0, a * i / k + b), 1)], 1) / k  # (len, 2)
    old = np.stack([-a * np.sum(late, 1), -np.sum(np.where(late, a * (k + i) / k + b, 0.0), 1)], 1) / k
    hold = np.array([0.5, 1.0])  # (x+, w+) per unit f
    step = np.array([[1.0, 1.0], [0.0, 1.0]]) + hold[None, :, None] * own[:, None, :]
    if not delayed:
        return step
    maps = np.zeros((len(r), 4, 4))
    maps[:, :2, :2], maps[:, :2, 2:] = step, hold[None, :, None] * old[:, None, :]
    maps[:, 2:, :2] = np.eye(2)
    return maps


def spectral_radius(a: float, b: float, every: int = 1, *, delayed: bool = False, returned: int | None = None
                    ) -> float:
    """The spectral radius of the coupler's map over one dynamics step (see the module) on a point mass, with
    a = K h^2 / m and b = B h / m, ``every`` k loop periods per dynamics step; ``delayed``: the dynamics a step
    behind (:class:`AsyncDynamics`), their step back in period ``returned`` r of the next interval (1..k; None:
    the largest radius over all r). Below 1: stable."""
    k = int(every)
    if k != every or k < 1 or (delayed and k < 2):
        raise ArgumentError(f"spectral radius: every must be an integer >= 1 (>= 2 delayed), got {every!r}")
    if returned is not None and not (delayed and 1 <= returned <= k and int(returned) == returned):
        raise ArgumentError(f"spectral radius: returned is the period 1..{k} in which a delayed step comes back, "
                            f"got {returned!r}" + ("" if delayed else " without delayed=True"))
    timings = [k] if not delayed else range(1, k + 1) if returned is None else [int(returned)]
    return float(np.max(np.abs(np.linalg.eigvals(_step_maps(a, b, k, delayed, timings)))))


@dataclass(frozen=True)
class CouplerStability:
    """The sampled coupler on a point mass (:func:`coupler_stability`): ``radius``, the spectral radius of its map
    over one dynamics step; ``stable`` (radius below 1); ``a`` = K h^2 / m and ``b`` = B h / m; ``stiffness_max``
    [N/m], the largest stable K at the gains' B (0: none); ``damping_range`` [N s/m], the stable B at the gains' K
    (lowest, highest; None: none)."""

    radius: float
    stable: bool
    a: float
    b: float
    stiffness_max: float
    damping_range: tuple | None


def _stable_run(stable, grid) -> tuple | None:
    """The first run of stable values of ``grid`` (increasing), its ends refined by bisection to 1e-9 relative."""
    ok = [stable(x) for x in grid]
    if True not in ok:
        return None
    first = ok.index(True)
    last = first + (ok[first:].index(False) if False in ok[first:] else len(ok) - first) - 1

    def edge(inside, outside):
        while abs(outside - inside) > 1e-9 * max(abs(inside), abs(outside)):
            mid = 0.5 * (inside + outside)
            inside, outside = (mid, outside) if stable(mid) else (inside, mid)
        return inside

    low = grid[first] if first == 0 else edge(grid[first], grid[first - 1])
    high = grid[last] if last == len(grid) - 1 else edge(grid[last], grid[last + 1])
    return float(low), float(high)


def coupler_stability(gains, step: float, mass: float, every: int = 1, *, delayed: bool = False
                      ) -> CouplerStability:
    """The coupler ``gains`` (K [N/m], B [N s/m]) on a point of effective ``mass`` m [kg] with the dynamics stepped
    every ``step`` h [s], ``every`` loop periods (``delayed``: a step behind): its radius and stable gains."""
    a, b = gains.stiffness * step ** 2 / mass, gains.damping * step / mass
    radius = spectral_radius(a, b, every, delayed=delayed)

    def at_b(x):
        return spectral_radius(x, b, every, delayed=delayed) < _STABLE

    def at_a(x):
        return spectral_radius(a, x, every, delayed=delayed) < _STABLE

    run_a = _stable_run(at_b, np.geomspace(1e-9, 1e3, 241))
    run_b = _stable_run(at_a, np.linspace(0.0, 4.0, 801))
    return CouplerStability(radius, radius < _STABLE, a, b,
                            0.0 if run_a is None or run_a[0] > 1e-9 else run_a[1] * mass / step ** 2,
                            None if run_b is None else (run_b[0] * mass / step, run_b[1] * mass / step))


def check_stability(gains, step: float, mass: float, *, every: int = 1, delayed: bool = False,
                    rotational: bool = False) -> bool:
    """True when the coupler ``gains`` (K [N/m], B [N s/m]) with the dynamics stepped every ``step`` h [s] (``every``
    loop periods; ``delayed``: a step behind) are stable on a point of effective ``mass`` m [kg]
    (:func:`coupler_stability`); otherwise a :class:`PassivityWarning` naming the radius, the values and the
    stable gains nearby, and False. An unknown or infinite mass passes. ``rotational``: the same for the torque's
    gains (K_r [N m/rad], B_r [N m s/rad], given as ``gains``' stiffness and damping) on the body's smallest
    effective moment of inertia [kg m^2] (:func:`effective_inertia`)."""
    if mass is None or not np.isfinite(mass):
        return True
    if spectral_radius(gains.stiffness * step ** 2 / mass, gains.damping * step / mass, every,
                       delayed=delayed) < _STABLE:
        return True  # (the stable gains nearby are searched for the warning only)
    found = coupler_stability(gains, step, mass, every, delayed=delayed)
    scheme = ("the dynamics a step behind, back within the next step" if delayed else
              "the force held over each step" if every == 1 else f"the mean of {every} forces held over each step")
    k, b, ku, bu, m, mu, what = (("K_r", "B_r", "N m/rad", "N m s/rad", "I", "kg m^2", "rotation of the coupled body")
                                 if rotational else ("K", "B", "N/m", "N s/m", "m", "kg", "coupled point"))
    advice = [f"at this {b} it is stable for {k} below {found.stiffness_max:.4g} {ku}" if found.stiffness_max > 0
              else f"no {k} is stable at this {b}",
              f"at this {k} for {b} from {found.damping_range[0]:.4g} to {found.damping_range[1]:.4g} {bu}"
              if found.damping_range else f"no {b} is stable at this {k}"]
    warnings.warn(f"virtual coupler: unstable on the {what} with {scheme} (spectral radius {found.radius:.4g} of "
                  f"the step's map; a = {k} h^2 / {m} = {found.a:.3g}, b = {b} h / {m} = {found.b:.3g} with "
                  f"{k} = {gains.stiffness:g} {ku}, {b} = {gains.damping:g} {bu}, h = {step:g} s and the {what}'s "
                  f"smallest effective {'moment of inertia' if rotational else 'mass'} {m} = {mass:.4g} {mu}): "
                  f"{'; '.join(advice)}; or step the dynamics more often", PassivityWarning, stacklevel=2)
    return False
