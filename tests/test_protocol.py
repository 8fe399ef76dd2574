"""kane.protocol: every dynamics class satisfies the Dynamics protocol; what its Capabilities grant works (checked
against hand derivations), what they deny raises NotSupportedError naming the class and the capability."""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import KaneMatrixDynamics, NOCDynamics, RecursiveDynamics
from kane.algorithms.kernel import KernelDynamics
from kane.algorithms.cartesian import CartesianDynamics
from kane.algorithms.cartesian_contact import RollingContact, RollingContactDynamics
from kane.errors import KaneError, NotSupportedError
from kane.protocol import CAPABILITY_MEMBERS, Capabilities
from kane.simulate.terrain import RollingSphereOnTerrain
from kane.surfaces import NurbsSurface, Sphere
from kane.switching.online import OnlineDynamics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _four_bar import four_bar_system  # noqa: E402

G, M, L, I = 9.81, 1.3, 0.7, 0.05  # gravity [m/s^2], bob mass [kg], arm [m], inertia about the axis [kg m^2]
Q, U = 0.4, -1.1  # a state [rad], [rad/s]

MEMBERS = ("n_q", "n_u", "q_names", "u_names", "parameter_names", "input_names", "description", "capabilities",
           "qdot", "udot", "mass_matrix", "forcing", "energy", "holonomic_rows", "motion_rows", "constraint_forces",
           "make_projection", "check_quaternions", "loop_function")


def _pendulum():
    s = kane.System("pendulum", gravity=(0, 0, -G))
    s.add_body("bob", mass=M, com=(0, 0, -L), inertia=(I, I, I))
    s.add_joint("ground", "bob", J.Revolute("y"), name="pivot", coordinates=["th"], speeds=["w"])
    return s


def _pendulum_energy(q, u):
    """0.5 (m L^2 + I) w^2 - m g L cos(th) [J]: the bob's centre at (-L sin th, 0, -L cos th)."""
    return 0.5 * (M * L * L + I) * u * u - M * G * L * math.cos(q)


def _floor():
    c = [-5.0, 5.0]
    return NurbsSurface(np.array([[[a, b, 0.0] for b in c] for a in c]), None, [0, 0, 1, 1], [0, 0, 1, 1], 1, 1,
                        name="floor")


def _bowl():
    R, r, m = 1.0, 0.2, 1.5
    s = kane.System("bowl", gravity=(0, 0, -G))
    s.add_body("ball", mass=m, inertia=[0.4 * m * r * r] * 3)
    s.add_joint("ground", "ball", J.Free(), name="free")
    turn = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])
    cd = RollingContactDynamics(s, [RollingContact("rim", "ground", Sphere(R, origin=(0.0, 0.0, R), rotation=turn,
                                                                             name="bowl"),
                                                   "ball", Sphere(r, rotation=turn, name="ball"), (0.0, 0.0, 0.0, 0.0))])
    q0, u0 = cd.initial_state([0.0, 0.0, r, 1.0, 0.0, 0.0, 0.0])
    return cd, q0, u0, m * G * r  # at rest at the bottom: energy m g r [J]


def _cases():
    """name -> (dynamics, q, u, energy [J] there by hand, M and f of the pendulum where they apply)."""
    out = {}
    pend = _pendulum()
    q, u = np.array([Q]), np.array([U])
    out["kane-numpy"] = lambda: (kane.derive(pend).compile(), q, u, _pendulum_energy(Q, U))
    out["kane-c"] = lambda: (kane.derive(pend).compile("c"), q, u, _pendulum_energy(Q, U))
    out["recursive-aba"] = lambda: (RecursiveDynamics(pend, "aba"), q, u, _pendulum_energy(Q, U))
    out["recursive-crba"] = lambda: (RecursiveDynamics(pend, "crba"), q, u, _pendulum_energy(Q, U))
    out["kernel-aba"] = lambda: (KernelDynamics(pend), q, u, _pendulum_energy(Q, U))
    out["noc"] = lambda: (NOCDynamics(pend), q, u, _pendulum_energy(Q, U))
    out["kane-matrix"] = lambda: (KaneMatrixDynamics(pend), q, u, _pendulum_energy(Q, U))
    out["online"] = lambda: (OnlineDynamics(kane.derive(pend)), q, u, _pendulum_energy(Q, U))

    def cartesian():
        cd = CartesianDynamics(pend)
        return (cd, *cd.from_joint_state(q, u), _pendulum_energy(Q, U))

    out["cartesian"] = cartesian
    out["rolling-contact"] = lambda: _bowl()

    def terrain():
        r, m = 0.3, 2.0
        ball = RollingSphereOnTerrain(_floor(), r, m, gravity=(0, 0, -G), name="b")
        q0, u0 = ball.initial_state([0.5, 0.2, r], 0.5, 0.5)
        return ball, q0, u0, m * G * r

    out["terrain"] = terrain
    return out


CASES = _cases()


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return request.param, CASES[request.param]()


def test_every_dynamics_class_satisfies_the_protocol(case):
    name, (dyn, q, u, _) = case
    assert isinstance(dyn, kane.Dynamics)
    for member in MEMBERS:
        assert hasattr(dyn, member), f"{name}: no {member}"
    caps = dyn.capabilities
    assert isinstance(caps, Capabilities)
    assert len(dyn.q_names) == dyn.n_q == len(q) and len(dyn.u_names) == dyn.n_u == len(u)
    assert isinstance(dyn.description, str)
    assert all(isinstance(n, str) for n in (*dyn.parameter_names, *dyn.input_names))
    assert np.isfinite(dyn.qdot(0.0, q, u)).all() and dyn.udot(0.0, q, u).shape == (dyn.n_u,)
    assert caps.compiled_loop == (caps.compiled_loop_reason == "")


def test_denied_capabilities_raise_naming_class_and_capability(case):
    name, (dyn, q, u, _) = case
    caps = dyn.capabilities
    calls = {"energy": lambda: dyn.energy(0.0, q, u), "mass_matrix": lambda: dyn.mass_matrix(0.0, q),
             "forcing": lambda: dyn.forcing(0.0, q, u), "constraint_forces": lambda: dyn.constraint_forces(0.0, q, u),
             "holonomic": lambda: dyn.holonomic_rows(0.0, q), "motion_constraints": lambda: dyn.motion_rows(0.0, q),
             "projection": lambda: dyn.make_projection(), "compiled_loop": lambda: dyn.loop_function()}
    denied = [c for c in calls if not getattr(caps, c)]
    for c in denied:
        with pytest.raises(NotSupportedError, match=CAPABILITY_MEMBERS[c]) as info:
            calls[c]()
        assert type(dyn).__name__ in str(info.value) and isinstance(info.value, (KaneError, NotImplementedError))
    granted = set(calls) - set(denied)
    assert {"energy"} <= granted  # every case here has a potential for each load


def test_energy_equals_the_hand_derivation(case):
    name, (dyn, q, u, energy) = case
    assert dyn.capabilities.energy
    assert float(dyn.energy(0.0, q, u)) == pytest.approx(energy, rel=1e-12, abs=1e-12)


def test_mass_matrix_and_forcing_equal_the_hand_derivation(case):
    """M = m L^2 + I, f = -m g L sin(th) for the pendulum (equal to the CRBA's: the recursive-crba case)."""
    name, (dyn, q, u, _) = case
    caps = dyn.capabilities
    if not caps.mass_matrix:
        pytest.skip(f"{name}: no mass matrix (its denial is checked above)")
    Mq = np.asarray(dyn.mass_matrix(0.0, q))
    assert Mq.shape == (1, 1) and Mq[0, 0] == pytest.approx(M * L * L + I, rel=1e-13)
    assert np.allclose(Mq, RecursiveDynamics(_pendulum(), "crba").mass_matrix(0.0, q), rtol=1e-13, atol=0)
    assert float(dyn.forcing(0.0, q, u)[0]) == pytest.approx(-M * G * L * math.sin(Q), rel=1e-12)


def test_projection_factory_keeps_a_consistent_state(case):
    name, (dyn, q, u, _) = case
    if not dyn.capabilities.projection:
        pytest.skip(f"{name}: no projection of its own")
    q2, u2 = dyn.make_projection()(0.0, np.array(q, dtype=float), np.array(u, dtype=float))
    assert np.allclose(q2, q, atol=1e-9) and np.allclose(u2, u, atol=1e-9)


def test_quaternion_check_refuses_a_zero_quaternion():
    ball = RollingSphereOnTerrain(_floor(), 0.3, 2.0, gravity=(0, 0, -G), name="b")
    ball.check_quaternions(np.array([0, 0, 0.3, 1.0, 0, 0, 0]))
    with pytest.raises(kane.ModelError, match="q0 holds the quaternion"):
        ball.check_quaternions(np.zeros(7))


def _block_on_floor():
    """A block on a carriage (x) sliding up and down (z) held on the floor by the motion constraint vz = 0."""
    s = kane.System("block", gravity=(0, 0, -G))
    s.add_body("carriage", mass=0.5, inertia=(1, 1, 1))
    s.add_body("block", mass=M, inertia=(1, 1, 1))
    s.add_joint("ground", "carriage", J.Prismatic("x"), coordinates=["x"], speeds=["vx"])
    s.add_joint("carriage", "block", J.Prismatic("z"), coordinates=["z"], speeds=["vz"])
    import sympy as sp
    s.add_motion_constraint("floor", [sp.Symbol("vz")])
    return s


@pytest.mark.parametrize("make", [lambda s: kane.derive(s).compile(), lambda s: OnlineDynamics(kane.derive(s))],
                         ids=["kane", "online"])
def test_constraint_forces_hold_the_weight(make):
    """The floor carries the block's weight: lambda = m g [N] (M u' = f + A^T lambda, A = [0, 1])."""
    dyn = make(_block_on_floor())
    assert dyn.capabilities.constraint_forces and dyn.capabilities.motion_constraints
    u = np.array([0.3]) if dyn.n_u == 1 else np.array([0.3, 0.0])
    lam = dyn.constraint_forces(0.0, np.zeros(2), u)
    assert float(lam["floor"][0]) == pytest.approx(M * G, rel=1e-12)
    A, b = dyn.motion_rows(0.0, np.zeros(2))
    assert np.allclose(A, [[0.0, 1.0]]) and np.allclose(b, 0.0)


def test_old_name_is_a_deprecated_alias():
    import kane.symbolic.dynamics as mod
    with pytest.warns(FutureWarning, match="KaneDynamics"):
        assert mod.Dynamics is kane.KaneDynamics


def _four_bar():
    return four_bar_system(G)


def test_holonomic_rows_are_the_derivative_of_the_residual():
    """C' = A_C u_full with q' = W u_full: central differences of C along W v equal A_C v (any v, any q), and
    C(q) is the gap between the two tips by hand."""
    dyn = kane.derive(_four_bar()).compile("numpy")
    assert dyn.capabilities.holonomic
    q = np.array([0.7, -0.4, 1.9])
    C, A_C, W = dyn.holonomic_rows(0.0, q)
    a, b, d = q
    tip_coupler = np.array([math.cos(a) + 2 * math.cos(a + b), math.sin(a) + 2 * math.sin(a + b)])
    tip_rocker = np.array([2 + 1.5 * math.cos(d), 1.5 * math.sin(d)])
    np.testing.assert_allclose(np.abs(C), np.abs(tip_coupler - tip_rocker), rtol=1e-12, atol=1e-12)
    v = np.array([0.3, -1.2, 0.8])
    h = 1e-6
    dC = (dyn.holonomic_rows(0.0, q + h * W @ v)[0] - dyn.holonomic_rows(0.0, q - h * W @ v)[0]) / (2 * h)
    np.testing.assert_allclose(A_C @ v, dC, rtol=0, atol=1e-8)


def test_kane_matrix_constraint_forces_hold_the_hanging_bob():
    """At rest straight down the pivot carries the weight: the force along z on the bob is m g [N], no moment."""
    dyn = KaneMatrixDynamics(_pendulum())
    assert dyn.capabilities.constraint_forces
    forces = dyn.constraint_forces(0.0, np.zeros(1), np.zeros(1))["pivot"]
    assert forces["trn z"] == pytest.approx(M * G, rel=1e-12)
    assert abs(forces["trn x"]) < 1e-12 and abs(forces["rot x"]) < 1e-12


def test_calling_the_protocol_as_the_old_class_warns_and_gives_kanes_compiled_equations():
    """Deprecated until 0.3: kane.Dynamics(eqs, backend=...) was the class of Kane's compiled equations."""
    eqs = kane.derive(_pendulum())
    with pytest.warns(FutureWarning, match="kane.KaneDynamics"):
        old = kane.Dynamics(eqs, backend="numpy")
    assert type(old) is kane.KaneDynamics and isinstance(old, kane.Dynamics)
    q, u = np.array([Q]), np.array([U])
    assert np.array_equal(old.udot(0.0, q, u), eqs.compile("numpy").udot(0.0, q, u))
    assert old.udot(0.0, q, u)[0] == pytest.approx(-M * G * L * math.sin(Q) / (M * L * L + I), rel=1e-13)
