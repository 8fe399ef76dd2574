"""The coupler on a full pose (add_coupler(..., rotational=True)): the torque K_r theta + B_r (w_h - w_b) on the body,
theta the rotation vector that turns the body's axes onto the handle's. A disk on a pivot follows the exact
zero-order-hold response of I theta'' = torque; a body on a ball joint turns onto an arbitrary handle orientation;
the energy the hand puts in over a closed turning path is never negative; bad orientations are refused and
counted; the log keeps the torque and both orientations; the log map is checked against scipy's."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

import kane
from kane import joints as J
from kane import realtime as rt
from kane.cli import main
from kane.errors import ArgumentError
from kane.realtime.coupler import torque_work
from kane.spatial import rotation_vector
from kane.realtime.coupler_stability import angular_mobility, effective_inertia

CHAIN = Path(__file__).resolve().parents[2] / "examples" / "planar_chain.toml"
T = 1e-3  # the loop's period [s]
IZZ = 0.02  # the disk's inertia about its pivot [kg m^2]


def _rz(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _disk():
    s = kane.System("disk", gravity=(0, 0, -9.81))
    s.add_body("disk", 1.0, inertia=(0.01, 0.01, IZZ))
    s.add_joint("ground", "disk", J.Revolute("z"), name="pivot", coordinates=["th"], speeds=["w"])
    port = rt.add_coupler(s, "disk", rotational=True)
    return kane.derive(s).compile(), port


def _hand(orientation, workspace=rt.Workspace((-1, -1, -1), (1, 1, 1))):
    """A hand at the origin (the disk's centre: the force's spring stays slack) turning as orientation(t) ->
    (R (3, 3), w (3,))."""
    return rt.SimulatedHand(lambda t: (np.zeros(3), np.zeros(3), *orientation(t)), max_force=50.0,
                            workspace=workspace)


def _virtual(duration, **kw):
    return rt.LoopOptions(rate=1 / T, duration=duration, clock=rt.ClockMode.VIRTUAL, **kw)


def test_the_log_map_is_scipys_rotation_vector_everywhere():
    rng = np.random.default_rng(2)
    for angle in (0.0, 1e-9, 1e-5, 0.3, 2.0, 3.0, np.pi - 1e-7, np.pi):
        for _ in range(20):
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            R = Rotation.from_rotvec(angle * axis).as_matrix()
            theta = np.array(rotation_vector(R))
            if angle == np.pi:  # +-axis are the same rotation
                theta *= np.sign(theta @ axis)
            np.testing.assert_allclose(theta, angle * axis, rtol=0, atol=1e-14)
    # the work of a torque held over a turn about a fixed axis: torque . axis * angle
    before, after = _rz(0.2).ravel(), (_rz(0.2) @ Rotation.from_rotvec([0, 0, 0.05]).as_matrix()).ravel()
    assert torque_work((1.0, 2.0, 3.0), before, after) == pytest.approx(3.0 * 0.05, rel=1e-12)


def test_a_disk_on_a_pivot_follows_the_exact_sampled_torque_response(tmp_path):
    # I th'' = K_r (th_h - th) - B_r w held over each period from its start: the exact zero-order-hold step of
    # the double integrator (the loop's RK4 sub-steps integrate a constant torque exactly)
    dyn, port = _disk()
    kr, br, goal = 2.0, 0.05, 0.3
    gains = rt.CouplerGains(100.0, 1.0, rotational_stiffness=kr, rotational_damping=br)
    cp = rt.VirtualCoupler(dyn, port, gains, max_force=50.0)
    hand = _hand(lambda t: (_rz(goal), np.zeros(3)))
    result = rt.RealtimeLoop(cp, hand, [0.0], [0.0], options=_virtual(0.5, substeps=4), log=tmp_path / "d.h5").run()
    assert result.status == "completed" and result.refused == 0
    rec = rt.load_realtime_log(tmp_path / "d.h5")
    phi = expm(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0 / IZZ], [0.0, 0.0, 0.0]]) * T)
    th, w, expected = 0.0, 0.0, []
    for _ in range(500):
        expected.append((th, w))
        tau = kr * (goal - th) - br * w
        th, w = phi[0, 0] * th + phi[0, 1] * w + phi[0, 2] * tau, phi[1, 1] * w + phi[1, 2] * tau
    expected = np.array(expected)
    np.testing.assert_allclose(rec.q[:, 0], expected[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rec.u[:, 0], expected[:, 1], rtol=0, atol=1e-11)
    assert result.q[0] == pytest.approx(th, abs=1e-12)
    # the logged torque is the law at each period's start, about z; the device got its opposite
    np.testing.assert_allclose(rec.torque[:, 2], kr * (goal - expected[:, 0]) - br * expected[:, 1], atol=1e-12)
    np.testing.assert_allclose(rec.torque[:, :2], 0.0, atol=1e-14)
    np.testing.assert_allclose(rec.force, 0.0, atol=1e-12)  # the point on the axis: the force's spring is slack
    np.testing.assert_allclose(rec.hand_orientation, np.broadcast_to(_rz(goal), (500, 3, 3)), atol=1e-15)
    np.testing.assert_allclose(rec.body_orientation, [_rz(a) for a in expected[:, 0]], atol=1e-12)
    np.testing.assert_allclose(rec.body_angular_velocity[:, 2], expected[:, 1], atol=1e-11)
    # the spring energy holds the rotational term K_r theta^2 / 2
    np.testing.assert_allclose(rec.spring_energy, 0.5 * kr * (goal - expected[:, 0]) ** 2, rtol=1e-9, atol=1e-15)
    assert hand.torque == (0.0, 0.0, 0.0)  # zero torque written at the end


def test_a_body_on_a_ball_joint_turns_onto_the_handles_orientation():
    # an arbitrary handle orientation, not about a coordinate axis: critically damped (K_r = 1 N m/rad,
    # B_r = 2 sqrt(K_r I) with I = 0.01 kg m^2), the body's axes end on the handle's
    s = kane.System("ball")
    s.add_body("b", 1.0, inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", "b", J.Spherical(), name="ball")
    port = rt.add_coupler(s, "b", rotational=True)
    dyn = kane.derive(s).compile()
    target = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_matrix()
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(10.0, 1.0, rotational_stiffness=1.0, rotational_damping=0.2))
    q0 = np.array(dyn.model.q0)  # the unit quaternion (1, 0, 0, 0): the body's axes on ground's
    result = rt.RealtimeLoop(cp, _hand(lambda t: (target, np.zeros(3))), q0, np.zeros(dyn.n_u),
                             options=_virtual(2.0, substeps=2)).run()
    R, w = cp.pose_state(result.t, result.q, result.u)
    assert np.linalg.norm(rotation_vector(target @ R.T)) < 1e-5 and np.linalg.norm(w) < 1e-4
    R0, _ = cp.pose_state(0.0, q0, np.zeros(dyn.n_u))
    np.testing.assert_allclose(R0, np.eye(3), atol=1e-15)


def test_the_hand_turning_round_a_closed_path_puts_energy_in_and_never_gets_more_back(tmp_path):
    dyn, port = _disk()
    kr = 2.0
    gains = rt.CouplerGains(100.0, 1.0, rotational_stiffness=kr, rotational_damping=kr * T)  # B_r = 2 K_r T / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.PassivityWarning)
        assert rt.check_gains(gains, T)
        cp = rt.VirtualCoupler(dyn, port, gains, max_force=50.0)

    def turning(t):  # there and back: 0.6 rad about z in a second, closed after every second
        a, rate = 0.3 * (1 - np.cos(2 * np.pi * t)), 0.6 * np.pi * np.sin(2 * np.pi * t)
        return _rz(a), np.array([0.0, 0.0, rate])

    rt.RealtimeLoop(cp, _hand(turning), [0.0], [0.0], options=_virtual(3.0), log=tmp_path / "c.h5").run()
    rec = rt.load_realtime_log(tmp_path / "c.h5")
    assert rec.port_energy.min() >= -1e-12 and rec.port_energy[-1] > 1e-4
    # energy balance: what came in is stored (the disk's kinetic energy and the spring) or was dissipated
    stored = rec.energy - rec.energy[0] + rec.spring_energy
    assert np.all(stored <= rec.port_energy + 1e-9)


def test_bad_orientations_are_refused_and_counted_and_gains_below_the_bound_warn(tmp_path):
    dyn, port = _disk()
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(100.0, 1.0, rotational_stiffness=2.0, rotational_damping=0.1))

    def skewed(t):  # 1.1 R from 0.1 s to 0.15 s: not a rotation
        return (1.1 if 0.1 <= t < 0.15 else 1.0) * _rz(0.2), np.zeros(3)

    hand = _hand(skewed)
    result = rt.RealtimeLoop(cp, hand, [0.0], [0.0], options=_virtual(0.3), log=tmp_path / "s.h5").run()
    rec = rt.load_realtime_log(tmp_path / "s.h5")
    bad = (rec.t >= 0.1 - 1e-12) & (rec.t < 0.15 - 1e-12)
    assert result.refused == bad.sum() == 50 and np.all(rec.sample_status[bad] == rt.log.SAMPLE_REFUSED)
    assert np.all(rec.torque[bad] == 0.0) and np.all(np.isnan(rec.hand_orientation[bad]))
    # a point-only hand on a pose coupler: every sample lacks the orientation
    flat = rt.SimulatedHand(lambda t: (np.zeros(3), np.zeros(3)), workspace=rt.Workspace((-1, -1, -1), (1, 1, 1)))
    assert rt.RealtimeLoop(cp, flat, [0.0], [0.0], options=_virtual(0.05)).run().refused == 50
    sample = rt.DeviceSample(0.0, (0, 0, 0), (0, 0, 0))
    assert "no orientation" in rt.check_sample(sample, rt.Workspace(), True)
    # a device that cannot display a torque is refused when the loop is built
    replay = rt.Replay([0.0], [[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]])
    with pytest.raises(ArgumentError, match=r"couples a full pose but the device \(Replay\) displays no torque"):
        rt.RealtimeLoop(cp, replay, [0.0], [0.0], options=_virtual(0.05))
    with pytest.warns(rt.PassivityWarning, match=r"rotational damping B_r = 0.0001 N m s/rad is below the sampled-"
                                                 r"data passivity bound B_r >= K_r T / 2 = 2 \* 0.001 / 2 = 0.001"):
        assert not rt.check_gains(rt.CouplerGains(100.0, 1.0, rotational_stiffness=2.0, rotational_damping=1e-4), T)


def test_the_torques_gains_are_checked_on_the_bodys_smallest_moment_of_inertia():
    # the disk turns about z only: its angular mobility is 1 / Izz about z and nothing about x and y (the pivot
    # holds those), so the smallest effective moment of inertia is Izz
    dyn, port = _disk()
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(100.0, 1.0, rotational_stiffness=2.0, rotational_damping=50.0))
    expected = np.zeros((3, 3))
    expected[2, 2] = 1.0 / IZZ
    np.testing.assert_allclose(angular_mobility(cp, 0.0, [0.3]), expected, rtol=1e-12, atol=1e-12)
    assert effective_inertia(cp, 0.0, [0.3]) == pytest.approx(IZZ, rel=1e-12)
    # B_r T / I = 2.5: past b < 2 (Jury), whatever K_r; the loop warns as it is built, naming the inertia
    with pytest.warns(rt.PassivityWarning, match=r"unstable on the rotation of the coupled body with the force held "
                                                 r"over each step .* smallest effective moment of inertia I = 0.02 "
                                                 r"kg m\^2\): no K_r is stable at this B_r; at this K_r for B_r from "
                                                 r"0.001 to 40 N m s/rad"):
        rt.RealtimeLoop(cp, _hand(lambda t: (np.eye(3), np.zeros(3))), [0.0], [0.0], options=_virtual(0.01))


def test_a_pose_log_replayed_drives_the_same_run(tmp_path):
    # the hand's orientation path logged, then replayed as the device: the same torques, period by period
    dyn, port = _disk()
    gains = rt.CouplerGains(100.0, 1.0, rotational_stiffness=2.0, rotational_damping=0.01)

    def turning(t):
        return _rz(0.4 * np.sin(3 * t)), np.array([0.0, 0.0, 1.2 * np.cos(3 * t)])

    rt.RealtimeLoop(rt.VirtualCoupler(dyn, port, gains), _hand(turning), [0.0], [0.0], options=_virtual(0.5),
                    log=tmp_path / "first.h5").run()
    replay = rt.Replay.from_log(tmp_path / "first.h5", workspace=rt.Workspace((-1, -1, -1), (1, 1, 1)))
    assert replay.pose
    rt.RealtimeLoop(rt.VirtualCoupler(dyn, port, gains), replay, [0.0], [0.0], options=_virtual(0.5),
                    log=tmp_path / "again.h5").run()
    first, again = rt.load_realtime_log(tmp_path / "first.h5"), rt.load_realtime_log(tmp_path / "again.h5")
    np.testing.assert_array_equal(again.hand_orientation, first.hand_orientation)
    np.testing.assert_allclose(again.torque, first.torque, rtol=0, atol=1e-12)
    shown = np.array([f for _, f in replay.torques])  # what the device displayed, then zero at the end
    np.testing.assert_allclose(shown[:-1], -first.torque, atol=1e-12)
    assert np.all(shown[-1] == 0.0)


def test_kane_realtime_couples_a_full_pose_from_the_command_line_and_the_table(tmp_path):
    # the 7-link chain's tip coupled in orientation too; the simulated hand turns its handle about z by up to
    # 0.5 rad; every logged torque is the law on the logged orientations (scipy's log map here)
    out = tmp_path / "pose.h5"
    res = CliRunner().invoke(main, ["realtime", str(CHAIN), "--rotational-stiffness", "0.5",
                                    "--rotational-damping", "0.002", "--duration", "0.6", "--virtual-clock",
                                    "-o", str(out)])
    assert res.exit_code == 0, res.output
    rec = rt.load_realtime_log(out)
    relative = np.einsum("nij,nkj->nik", rec.hand_orientation, rec.body_orientation)  # R_h R_b^T
    theta = Rotation.from_matrix(relative).as_rotvec()
    law = 0.5 * theta + 0.002 * (rec.hand_angular_velocity - rec.body_angular_velocity)
    np.testing.assert_allclose(rec.torque, law, rtol=0, atol=1e-12)
    assert np.abs(rec.torque).max() > 0.01  # it turned
    # the hand's turn: s(t) = (1 - cos(2 pi t / 2 s)) / 2 of 0.5 rad about z, from the body's first orientation
    s = 0.5 * (1 - np.cos(np.pi * rec.t))
    turned = np.einsum("nij,jk->nik", Rotation.from_rotvec(np.outer(0.5 * s, [0, 0, 1])).as_matrix(),
                       rec.body_orientation[0])
    np.testing.assert_allclose(rec.hand_orientation, turned, atol=1e-12)
    # the same from the model file's [realtime] table; a bad value is named with its key
    text = CHAIN.read_text()
    model = tmp_path / "chain.toml"
    model.write_text(text.replace('[realtime]\n', '[realtime]\nrotational_stiffness = 0.5\n'
                                  'rotational_damping = 0.002\nmax_torque = 1.0\nhand_turn = [0, 0, 0.5]\n'))
    res = CliRunner().invoke(main, ["realtime", str(model), "--duration", "0.6", "--virtual-clock", "-o",
                                    str(tmp_path / "table.h5")])
    assert res.exit_code == 0, res.output
    np.testing.assert_allclose(rt.load_realtime_log(tmp_path / "table.h5").torque, rec.torque, atol=1e-12)
    model.write_text(text.replace('[realtime]\n', '[realtime]\nmax_torque = -1.0\n'))
    res = CliRunner().invoke(main, ["realtime", str(model), "--virtual-clock", "-o", str(tmp_path / "x.h5")])
    assert res.exit_code != 0 and "max_torque" in res.output and "expected a number > 0" in res.output
