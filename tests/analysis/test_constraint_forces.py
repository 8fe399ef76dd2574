"""Constraint forces as named outputs: the rolling disk's contact force against Newton's law on the disk
(m a = m g + F from the disk's own acceleration output), also with extra generalized forces and recorded with every
sample of a simulation; the four-bar's loop-closure force against the moment balances of the whole linkage and of
its last two links (accelerations and angular accelerations from the kinematic outputs), and both against the
kinetostatic solve of ``Dynamics.constraint_forces``."""

import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kane
from kane.analysis import kinematic_outputs
from kane.simulate.assembly import assemble

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _analysis_models import four_bar, rolling_disk  # noqa: E402

M_DISK, G = 1.5, np.array([0.0, 0.0, -9.81])


def test_rolling_contact_force_is_newtons_law_on_the_disk():
    eqs = kane.derive(rolling_disk(m=M_DISK), dependent=["vx", "vy", "vz"])
    dyn = eqs.compile("numpy")
    ko = kinematic_outputs(eqs)
    assert ko.shapes["contact.force"] == (3,)
    assert ko.component_names("contact.force") == ("contact.force.1", "contact.force.2", "contact.force.3")
    q = np.array([0.0, 0.0, 0.4 * np.cos(0.2), 0.1, 0.2, 0.0])
    u = np.array([0.5, 0.3, 4.0])
    for tau in (None, np.array([0.2, -0.7, 0.3])):  # torques along the gimbal rates leave m a = m g + F intact
        out = ko.evaluate(["contact.force", "disk.acceleration"], 0.0, q, u, tau=tau)
        newton = M_DISK * (out["disk.acceleration"] - G)
        np.testing.assert_allclose(out["contact.force"], newton, rtol=1e-10, atol=1e-10)
    assert abs(out["contact.force"][2]) > 5.0  # a real normal force, not a vanishing one
    kkt = dyn.constraint_forces(0.0, q, u)["contact"]
    np.testing.assert_allclose(ko("contact.force", 0.0, q, u), kkt, rtol=1e-10, atol=1e-10)
    # recorded with every sample of a run
    names = ["contact.force", "disk.acceleration"]
    traj = kane.simulate.simulate(dyn, (0, 0.3), q, u, rtol=1e-10, atol=1e-12, output_dt=0.05,
                                  monitors=ko.monitors(names))
    F = np.array([traj.residuals[f"contact.force.{k}"] for k in (1, 2, 3)]).T
    a = np.array([traj.residuals[f"disk.acceleration.{c}"] for c in "xyz"]).T
    assert len(traj.t) >= 6
    np.testing.assert_allclose(F, M_DISK * (a - G), rtol=1e-10, atol=1e-10)


def _cross_z(r, f):
    return r[0] * f[1] - r[1] * f[0]


def test_loop_closure_force_balances_the_moments_of_the_four_bar():
    eqs = kane.derive(four_bar())
    dyn = eqs.compile("numpy")
    lengths, masses = (1.0, 2.0, 1.5), (1.0, 2.0, 3.0)
    coms = {f"c{i}": (f"l{i}", (L / 2, 0, 0)) for i, L in enumerate(lengths)}
    ko = kinematic_outputs(eqs, coms)
    g = np.array([0.0, -9.81, 0.0])
    q = assemble(dyn, 0.0, np.array(eqs.model.q0, dtype=float)).q
    u = np.array([1.3])
    names = ["closure.force", "l1.position"] + [f"c{i}.{k}" for i in range(3) for k in ("position", "acceleration")]
    names += [f"l{i}.angular_acceleration" for i in range(3)]
    out = ko.evaluate(names, 0.0, q, u)
    lam = np.append(out["closure.force"], 0.0)  # on the rocker's tip, in ground x and y
    tip = np.array([2.0, 0.0, 0.0])

    def moment_residual(links, about):
        """z-moment about ``about`` of the inertia forces of ``links`` minus that of gravity and the closure."""
        total = -_cross_z(tip - about, lam)
        for i in links:
            m, L = masses[i], lengths[i]
            r = out[f"c{i}.position"] - about
            total += _cross_z(r, m * (out[f"c{i}.acceleration"] - g)) + m * L ** 2 / 12 * out[
                f"l{i}.angular_acceleration"][2]
        return total

    assert np.linalg.norm(lam) > 1.0
    assert abs(moment_residual((0, 1, 2), np.zeros(3))) < 1e-9 * np.linalg.norm(lam)
    assert abs(moment_residual((1, 2), out["l1.position"])) < 1e-9 * np.linalg.norm(lam)
    np.testing.assert_allclose(out["closure.force"], dyn.constraint_forces(0.0, q, u)["closure"], rtol=1e-9)
    with pytest.raises(kane.KaneError, match=r"unknown outputs 'closure.torque'; known: .*closure.force"):
        ko("closure.torque", 0.0, q, u)


def test_a_dropped_repeat_of_the_contact_is_nan_and_the_contact_force_is_newtons_law():
    s = rolling_disk(m=M_DISK)
    s.add_rolling_disk("again", "disk", sp.Symbol("r"), axis=(0, 1, 0), plane_normal=(0, 0, 1))  # the contact again
    with pytest.warns(kane.symbolic.RedundantConstraintWarning, match="'again' row 0"):
        eqs = kane.derive(s, redundant="drop", dependent=["vx", "vy", "vz"])
    ko = kinematic_outputs(eqs)
    reference = kinematic_outputs(kane.derive(rolling_disk(m=M_DISK), dependent=["vx", "vy", "vz"]))
    q = np.array([0.0, 0.0, 0.4 * np.cos(0.2), 0.1, 0.2, 0.0])
    u = np.array([0.5, 0.3, 4.0])
    out = ko.evaluate(["contact.force", "again.force", "disk.acceleration"], 0.0, q, u)
    np.testing.assert_allclose(out["contact.force"], M_DISK * (out["disk.acceleration"] - G), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out["contact.force"], reference("contact.force", 0.0, q, u), rtol=1e-12, atol=1e-12)
    assert np.isnan(out["again.force"]).all()
    np.testing.assert_allclose(out["contact.force"], eqs.compile("numpy").constraint_forces(0.0, q, u)["contact"],
                               rtol=1e-10, atol=1e-10)
