"""The assembler takes the configuration nearest the given one, says what it changed, and refuses a solution
farther away than the user allows; a run started off the constraints is reported."""

import warnings

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.simulate import AssemblyError, InconsistentStartWarning, assemble

R = 0.4


def disk(dependent=None):
    s = kane.System("disk", gravity=(0, 0, -9.81))
    s.add_body("disk", mass=1.5, inertia=(0.06, 0.12, 0.06))
    s.add_joint("ground", "disk", J.Free(), name="float", coordinates=["x", "y", "z", "e0", "e1", "e2", "e3"],
                speeds=["w1", "w2", "w3", "v1", "v2", "v3"])
    s.add_rolling_disk("contact", "disk", R, axis=(0, 1, 0))
    return kane.derive(s, dependent=dependent).compile(backend="numpy")


def test_assemble_lifts_the_disk_onto_the_floor_and_reports_the_change():
    """Leaning by 0.3 rad about its forward axis x, the disk's centre stands r cos(0.3) above the floor."""
    dyn = disk(["v1", "v2", "v3"])
    lean = 0.3
    q = np.array([0.1, -0.2, 0.05, np.cos(lean / 2), np.sin(lean / 2), 0.0, 0.0])
    res = assemble(dyn, 0.0, q)
    assert res.residual <= 1e-12
    assert res.q[2] == pytest.approx(R * np.cos(lean), rel=1e-12)  # above the floor, not below it
    assert set(res.changed) == {"z"} and res.changed["z"] == (0.05, pytest.approx(R * np.cos(lean), rel=1e-12))
    assert res.distance == pytest.approx(R * np.cos(lean) - 0.05, rel=1e-12)
    np.testing.assert_allclose(res.q[[0, 1, 3, 4, 5, 6]], q[[0, 1, 3, 4, 5, 6]], rtol=1e-15)  # renormalized


def test_assemble_refuses_a_solution_farther_than_max_change():
    dyn = disk(["v1", "v2", "v3"])
    q = np.array([0.0, 0.0, -1.0, 1.0, 0.0, 0.0, 0.0])  # the centre 1 m under the floor
    with pytest.raises(AssemblyError, match=r"'contact'.*1\.4 away.*max_change = 0\.01.*z -1 -> 0\.4.*1\.4"):
        assemble(dyn, 0.0, q, max_change=0.01)
    assert assemble(dyn, 0.0, q).q[2] == pytest.approx(R, rel=1e-12)


def test_assemble_takes_t_before_q():
    dyn = disk(["v1", "v2", "v3"])
    with pytest.raises(AssemblyError, match=r"\(dyn, t, q\)"):
        assemble(dyn, np.array([0.0, 0.0, R, 1.0, 0.0, 0.0, 0.0]))


def test_a_run_started_off_the_constraints_is_reported():
    dyn = disk(["v1", "v2", "v3"])
    q = np.array([0.0, 0.0, 0.3, 1.0, 0.0, 0.0, 0.0])
    with pytest.warns(InconsistentStartWarning, match=r"max \|C\(q0\)\| = 0\.1"):
        kane.simulate.simulate(dyn, (0.0, 0.01), q, [0.0, 5.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kane.simulate.simulate(dyn, (0.0, 0.01), assemble(dyn, 0.0, q).q, [0.0, 5.0, 0.0])
