"""``kane.dynamics(system, formulation=...)``: Kane's explicit equations and the recursive algorithms behind one
argument give the same numbers, and ``"auto"`` picks by size (bodies and speeds counted, nothing timed)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import kane
from kane import joints as J
from kane.algorithms import Algorithm, RecursiveDynamics
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
    assert dyns["crba"].method is Algorithm.CRBA and dyns["aba"].method is Algorithm.ABA
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
    assert big.formulation is Formulation.ABA and big.method is Algorithm.ABA
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
    with pytest.raises(ArgumentError, match="formulation 'featherstone'; expected one of kane, aba, crba, auto"):
        kane.dynamics(spherical_chain(1), "featherstone")
    with pytest.raises(ArgumentError, match="dependent are options of kane.derive"):
        kane.dynamics(spherical_chain(1), Formulation.ABA, dependent=["x"])
    with pytest.raises(ModelError, match="expected a kane.System or kane.Model, got str"):
        kane.dynamics("chain.toml")
