"""The sampled coupler's stability limits (kane.realtime.coupler_stability): the effective mass at the coupled point
against hand derivations, and the stable regions against a point mass run through the loop's own schemes (the
single-rate held force, and the dynamics a step behind)."""

import warnings

import numpy as np
import pytest

import kane
from kane import joints as J
from kane import realtime as rt
from kane.realtime.coupler_stability import check_stability, effective_mass, point_mobility


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


def _grows(a, b, delayed, steps=600, k=10, T=1e-3, m=1.0):
    """Whether the mass, coupled to a still handle at 0 with K = a m / h^2 and B = b m / h (h = k T), ends farther
    out than it started after ``steps`` steps of the scheme."""
    h = k * T
    K, B = a * m / h / h, b * m / h
    plant = rt.AsyncDynamics(_Mass(m), k, _Line(), process=False) if delayed else rt.SlowDynamics(_Mass(m), 1, _Line())
    period = T if delayed else h
    for _ in range(steps * (k if delayed else 1)):
        _, q, u = plant.state()
        plant.advance(period, 1, (-K * q[0] - B * u[0], 0.0, 0.0))
    _, q, u = plant.state()
    return abs(q[0]) + abs(u[0]) * h > 0.01


def _verdict(a, b, delayed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rt.PassivityWarning)
        return check_stability(rt.CouplerGains(a * 1.0 / 0.01 ** 2, b * 1.0 / 0.01), 0.01, 1.0, delayed=delayed)


@pytest.mark.parametrize("a, b, stable", [
    (0.1, 0.06, True), (0.1, 1.95, True), (0.1, 2.05, False), (0.1, 0.03, False),  # Jury: a / 2 < b < 2
    (0.5, 1.9, True), (1.0, 0.45, False),
])
def test_the_held_force_is_stable_for_b_between_a_half_and_two(a, b, stable):
    assert _grows(a, b, delayed=False) is not stable
    assert _verdict(a, b, delayed=False) is (b < 2.0)  # the check names the upper limit; check_gains the lower one


@pytest.mark.parametrize("a, b", [(0.01, 0.97), (0.05, 0.85), (0.1, 0.74), (0.15, 0.62), (0.2, 0.49), (0.2, 0.11)])
def test_inside_the_delayed_region_the_scheme_is_stable_and_the_check_passes(a, b):
    assert not _grows(a, b, delayed=True) and _verdict(a, b, delayed=True)


@pytest.mark.parametrize("a, b", [(0.05, 0.95), (0.15, 0.75), (0.3, 0.2), (0.5, 0.4)])
def test_outside_it_the_scheme_grows_and_the_check_warns(a, b):
    assert _grows(a, b, delayed=True)
    with pytest.warns(rt.PassivityWarning, match=r"with the dynamics a step behind, the coupler is stable for "
                                                 r"a <= 0.2 and b <= 1 - 2.5 a; here a = K h\^2 / m ="):
        assert not check_stability(rt.CouplerGains(a / 0.01 ** 2, b / 0.01), 0.01, 1.0, delayed=True)
