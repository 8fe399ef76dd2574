"""``kane.simulate`` is both the package and the function (issue: the function used to hide the package)."""

import importlib

import numpy as np

import kane
from kane import joints as J


def _pendulum():
    s = kane.System("pendulum", gravity=(0, 0, -9.81))
    s.add_body("link", mass=1.0, com=(0, 0, -0.5), inertia=(0.0, 0.0, 0.0))
    s.add_joint("ground", "link", J.Revolute("y"), coordinates=["theta"], speeds=["omega"])
    return kane.derive(s).compile()


def test_the_package_and_its_members_are_reachable():
    ks = importlib.import_module("kane.simulate")
    import kane.simulate as alias

    assert alias is ks is kane.simulate
    assert kane.simulate.make_projection is ks.assembly.make_projection
    assert kane.simulate.Simulator.__module__ == "kane.simulate.simulator"


def test_calling_the_package_runs_simulate():
    """A point-mass pendulum of length 0.5 m released at 0.1 rad: its period is 2 pi sqrt(l/g) to O(theta0^2)."""
    dyn = _pendulum()
    period = 2 * np.pi * np.sqrt(0.5 / 9.81) * (1 + 0.1**2 / 16)
    traj = kane.simulate(dyn, (0.0, period), [0.1], [0.0], rtol=1e-10, atol=1e-12)
    direct = kane.simulate.simulate(dyn, (0.0, period), [0.1], [0.0], rtol=1e-10, atol=1e-12)
    assert abs(traj.q[-1, 0] - 0.1) < 2e-5
    np.testing.assert_array_equal(traj.q, direct.q)
