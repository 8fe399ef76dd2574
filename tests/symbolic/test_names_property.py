"""Any identifier a user may write is safe: random trees named with random identifiers (kane's own intermediate
names z0, z_1, sympy function and constant names, Python keywords) derive, and Kane's equations match the
recursive articulated-body algorithm (an independent formulation) to 1e-10. Seeded (derandomized) examples."""

import keyword

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kane
from kane import joints as J
from kane.algorithms import RecursiveDynamics

TRICKY = ["z0", "z1", "z_1", "z_0", "x0", "q_0", "u_1", "p_0", "c_0", "w_0", "sin", "cos", "exp", "sqrt", "Abs",
          "beta", "gamma", "zeta", "E", "I", "N", "S", "Q", "O", "pi", "oo", "nan", "Symbol", "Matrix", "lambda",
          "if", "math", "np", "numpy", "self", "iD0", "D0", "L1_0", "f0", "m0_0", "x0", "y0", "out_M", "consts",
          "params", "inputs", "B"]
IDENTIFIER = st.one_of(st.sampled_from(TRICKY), st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,5}", fullmatch=True))
KINDS = {
    "revolute": lambda axis: J.Revolute(axis),
    "prismatic": lambda axis: J.Prismatic(axis),
    "gimbal": lambda axis: J.Gimbal("213", speeds=J.Speeds.BODY),
    "spherical": lambda axis: J.Spherical(),
}
RESERVED = {"t", "stretch", "stretch_rate"}


@st.composite
def named_trees(draw):
    n = draw(st.integers(2, 4))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=n, max_size=n))
    n_names = sum({"revolute": 2, "prismatic": 2, "gimbal": 6, "spherical": 7}[k] for k in kinds) + n
    names = draw(st.lists(IDENTIFIER.filter(lambda s: s not in RESERVED), min_size=n_names, max_size=n_names,
                          unique=True))
    parents = [draw(st.integers(-1, i - 1)) for i in range(n)]
    seed = draw(st.integers(0, 2**16))
    return kinds, names, parents, seed


def _build(kinds, names, parents, seed):
    rng = np.random.default_rng(seed)
    pool = iter(names)
    s = kane.System("named", gravity=(0.2, -0.1, -9.81))
    bodies = []
    for i, kind in enumerate(kinds):
        mass = s.parameter(next(pool), float(rng.uniform(0.5, 2.0)))  # every mass a parameter with a tricky name
        body = f"body_{i}"
        a, b, c = rng.uniform(0.05, 0.2, 3)
        s.add_body(body, mass=mass, com=tuple(rng.normal(0, 0.2, 3)), inertia=(b + c, a + c, a + b))
        joint = KINDS[kind](tuple(rng.normal(size=3)))
        q_names = [next(pool) for _ in range(joint.nq)]
        u_names = [next(pool) for _ in range(joint.nu)]
        parent = "ground" if parents[i] < 0 else bodies[parents[i]]
        s.add_joint(parent, body, joint, parent_point=tuple(rng.normal(0, 0.4, 3)), coordinates=q_names,
                    speeds=u_names)
        bodies.append(body)
    return s


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(named_trees())
def test_random_names_derive_and_match_the_articulated_body_algorithm(tree):
    kinds, names, parents, seed = tree
    assert not any(keyword.iskeyword(x) for x in RESERVED)
    system = _build(kinds, names, parents, seed)
    eqs = kane.derive(system)
    dyn = eqs.compile(backend="numpy")
    aba = RecursiveDynamics(system)
    rng = np.random.default_rng(seed)
    for _ in range(2):
        q = eqs.model.normalize_quaternions(np.array(eqs.model.q0) + rng.uniform(-0.8, 0.8, dyn.n_q))
        u = rng.normal(0, 1.0, dyn.n_u)
        params = {n: float(v) for n, v in zip(dyn.parameter_names, rng.uniform(0.5, 2.0, len(dyn.parameter_names)))}
        ud_kane = dyn.udot(0.0, q, u, params=params)
        ud_aba = aba.udot(0.0, q, u, params=params)
        scale = max(1.0, float(np.max(np.abs(ud_aba))))
        assert np.max(np.abs(ud_kane - ud_aba)) <= 1e-10 * scale, (kinds, names)
        assert np.allclose(dyn.qdot(0.0, q, u), aba.qdot(0.0, q, u), rtol=1e-12, atol=1e-12)
