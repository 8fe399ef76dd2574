"""The virtual coupler: its kinematics and force against hand derivations, the passivity bound, bad input."""

import warnings

import numpy as np
import pytest

import kane
from kane import realtime as rt
from kane.errors import ArgumentError, ModelError

from models import pendulum_chain_kane  # bench/ is put on sys.path by conftest.py


def test_passivity_bound_is_k_t_over_2_and_the_warning_names_it():
    # K = 20000 N/m sampled at T = 1 ms: B >= K T / 2 = 10 N s/m, less the device's own damping
    assert rt.passivity_bound(2e4, 1e-3) == pytest.approx(10.0, rel=1e-15)
    assert rt.passivity_bound(2e4, 1e-3, device_damping=4.0) == pytest.approx(6.0, rel=1e-15)
    with pytest.warns(rt.PassivityWarning, match=r"B >= K T / 2 = 20000 \* 0.001 / 2 = 10 N s/m"):
        assert rt.check_gains(rt.CouplerGains(2e4, 1.0), 1e-3) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rt.check_gains(rt.CouplerGains(2e4, 10.0), 1e-3) is True
    with pytest.raises(ArgumentError, match="damping must be a finite number >= 0"):
        rt.CouplerGains(100.0, -1.0)


def test_point_kinematics_and_force_of_the_chain_tip(chain):
    dyn, port = chain
    gains = rt.CouplerGains(1000.0, 3.0)
    cp = rt.VirtualCoupler(dyn, port, gains, max_force=50.0)
    q, u = np.zeros(7), np.zeros(7)
    u[0] = 2.0  # first joint turns about x at 2 rad/s; the tip hangs 7 m below it: v = w x r = (0, 14, 0) m/s
    x, v = cp.point_state(0.0, q, u)
    np.testing.assert_allclose(x, [0, 0, -7], atol=1e-14)
    np.testing.assert_allclose(v, [0, 14, 0], atol=1e-13)
    # handle 1 cm to +x of the tip, at rest: F = K d + B (0 - v) = (10, -42, 0) N, |F| = 43.17 < 50
    c = cp.force(0.0, q, u, [0.01, 0, -7], np.zeros(3))
    np.testing.assert_allclose(c.force, [10.0, -42.0, 0.0], rtol=1e-12)
    assert not c.saturated and c.power == 0.0
    assert c.spring_energy == pytest.approx(0.5 * 1000.0 * 1e-4, rel=1e-12)
    # a larger offset saturates at 50 N along the same direction
    c = cp.force(0.0, q, np.zeros(7), [0.1, 0.0, -7.0], [0.0, 1.0, 0.0])
    assert c.saturated
    np.testing.assert_allclose(c.force, 50.0 * np.array([100.0, 3.0, 0.0]) / np.hypot(100.0, 3.0), rtol=1e-12)
    assert c.power == pytest.approx(c.force[1], rel=1e-15)


def test_coupler_force_enters_the_equations_at_the_body_point(chain):
    # the generalized force of F at the tip is J^T F: for F = (0, 1, 0) N at q = 0 the first joint (about x, tip 7 m
    # below) gets (r x F)_x = (0,0,-7) x (0,1,0) = +7 N m; compare f with and without the input
    dyn, port = chain
    q, u = np.zeros(7), np.zeros(7)
    f0 = dyn.forcing(0.0, q, u)
    f1 = dyn.forcing(0.0, q, u, inputs={port.inputs[1]: 1.0})
    expected = np.zeros(7)
    expected[0::2] = 7.0 - np.arange(0, 7, 2)  # joints about x at depths 0, 2, 4, 6 m; joints about y get 0
    np.testing.assert_allclose(f1 - f0, expected, atol=1e-12)


def test_a_missing_body_is_a_model_error_listing_the_bodies():
    s = pendulum_chain_kane(2)
    with pytest.raises(ModelError, match=r"no body named 'handle'; bodies: B0, B1"):
        rt.add_coupler(s, "handle")


def test_dynamics_without_the_coupler_inputs_are_refused():
    dyn = kane.derive(pendulum_chain_kane(2)).compile()
    port = rt.CouplerPort("B1", (0.0, 0.0, -1.0), ("coupler_fx", "coupler_fy", "coupler_fz"))
    with pytest.raises(ModelError, match="no input coupler_fx, coupler_fy, coupler_fz"):
        rt.VirtualCoupler(dyn, port, rt.CouplerGains(1.0, 1.0))
