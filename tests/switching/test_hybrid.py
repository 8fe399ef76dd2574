"""The hybrid state machine (kane.switching.hybrid): pre-derived modes switched at events against on-line
recombination (kane.switching) on the shopping cart whose caster locks and unlocks, a pendulum whose tip
hits the floor (a zero-DOF resting mode, pulled off again), a disk on a ramp that slips then rolls (slip modes run
on line), and bad input."""

import pathlib
import sys
import math

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.simulate import Event
from kane.switching.hybrid import HybridSimulator, mode_system, simulate_hybrid
from kane.switching.shapes import Plane, Point, contact
from kane.switching import Coulomb, Lock, UnilateralContact, simulate_switching
from kane.switching.settings import switching_run_options

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _models import cart  # noqa: E402

G = 9.81
TOL = {"rtol": 1e-10, "atol": 1e-12}


def same_samples(a, b, atol):
    """Both trajectories are sampled at the same times (event times agree to the root finder's tolerance; a jump
    shows as two samples at one time, a mere round-off change may show as one) with states within atol."""
    assert a.q_names == b.q_names and a.u_names == b.u_names
    for x, y in ((a, b), (b, a)):
        seen = {}
        for t, q, u in zip(x.t, x.q, x.u):
            k = np.flatnonzero(np.abs(y.t - t) <= 1e-9)
            assert k.size, f"no sample at t = {t}"
            j = k[min(seen.get(k[0], 0), k.size - 1)]
            seen[k[0]] = seen.get(k[0], 0) + 1
            assert np.max(np.abs(q - y.q[j])) < atol and np.max(np.abs(u - y.u[j])) < atol, t


def same_events(a, b, t_tol=1e-9):
    assert [(e.name, e.kind) for e in a.events] == [(e.name, e.kind) for e in b.events]
    for x, y in zip(a.events, b.events):
        assert x.t == pytest.approx(y.t, abs=t_tol)
        assert np.allclose(x.data["impulse"], y.data["impulse"], rtol=1e-7, atol=1e-9)
    assert [m for _, _, m in a.modes] == [m for _, _, m in b.modes]


# ---- the shopping cart (seed 000 Ex. 3) --------------------------------------------------------------------
def push(t, q=None, u=None):
    return {"F": 12.0 * math.sin(1.3 * t) + 4.0, "tau": 3.0 * math.cos(2.1 * t)}


@pytest.fixture(scope="module")
def cart_run():
    system = cart("transient")
    eqs = kane.derive(system)
    q0 = np.array([0.0, 0.0, 0.0, 0.3])
    u0 = kane.derive(cart("none")).compile().full_speeds(0.0, q0, np.array([0.5, 0.2]))
    rules = [Lock("caster_stick", on=[(0.5, 1.2), (2.0, 2.6)])]
    online = simulate_switching(eqs, (0.0, 3.0), q0, u0, rules, inputs=push, output_dt=0.05, **TOL)
    return system, eqs, q0, u0, rules, online


def test_mode_system_makes_the_mode_constraints_permanent_and_drops_the_others():
    s = cart("transient")
    locked, free = mode_system(s, ["caster_stick"]), mode_system(s, [])
    assert [c[3] for c in locked._constraints] == [False, False, False] and len(free._constraints) == 2
    assert [c[3] for c in s._constraints] == [False, False, True]  # the original is untouched
    assert kane.derive(locked).u_independent == kane.derive(cart("permanent")).u_independent
    with pytest.raises(kane.ModelError, match="not transient constraints"):
        mode_system(s, ["back_wheels"])


def test_cart_pre_derived_modes_give_the_on_line_trajectory(cart_run):
    system, eqs, q0, u0, rules, online = cart_run
    runner = HybridSimulator(system, q0, u0, rules, switching_run_options(output_dt=0.05, **TOL), equations=eqs,
                             modes=[(), ("caster_stick",)], inputs=push)
    assert runner.n_derived == 2
    assert {k: d.n_u for k, d in runner.mode_equations.items()} == {(): 2, ("caster_stick",): 1}
    # the free cart's dependent speeds: the rear axle's lateral speed and the swivel rate, whose coefficients in the
    # rolling rows are constants (the yaw rate's coefficient in the caster's row vanishes where the caster lines up)
    assert set(runner.mode_equations[()].u_dependent_names) == {"v2", "w4"}
    traj = runner.run(3.0)
    assert runner.n_derived == 2  # nothing derived during the run
    same_samples(traj, online, atol=1e-7)
    same_events(traj, online)
    assert [(e.kind, round(e.t, 12)) for e in traj.events] == [("lock", 0.5), ("unlock", 1.2), ("lock", 2.0),
                                                               ("unlock", 2.6)]
    assert [m for _, _, m in traj.modes] == ["free", "caster_stick", "free", "caster_stick", "free"]
    for (a, b, m), (a2, b2, m2) in zip(traj.modes, online.modes):
        assert (a, b, m) == (pytest.approx(a2, abs=1e-12), pytest.approx(b2, abs=1e-12), m2)
    assert np.allclose(traj.energy, online.energy, rtol=1e-8, atol=1e-8)
    assert np.allclose(traj["lambda_caster_stick"], online["lambda_caster_stick"], rtol=1e-6, atol=1e-8)
    # the minimal ODE takes fewer evaluations than the on-line run projected every step
    assert traj.stats.n_fev < online.stats.n_fev


def test_cart_modes_from_a_user_function_derived_on_first_entry(cart_run, tmp_path):
    system, eqs, q0, u0, rules, online = cart_run
    built = []

    def modes(system_, active):
        built.append(tuple(active))
        return cart("permanent" if "caster_stick" in active else "none")

    traj = simulate_hybrid(system, (0.0, 3.0), q0, u0, rules, equations=eqs, mode_system=modes, inputs=push,
                           output_dt=0.05, inputs_need_speeds=False, path=tmp_path / "cart.h5", **TOL)
    assert built == [(), ("caster_stick",)]
    same_samples(traj, online, atol=1e-7)
    saved = kane.load_trajectory(tmp_path / "cart.h5")
    assert np.array_equal(saved.u, traj.u) and [e.kind for e in saved.events] == [e.kind for e in traj.events]


# ---- a pendulum whose tip hits the floor -------------------------------------------------------------------
M_ROD, L_ROD, Y_FLOOR = 1.0, 0.5, -0.8  # a uniform rod of length 2 L hinged at one end, the tip hits y = -0.8


def pendulum():
    s = kane.System("pendulum", gravity=(0, -G, 0))
    tau = s.input("tau")
    s.add_body("rod", mass=M_ROD, com=(L_ROD, 0, 0),
               inertia=(1e-4, M_ROD * (2 * L_ROD)**2 / 12, M_ROD * (2 * L_ROD)**2 / 12))
    s.add_joint("ground", "rod", J.Revolute("z"), name="hinge", coordinates=["th"], speeds=["w"])
    s.add_joint_torque("hinge", [tau])
    tip = contact(s, Point("rod", (2 * L_ROD, 0, 0)), Plane((0, 1, 0), Y_FLOOR), "tip")
    return s, tip


def test_pendulum_hitting_the_floor_same_impacts_rest_and_release_both_ways():
    system, tip = pendulum()
    eqs = kane.derive(system)
    e, v_min, t_pull, k = 0.5, 0.05, 3.0, 2.0
    rules = [tip.unilateral(e, v_min)]

    def inputs(t, q, u):
        return {"tau": k * (t - t_pull) if t > t_pull else 0.0}

    th_s = math.asin(Y_FLOOR / (2 * L_ROD))
    t_off = t_pull + M_ROD * G * L_ROD * math.cos(th_s) / k  # the floor's reaction at the tip reaches zero
    span = (0.0, t_off + 0.3)
    online = simulate_switching(eqs, span, [0.0], [0.0], rules, inputs=inputs, output_dt=0.01, **TOL)
    runner = HybridSimulator(system, [0.0], [0.0], rules, switching_run_options(output_dt=0.01, **TOL), equations=eqs,
                             inputs=inputs)
    hybrid = runner.run(span[1])
    assert set(runner.mode_equations) == {(), ("tip",)} and runner.mode_equations[("tip",)].n_u == 0
    # the first impact against an independent run of the free pendulum with an event at the floor
    free = kane.derive(mode_system(system, [])).compile()
    ref = kane.simulate.simulate(free, (0.0, 2.0), [0.0], [0.0], rtol=1e-11, atol=1e-12,
                                 events=[Event("floor", lambda t, q, u: tip.gap(t, q), direction=-1, terminal=True)])
    assert hybrid.events[0].kind == "impact" and online.events[0].kind == "impact"
    assert hybrid.events[0].t == pytest.approx(ref.t[-1], abs=1e-9)
    assert online.events[0].t == pytest.approx(ref.t[-1], abs=1e-9)
    same_events(hybrid, online, t_tol=1e-8)
    kinds = [ev.kind for ev in hybrid.events]
    assert kinds[-2:] == ["impose", "delete"] and set(kinds[:-2]) == {"impact"}
    assert hybrid.events[-1].t == pytest.approx(t_off, abs=1e-8)
    same_samples(hybrid, online, atol=1e-7)
    resting = (hybrid.t > hybrid.events[-2].t) & (hybrid.t < t_off)
    assert np.allclose(hybrid["th"][resting], th_s, atol=1e-9) and np.allclose(hybrid["w"][resting], 0.0)
    assert np.allclose(hybrid["lambda_tip"][resting], online["lambda_tip"][resting], rtol=1e-8, atol=1e-10)


# ---- a holonomic mode: its positions are projected onto the constraint ------------------------------------
def test_a_ladder_sliding_down_a_wall_with_its_foot_held_on_the_floor_by_a_locked_loop_closure():
    """The top slides along the wall (a prismatic y joint), the foot is held on the floor y = 0 by a transient
    loop closure locked for the whole run: a pre-derived 1-DOF mode with a position-level constraint."""
    L = 0.5
    s = kane.System("ladder", gravity=(0, -G, 0))
    s.add_body("top", mass=0.2, inertia=(1e-4,) * 3)
    s.add_body("rod", mass=1.0, com=(L, 0, 0), inertia=(1e-4, (2 * L)**2 / 12, (2 * L)**2 / 12))
    s.add_joint("ground", "top", J.Prismatic("y"), coordinates=["s"], speeds=["v"])
    s.add_joint("top", "rod", J.Revolute("z"), coordinates=["th"], speeds=["w"])
    s.add_loop_closure("foot", "rod", (2 * L, 0, 0), "ground", (0, 0, 0), directions=[(0, 1, 0)], transient=True)
    th0 = -0.6
    q0, u0 = [-2 * L * math.sin(th0), th0], [0.0, 0.0]
    rules = [Lock("foot", on=[(0.0, 10.0)])]
    hybrid = simulate_hybrid(s, (0.0, 0.4), q0, u0, rules, output_dt=0.01, **TOL)
    online = simulate_switching(kane.derive(s), (0.0, 0.4), q0, u0, rules, output_dt=0.01, **TOL)
    assert [m for _, _, m in hybrid.modes] == ["foot"] and hybrid.events == []
    same_samples(hybrid, online, atol=1e-8)
    foot = hybrid["s"] + 2 * L * np.sin(hybrid["th"])
    assert np.max(np.abs(foot)) < 1e-12 and hybrid["s"][-1] < q0[0] - 0.05  # sliding down, foot on the floor
    assert np.ptp(hybrid.energy) < 1e-8


# ---- slip modes run on line, stick modes pre-derived ------------------------------------------------------
def disk_on_ramp():
    s = kane.System("disk_on_ramp")
    m, J_, r, th = (s.parameter(n, v) for n, v in (("m", 2.0), ("J", 0.25), ("r", 0.5), ("theta", 0.3)))
    s.gravity = (-G * sp.sin(th), -G * sp.cos(th), 0)
    s.add_body("slider", mass=0)
    s.add_body("disk", mass=m, inertia=(J_, J_, J_))
    s.add_joint("ground", "slider", J.Prismatic("x"), coordinates=["q1"], speeds=["u1"], parent_point=(0, r, 0))
    s.add_joint("slider", "disk", J.Revolute("z", speeds=J.SpeedMap(Y=((r,),))), coordinates=["q2"],
                speeds=["u2"])
    s.add_motion_constraint("rolling", [sp.Symbol("u1") + sp.Symbol("u2")], transient=True)
    return s


def test_disk_released_spinning_backwards_slips_on_line_then_rolls_pre_derived():
    system = disk_on_ramp()
    mu_s, mu_k, w0 = 0.2, 0.15, -3.0
    N = 2.0 * G * math.cos(0.3)
    a1, a2 = -G * math.sin(0.3) + mu_k * G * math.cos(0.3), mu_k * N * 0.5**2 / 0.25
    rule = Coulomb("rolling", normal=N, mu_s=mu_s, mu_k=mu_k)
    runner = HybridSimulator(system, [0.0, 0.0], [0.0, w0], [rule], switching_run_options(output_dt=0.05),
                             modes=[("rolling",)], on_missing="error")
    traj = runner.run(3.0)
    (stick,) = traj.events
    assert stick.kind == "stick" and stick.t == pytest.approx(-w0 / (a1 + a2), abs=1e-9)
    assert [m for _, _, m in traj.modes] == ["slip(rolling-)", "rolling"]
    online = simulate_switching(kane.derive(system), (0.0, 3.0), [0.0, 0.0], [0.0, w0], [rule], output_dt=0.05)
    same_samples(traj, online, atol=1e-8)


def test_bad_input_is_refused_with_clear_messages():
    system = cart("transient")
    q0, u0 = np.zeros(4), np.zeros(4)
    with pytest.raises(kane.ModelError, match="kane.System"):
        HybridSimulator(kane.derive(system), q0, u0)
    with pytest.raises(kane.ModelError, match="on_missing"):
        HybridSimulator(system, q0, u0, on_missing="guess")
    with pytest.raises(kane.ModelError, match="not transient constraints"):
        HybridSimulator(system, q0, u0, modes=[("caster_wheel",)])
    with pytest.raises(kane.KaneError, match="not derived beforehand"):
        HybridSimulator(system, q0, u0, [Lock("caster_stick", on=[(0.0, 1.0)])], modes=[()], on_missing="error")
    with pytest.raises(kane.ModelError, match="not declared"):
        HybridSimulator(system, q0, u0, [UnilateralContact("floor", gap=lambda t, q: q[0])])
