"""``kane.dynamics(system, formulation=...)``: Kane's explicit equations and the recursive algorithms behind one
argument give the same numbers, and ``"auto"`` picks by size (bodies and speeds counted, nothing timed)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import RecursiveDynamics
from kane.errors import ArgumentError, ModelError
from kane.symbolic.formulation import AUTO_RECURSIVE_FROM_DOF, Formulation, choose_formulation

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "algorithms"))
from _trees import assert_close, random_state, random_tree  # noqa: E402


def spherical_chain(n: int) -> kane.System:
    """n 1 m links hanging on spherical joints (3n DOF), as bench/models.py's spherical_chain_kane."""
    s = kane.System(f"chain{n}", gravity=(0, 0, -9.81))
    parent = "ground"
    for i in range(n):
        s.add_body(f"B{i}", mass=1.0, com=(0, 0, -0.5), inertia=(0.3, 0.3, 0.1))
        s.add_joint(parent, f"B{i}", J.Spherical(), name=f"j{i}", parent_point=(0, 0, 0) if i == 0 else (0, 0, -1))
        parent = f"B{i}"
    return s


def test_every_formulation_gives_the_same_udot_and_mass_matrix_on_a_random_tree():
    """Kane's explicit equations, ABA and CRBA through the one entry: u' to 1e-10 (relative to its largest
    entry), and Kane's M and f equal CRBA's H and f, on a seeded tree with spherical, prismatic and revolute
    joints and every kind of load."""
    model = random_tree(4, kinds=["spherical", "prismatic", "cylindrical"], extra_revolute=1).compile()
    dyns = {f: kane.dynamics(model, f, backend="numpy") for f in ("kane", "aba", "crba")}
    assert isinstance(dyns["kane"], kane.Dynamics) and isinstance(dyns["aba"], RecursiveDynamics)
    assert [d.formulation for d in dyns.values()] == [Formulation.KANE, Formulation.ABA, Formulation.CRBA]
    assert dyns["crba"].method is Formulation.CRBA and dyns["aba"].method is Formulation.ABA
    rng = np.random.default_rng(3)
    for k in range(3):
        q, u = random_state(model, rng)
        t, inputs = float(rng.uniform(0, 2)), {"drive": float(rng.normal())}
        ref = dyns["kane"].udot(t, q, u, inputs=inputs)
        M, f = dyns["kane"].mass_matrix(t, q), dyns["kane"].forcing(t, q, u, inputs=inputs)
        assert_close(M @ ref, f, 1e-10, f"Kane's M u' = f, state {k}")
        for name in ("aba", "crba"):
            assert_close(dyns[name].udot(t, q, u, inputs=inputs), ref, 1e-10, f"{name} u', state {k}")
        assert_close(dyns["crba"].mass_matrix(t, q), M, 1e-10, f"CRBA H, state {k}")
        assert_close(dyns["crba"].forcing(t, q, u, inputs=inputs), f, 1e-10, f"CRBA f, state {k}")
    qdot, udot = dyns["aba"].rhs(t, q, u, inputs=inputs)
    assert_close(qdot, dyns["kane"].qdot(t, q, u), 1e-12, "ABA q'")
    assert_close(udot, ref, 1e-10, "ABA rhs u'")


def test_auto_takes_kane_for_a_short_chain_and_the_aba_for_a_long_one():
    short, long_ = spherical_chain(2).compile(), spherical_chain(AUTO_RECURSIVE_FROM_DOF // 3).compile()
    small = kane.dynamics(short, backend="numpy")
    assert small.formulation is Formulation.KANE and isinstance(small, kane.Dynamics)
    assert small.formulation_choice.n_u == 6 and small.formulation_choice.n_bodies == 2
    assert small.formulation_choice.requested is Formulation.AUTO and "6 degrees of freedom" in \
        small.formulation_choice.reason
    big = kane.dynamics(long_, "auto", backend="numpy")
    assert big.formulation is Formulation.ABA and big.method is Formulation.ABA
    assert (big.formulation_choice.n_bodies, big.formulation_choice.n_u) == (8, 24)
    # the short chain's u' from the ABA equals Kane's: the choice changes the cost, not the answer
    q, u = random_state(short, np.random.default_rng(1))
    assert_close(kane.dynamics(short, "aba", backend="numpy").udot(0.0, q, u), small.udot(0.0, q, u), 1e-10)
    # the crossover sits between 7 and 8 links (counted, not timed)
    assert choose_formulation(spherical_chain(7)).formulation is Formulation.KANE
    assert choose_formulation(spherical_chain(8)).formulation is Formulation.ABA


def _sled():
    s = kane.System("sled")
    s.add_body("b", mass=3.0, com=(0.2, 0, 0), inertia=(0.3, 0.3, 0.5))
    s.add_joint("ground", "b", J.Planar(), coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_no_slip("edge", "b", (0, 0, 0), (0, 1, 0))
    return s


def test_permanent_constraints_take_kane_and_bad_choices_are_refused_by_name():
    choice = choose_formulation(_sled(), "auto")
    assert choice.formulation is Formulation.KANE and "edge" in choice.reason and choice.n_permanent == 1
    with pytest.raises(ModelError, match="'edge'.*formulation='kane'"):
        kane.dynamics(_sled(), "aba")
    with pytest.raises(ArgumentError,
                       match="formulation 'featherstone'; expected one of kane, aba, crba, noc, kane_matrix, auto"):
        kane.dynamics(spherical_chain(1), "featherstone")
    with pytest.raises(ArgumentError, match="dependent are options of kane.derive"):
        kane.dynamics(spherical_chain(1), Formulation.ABA, dependent=["x"])
    with pytest.raises(ModelError, match="expected a kane.System, kane.Model or kane.Equations, got str"):
        kane.dynamics("chain.toml")


def test_derived_equations_through_the_front_door_equal_their_own_compile():
    """``kane.dynamics(eqs)`` compiles Kane's equations already derived: u' and M equal ``eqs.compile()``'s exactly
    (the same Program, the same backend); a recursive formulation or a derive option is refused by name."""
    model = random_tree(3, kinds=["spherical", "revolute"], extra_revolute=1).compile()
    eqs = kane.derive(model)
    front, own = kane.dynamics(eqs, backend="numpy"), eqs.compile("numpy")
    assert front.formulation is Formulation.KANE and front.formulation_choice.requested is Formulation.AUTO
    assert "derived equations" in front.formulation_choice.reason and front.formulation_choice.n_u == model.n_u
    q, u = random_state(model, np.random.default_rng(7))
    inputs = {"drive": 0.4}
    np.testing.assert_array_equal(front.udot(0.3, q, u, inputs=inputs), own.udot(0.3, q, u, inputs=inputs))
    np.testing.assert_array_equal(front.mass_matrix(0.3, q), own.mass_matrix(0.3, q))
    assert kane.dynamics(eqs, "kane", backend="numpy").formulation_choice.requested is Formulation.KANE
    with pytest.raises(ArgumentError, match="formulation 'aba' of the derived equations of '.*'.*formulation='kane'"):
        kane.dynamics(eqs, "aba")
    with pytest.raises(ArgumentError, match="dependent are options of kane.derive; the equations of .* derived"):
        kane.dynamics(eqs, dependent=["x"])


def test_noc_and_kane_matrix_through_the_front_door_agree_with_the_aba():
    """The natural orthogonal complement (seed 002) and Kane's matrix form (seed 004) behind ``formulation=``:
    u' equals the ABA's to 1e-10 on a seeded tree; ``.method`` and ``.formulation`` name the formulation."""
    model = random_tree(3, kinds=["spherical", "prismatic"], extra_revolute=1).compile()
    q, u = random_state(model, np.random.default_rng(11))
    ref = kane.dynamics(model, "aba", backend="numpy").udot(0.2, q, u, inputs={"drive": -0.3})
    for name, cls in (("noc", kane.algorithms.NOCDynamics), ("kane_matrix", kane.algorithms.KaneMatrixDynamics)):
        dyn = kane.dynamics(model, name, backend="numpy")
        assert type(dyn) is cls and dyn.method is dyn.formulation is Formulation.parse(name)
        assert_close(dyn.udot(0.2, q, u, inputs={"drive": -0.3}), ref, 1e-10, name)
    with pytest.raises(ModelError, match="formulation 'noc' takes unconstrained trees.*'edge'"):
        kane.dynamics(_sled(), "noc")


def test_one_enum_and_the_old_algorithm_name_warns_for_one_release():
    import kane.algorithms.recursive as recursive
    import kane.options
    import kane.symbolic.formulation

    assert kane.Formulation is kane.options.Formulation is kane.symbolic.formulation.Formulation
    assert "Algorithm" not in kane.algorithms.__all__
    for module in (kane.algorithms, recursive):
        with pytest.warns(FutureWarning, match="kane.algorithms.Algorithm is deprecated.*kane.Formulation"):
            old = module.Algorithm
        assert old is Formulation and old.ABA is Formulation.ABA and old.KANE_MATRIX is Formulation.KANE_MATRIX
    model = spherical_chain(2).compile()
    q, u = random_state(model, np.random.default_rng(5))
    with pytest.warns(FutureWarning):
        by_old_name = RecursiveDynamics(model, kane.algorithms.Algorithm.CRBA)
    assert by_old_name.method is Formulation.CRBA
    np.testing.assert_array_equal(by_old_name.udot(0.0, q, u), RecursiveDynamics(model, "crba").udot(0.0, q, u))
    with pytest.raises(ModelError, match="method KANE has its own class"):
        RecursiveDynamics(model, Formulation.KANE)
    with pytest.raises(ModelError, match="method 'featherstone'; expected kane.Formulation.ABA"):
        RecursiveDynamics(model, "featherstone")
