"""Compiled modes in the real-time loop (kane.realtime.mode_plant), VIRTUAL clock: the same run as the on-line
switching plant (a second formulation of the same switched equations, RK4 at the same step), the choice of
dependent speeds that stays conditioned over the motion, slip on line; a mode without free speed compiled too."""

import sys
from pathlib import Path

import numpy as np
import pytest

import kane
from kane import realtime as rt
from kane.io import load_model
from kane.realtime import SwitchingDynamics
from kane.realtime.mode_plant import ModePlant
from kane.switching import robust_dependent
from kane.switching import Coulomb, Lock, OnlineDynamics
from kane.switching.model_table import switching_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from shopping_cart import build as build_cart  # noqa: E402

T = 1e-3
POINT = (-0.3, 0.0, 0.0)
Q0 = np.array([0.0, 0.0, 0.0, 0.3])


def _cart():
    s = build_cart()
    s.add_joint_lock("caster_stick", "swivel", transient=True)
    port = rt.add_coupler(s, "B", POINT)
    return s, kane.derive(s), port


def _path(x0):
    """Forward with a sideways swing that swivels the caster (m, m/s)."""
    def path(t):
        w = 2 * np.pi * 1.5
        return (x0 + np.array([0.4 * t * t, 0.04 * np.sin(w * t), 0.0]),
                np.array([0.8 * t, 0.04 * w * np.cos(w * t), 0.0]))
    return path


def _run(dynamics, port, duration, gains=(2000.0, 20.0)):
    cp = rt.VirtualCoupler(dynamics, port, rt.CouplerGains(*gains), max_force=200.0)
    x0, _ = cp.point_state(0.0, Q0, np.zeros(4))
    loop = rt.RealtimeLoop(cp, rt.SimulatedHand(_path(x0), max_force=200.0), Q0, np.zeros(4),
                           options=rt.LoopOptions(rate=1 / T, duration=duration, clock=rt.ClockMode.VIRTUAL))
    states = []
    plant = loop.plant
    advance = plant.advance

    def record(period, n, force):  # the state and force of every period, as the log has them
        t, q, u = plant.state()
        states.append(np.concatenate([[t], q, u, force]))
        advance(period, n, force)

    plant.advance = record
    result = loop.run()
    return result, loop.plant, np.array(states)


def test_compiled_modes_run_the_cart_as_the_online_plant_does():
    s, eqs, port = _cart()
    rules = [Lock("caster_stick", on=[(0.1005, 0.3003), (0.5002, 0.6001)])]
    r_on, p_on, x_on = _run(SwitchingDynamics(eqs, rules), port, 0.8)
    r_c, p_c, x_c = _run(SwitchingDynamics(eqs, rules, system=s), port, 0.8)
    assert isinstance(p_c, ModePlant) and not isinstance(p_on, ModePlant)
    assert r_on.status == r_c.status == "completed" and p_c.online_periods == 0
    assert set(p_c.modes) == {frozenset(), frozenset({"caster_stick"})}
    events = [(e.kind, round(e.t, 12)) for e in p_on.events]
    assert events == [("lock", 0.1005), ("unlock", 0.3003), ("lock", 0.5002), ("unlock", 0.6001)]
    assert [(e.kind, round(e.t, 12)) for e in p_c.events] == events
    # the lock's plastic impulse: the same jump of the speeds from both formulations
    for a, b in zip(p_on.events, p_c.events):
        if a.kind == "lock":
            np.testing.assert_allclose(b.data["impulse"], a.data["impulse"], rtol=1e-7, atol=1e-10)
    assert np.max(np.abs(x_on[:, 9:])) > 5.0  # the hand pushed
    # the same equations by RK4 at the same step in two sets of speeds: equal up to the integration error
    assert np.max(np.abs(x_c - x_on)) < 1e-8
    assert np.max(np.abs(x_c[101:300, 8])) < 1e-12 and np.max(np.abs(x_c[40:100, 8])) > 1e-2  # swivel rate


def test_dependent_speeds_stay_conditioned_where_the_caster_lines_up():
    s, eqs, _ = _cart()
    online = OnlineDynamics(eqs)
    chosen = robust_dependent(online, (), Q0)
    # hand check: the rear axle's lateral speed v2 = 0 and the caster's rolling row, whose coefficient of the
    # swivel rate w4 is the trail (a constant): the block of (v2, w4) is never singular; the yaw rate u2's
    # coefficient in that row changes sign with the swivel angle, so a block with u2 turns singular somewhere
    assert set(chosen) == {"v2", "w4"}
    names = online.u_names

    def det(dep, q):
        A = online.constraint_rows(0.0, q, online.permanent)[0]
        return np.linalg.det(A[:, [names.index(n) for n in dep]]) / np.linalg.norm(A) ** 2

    swivels = np.linspace(-np.pi, np.pi, 721)
    good = np.array([det(("v2", "w4"), [0.0, 0.0, 0.0, a]) for a in swivels])
    bad = np.array([det(("v2", "u2"), [0.0, 0.0, 0.0, a]) for a in swivels])
    assert np.all(good * good[0] > 0.0) and np.abs(good).min() > 0.5 * np.abs(good).max()  # one sign, never small
    assert bad.min() < 0.0 < bad.max()  # changes sign: singular between (continuity)
    assert abs(bad[np.argmin(np.abs(swivels - Q0[3]))]) > 0.1 * np.abs(good).max()  # though fine at q0


def test_a_slip_mode_runs_online_and_agrees_with_the_online_plant():
    s, eqs, port = _cart()
    rules = [Coulomb("caster_stick", normal=1.0, mu_s=0.3, mu_k=0.2)]  # swivel friction torque capacity [N m]
    r_on, p_on, x_on = _run(SwitchingDynamics(eqs, rules), port, 0.8)
    r_c, p_c, x_c = _run(SwitchingDynamics(eqs, rules, system=s), port, 0.8)
    kinds = [e.kind for e in p_on.events]
    assert kinds == ["slip", "reverse", "stick", "slip"] and [e.kind for e in p_c.events] == kinds
    for a, b in zip(p_on.events, p_c.events):
        assert b.t == pytest.approx(a.t, abs=1e-12)
    assert 0 < p_c.online_periods < len(x_c) - 10  # slipping on line, stuck (0.635 s to 0.656 s) in C
    assert np.max(np.abs(x_c - x_on)) < 1e-9


def test_a_mode_without_free_speed_is_compiled_and_runs_as_the_online_plant_does():
    # the disk on its ramp held by a brake on the slide: rolling and the brake leave no free speed, so the held
    # mode's compiled equations step q alone (q' = 0 here) while the hand pulls on the coupler
    loaded = load_model(EXAMPLES / "disk_on_ramp.toml")
    s = loaded.system
    s.add_joint_lock("brake", "slide", transient=True)
    port = rt.add_coupler(s, "disk")
    eqs = kane.derive(s)
    rules = [Lock("brake", on=[(-1.0, 0.1005), (0.2003, 1.0)])]
    runs = []
    for system in (None, s):  # on line, then with every mode compiled to C
        cp = rt.VirtualCoupler(SwitchingDynamics(eqs, rules, system=system), port, rt.CouplerGains(2000.0, 40.0),
                               max_force=100.0)
        hand = rt.SimulatedHand(lambda t: (np.array([1.0, 0.5, 0.0]), np.zeros(3)), max_force=100.0,
                                workspace=rt.Workspace((-2, -2, -2), (2, 2, 2)))
        loop = rt.RealtimeLoop(cp, hand, [1.0, 0.0], [0.0, 0.0],
                               options=rt.LoopOptions(rate=1 / T, duration=0.3, clock=rt.ClockMode.VIRTUAL))
        runs.append((loop.run(), loop.plant))
    (r_on, p_on), (r_c, p_c) = runs
    assert isinstance(p_c, ModePlant) and set(p_c.modes) == {frozenset(), frozenset({"brake"})}
    assert r_c.status == "completed" and p_c.online_periods == 0
    events = [(e.kind, round(e.t, 12)) for e in p_on.events]
    assert events == [("unlock", 0.1005), ("lock", 0.2003)] and [(e.kind, round(e.t, 12)) for e in p_c.events] == events
    # held: the disk stays where it was caught, its speeds zero (rolling: u2 = -u1 throughout)
    assert r_c.q[0] < 1.0 - 1e-3 and r_c.u.tolist() == [0.0, 0.0]
    np.testing.assert_allclose(r_c.q, r_on.q, rtol=0, atol=1e-12)
    assert r_c.port_energy == pytest.approx(r_on.port_energy, rel=1e-9)


def test_a_mode_whose_dependent_block_turns_singular_is_dropped_with_a_warning():
    from scipy.optimize import brentq

    from kane.switching import mode_system

    s, eqs, port = _cart()
    bad = kane.derive(mode_system(s, ()), dependent=["v2", "u2"]).compile("c")  # singular where the caster lines up
    sd = SwitchingDynamics(eqs, [Lock("caster_stick", on=[(0.5, 0.6)])], system=s)
    sd.modes = {frozenset(): bad}  # given modes are used as they are
    cp = rt.VirtualCoupler(sd, port, rt.CouplerGains(2000.0, 20.0), max_force=200.0)
    x0, _ = cp.point_state(0.0, Q0, np.zeros(4))
    loop = rt.RealtimeLoop(cp, rt.SimulatedHand(_path(x0), max_force=200.0), Q0, np.zeros(4),
                           options=rt.LoopOptions(rate=1 / T, duration=0.05, clock=rt.ClockMode.VIRTUAL))
    plant = loop.plant
    mode = plant.modes[frozenset()]
    online = plant.runner.dynamics
    names = online.u_names

    def det(swivel):  # the (v2, u2) block of the rolling rows: its sign change is the singular swivel angle
        A = online.constraint_rows(0.0, [0.0, 0.0, 0.0, swivel], online.permanent)[0]
        return np.linalg.det(A[:, [names.index("v2"), names.index("u2")]])

    grid = np.linspace(-np.pi, np.pi, 73)
    k = next(i for i in range(72) if det(grid[i]) * det(grid[i + 1]) < 0)
    singular = brentq(det, grid[k], grid[k + 1], xtol=1e-15)
    assert plant._conditioned(mode, 0.0, Q0)  # fine where the run starts
    with pytest.warns(RuntimeWarning, match=r"dependent speeds \['v2', 'u2'\] of mode free have condition number"):
        assert not plant._conditioned(mode, 0.0, np.array([0.0, 0.0, 0.0, singular]))
    assert plant.modes == {}  # dropped: the free mode's periods run on line from now on
    result = loop.run()
    assert result.status == "completed" and plant.online_periods == 50


def test_an_event_that_ends_a_period_is_handled_once():
    # the caster-lock cart with the dynamics every 4 periods: the lock's window edges (2 s, 4 s) fall on the ends of
    # the 4 ms steps; the edge at 4 s, located a hair before its time (3.999999999999998 s), is still on its surface
    # when the next step starts and must not switch again
    loaded = load_model(EXAMPLES / "shopping_cart_caster_lock.toml")
    port = rt.add_coupler(loaded.system, "B", POINT)
    dyn = SwitchingDynamics(loaded.derive(), switching_rules(loaded), system=loaded.system)
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names])
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(500.0, 5.0), max_force=40.0, params=dict(loaded.parameters))
    x0, _ = cp.point_state(0.0, q0, np.zeros(dyn.n_u))
    hand = rt.SimulatedHand(lambda t: (x0 + [0.2 * t, 0.0, 0.0], np.array([0.2, 0.0, 0.0])), max_force=40.0)
    loop = rt.RealtimeLoop(cp, hand, q0, np.zeros(dyn.n_u), params=dict(loaded.parameters),
                           options=rt.LoopOptions(rate=1 / T, duration=4.1, dynamics_every=4,
                                                  clock=rt.ClockMode.VIRTUAL))
    loop.run()
    assert [(e.kind, round(e.t, 9)) for e in loop.plant.events] == [("lock", 2.0), ("unlock", 4.0)]


def test_a_dropped_repeat_of_a_wheel_row_runs_the_compiled_modes_of_the_cart_without_it():
    # the back wheels' knife edge declared twice and dropped: every mode is still compiled (derived dropping it
    # again), the guard reads the kept rows only, and the run is the cart's without the repeat
    s, eqs, port = _cart()
    twice = build_cart()
    twice.add_no_slip("back_wheels_again", "B", (0, 0, 0), (0, 1, 0))
    twice.add_joint_lock("caster_stick", "swivel", transient=True)
    rt.add_coupler(twice, "B", POINT)
    with pytest.warns(kane.symbolic.RedundantConstraintWarning, match="'back_wheels_again' row 0"):
        eqs_twice = kane.derive(twice, redundant="drop")
    rules = [Lock("caster_stick", on=[(0.1005, 0.3003)])]
    r_ref, p_ref, x_ref = _run(SwitchingDynamics(eqs, rules, system=s), port, 0.4)
    r_two, p_two, x_two = _run(SwitchingDynamics(eqs_twice, rules, system=twice), port, 0.4)
    assert isinstance(p_two, ModePlant) and set(p_two.modes) == {frozenset(), frozenset({"caster_stick"})}
    assert r_two.status == "completed" and p_two.online_periods == 0
    for mode in p_two.modes.values():
        assert len(mode.rows) == len(mode.dep)  # a square dependent block: the repeated row is not in it
    np.testing.assert_allclose(x_two, x_ref, rtol=0, atol=1e-9)
