"""Property test: for random small models with free, spherical and revolute joints at equilibria and relative
equilibria (a hanging chain at rest, a free body spinning about a principal axis, a heavy top spinning upright),
the eigenvalues and the reduced A predict the nonlinear simulation: a small push on the speeds grows, oscillates
and decays as expm(A_r t) says (the simulation by scipy's DOP853 on the compiled equations of motion, to 1e-3 of
the push), so the linearization is checked against the simulator, not against itself."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.linalg import expm

import kane
from kane import joints as J
from kane.analysis import linearize


def _inertia(draw, low, high):
    """Principal moments (b + c, a + c, a + b) of second moments a, b, c: a rigid body's (triangle inequality)."""
    a, b, c = (draw(st.floats(low, high)) for _ in range(3))
    return b + c, a + c, a + b


def _chain(draw):
    """Two bodies hanging from the ground by revolute or spherical joints, at rest: an equilibrium."""
    s = kane.System("chain", gravity=(0, 0, -9.81))
    parent, point = "ground", (0, 0, 0)
    for k in range(2):
        kind = draw(st.sampled_from(["revolute", "spherical"]))
        length = draw(st.floats(0.3, 1.0))
        inertia = _inertia(draw, 0.01, 0.1)
        s.add_body(f"b{k}", mass=draw(st.floats(0.5, 2.0)), com=(0, 0, -length / 2), inertia=inertia)
        joint = J.Revolute(draw(st.sampled_from(["x", "y"]))) if kind == "revolute" else J.Spherical()
        s.add_joint(parent, f"b{k}", joint, name=f"j{k}", parent_point=point)
        parent, point = f"b{k}", (0, 0, -length)
    return s, {}


def _free_spin(draw):
    """A free body without gravity spinning about one of its principal axes: a relative equilibrium (the
    intermediate axis is unstable)."""
    s = kane.System("spin", gravity=(0, 0, 0))
    s.add_body("body", mass=draw(st.floats(0.5, 2.0)), inertia=_inertia(draw, 0.05, 0.5))
    s.add_joint("ground", "body", J.Free(), name="free")
    axis = draw(st.sampled_from([0, 1, 2]))
    w = np.zeros(6)
    w[axis] = draw(st.floats(1.0, 4.0)) * draw(st.sampled_from([-1.0, 1.0]))
    return s, {"u": w}


def _top(draw):
    """A heavy symmetric top on a spherical joint spinning upright (sleeping; stable or not by its spin)."""
    s = kane.System("top", gravity=(0, 0, -9.81))
    i1 = draw(st.floats(0.02, 0.1))
    i3 = draw(st.floats(0.2, 1.9)) * i1
    s.add_body("top", mass=1.0, com=(0, 0, draw(st.floats(0.05, 0.2))), inertia=(i1, i1, i3))
    s.add_joint("ground", "top", J.Spherical(), name="pivot")
    w = np.zeros(3)
    w[2] = draw(st.floats(2.0, 40.0))
    return s, {"u": w}


@st.composite
def cases(draw):
    build = draw(st.sampled_from([_chain, _free_spin, _top]))
    system, point = build(draw)
    return system, point, draw(st.integers(0, 2 ** 31 - 1))


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(cases())
def test_eigenvalues_predict_the_growth_of_small_perturbations(case):
    system, point = case[0], case[1]
    eqs = kane.derive(system)
    model = eqs.model
    q0 = np.array(model.q0, dtype=float)
    u0 = np.asarray(point.get("u", np.zeros(model.n_u)), dtype=float)
    lin = linearize(eqs, q0, u0)
    assert lin.steady, str(lin)
    red = lin.reduced()
    lam = red.eigenvalues()
    # a small push on the speeds (the speeds are kept states: the symmetries used here do not act on them)
    rng = np.random.default_rng(case[2])
    eps = 1e-6
    du = eps * rng.standard_normal(len(u0))
    n_c = red.n_coordinates
    dx0 = np.concatenate([np.zeros(n_c), du])
    assert red.state_names[n_c:] == tuple(map(str, model.u))
    growth = max(float(np.max(lam.real)), 0.0)
    t_end = min(1.0, 3.0 / growth) if growth > 0 else 1.0
    times = np.linspace(0, t_end, 6)[1:]
    dyn = eqs.compile("numpy")
    n_q = model.n_q

    def rhs(t, x):
        qd, ud = dyn.rhs(t, x[:n_q], x[n_q:])
        return np.concatenate([qd, ud])

    run = solve_ivp(rhs, (0, t_end), np.concatenate([q0, u0 + du]), method="DOP853", rtol=1e-12, atol=1e-15,
                    t_eval=times)
    for k, t in enumerate(times):
        predicted = (expm(red.A * t) @ dx0)[n_c:]
        actual = run.y[n_q:, k] - u0
        size = max(np.max(np.abs(predicted)), eps)
        assert np.max(np.abs(actual - predicted)) <= 1e-3 * size, (t, actual, predicted, lam)
