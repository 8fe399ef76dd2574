"""The generic compiled kernel (kane.algorithms.kernel) against the traced ABA, CRBA and RNEA and against Pinocchio.

References: the traced algorithms of RecursiveDynamics, which evaluate the Python joint contract itself (every joint
kind, both speed choices, on seeded random trees), and Pinocchio's aba / crba / rnea on a hand-built chain and the
UR5 and Panda URDFs of example-robot-data (skipped without pinocchio).
"""

from __future__ import annotations

import pathlib
import sys
import threading

import numpy as np
import pytest

import kane
from kane.algorithms import RecursiveDynamics
from kane.options import Formulation
from kane.algorithms.kernel import KernelDynamics, kernel_support
from kane.io.urdf import load_urdf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _trees import JOINT_KINDS, assert_close, random_state, random_tree  # noqa: E402

TOL = 1e-12


@pytest.fixture(scope="module", params=[3, 11])
def pair(request):
    """(kernel ABA, kernel CRBA, traced numpy RecursiveDynamics, rng) of a random tree with every joint kind."""
    model = random_tree(request.param, loads=False).compile()
    return (KernelDynamics(model), KernelDynamics(model, Formulation.CRBA), RecursiveDynamics(model),
            np.random.default_rng(request.param))


def test_every_joint_kind_equals_the_traced_algorithms(pair):
    kd, kc, rd, rng = pair
    kinds = {pj.joint.kind for pj in kd.model.joints}
    assert kinds == {"revolute", "prismatic", "cylindrical", "gimbal", "planar", "spherical", "free", "weld"}
    for k in range(3):
        q, u = random_state(kd.model, rng)
        tau, ud = rng.normal(0, 2.0, kd.n_u), rng.normal(0, 2.0, kd.n_u)
        ref = rd.evaluate(("qdot", "udot_aba", "udot_crba", "M", "f", "kinetic", "potential"), 0.0, q, u, tau=tau)
        assert_close(kd.qdot(0.0, q, u), ref["qdot"], TOL, f"q' state {k}")
        assert_close(kd.udot(0.0, q, u, tau=tau), ref["udot_aba"], TOL, f"ABA u' state {k}")
        assert_close(kc.udot(0.0, q, u, tau=tau), ref["udot_crba"], TOL, f"CRBA u' state {k}")
        assert_close(kd.mass_matrix(0.0, q), ref["M"], TOL, f"H state {k}")
        assert_close(kd.forcing(0.0, q, u, tau=tau), ref["f"], TOL, f"f state {k}")
        assert_close(kd.inverse_dynamics(0.0, q, u, ud), rd.inverse_dynamics(0.0, q, u, ud), TOL, f"RNEA {k}")
        assert_close(kd.kinetic_energy(0.0, q, u), ref["kinetic"][0], TOL, f"kinetic energy {k}")
        assert_close(kd.potential_energy(0.0, q), ref["potential"][0], TOL, f"potential energy {k}")


def test_a_batch_equals_its_states_one_by_one(pair):
    kd, _, _, rng = pair
    states = [random_state(kd.model, rng) for _ in range(4)]
    Q, U = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    T = rng.normal(size=(4, kd.n_u))
    batch = kd.udot(0.0, Q, U, tau=T)
    assert batch.shape == (4, kd.n_u)
    for k in range(4):
        assert_close(batch[k], kd.udot(0.0, Q[k], U[k], tau=T[k]), 1e-15, f"batch row {k}")
    assert kd.mass_matrix(0.0, Q).shape == (4, kd.n_u, kd.n_u)


def test_parameters_stay_arguments():
    s = kane.System("pendulum", gravity=(0.0, 0.0, -9.81))
    m, L = s.parameter("m", 1.0), s.parameter("L", 0.5)
    s.add_body("B", mass=m, com=(0, 0, -L), inertia=(0.1 * m, 0.1 * m, 0.05))
    s.add_joint("ground", "B", kane.joints.Revolute("x"), parent_point=(0, 0, L))
    model = s.compile()
    kd, rd = KernelDynamics(model), RecursiveDynamics(model)
    q, u = np.array([0.7]), np.array([0.3])
    for params in (None, {"m": 2.5, "L": 0.8}, None, {"L": 0.2}):
        assert_close(kd.udot(0.0, q, u, params=params), rd.udot(0.0, q, u, params=params), TOL, f"{params}")
        assert_close(kd.energy(0.0, q, u, params=params), rd.energy(0.0, q, u, params=params), TOL, f"{params}")
    # the hand derivation: (I_x + m L^2) q'' = -m g L sin q with g = 9.81 along -z
    Ix, mm, LL = 0.1 * 2.5, 2.5, 0.8
    assert kd.udot(0.0, q, u, params={"m": mm, "L": LL})[0] == pytest.approx(
        -mm * 9.81 * LL * np.sin(0.7) / (Ix + mm * LL**2), rel=1e-13)


def test_four_threads_from_the_first_call():
    model = random_tree(5, loads=False).compile()
    rd = RecursiveDynamics(model)
    rng = np.random.default_rng(5)
    states = [random_state(model, rng) + (rng.normal(size=model.n_u),) for _ in range(8)]
    expected = [rd.udot(0.0, q, u, tau=t) for q, u, t in states]
    kd = KernelDynamics(model)  # no call before the threads start
    barrier, results, errors = threading.Barrier(4), {}, []

    def work(k):
        try:
            barrier.wait()
            for _ in range(25):
                for j in range(k, len(states), 4):
                    q, u, t = states[j]
                    results[j] = kd.udot(0.0, q, u, tau=t)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for j, ref in enumerate(expected):
        assert_close(results[j], ref, TOL, f"state {j}")


def test_what_the_kernel_does_not_model_is_named_and_refused():
    loaded = random_tree(3, loads=True).compile()
    why = kernel_support(loaded)
    assert "applied loads" in why and "spring" in why
    with pytest.raises(kane.ModelError, match="applied loads.*RecursiveDynamics"):
        KernelDynamics(loaded)
    s = kane.System("mapped")
    s.add_body("B", mass=1.0, inertia=(0.1, 0.1, 0.1))
    q1 = kane.joints.Revolute("z", speeds=kane.joints.SpeedMap(Y=((2.0,),)))
    s.add_joint("ground", "B", q1, name="hinge")
    assert "joint 'hinge'" in kernel_support(s.compile())
    with pytest.raises(kane.ModelError, match="method"):
        KernelDynamics(random_tree(3, loads=False), "noc")


def test_dynamics_takes_the_kernel_for_trees_and_says_why():
    model = random_tree(3, loads=False).compile()
    assert model.n_u >= 24  # auto takes a recursive formulation
    dyn = kane.dynamics(model, "auto")
    assert isinstance(dyn, KernelDynamics) and dyn.backend == "kernel"
    assert "kernel: ready at once" in dyn.formulation_choice.reason
    assert isinstance(kane.dynamics(model, "aba", backend="numpy"), RecursiveDynamics)
    loaded = random_tree(3, loads=True).compile()
    fallback = kane.dynamics(loaded, "crba", backend="kernel")
    assert isinstance(fallback, RecursiveDynamics) and fallback.method is Formulation.CRBA
    assert "traced" in fallback.formulation_choice.reason and "applied loads" in fallback.formulation_choice.reason


# ---- against Pinocchio ------------------------------------------------------------------------------------------
def _pin_compare(model, pmodel, states):
    pin = pytest.importorskip("pinocchio")
    from test_vs_pinocchio import Layout

    kd, kc = KernelDynamics(model), KernelDynamics(model, "crba")
    data, lay = pmodel.createData(), Layout(model, pmodel)
    for k, (q, u, tau) in enumerate(states):
        qp, vp, taup = *lay.to_pin(q, u), tau[lay.v_idx]
        a = pin.aba(pmodel, data, qp, vp, taup)
        assert_close(kd.udot(0.0, q, u, tau=tau)[lay.v_idx], a, TOL, f"kernel ABA vs pin.aba, state {k}")
        assert_close(kc.udot(0.0, q, u, tau=tau)[lay.v_idx], a, TOL, f"kernel CRBA vs pin.aba, state {k}")
        H = pin.crba(pmodel, data, qp)
        H = np.triu(H) + np.triu(H, 1).T
        assert_close(kd.mass_matrix(0.0, q)[np.ix_(lay.v_idx, lay.v_idx)], H, TOL, f"H vs pin.crba, state {k}")
        ud = np.random.default_rng(k).normal(0, 3.0, model.n_u)
        assert_close(kd.inverse_dynamics(0.0, q, u, ud)[lay.v_idx], pin.rnea(pmodel, data, qp, vp, ud[lay.v_idx]),
                      TOL, f"RNEA vs pin.rnea, state {k}")


def test_hand_built_chain_matches_pinocchio():
    pytest.importorskip("pinocchio")
    from _pin_pairs import paired_chain
    from test_vs_pinocchio import _states

    kinds = ["free", "revolute", "revolute", "prismatic", "revolute", "spherical", "revolute"]
    s, pm, _, _ = paired_chain(np.random.default_rng(42), kinds, root_at_origin=True)
    model = s.compile()
    _pin_compare(model, pm, _states(model, 7))


@pytest.mark.parametrize("robot, floating", [("ur_description/urdf/ur5_robot.urdf", False),
                                             ("panda_description/urdf/panda.urdf", True)])
def test_urdf_robots_match_pinocchio_and_the_traced_aba(robot, floating):
    pin = pytest.importorskip("pinocchio")
    from test_vs_pinocchio import _robots_dir, _states

    path = _robots_dir() / robot
    model = load_urdf(path, root_joint="floating" if floating else "fixed", mimic="independent").system.compile()
    assert kernel_support(model) is None
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else \
        pin.buildModelFromUrdf(str(path))
    states = _states(model, 8, n=2)
    _pin_compare(model, pm, states)
    kd, rd = KernelDynamics(model), RecursiveDynamics(model)
    for q, u, tau in states:
        assert_close(kd.udot(0.0, q, u, tau=tau), rd.udot(0.0, q, u, tau=tau), TOL, robot)


def test_joint_kinds_table_is_covered():
    # every kind of the shared random-tree table reaches the kernel (a new kind there must get a routine here)
    for name, make in JOINT_KINDS.items():
        s = kane.System(name)
        s.add_body("B", mass=1.0, inertia=(0.1, 0.2, 0.3))
        s.add_joint("ground", "B", make(np.random.default_rng(0)))
        assert kernel_support(s.compile()) is None, name


def test_kane_simulate_steps_the_kernel_as_the_traced_program():
    # fixed RK4 steps: both runs evaluate u' at the same states, so they agree to round-off
    model = random_tree(21, loads=False).compile()
    q0, u0 = random_state(model, np.random.default_rng(2), 0.3, 0.3)
    a = kane.simulate.simulate(KernelDynamics(model), (0.0, 0.2), q0, u0, method="rk4", dt=1e-3)
    b = kane.simulate.simulate(RecursiveDynamics(model), (0.0, 0.2), q0, u0, method="rk4", dt=1e-3)
    assert a.q.shape == b.q.shape == (201, model.n_q) and np.array_equal(a.t, b.t)
    assert_close(a.q, b.q, 1e-13, "q(t)")
    assert_close(a.u, b.u, 1e-13, "u(t)")
    assert_close(a.energy, b.energy, 1e-12, "energy(t)")


def test_welded_bodies_merged_into_their_hosts_change_nothing():
    # welds on welds, a moving child of a welded body and a body welded to the ground, at random placements:
    # merged in the kernel's arrays (as Pinocchio merges fixed joints), kept as bodies by the traced algorithms
    from _trees import random_inertia, random_rotation

    rng = np.random.default_rng(17)
    s = kane.System("welds", gravity=(0.2, -0.1, -9.81))
    plan = [("ground", "revolute"), ("B0", "weld"), ("B1", "weld"), ("B2", "revolute"), ("B1", "spherical"),
            ("ground", "weld"), ("B5", "prismatic")]
    for k, (parent, kind) in enumerate(plan):
        s.add_body(f"B{k}", mass=float(rng.uniform(0.5, 2.0)), com=tuple(rng.normal(0, 0.2, 3)),
                   inertia=random_inertia(rng).tolist())
        s.add_joint(parent, f"B{k}", JOINT_KINDS[kind](rng), parent_point=tuple(rng.normal(0, 0.3, 3)),
                    parent_rotation=random_rotation(rng).tolist(), child_point=tuple(rng.normal(0, 0.2, 3)),
                    child_rotation=random_rotation(rng).tolist())
    model = s.compile()
    kd, rd = KernelDynamics(model), RecursiveDynamics(model)
    assert kd._state0[1].ib.shape[0] == 5  # B1 and B2 merged into B0; B5 (on the ground) kept
    for k in range(3):
        q, u = random_state(model, rng)
        tau = rng.normal(size=model.n_u)
        ref = rd.evaluate(("udot_aba", "M", "kinetic", "potential"), 0.0, q, u, tau=tau)
        assert_close(kd.udot(0.0, q, u, tau=tau), ref["udot_aba"], TOL, f"u' state {k}")
        assert_close(kd.mass_matrix(0.0, q), ref["M"], TOL, f"H state {k}")
        assert_close(kd.energy(0.0, q, u), ref["kinetic"][0] + ref["potential"][0], TOL, f"energy state {k}")


def _pendulum():
    s = kane.System("pendulum", gravity=(0.0, 0.0, -9.81))
    s.add_body("bob", mass=2.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.05))
    s.add_joint("ground", "bob", kane.joints.Revolute("x"), name="hinge")
    return KernelDynamics(s)


def test_joint_forces_hold_the_hanging_pendulum_up():
    kd = _pendulum()
    q, u = np.zeros(1), np.zeros(1)
    ud = kd.udot(0.0, q, u)
    assert ud[0] == 0.0
    F = kd.joint_forces(0.0, q, u, ud)["hinge"]  # at rest, hanging: the hinge carries the weight, m g up
    np.testing.assert_allclose(F, [0, 0, 0, 0, 0, 2.0 * 9.81], atol=1e-12)


def test_bad_shapes_are_named():
    kd = _pendulum()
    with pytest.raises(kane.KaneError, match=r"expected q of shape \(1,\)"):
        kd.udot(0.0, np.zeros(3), np.zeros(1))
    with pytest.raises(kane.KaneError, match=r"tau / udot of shape \(1,\)"):
        kd.udot(0.0, np.zeros(1), np.zeros(1), tau=np.zeros(2))
    with pytest.raises(kane.ModelError, match="unknown parameter 'nope'"):
        kd.udot(0.0, np.zeros(1), np.zeros(1), params={"nope": 1.0})


def test_a_new_model_runs_without_a_c_build(monkeypatch):
    import kane.codegen.c_cache as c_cache

    KernelDynamics(_pendulum().model)  # the kernel library is loaded (built once if this cache lacks it)

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"the C compiler ran: {args[0] if args else kwargs}")

    monkeypatch.setattr(c_cache.subprocess, "run", no_compiler)
    s = kane.System("other", gravity=(0.0, -9.81, 0.0))
    s.add_body("A", mass=1.5, com=(0.1, 0.0, 0.0), inertia=(0.02, 0.03, 0.04))
    s.add_body("B", mass=0.7, com=(0.0, 0.2, 0.0), inertia=(0.01, 0.01, 0.02))
    s.add_joint("ground", "A", kane.joints.Planar())
    s.add_joint("A", "B", kane.joints.Cylindrical("y"), parent_point=(0.3, 0.0, 0.1))
    kd, rd = KernelDynamics(s), RecursiveDynamics(s)
    q, u = np.array([0.1, -0.2, 0.4, 0.3, 0.05]), np.array([0.5, -0.1, 1.2, 2.0, -0.3])
    assert_close(kd.udot(0.0, q, u), rd.udot(0.0, q, u), TOL, "u' of a model first seen after the kernel loaded")
