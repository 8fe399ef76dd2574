"""Constraint changes inside the real-time loop's period and the multi-rate loop (issue 14), VIRTUAL clock only.

Seed 000's examples felt through the coupler: the simulated hand pushes the shopping cart whose caster locks and
unlocks inside a period (checked against an independent closed loop of offline ``simulate_switching`` runs, one per
period, with the coupler force computed from a hand-derived kinematics of the cart and held per period), and the
disk on the ramp held by a brake, released, then held and lowered by the hand (checked against statics). The cart
with its caster free: passive over a closed hand path, its coupler point (dependent speeds) hand-derived, the
compiled and Python periods equal.
Multi-rate: sub-steps checked against an offline RK4 replay, slow dynamics converge to the single-rate run as
k -> 1 and stay passive over a closed hand path.
"""

import json
import math
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import kane
import kane.switching.online as online_module
from kane import realtime as rt
from kane.errors import ArgumentError
from kane.io import load_model
from kane.io.trajectory import _json_default
from kane.realtime import SwitchingDynamics, SwitchingOptions  # the public names
from kane.switching import Coulomb, Lock, SwitchingSettings, SwitchingSimulator, simulate_switching
from kane.switching.settings import switching_run_options

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from shopping_cart import build as build_cart  # noqa: E402

T = 1e-3  # haptic period [s]
CART_POINT = (-0.3, 0.0, 0.0)  # the handle on the basket, behind the rear axle P1 (basket axes) [m]
LOCKED = [(0.1005, 0.2003)]  # the caster's lock, on inside one period and off inside another [s]
K, B = 2000.0, 20.0  # coupler gains [N/m, N s/m]; the bound K T / 2 = 1 N s/m


def _virtual(duration, **kw):
    return rt.LoopOptions(rate=1 / T, duration=duration, clock=rt.ClockMode.VIRTUAL, **kw)


def _cart_path(x0):
    """The hand pushes the cart forward (x) with a sideways swing (y) that swivels the caster."""
    x0 = np.asarray(x0, dtype=float)

    def path(t):
        w = 2 * np.pi * 1.5
        p = x0 + np.array([0.4 * t * t, 0.04 * np.sin(w * t), 0.0])
        v = np.array([0.8 * t, 0.04 * w * np.cos(w * t), 0.0])
        return p, v

    return path


def _cart_point(q, u):
    """Hand derivation: the basket point CART_POINT = (px, py) at P1 = (q1, q2) turned by q3; body-axis speeds
    u1 = v_P1.b1, v2 = v_P1.b2, u2 = omega: v = R(q3) (u1 - u2 py, v2 + u2 px)."""
    px, py, _ = CART_POINT
    c, s = math.cos(q[2]), math.sin(q[2])
    x = np.array([q[0] + c * px - s * py, q[1] + s * px + c * py, 0.0])
    vb = (u[0] - u[2] * py, u[1] + u[2] * px)
    return x, np.array([c * vb[0] - s * vb[1], s * vb[0] + c * vb[1], 0.0])


@pytest.fixture(scope="module")
def cart():
    s = build_cart()
    s.add_joint_lock("caster_stick", "swivel", transient=True)
    port = rt.add_coupler(s, "B", CART_POINT)
    return kane.derive(s), port


@pytest.fixture
def cached_compile(monkeypatch):
    """The offline reference builds one simulate_switching run per period; compile each Program once for them."""
    original, cache = online_module.compile_program, {}

    def compile_once(program, outputs):
        key = (id(program), tuple(outputs))
        if key not in cache:
            cache[key] = (program, original(program, outputs))
        return cache[key][1]

    monkeypatch.setattr(online_module, "compile_program", compile_once)


def _offline(eqs, rules, hand, point, q0, u0, n_periods):
    """Independent closed loop: each period read the hand, compute the coupler force from ``point`` (hand-derived
    kinematics), push the hand with its opposite, run simulate_switching over the period with the force held."""
    q, u = np.array(q0, dtype=float), np.array(u0, dtype=float)
    names = [str(s) for s in eqs.model.inputs]
    index = [names.index(n) for n in ("coupler_fx", "coupler_fy", "coupler_fz")]
    hand.open()
    forces, qs, us, events, jumps = [], [], [], [], []
    for k in range(n_periods):
        t = k * T
        sample = hand.read(t)
        x_b, v_b = point(q, u)
        f = K * (sample.position - x_b) + B * (sample.velocity - v_b)
        hand.write_force(t, -f)
        forces.append(f)
        qs.append(q)
        us.append(u)
        inputs = eqs.model.input_values()  # model order: F, tau at their defaults, the coupler's force
        inputs[index] = f
        traj = simulate_switching(eqs, (t, t + T), q, u, rules, inputs=inputs, method="rk4", dt=T,
                                  record_forces=False)
        events += [e for e in traj.events if e.kind in ("lock", "unlock")]
        for i in np.flatnonzero(np.diff(traj.t) == 0.0):  # a jump: two samples at one time
            jumps.append((traj.t[i], traj.q[i], traj.u[i], traj.u[i + 1]))
        q, u = traj.q[-1], traj.u[-1]
    return np.array(forces), np.array(qs), np.array(us), events, jumps


def test_hand_pushes_the_cart_and_feels_the_caster_lock_and_unlock(cart, cached_compile, tmp_path):
    eqs, port = cart
    rules = [Lock("caster_stick", on=LOCKED)]
    sd = SwitchingDynamics(eqs, rules)
    coupler = rt.VirtualCoupler(sd, port, rt.CouplerGains(K, B), max_force=200.0)
    q0, u0 = np.array([0.0, 0.0, 0.0, 0.3]), np.zeros(4)
    x0, _ = _cart_point(q0, u0)
    np.testing.assert_allclose(coupler.point_state(0.0, q0, u0)[0], x0, atol=1e-15)
    path = _cart_path(x0)
    n = 300
    loop = rt.RealtimeLoop(coupler, rt.SimulatedHand(path, max_force=200.0), q0, u0, options=_virtual(n * T),
                           log=tmp_path / "cart.h5")
    result = loop.run()
    assert result.status == "completed" and result.engine is rt.Engine.PYTHON
    assert [(e.kind, round(e.t, 12)) for e in loop.plant.events] == [("lock", 0.1005), ("unlock", 0.2003)]
    assert loop.plant.mode == "free"
    log = _read(tmp_path / "cart.h5")
    # the mode and the events in the log, read with plain h5py: the caster is locked from the period after the
    # lock (0.1005 s, inside period 100) to the period of the unlock (0.2003 s, inside period 200)
    with h5py.File(tmp_path / "cart.h5", "r") as f:
        modes = json.loads(f.attrs["modes"])
        mode = [modes[i] for i in f["mode"][:]]
        logged = list(zip(f["events/t"][:], f["events/kind"].asstr()[:], f["events/constraint"].asstr()[:]))
        impulse = json.loads(f["events/data"].asstr()[0])
    assert mode == ["free"] * 101 + ["caster_stick"] * 100 + ["free"] * 99
    assert [(round(t, 12), kind, name) for t, kind, name in logged] == [(0.1005, "lock", "caster_stick"),
                                                                         (0.2003, "unlock", "caster_stick")]
    assert impulse == json.loads(json.dumps(loop.plant.events[0].data, default=_json_default))

    f_ref, q_ref, u_ref, events, jumps = _offline(eqs, rules, rt.SimulatedHand(path, max_force=200.0),
                                                  _cart_point, q0, u0, n)
    assert [(e.kind, round(e.t, 12)) for e in events] == [("lock", 0.1005), ("unlock", 0.2003)]
    assert np.max(np.abs(log["force"] - f_ref)) < 1e-9
    assert np.max(np.abs(log["q"] - q_ref)) < 1e-9 and np.max(np.abs(log["u"] - u_ref)) < 1e-9
    assert np.max(np.abs(log["force"])) > 5.0  # the hand really pushed

    # the jump the switching predicts: locking the swivelling caster is a plastic impulse that changes the handle
    # point's velocity by dv at t_lock; the next period's force changes by -(B + K (t_next - t_lock)) dv on top of
    # its smooth trend (second difference of the force elsewhere)
    (t_lock, q_l, u_minus, u_plus), = jumps
    dv = _cart_point(q_l, u_plus)[1] - _cart_point(q_l, u_minus)[1]
    k = int(t_lock / T)
    predicted = -(B + K * ((k + 1) * T - t_lock)) * dv
    second = log["force"][2:] - 2 * log["force"][1:-1] + log["force"][:-2]
    observed = second[k - 1]
    k_off = int(LOCKED[0][1] / T)
    smooth = np.max(np.abs(np.delete(second, [k - 1, k, k_off - 1, k_off, k_off + 1], axis=0)[40:240]))
    assert np.linalg.norm(predicted) > 20 * smooth
    assert np.linalg.norm(observed - predicted) < 0.05 * np.linalg.norm(predicted)
    # locked: the swivel rate is zero inside the interval, nonzero outside
    w4 = log["u"][:, 3]
    assert np.max(np.abs(w4[102:200])) < 1e-9 and np.max(np.abs(w4[50:100])) > 1e-2


@pytest.fixture(scope="module")
def plain_cart():
    """The cart with its caster always free on the C backend: two independent speeds (u1, w4), the dependent ones
    (v2, u2) from the rolling constraints."""
    s = build_cart()
    port = rt.add_coupler(s, "B", CART_POINT)
    return kane.derive(s).compile("c"), port


def _plain_cart_run(plain_cart, closed_path, path_, substeps, engine=rt.Engine.AUTO, duration=3.5):
    dyn, port = plain_cart
    coupler = rt.VirtualCoupler(dyn, port, rt.CouplerGains(K, B), max_force=200.0)
    q0, u0 = np.array([0.0, 0.0, 0.0, 0.3]), np.zeros(2)
    x0, _ = coupler.point_state(0.0, q0, u0)
    hand = rt.SimulatedHand(closed_path(x0, period=3.0, radius=0.1), max_force=200.0,
                            workspace=rt.Workspace((-3, -3, -3), (3, 3, 3)))
    loop = rt.RealtimeLoop(coupler, hand, q0, u0, options=_virtual(duration, substeps=substeps, engine=engine),
                           log=path_)
    return loop.run(), _read(path_)


def test_the_cart_is_passive_over_a_closed_hand_path(plain_cart, closed_path, tmp_path):
    """The hand pushes the cart round a closed path and back to rest: the energy that flowed in through the port is
    never negative and never less than what the virtual side keeps (cart + coupler spring); the work of the held
    coupler force on the handle point equals the change of the cart's energy as the RK4 step shrinks (the light
    caster's swivel makes a 1 ms step dissipative); the coupler's point (dependent speeds compiled with it, bound to
    the C stepper's state) is the hand-derived one."""
    dyn, _ = plain_cart
    if dyn.backend != "c":
        pytest.skip("no C compiler")
    gaps = {}
    for n in (10, 40):
        result, log = _plain_cart_run(plain_cart, closed_path, tmp_path / f"cart{n}.h5", n)
        assert result.status == "completed" and result.engine is rt.Engine.COMPILED and result.saturated == 0
        port_energy = log["port_energy"]
        assert port_energy.min() >= 0.0 and port_energy[-1] > 1.0
        stored = log["energy"] - log["energy"][0] + log["spring_energy"]
        assert np.all(port_energy >= stored - 1e-9)
        work = np.sum(np.einsum("ki,ki->k", log["force"][:-1], np.diff(log["point_position"], axis=0)))
        assert work > 1.0
        gaps[n] = abs(work - (log["energy"][-1] - log["energy"][0])) / work
    assert gaps[40] < 1e-2 and gaps[40] < gaps[10] / 2
    u_full = dyn.full_speeds(0.0, log["q"], log["u"])  # (N, 4): u1, v2, u2, w4 in the model's order
    assert [str(s) for s in dyn.model.u] == ["u1", "v2", "u2", "w4"]
    hand_derived = [_cart_point(q, u) for q, u in zip(log["q"], u_full)]
    np.testing.assert_allclose(log["point_position"], [x for x, _ in hand_derived], rtol=0, atol=1e-12)
    np.testing.assert_allclose(log["point_velocity"], [v for _, v in hand_derived], rtol=0, atol=1e-12)
    assert np.max(np.abs(log["point_velocity"])) > 0.05


def test_the_cart_on_the_compiled_and_python_engines_agree(plain_cart, closed_path, tmp_path):
    """The compiled period (C stepper, dependent speeds and point in two C calls on bound buffers) and the Python
    one (kane.simulate.Simulator, the coupler's checked point_state calls on fresh arrays) give one motion."""
    if plain_cart[0].backend != "c":
        pytest.skip("no C compiler")
    a, log_a = _plain_cart_run(plain_cart, closed_path, tmp_path / "c.h5", 4, rt.Engine.COMPILED, 1.0)
    b, log_b = _plain_cart_run(plain_cart, closed_path, tmp_path / "py.h5", 4, rt.Engine.PYTHON, 1.0)
    assert (a.engine, b.engine) == (rt.Engine.COMPILED, rt.Engine.PYTHON)
    assert np.max(np.abs(log_a["force"])) > 5.0
    np.testing.assert_allclose(log_a["q"], log_b["q"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(log_a["point_velocity"], log_b["point_velocity"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(log_a["force"], log_b["force"], rtol=0, atol=1e-7)


def test_disk_on_ramp_held_by_a_brake_released_then_held_and_lowered_by_the_hand(tmp_path):
    loaded = load_model(EXAMPLES / "disk_on_ramp.toml")
    s = loaded.system
    s.add_joint_lock("brake", "slide", transient=True)
    port = rt.add_coupler(s, "disk")  # the disk's centre
    eqs = kane.derive(s)
    m, r, g, theta = 2.0, 0.5, 9.81, 0.3
    release, lower = 0.1005, 0.15  # brake off [s]; the hand lowers the disk by 0.15 m down the ramp from 0.3 s
    sd = SwitchingDynamics(eqs, [Lock("brake", on=[(-1.0, release)])])
    coupler = rt.VirtualCoupler(sd, port, rt.CouplerGains(K, 40.0), max_force=100.0)
    q0, u0 = np.array([1.0, 0.0]), np.zeros(2)
    x0 = np.array([1.0, r, 0.0])
    np.testing.assert_allclose(coupler.point_state(0.0, q0, u0)[0], x0, atol=1e-15)

    def path(t):
        s_ = min(max((t - 0.3) / 0.4, 0.0), 1.0)  # smooth 0 -> 1 over 0.4 s
        p = x0 - lower * np.array([s_ * s_ * (3 - 2 * s_), 0.0, 0.0])
        v = -lower * np.array([6 * s_ * (1 - s_) / 0.4 if 0 < s_ < 1 else 0.0, 0.0, 0.0])
        return p, v

    hand = rt.SimulatedHand(path, mass=0.5, stiffness=400.0, damping=60.0, max_force=100.0,
                            workspace=rt.Workspace((-2, -2, -2), (2, 2, 2)))
    loop = rt.RealtimeLoop(coupler, hand, q0, u0, options=_virtual(1.8), log=tmp_path / "disk.h5")
    result = loop.run()
    assert result.status == "completed"
    assert [(e.kind, round(e.t, 12)) for e in loop.plant.events] == [("unlock", release)]
    log = _read(tmp_path / "disk.h5")
    held = log["t"] < release
    assert np.all(log["q"][held, 0] == 1.0) and np.all(log["force"][held] == 0.0)  # the brake holds it all
    assert np.min(log["q"][~held, 0]) < 1.0 - 1e-3  # released: it rolls down onto the coupler
    # held by the hand at rest: the coupler carries the weight along the ramp, m g sin(theta), and the disk's
    # centre sits below the hand's target by that force through the hand's spring and the coupler in series
    weight = m * g * math.sin(theta)
    assert log["force"][-1, 0] == pytest.approx(weight, rel=1e-3)
    assert result.q[0] == pytest.approx(1.0 - lower - weight * (1 / 400.0 + 1 / K), abs=1e-5)
    assert result.u[0] == pytest.approx(0.0, abs=1e-4) and result.u[1] == pytest.approx(-result.u[0], abs=1e-12)


def test_restart_settles_the_mode_when_the_held_force_steps(cart):
    """A force stepped at a period's start can make a stick need more than mu_s N at once: no event function crosses
    zero inside the period, so SwitchingSimulator.restart (what the plant calls each period) settles the mode."""
    eqs, _ = cart
    names = [str(s) for s in eqs.model.inputs]
    rule = Coulomb("caster_stick", normal=1.0, mu_s=0.06, mu_k=0.04)  # swivel friction torque capacity [N m]
    runs = {}
    for restart in (False, True):
        w = eqs.model.input_values()
        runner = SwitchingSimulator(eqs, [0.0, 0.0, 0.0, 0.3], np.zeros(4), [rule],
                                    switching_run_options(method="rk4", dt=T), SwitchingSettings(record_forces=False),
                                    inputs=lambda t, q, u: w)
        assert runner.dynamics.mode_name == "caster_stick"  # at rest the swivel sticks
        runner.advance(0.01)
        w[names.index("coupler_fy")] = 30.0  # a sideways shove at the handle
        if restart:
            runner.restart()
        else:
            runner.sim.reset()
            torque = abs(float(runner.dynamics.constraint_forces(0.01, *runner.sim.state, None, w)["caster_stick"][0]))
        runner.advance(0.02)
        runs[restart] = runner
    assert torque > 0.06  # sticking would need more than mu_s N
    assert runs[False].dynamics.mode_name == "caster_stick"  # missed without the restart
    assert runs[True].dynamics.mode_name.startswith("slip(caster_stick")
    assert [(e.kind, e.t) for e in runs[True].records] == [("slip", 0.01)]
    assert abs(runs[True].sim.state[1][3]) > 1e-3  # the caster swivels


# ---- multi-rate ----------------------------------------------------------------------------------------------
def _chain_loop(chain, closed_path, every=1, substeps=1, gains=(2000.0, 10.0), duration=2.5):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(*gains), max_force=50.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)
    hand = rt.SimulatedHand(closed_path(x0, period=2.0, radius=0.3), max_force=50.0,
                            workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    loop = rt.RealtimeLoop(cp, hand, q0, u0, options=_virtual(duration, substeps=substeps, dynamics_every=every),
                           log=None)
    rows = []
    original = loop.plant.state

    def state():  # what the coupler sees each period
        t, q, u = original()
        rows.append((t, np.array(q), np.array(u)))
        return t, q, u

    loop.plant.state = state
    return loop.run(), rows


def _every_8th(rows):
    """The states the coupler saw at periods 0, 8, 16, ... (by their time), one per period."""
    by_period = {round(t / T): q for t, q, _ in rows}
    return np.array([q for k, q in sorted(by_period.items()) if k % 8 == 0])


def test_substeps_equal_an_offline_rk4_run_with_the_force_held(chain, closed_path):
    """substeps = 4: the loop's state equals kane.simulate's RK4 with dt = T / 4 driven by the loop's own forces,
    held over each period."""
    dyn, port = chain
    forces = []
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 10.0), max_force=50.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)

    class Recording(rt.SimulatedHand):
        def write_force(self, t, force):
            forces.append(-np.asarray(force, dtype=float))
            super().write_force(t, force)

    hand = Recording(closed_path(x0, period=2.0, radius=0.3), max_force=50.0,
                     workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    result = rt.RealtimeLoop(cp, hand, q0, u0, options=_virtual(0.3, substeps=4)).run()
    forces = forces[:300]  # the last write is the zero force at the stop
    q, u = q0, u0
    for k, f in enumerate(forces):
        inputs = dict(zip(port.inputs, f))
        traj = kane.simulate.simulate(dyn, (k * T, (k + 1) * T), q, u, method="rk4", dt=T / 4, inputs=inputs,
                                      record_energy=False)
        q, u = traj.q[-1], traj.u[-1]
    assert np.max(np.abs(forces)) > 0.5
    np.testing.assert_allclose(result.q, q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.u, u, rtol=0, atol=1e-9)


def test_slow_dynamics_converge_to_the_single_rate_loop_and_stay_passive(chain, closed_path):
    single, rows1 = _chain_loop(chain, closed_path, every=1)
    errors = {}
    for k in (8, 4, 2):
        res, rows = _chain_loop(chain, closed_path, every=k)
        assert res.status == "completed"
        # with gains inside the slow bound B >= K k T / 2 (10 >= 2000 * 8e-3 / 2 = 8), the hand's closed path puts
        # energy in and never gets more back
        assert res.port_energy > 0.1
        q_k, q_1 = _every_8th(rows), _every_8th(rows1)  # where every run has a true (not extrapolated) state
        assert q_k.shape == q_1.shape == (313, 7)
        errors[k] = np.max(np.abs(q_k - q_1))
    assert errors[8] > errors[4] > errors[2] > 0.0
    # converging faster than first order in k T (measured: 3.4e-4, 1.2e-4, 3.5e-5; halving k T divides the error by
    # 2.9 and 3.4, where a first-order scheme would divide it by 2)
    assert errors[2] < 5e-5
    assert errors[8] / errors[4] > 2.5 and errors[4] / errors[2] > 2.5
    # k = 1 is the single-rate loop itself
    assert single.port_energy > 0.1


def test_slow_dynamics_port_energy_is_never_negative_along_the_path(chain, closed_path, tmp_path):
    dyn, port = chain
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2000.0, 10.0), max_force=50.0)
    q0, u0 = np.zeros(7), np.zeros(7)
    x0, _ = cp.point_state(0.0, q0, u0)
    hand = rt.SimulatedHand(closed_path(x0, period=2.0, radius=0.3), max_force=50.0,
                            workspace=rt.Workspace((-2, -2, -9), (2, 2, 0)))
    rt.RealtimeLoop(cp, hand, q0, u0, options=_virtual(2.5, dynamics_every=8), log=tmp_path / "slow.h5").run()
    log = _read(tmp_path / "slow.h5")
    assert log["port_energy"].min() >= 0.0 and log["port_energy"][-1] > 0.1
    # the plant's own states at its steps, kept in the log: at each step's start (every 8th row) the coupler sees
    # the plant's state itself, not an extrapolation, so those rows hold the same state and energy
    steps = rt.load_realtime_log(tmp_path / "slow.h5").steps
    assert steps.t.shape == (313,) and steps.t[-1] == pytest.approx(312 * 8 * T, abs=1e-12)
    np.testing.assert_array_equal(steps.q, log["q"][::8])  # 2500 rows: the last 4 run on from the last step
    np.testing.assert_array_equal(steps.u, log["u"][::8])
    np.testing.assert_allclose(steps.energy, log["energy"][::8], rtol=1e-13, atol=1e-13)


def test_bad_multirate_and_switching_options_are_refused(cart):
    with pytest.raises(ArgumentError, match="dynamics_every must be an integer >= 1"):
        rt.LoopOptions(dynamics_every=0)
    with pytest.raises(ArgumentError, match="max_switches"):
        SwitchingOptions(max_switches=0)
    eqs, port = cart
    q0, u0 = np.array([0.0, 0.0, 0.0, 0.3]), np.zeros(4)
    hand = rt.SimulatedHand(_cart_path(_cart_point(q0, u0)[0]))
    bad = SwitchingDynamics(eqs, [Lock("brake", on=[(0.1, 0.2)])])
    coupler = rt.VirtualCoupler(bad, port, rt.CouplerGains(K, B))
    with pytest.raises(kane.ModelError, match="'brake', which is not declared; declared constraints: back_wheels"):
        rt.RealtimeLoop(coupler, hand, q0, u0, options=_virtual(0.1))
    coupler = rt.VirtualCoupler(SwitchingDynamics(eqs, [Lock("caster_stick", on=LOCKED)]), port, rt.CouplerGains(K, B))
    with pytest.raises(ArgumentError, match="engine 'compiled' needs dynamics on the C backend"):
        rt.RealtimeLoop(coupler, hand, q0, u0, options=_virtual(0.1, engine=rt.Engine.COMPILED))
    with pytest.raises(ArgumentError, match=r"u0 \(2,\); expected \(4,\) and \(4,\)"):  # u: all the speeds
        rt.RealtimeLoop(coupler, hand, q0, u0[:2], options=_virtual(0.1))


def _read(path):
    with h5py.File(path, "r") as f:
        n = int(f["n_committed"][0])
        return {k: f[k][:n] for k in f if k not in ("n_committed", "events", "dynamics")}
