"""Named kinematic outputs: a rim point of the rolling disk (dependent speeds embedded) against central
differences of a simulated trajectory (scipy's DOP853 dense output), recording through the simulator's monitors,
and body-point positions, velocities and classical accelerations against Pinocchio's frames on an oblique chain."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kane
from kane.analysis import kinematic_outputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "algorithms"))
from _analysis_models import rolling_disk  # noqa: E402

RIM = {"rim": ("disk", (0.4 * np.cos(0.3), 0.05, 0.4 * np.sin(0.3)))}


def test_point_accelerations_equal_differences_of_a_simulated_trajectory(tmp_path):
    eqs = kane.derive(rolling_disk(), dependent=["vx", "vy", "vz"])
    dyn = eqs.compile("numpy")
    n_q = dyn.n_q
    ko = kinematic_outputs(dyn, RIM)
    assert kinematic_outputs(eqs, RIM) is ko
    x0 = np.concatenate([[0.0, 0.0, 0.4 * np.cos(0.2), 0.1, 0.2, 0.0], [0.5, 0.3, 4.0]])
    run = solve_ivp(lambda t, x: np.concatenate(dyn.rhs(t, x[:n_q], x[n_q:])), (0, 1.0), x0, method="DOP853",
                    rtol=1e-12, atol=1e-13, dense_output=True)

    def at(name, s):
        return np.asarray(ko(name, s, run.sol(s)[:n_q], run.sol(s)[n_q:]))

    h = 1e-4
    for t in (0.3, 0.7):
        for pos, vel, acc in (("rim.position", "rim.velocity", "rim.acceleration"),
                              ("disk.position", "disk.velocity", "disk.acceleration"),
                              (None, "disk.angular_velocity", "disk.angular_acceleration")):
            if pos:
                fd_v = (at(pos, t + h) - at(pos, t - h)) / (2 * h)
                assert np.max(np.abs(at(vel, t) - fd_v)) < 1e-6 * max(1.0, np.abs(fd_v).max()), pos
            fd_a = (at(vel, t + h) - at(vel, t - h)) / (2 * h)
            assert np.max(np.abs(at(acc, t) - fd_a)) < 1e-6 * max(1.0, np.abs(fd_a).max()), acc
        fd = (at("vx", t + h) - at("vx", t - h)) / (2 * h)
        assert abs(at("vx.rate", t) - fd) < 1e-6 * max(1.0, abs(fd))
        R, e = at("disk.rotation", t), at("disk.quaternion", t)
        np.testing.assert_allclose(kane.spatial.quaternion_to_rotation(e), R, atol=1e-13)
    # recorded with each sample and plotted
    names = ["rim.acceleration", "w_lean.rate"]
    traj = kane.simulate.simulate(dyn, (0, 0.2), x0[:n_q], x0[n_q:], rtol=1e-11, atol=1e-12, output_dt=0.05,
                                  monitors=ko.monitors(names))
    k = len(traj.t) // 2
    direct = ko.evaluate(names, traj.t[k], traj.q[k], traj.u[k])
    np.testing.assert_allclose([traj.residuals[f"rim.acceleration.{c}"][k] for c in "xyz"],
                               direct["rim.acceleration"], rtol=1e-12, atol=1e-12)
    assert traj.residuals["w_lean.rate"][k] == direct["w_lean.rate"]
    ko.plot(traj, names, tmp_path / "outputs.png")
    assert (tmp_path / "outputs.png").stat().st_size > 5000
    with pytest.raises(kane.KaneError, match=r"unknown outputs 'rim.jerk'; known: .*rim.acceleration"):
        ko("rim.jerk", 0.0, x0[:n_q], x0[n_q:])
    with pytest.raises(kane.KaneError, match=r"point 'p': body 'wheel' .* bodies: sx, sy, sz, disk"):
        kinematic_outputs(eqs, {"p": ("wheel", (0, 0, 0))})


pin = pytest.importorskip("pinocchio")
from _pin_pairs import paired_chain  # noqa: E402


def test_point_kinematics_match_pinocchio_frames():
    rng = np.random.default_rng(5)
    s, pm, jids, names = paired_chain(rng, ["revolute", "prismatic", "spherical", "revolute"])
    points, frames = {}, {}
    for k, (jid, name) in enumerate(zip(jids, names)):
        point = rng.normal(0, 0.5, 3)
        points[f"P{k}"] = (name, tuple(point))
        frames[f"P{k}"] = pm.addFrame(pin.Frame(f"P{k}", jid, pin.SE3(np.eye(3), point), pin.FrameType.OP_FRAME))
    model = s.compile()
    eqs = kane.derive(model)
    ko = kinematic_outputs(eqs, points)
    data = pm.createData()
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    for trial in range(3):
        q = np.array(model.q0) + rng.uniform(-1.2, 1.2, model.n_q)
        q[2:6] /= np.linalg.norm(q[2:6])  # the spherical joint's quaternion (w, x, y, z)
        u, tau = rng.normal(0, 1.5, model.n_u), rng.normal(0, 3.0, model.n_u)
        qp = np.concatenate([q[:2], q[3:6], q[2:3], q[6:]])  # Pinocchio's quaternion is (x, y, z, w)
        udot = pin.aba(pm, data, qp, u, tau)
        pin.forwardKinematics(pm, data, qp, u, udot)
        pin.updateFramePlacements(pm, data)
        out = ko.evaluate([f"{n}.{k}" for n in points for k in ("position", "velocity", "acceleration")]
                          + ["B3.rotation", "B3.angular_acceleration"],
                          0.0, q, u, tau=tau)
        for n, fid in frames.items():
            np.testing.assert_allclose(out[f"{n}.position"], data.oMf[fid].translation, atol=1e-12)
            np.testing.assert_allclose(out[f"{n}.velocity"], pin.getFrameVelocity(pm, data, fid, world).linear,
                                       atol=1e-11)
            a_pin = pin.getFrameClassicalAcceleration(pm, data, fid, world).linear
            np.testing.assert_allclose(out[f"{n}.acceleration"], a_pin, rtol=1e-9, atol=1e-9 * np.abs(a_pin).max())
        jid = pm.getJointId("j3")
        np.testing.assert_allclose(out["B3.rotation"], data.oMi[jid].rotation, atol=1e-12)
        alpha = pin.getAcceleration(pm, data, jid, world).angular
        np.testing.assert_allclose(out["B3.angular_acceleration"], alpha, atol=1e-9 * np.abs(alpha).max())
