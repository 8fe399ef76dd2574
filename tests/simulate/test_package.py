"""``kane.simulate`` is a plain package whose one-call run is the function ``kane.simulate.simulate``; calling the
package and its re-exports of kane.io.trajectory are deprecated shims (FutureWarning) until kane 0.3."""

import importlib
import warnings

import numpy as np
import pytest

import kane
import kane.io.trajectory as trajectory_module
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


def test_the_function_runs_and_calling_the_package_warns_and_gives_the_same_trajectory():
    """A point-mass pendulum of length 0.5 m released at 0.1 rad: its period is 2 pi sqrt(l/g) to O(theta0^2)."""
    dyn = _pendulum()
    period = 2 * np.pi * np.sqrt(0.5 / 9.81) * (1 + 0.1**2 / 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        direct = kane.simulate.simulate(dyn, (0.0, period), [0.1], [0.0], rtol=1e-10, atol=1e-12)
    with pytest.warns(FutureWarning, match=r"kane\.simulate\(\.\.\.\) is deprecated.*kane\.simulate\.simulate"):
        old = kane.simulate(dyn, (0.0, period), [0.1], [0.0], rtol=1e-10, atol=1e-12)
    assert abs(direct.q[-1, 0] - 0.1) < 2e-5
    np.testing.assert_array_equal(old.t, direct.t)
    np.testing.assert_array_equal(old.q, direct.q)
    np.testing.assert_array_equal(old.u, direct.u)


@pytest.mark.parametrize("name", ["Trajectory", "load_trajectory", "TrajectoryWriter", "Stats", "EventRecord"])
def test_the_trajectory_names_of_the_package_warn_and_are_those_of_kane_io_trajectory(name):
    with pytest.warns(FutureWarning, match=rf"kane\.simulate\.{name} is deprecated.*kane\.io\.trajectory\.{name}"):
        got = getattr(kane.simulate, name)
    assert got is getattr(trajectory_module, name)
    assert name not in kane.simulate.__all__


def test_an_unknown_name_of_the_package_is_an_attribute_error():
    with pytest.raises(AttributeError, match="kane.simulate' has no attribute 'Trajectry'"):
        kane.simulate.Trajectry  # noqa: B018
