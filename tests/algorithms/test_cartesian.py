"""Absolute Cartesian coordinates with multipliers and Baumgarte (seed 003) against ABA, RNEA and embedded Kane.

Body accelerations agree with ABA's (mapped to bodies) to 1e-8 on a revolute chain and on a seeded random tree
with every joint kind and every kind of load; the joints' transmitted forces (T lambda plus actuation) equal
RNEA's. On a closed four-bar over 20 s, Baumgarte keeps the Cartesian constraint errors bounded but measurable,
while the embedded Kane equations with position projection hold the closure to round-off. A configuration where
the constraint rows lose rank raises a KaneError naming the time and the state.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import RecursiveDynamics
from kane.algorithms.cartesian import CartesianDynamics, ConstraintRankError
from kane.spatial import quaternion_to_rotation
from kane.simulate import assemble, make_projection, simulate

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _trees import assert_close, random_state, random_tree


def revolute_chain(n=5):
    s = kane.System("chain", gravity=(0, 0, -9.81))
    parent = "ground"
    for i in range(n):
        s.add_body(f"B{i}", mass=1.0 + 0.1 * i, com=(0.1, 0, -0.4), inertia=(0.05, 0.045, 0.015, 0.002, 0.0, 0.001))
        axis = "x" if i % 2 == 0 else (0.3, 0.4, 0.5)
        s.add_joint(parent, f"B{i}", J.Revolute(axis), parent_point=(0, 0, 0) if i == 0 else (0, 0.05, -0.8))
        parent = f"B{i}"
    s.add_joint_spring("ground_B0", 2.0, 0.1)
    return s


def _agree(system, seed, n_states, inputs=None):
    model = system.compile()
    rd, cd = RecursiveDynamics(model), CartesianDynamics(model)
    rng = np.random.default_rng(seed)
    for k in range(n_states):
        q, u = random_state(model, rng)
        t = float(rng.uniform(0, 2))
        names = ("udot_aba", "kinetic", "joint_forces")  # one traced, compiled function for all three
        udot = rd.evaluate(names, t, q, u, inputs=inputs)["udot_aba"]
        out = rd.evaluate(names, t, q, u, inputs=inputs, udot=udot)
        ke = float(out["kinetic"][0])
        xq, xu = cd.from_joint_state(q, u, t)
        assert np.abs(cd.configuration_residual(t, xq)).max() < 1e-12
        nudot = cd.udot(t, xq, xu, inputs=inputs)
        assert_close(nudot.reshape(-1, 6), cd.body_accelerations(q, u, udot, t), 1e-8, f"body accelerations {k}")
        assert_close(cd.joint_accelerations(xq, xu, nudot, t), udot, 1e-8, f"joint accelerations {k}")
        q_back, u_back = cd.joint_coordinates(xq, xu, t)
        assert_close(q_back, q, 1e-12, "joint coordinates")
        assert_close(u_back, u, 1e-12, "joint speeds")
        assert abs(cd.kinetic_energy(t, xq, xu) - ke) < 1e-10 * ke
        ours = cd.joint_forces(t, xq, xu, inputs=inputs)
        for i, name in enumerate(rd.joint_names):  # RNEA's transmitted forces, in each joint's M frame
            assert_close(ours[name], out["joint_forces"][i], 1e-8, f"joint force {name}")
    return model, cd


def test_revolute_chain_matches_aba():
    model, cd = _agree(revolute_chain(), seed=3, n_states=3)
    assert cd.n_q == 35 and cd.n_u == 30 and cd.n_constraints == 25 and cd.n_dof == model.n_u == 5
    rd = RecursiveDynamics(model)
    q, u = random_state(model, np.random.default_rng(9))
    xq, xu = cd.from_joint_state(q, u)
    assert abs(cd.energy(0.0, xq, xu) - rd.energy(0.0, q, u)) < 1e-10 * abs(rd.energy(0.0, q, u))


def test_random_tree_every_joint_kind_matches_aba():
    """12 bodies: revolute, prismatic, cylindrical, universal, planar and gimbal (both speeds), spherical, free,
    weld; a time-dependent force, a couple, a damped spring, joint springs with dampers, a joint torque input."""
    model, cd = _agree(random_tree(11), seed=5, n_states=2, inputs={"drive": -0.4})
    assert model.n_bodies >= 10
    assert cd.n_dof == model.n_u and cd.n_unknowns == 6 * model.n_bodies + cd.n_constraints


def test_quaternion_state_is_unit_and_matches_forward_kinematics():
    s = random_tree(3, kinds=["spherical", "free", "universal"], extra_revolute=1, loads=False)
    model = s.compile()
    cd = CartesianDynamics(model)
    q, u = random_state(model, np.random.default_rng(2))
    xq, _ = cd.from_joint_state(q, u)
    e = xq.reshape(-1, 7)[:, 3:]
    assert np.allclose(np.linalg.norm(e, axis=1), 1.0) and np.all(e[:, 0] >= 0)
    assert np.allclose(quaternion_to_rotation(e) @ quaternion_to_rotation(e).transpose(0, 2, 1), np.eye(3))


# ---- the closed four-bar ---------------------------------------------------------------------------------------
def four_bar_system():
    """Crank 1 m, coupler 2 m, rocker 1.5 m, ground link 2 m, hinged about z; gravity along -y; the rocker's tip
    closed on the ground pivot in the plane of motion (two rows)."""
    s = kane.System("four_bar", gravity=(0, -9.81, 0))
    parent, point = "ground", (0, 0, 0)
    for i, L in enumerate((1.0, 2.0, 1.5)):
        m = 1.0 + i
        s.add_body(f"l{i}", mass=m, com=(L / 2, 0, 0), inertia=(1e-3, m * L**2 / 12, m * L**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"])
        parent, point = f"l{i}", (L, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return s


def closure_by_hand(q):
    a1, a2, a3 = q[0], q[0] + q[1], q[0] + q[1] + q[2]
    return np.array([np.cos(a1) + 2 * np.cos(a2) + 1.5 * np.cos(a3) - 2.0,
                     np.sin(a1) + 2 * np.sin(a2) + 1.5 * np.sin(a3)])


@pytest.fixture(scope="module")
def four_bar():
    s = four_bar_system()
    dyn = kane.derive(s, dependent=["u2", "u3"]).compile()
    q0 = assemble(dyn, 0.0, np.array([0.7, -0.3, 2.0])).q
    u0 = np.array([2.0])
    return s, dyn, q0, u0, dyn.full_speeds(0.0, q0, u0)


def test_four_bar_sizes(four_bar):
    s, dyn, *_ = four_bar
    cd = CartesianDynamics(s)
    assert (cd.n_u, cd.n_constraints, cd.n_unknowns, cd.n_dof) == (18, 17, 35, 1)
    assert dyn.n_u == 1  # the embedded Kane equations: one speed, one equation


def test_four_bar_baumgarte_drifts_measurably_embedded_kane_with_projection_does_not(four_bar):
    s, dyn, q0, u0, u_full = four_bar
    cd = CartesianDynamics(s, alpha=5.0, beta=5.0)
    xq, xu = cd.from_joint_state(q0, u_full)
    assert abs(cd.energy(0.0, xq, xu) - dyn.energy(0.0, q0, u0)) < 1e-12 * abs(dyn.energy(0.0, q0, u0))
    opts = {"rtol": 1e-6, "atol": 1e-8, "output_dt": 0.1}
    cart = simulate(cd, (0.0, 20.0), xq, xu, **opts,
                    monitors={"C": lambda t, q, u: float(np.abs(cd.configuration_residual(t, q)).max())})
    held = simulate(dyn, (0.0, 20.0), q0, u0, **opts, projection=make_projection(dyn),
                    monitors={"C": lambda t, q, u: float(np.abs(closure_by_hand(q)).max())})
    free = simulate(dyn, (0.0, 20.0), q0, u0, **opts,
                    monitors={"C": lambda t, q, u: float(np.abs(closure_by_hand(q)).max())})
    drift_cart, drift_kane = cart.residuals["C"].max(), held.residuals["C"].max()
    print(f"\nfour-bar, 20 s, DOPRI5 rtol 1e-6: max |C| Cartesian+Baumgarte {drift_cart:.2e} "
          f"({cart.stats.n_fev} evaluations), embedded Kane + projection {drift_kane:.2e} ({held.stats.n_fev}), "
          f"embedded Kane without projection {free.residuals['C'].max():.2e} ({free.stats.n_fev})")
    assert 1e-10 < drift_cart < 1e-4  # measurable, yet held bounded by the stabilization
    assert drift_kane < 1e-10 and drift_cart > 100 * drift_kane
    # the same motion: the Cartesian run's joint coordinates follow the embedded solution within the drift scale
    q_cart, _ = cd.joint_coordinates(cart.q[-1], cart.u[-1], 20.0)
    assert np.abs(np.angle(np.exp(1j * (q_cart - held.q[-1])))).max() < 1e-2
    # energy consistency: conservative system, both conserve to the integration tolerance
    for traj in (cart, held):
        assert np.ptp(traj.energy) < 1e-4 * abs(traj.energy[0])


def test_baumgarte_reduces_drift(four_bar):
    s, _, q0, _, u_full = four_bar
    drift = {}
    for gains in ((0.0, 0.0), (5.0, 5.0)):
        cd = CartesianDynamics(s, alpha=gains[0], beta=gains[1])
        xq, xu = cd.from_joint_state(q0, u_full)
        tr = simulate(cd, (0.0, 5.0), xq, xu, rtol=1e-6, atol=1e-8, output_dt=0.25, record_energy=False)
        drift[gains] = max(np.abs(cd.configuration_residual(t, q)).max() for t, q in zip(tr.t, tr.q))
    assert drift[(5.0, 5.0)] < 0.1 * drift[(0.0, 0.0)]


def test_projection_assembles_positions_and_velocities(four_bar):
    s, _, q0, _, u_full = four_bar
    cd = CartesianDynamics(s)
    xq, xu = cd.from_joint_state(q0, u_full)
    rng = np.random.default_rng(0)
    bad_q, bad_u = xq + rng.normal(0, 1e-3, xq.size), xu + rng.normal(0, 1e-2, xu.size)
    assert np.abs(cd.configuration_residual(0.0, bad_q)).max() > 1e-4
    q, u = cd.project(bad_q, bad_u)
    assert np.abs(cd.configuration_residual(0.0, q)).max() < 1e-12
    assert np.abs(cd.constraint_residual(0.0, q, u)).max() < 1e-10


# ---- bad input -------------------------------------------------------------------------------------------------
def dead_point():
    """A hinged bar whose tip must stay on the line x = 1: at angle 0 the closure row is tangent to the motion."""
    s = kane.System("dead_point", gravity=(0, -9.81, 0))
    s.add_body("bar", mass=1.0, com=(0.5, 0, 0), inertia=(1e-3, 0.08, 0.08))
    s.add_joint("ground", "bar", J.Revolute("z"), coordinates=["theta"], speeds=["omega"])
    s.add_loop_closure("on_line", "bar", (1, 0, 0), "ground", (1, 0, 0), directions=[(1, 0, 0)])
    return s


def test_rank_loss_raises_with_time_and_state_not_nan():
    cd = CartesianDynamics(dead_point())
    xq, xu = cd.from_joint_state(np.array([0.0]), np.array([0.0]))
    with pytest.raises(ConstraintRankError, match=r"lost rank at t = 0\.25 s") as info:
        cd.udot(0.25, xq, xu)
    err = info.value
    assert isinstance(err, kane.KaneError) and err.t == 0.25 and np.array_equal(err.q, xq)
    assert "bar_qw=" in str(err) and "on_line" in str(err)
    with pytest.raises(kane.SimulationError, match="lost rank"):
        simulate(cd, (0.25, 1.0), xq, xu)


def test_structurally_redundant_closure_is_named():
    s = four_bar_system()
    s._constraints.clear()
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0))  # three rows: z is redundant
    cd = CartesianDynamics(s)
    xq, xu = cd.from_joint_state(np.array([0.7, -0.3, 2.0]), np.zeros(3))
    with pytest.raises(ConstraintRankError, match="directions="):
        cd.udot(0.0, xq, xu)


def test_unsupported_models_are_refused():
    s = kane.System("knife")
    s.add_body("b", mass=1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "b", J.Planar())
    s.add_no_slip("edge", "b", (0, 0, 0), (0, 1, 0))
    with pytest.raises(kane.ModelError, match="loop closures only"):
        CartesianDynamics(s)
    p = kane.System("point")
    p.add_particle("m", 1.0)
    p.add_joint("ground", "m", J.Free())
    with pytest.raises(kane.ModelError, match="particle"):
        CartesianDynamics(p)


def test_a_state_is_checked_in_its_own_layout_whatever_the_joint_order():
    # a hinge before a free joint: the model's free-joint quaternion sits at q[4:8] of its joint coordinates, the
    # Cartesian state's at q[10:14] (body B1's x, y, z, then its quaternion): each state is checked in its layout
    s = kane.System("hinge_then_free", gravity=(0, 0, -9.81))
    s.add_body("B0", mass=1.0, inertia=(0.1, 0.1, 0.1))
    s.add_body("B1", mass=2.0, inertia=(0.2, 0.2, 0.2))
    s.add_joint("ground", "B0", J.Revolute("z"))
    s.add_joint("ground", "B1", J.Free())
    cart = CartesianDynamics(s)
    q, u = cart.from_joint_state([0.3, 0.1, 0.2, 0.3, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(q[10:14], [1, 0, 0, 0], atol=1e-15)  # B1 unturned, by forward kinematics
    cart.check_quaternions(q)  # a valid state, whatever the model's own slices say of this vector
    sim = kane.simulate.simulate(cart, (0.0, 0.01), q, u)
    assert sim.status == "completed"
    q[10] = 0.5  # B1's quaternion (0.5, 0, 0, 0): norm 0.5
    with pytest.raises(kane.ModelError, match=r"body 'B1': q0 holds the quaternion \[0\.5 0\.  0\.  0\. \] of norm "
                                              r"0\.5;"):
        kane.simulate.simulate(cart, (0.0, 0.01), q, u)
