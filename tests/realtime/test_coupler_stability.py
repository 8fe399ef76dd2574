"""The sampled coupler's stability limits (kane.realtime.coupler_stability): the effective mass at the coupled point
against hand derivations, and the step maps' spectral radii against a point mass run through the loop's own schemes
(the single-rate held force, the slow dynamics in the loop's thread, the dynamics a step behind) and against Jury's
closed form."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane import joints as J
from kane import realtime as rt
from kane.cli import main
from kane.errors import ArgumentError
from kane.io import load_model
from kane.realtime.coupler_stability import (check_stability, coupler_stability, effective_mass, point_mobility,
                                             spectral_radius)
from kane.switching.model_table import switching_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_effective_mass_of_a_pendulum_point_is_its_inertia_about_the_pivot_over_l_squared():
    # a body of mass m, central inertia Izz, its centre c from the pivot along x: a force along y at distance l
    # along x accelerates the point by F l^2 / (Izz + m c^2); along x nothing moves (the pivot holds it)
    m, izz, c, l = 2.0, 0.3, 0.4, 0.9
    s = kane.System("pendulum")
    s.add_body("arm", m, com=(c, 0, 0), inertia=(0.1, 0.2, izz))
    s.add_joint("ground", "arm", J.Revolute("z"), name="pivot", coordinates=["th"], speeds=["w"])
    port = rt.add_coupler(s, "arm", (l, 0.0, 0.0))
    cp = rt.VirtualCoupler(kane.derive(s).compile(), port, rt.CouplerGains(100.0, 1.0))
    expected = np.zeros((3, 3))
    expected[1, 1] = l * l / (izz + m * c * c)
    np.testing.assert_allclose(point_mobility(cp, 0.0, [0.0]), expected, rtol=1e-12, atol=1e-15)
    assert effective_mass(cp, 0.0, [0.0]) == pytest.approx((izz + m * c * c) / l ** 2, rel=1e-12)
    # turned by 90 degrees the arm points along y: the force along x moves the point now
    assert point_mobility(cp, 0.0, [np.pi / 2])[0, 0] == pytest.approx(l * l / (izz + m * c * c), rel=1e-12)


class _Mass:
    """A point mass m on a line pushed by a force held over each step (integrated exactly)."""

    def __init__(self, m):
        self.m, self.x, self.v, self.t, self.w = m, 0.01, 0.0, 0.0, np.zeros(3)

    def state(self):
        return self.t, np.array([self.x]), np.array([self.v])

    def advance(self, h, n, force):
        f = force[0]
        self.x, self.v, self.t = self.x + self.v * h + f * h * h / (2 * self.m), self.v + f * h / self.m, self.t + h


class _Line:
    def qdot(self, t, q, u, params=None):
        return np.array(u, dtype=float)


def _growth(a, b, scheme, k=10, T=1e-3, m=1.0, steps=500):
    """The mass's growth per dynamics step, coupled to a still handle at 0 with K = a m / h^2 and B = b m / h
    (h = k T) through the loop's ``scheme`` ("single": SlowDynamics at every = 1 with period h; "slow":
    SlowDynamics at every = k; "async": AsyncDynamics in this process, each step back one interval later): the
    ratio of the largest |(x, h v)| over steps 400..500 to that over steps 100..200, to the power 1/300."""
    h = k * T
    K, B = a * m / h / h, b * m / h
    mass = _Mass(m)
    plant = (rt.SlowDynamics(mass, 1, _Line()) if scheme == "single" else rt.SlowDynamics(mass, k, _Line())
             if scheme == "slow" else rt.AsyncDynamics(mass, k, _Line(), process=False))
    period, n = (h, 1) if scheme == "single" else (T, k)
    norms = []
    for _ in range(steps):
        for _ in range(n):
            _, q, u = plant.state()
            plant.advance(period, 1, (-K * q[0] - B * u[0], 0.0, 0.0))
        norms.append(np.hypot(mass.x, mass.v * h))
    return (max(norms[400:500]) / max(norms[100:200])) ** (1 / 300)


def _by_period(a, b, k, r, steps=500):
    """The same growth for the dynamics a step behind with each step back in period r of the next interval,
    simulated period by period on (x, w = h v) with h = 1: f = -a x_seen - b w_seen, x += w + f / 2, w += f
    with the interval's mean f."""
    states = [(0.01, 0.0), (0.01, 0.0)]  # the states at the last two steps' starts: older, newer
    norms = []
    for _ in range(steps):
        (x0, w0), (x1, w1) = states
        f = 0.0
        for i in range(k):
            xs, ws = (x0 + (k + i) / k * w0, w0) if i < r else (x1 + i / k * w1, w1)
            f += (-a * xs - b * ws) / k
        states = [(x1, w1), (x1 + w1 + f / 2, w1 + f)]
        norms.append(np.hypot(*states[1]))
    return (max(norms[400:500]) / max(norms[100:200])) ** (1 / 300)


def _verdict(a, b, delayed, every=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rt.PassivityWarning)
        return check_stability(rt.CouplerGains(a / 0.01 ** 2, b / 0.01), 0.01, 1.0, every=every, delayed=delayed)


@pytest.mark.parametrize("a, b", [(0.1, 0.06), (0.1, 1.95), (0.1, 2.05), (0.1, 0.03), (0.5, 1.9), (1.0, 0.45)])
def test_the_single_rate_map_is_jurys_region_and_the_loop_grows_by_its_radius(a, b):
    # Jury's test on [[1 - a/2, 1 - b/2], [-a, 1 - b]]: stable for a / 2 < b < 2 (independent closed form)
    assert _verdict(a, b, delayed=False) is (a / 2 < b < 2)
    assert _growth(a, b, "single") == pytest.approx(spectral_radius(a, b), rel=2e-3)


@pytest.mark.parametrize("a, b", [(0.05, 0.85), (0.1, 0.74), (0.2, 0.49), (0.2, 0.11),  # inside the old region
                                  (0.05, 0.95), (0.15, 0.75), (0.3, 0.2), (0.5, 0.4)])  # outside it
def test_the_loops_multi_rate_schemes_grow_by_the_radius_of_their_step_maps(a, b):
    # through the loop's own classes: AsyncDynamics taken back one interval later is return period r = k
    assert _growth(a, b, "async") == pytest.approx(spectral_radius(a, b, 10, delayed=True, returned=10), rel=2e-3)
    assert _growth(a, b, "slow") == pytest.approx(spectral_radius(a, b, 10), rel=2e-3)
    assert _verdict(a, b, delayed=True, every=10) is (spectral_radius(a, b, 10, delayed=True) < 1)


@pytest.mark.parametrize("r", [1, 3, 7])
def test_a_step_back_sooner_has_its_own_map_and_the_check_takes_the_worst(r):
    for a, b in [(0.15, 0.75), (0.5, 0.4), (0.1, 0.74)]:
        assert _by_period(a, b, 10, r) == pytest.approx(spectral_radius(a, b, 10, delayed=True, returned=r),
                                                        rel=2e-3)
        assert spectral_radius(a, b, 10, delayed=True) == max(
            spectral_radius(a, b, 10, delayed=True, returned=s) for s in range(1, 11))


def test_the_stable_gains_single_rate_are_jurys_edges():
    # K h^2 / m < 2 B h / m and B h / m < 2: K below 2 B / h, B from K h / 2 to 2 m / h
    found = coupler_stability(rt.CouplerGains(3000.0, 20.0), 0.002, 0.5)
    assert found.stable and found.stiffness_max == pytest.approx(2 * 20.0 / 0.002, rel=1e-8)
    assert found.damping_range == pytest.approx((3000.0 * 0.002 / 2, 2 * 0.5 / 0.002), rel=1e-8)


def test_at_the_stiffness_limit_the_delayed_loop_turns_from_decaying_to_growing():
    m, k, T, B = 2.0, 10, 1e-3, 60.0
    limit = coupler_stability(rt.CouplerGains(1.0, B), k * T, m, k, delayed=True).stiffness_max
    h = k * T
    below, above = (_growth(K * h * h / m, B * h / m, "async") for K in (0.99 * limit, 1.01 * limit))
    assert below < 1 < above
    assert check_stability(rt.CouplerGains(0.99 * limit, B), h, m, every=k, delayed=True)
    with pytest.warns(rt.PassivityWarning, match=rf"at this B it is stable for K below {limit:.4g} N/m"):
        assert not check_stability(rt.CouplerGains(1.01 * limit, B), h, m, every=k, delayed=True)


def test_the_warning_names_the_scheme_the_values_and_the_stable_gains():
    with pytest.warns(rt.PassivityWarning) as caught:
        assert not check_stability(rt.CouplerGains(0.15 / 0.01 ** 2, 0.75 / 0.01), 0.01, 1.0, every=10, delayed=True)
    text = str(caught[0].message)
    assert text.startswith("virtual coupler: unstable on the coupled point with the dynamics a step behind, back "
                           "within the next step (spectral radius 1.034 of the step's map; a = K h^2 / m = 0.15, "
                           "b = B h / m = 0.75 with K = 1500 N/m, B = 75 N s/m, h = 0.01 s")
    assert "; at this K for B from " in text and text.endswith("or step the dynamics more often")
    with pytest.warns(rt.PassivityWarning, match="no K is stable at this B; at this K for B from 5 to 200 N s/m"):
        check_stability(rt.CouplerGains(1000.0, 250.0), 0.01, 1.0)  # b = 2.5: too much damping for any K


def test_a_switched_systems_free_mode_bounds_the_coupled_points_mass(tmp_path):
    # the caster-lock cart: its free mode, embedded on line over all four speeds, has the effective mass of the
    # symbolically embedded equations over their two independent speeds (a second formulation); locking the
    # caster only adds mass
    loaded = load_model(EXAMPLES / "shopping_cart_caster_lock.toml")
    port = rt.add_coupler(loaded.system, "B", (-0.3, 0.0, 0.0))
    equations, params = loaded.derive(), dict(loaded.parameters)
    switched = rt.SwitchingDynamics(equations, switching_rules(loaded))
    q0 = np.array([loaded.q0.get(n, 0.0) for n in switched.q_names])
    free = switched.free_mode()
    mass = effective_mass(rt.VirtualCoupler(switched, port, rt.CouplerGains(1.0, 1.0)), 0.0, q0, params, free)
    embedded = rt.VirtualCoupler(equations.compile(), port, rt.CouplerGains(1.0, 1.0))
    assert free.mode_name == "free" and embedded.dynamics.n_u == 2 < switched.n_u == 4
    assert mass == pytest.approx(effective_mass(embedded, 0.0, q0, params), rel=1e-10)
    free.set_mode(free.transient)
    assert effective_mass(rt.VirtualCoupler(switched, port, rt.CouplerGains(1.0, 1.0)), 0.0, q0, params,
                          free) > mass * 1.01
    # kane realtime checks a switched model on that mass: B = 5e4 N s/m is past b = B T / m < 2 at 1 kHz
    res = CliRunner().invoke(main, ["realtime", str(EXAMPLES / "shopping_cart_caster_lock.toml"), "--damping", "5e4",
                                    "--duration", "0.01", "--virtual-clock", "-o", str(tmp_path / "c.h5")])
    assert res.exit_code == 0, res.output
    assert (f"smallest effective mass m = {mass:.4g} kg): no K is stable at this B; at this K for B from 0.25 to "
            f"{2 * mass / 1e-3:.4g} N s/m") in res.output


def test_bad_scheme_arguments_are_named():
    with pytest.raises(ArgumentError, match=r"every must be an integer >= 1 \(>= 2 delayed\), got 1"):
        spectral_radius(0.1, 0.5, 1, delayed=True)
    with pytest.raises(ArgumentError, match=r"returned is the period 1..10 in which a delayed step comes back, got 11"):
        spectral_radius(0.1, 0.5, 10, delayed=True, returned=11)
    with pytest.raises(ArgumentError, match=r"got 3 without delayed=True"):
        spectral_radius(0.1, 0.5, 10, returned=3)
