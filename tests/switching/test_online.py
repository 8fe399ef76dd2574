"""On-line embedding (seed 000 Eqs. 43-46): OnlineDynamics against the permanently embedded derivation, against an
independent KKT solve of the multiplier equations, impulses, and singularity avoidance on a four-bar."""

import pathlib
import sys
import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.simulate import Method, SimulationError, Simulator
from kane.switching.online import OnlineDynamics, SlipForce, constraint_layout
from kane.switching import simulate_switching

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _models import cart  # noqa: E402


# ---- models (the builders of tests/symbolic/test_seed_examples.py, with the constraints' persistence a flag) --
def disk_on_ramp(transient: bool):
    """Seed 000 Ex. 1: q1 along the ramp, q2 the disk's angle; u1 = q1', u2 = r q2'; rolling u1 + u2 = 0."""
    s = kane.System("disk_on_ramp")
    m, J_, r, g, th = (s.parameter(n, v) for n, v in (("m", 2.0), ("J", 0.25), ("r", 0.5), ("g", 9.81),
                                                       ("theta", 0.3)))
    Ff = s.input("Ff")
    s.gravity = (-g * sp.sin(th), -g * sp.cos(th), 0)
    s.add_body("slider", mass=0)
    s.add_body("disk", mass=m, inertia=(J_, J_, J_))
    s.add_joint("ground", "slider", J.Prismatic("x"), coordinates=["q1"], speeds=["u1"], parent_point=(0, r, 0))
    q2 = sp.Symbol("q2")
    s.add_joint("slider", "disk", J.Revolute("z", speeds=J.SpeedMap(Y=((r,),))), coordinates=["q2"],
                speeds=["u2"])
    s.add_force("disk", (-Ff, 0, 0), point=(-r * sp.sin(q2), -r * sp.cos(q2), 0), frame="ground")
    s.add_motion_constraint("rolling", [sp.Symbol("u1") + sp.Symbol("u2")], transient=transient)
    return s


FOUR_BAR = dict(a=0.3, b=0.9, c=0.8, d=1.0, m=(0.5, 1.2, 1.0), g=9.81)


def four_bar(transient: bool = True):
    """A Grashof crank-rocker: crank a (ground pivot O), coupler b, rocker c (ground pivot at d along x); uniform
    slender links in the x-y plane, gravity -y; the loop is closed at the coupler-rocker pin (x and y)."""
    p = FOUR_BAR
    s = kane.System("four_bar", gravity=(0, -p["g"], 0))
    for name, L, m in (("crank", p["a"], p["m"][0]), ("coupler", p["b"], p["m"][1]), ("rocker", p["c"], p["m"][2])):
        s.add_body(name, mass=m, com=(L / 2, 0, 0), inertia=(1e-4, m * L**2 / 12, m * L**2 / 12))
    s.add_joint("ground", "crank", J.Revolute("z"), coordinates=["q1"], speeds=["w1"])
    s.add_joint("crank", "coupler", J.Revolute("z"), parent_point=(p["a"], 0, 0), coordinates=["q2"],
                speeds=["w2"])
    s.add_joint("ground", "rocker", J.Revolute("z"), parent_point=(p["d"], 0, 0), coordinates=["q3"],
                speeds=["w3"])
    s.add_loop_closure("pin", "coupler", (p["b"], 0, 0), "rocker", (p["c"], 0, 0),
                       directions=[(1, 0, 0), (0, 1, 0)], transient=transient)
    return s


def four_bar_state(phi, w1, q_names=("q1", "q2", "q3")):
    """Assembled configuration (upper branch) at crank angle phi and consistent speeds with crank rate w1, in the
    model's order of coordinates (q1, q2, q3: the order the joints were added) and speeds (w1, w2, w3)."""
    p = FOUR_BAR
    P = p["a"] * np.array([np.cos(phi), np.sin(phi)])
    O4 = np.array([p["d"], 0.0])
    dvec = O4 - P
    dist = np.linalg.norm(dvec)
    x = (p["b"]**2 - p["c"]**2 + dist**2) / (2 * dist)
    h = np.sqrt(p["b"]**2 - x**2)
    e = dvec / dist
    Q = P + x * e + h * np.array([-e[1], e[0]])
    th2 = np.arctan2(*(Q - P)[::-1])
    th3 = np.arctan2(*(Q - O4)[::-1])
    q = np.array([phi, th2 - phi, th3])
    # velocity loop: w1 k x a + (w1 + w2) k x b_vec = w3 k x c_vec
    a_vec, b_vec, c_vec = P, Q - P, Q - O4
    perp = lambda v: np.array([-v[1], v[0]])  # noqa: E731
    Amat = np.column_stack([perp(b_vec), -perp(c_vec)])
    w12, w3 = np.linalg.solve(Amat, -w1 * (perp(a_vec)))
    by_name = {"q1": q[0], "q2": q[1], "q3": q[2]}
    speeds = {"q1": w1, "q2": w12 - w1, "q3": w3}
    return np.array([by_name[n] for n in q_names]), np.array([speeds[n] for n in q_names])


def kkt(M, f, A, bias):
    """Independent reference: the Lagrange-multiplier system [[M, -A^T], [A, 0]] [u'; lambda] = [f; -bias]."""
    n, m = M.shape[0], A.shape[0]
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([f, -bias]))
    return x[:n], x[n:]


def _full(online, t, q, u, inputs=None):
    M, f, A, b, bias = online._fn(t, q, u, online._p0, online.model.input_values(inputs))[:5]
    return M, f, A, b, bias


# ---- agreement with the permanently embedded derivation ----------------------------------------------------
def test_layout_matches_the_stacked_rows():
    eqs = kane.derive(cart())
    lay = constraint_layout(eqs)
    assert [(k, v.rows.start, v.rows.stop, v.transient) for k, v in lay.items()] == [
        ("back_wheels", 0, 1, False), ("caster_wheel", 1, 2, False), ("caster_stick", 2, 3, True)]
    lay4 = constraint_layout(kane.derive(four_bar()))
    assert lay4["pin"].rows == slice(0, 2) and lay4["pin"].holonomic == slice(0, 2)


def test_disk_on_ramp_rolling_online_equals_embedded_derivation():
    online = OnlineDynamics(kane.derive(disk_on_ramp(True)), active=["rolling"])
    emb = kane.derive(disk_on_ramp(False)).compile()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, ui = rng.normal(size=2), rng.normal(size=1)
        u = emb.full_speeds(0.0, q, ui)
        ud = online.udot(0.0, q, u)
        k = online.u_names.index(emb.u_names[0])
        assert ud[k] == pytest.approx(emb.udot(0.0, q, ui)[0], abs=1e-10)
        assert ud[0] + ud[1] == pytest.approx(0.0, abs=1e-12)
    # the analytic rolling acceleration (seed 000 Eq. 42) and friction force lambda = (J/r^2) m g sin(th)/(m + J/r^2)
    m, J_, r, g, th = 2.0, 0.25, 0.5, 9.81, 0.3
    ud = online.udot(0.0, np.zeros(2), np.zeros(2))
    assert ud[0] == pytest.approx(-m * g * np.sin(th) / (m + J_ / r**2), rel=1e-12)
    lam = online.constraint_forces(0.0, np.zeros(2), np.zeros(2))["rolling"][0]
    assert lam == pytest.approx(J_ / r**2 * m * g * np.sin(th) / (m + J_ / r**2), rel=1e-12)


@pytest.mark.parametrize("locked", [False, True])
def test_cart_online_equals_pre_derived_mode(locked):
    eqs = kane.derive(cart())
    online = OnlineDynamics(eqs, active=["caster_stick"] if locked else [])
    emb = kane.derive(cart("permanent" if locked else "none")).compile()
    rng = np.random.default_rng(2)
    inputs = {"F": 3.0, "tau": -0.7}
    for _ in range(5):
        q, ui = rng.uniform(-1.2, 1.2, 4), rng.normal(size=emb.n_u)
        u = emb.full_speeds(0.0, q, ui)
        ud = online.udot(0.0, q, u, inputs=inputs)
        idx = [online.u_names.index(n) for n in emb.u_names]
        assert np.allclose(ud[idx], emb.udot(0.0, q, ui, inputs=inputs), rtol=0, atol=1e-10)
        M, f, A, b, bias = _full(online, 0.0, q, u, inputs)
        rows = [0, 1, 2] if locked else [0, 1]
        assert np.allclose(A[rows] @ ud + bias[rows], 0.0, atol=1e-12)
    # the embedded M~ and f~ equal kane.derive's when it is told to use the same independent speeds
    dep = [n for n in online.u_names if n not in online.independent_speeds]
    same = kane.derive(cart("permanent" if locked else "none"), dependent=dep, reference_q=q).compile()
    ui_same = u[[online.u_names.index(n) for n in same.u_names]]
    Mt, ft, C, c = online.embedded_equations(0.0, q, u, inputs=inputs)
    assert np.allclose(Mt, same.mass_matrix(0.0, q), rtol=1e-12, atol=1e-12)
    assert np.allclose(ft, same.forcing(0.0, q, ui_same, inputs=inputs), rtol=1e-10, atol=1e-10)


def test_multipliers_match_an_independent_kkt_solve():
    online = OnlineDynamics(kane.derive(cart()), active=["caster_stick"])
    rng = np.random.default_rng(3)
    inputs = {"F": 2.0, "tau": 0.4}
    for _ in range(4):
        q = rng.uniform(-1, 1, 4)
        u = online.project_velocity(q, rng.normal(size=4))
        M, f, A, b, bias = _full(online, 0.0, q, u, inputs)
        ud_ref, lam_ref = kkt(M, f, A, bias)
        forces = online.constraint_forces(0.0, q, u, inputs=inputs)
        assert np.allclose(online.udot(0.0, q, u, inputs=inputs), ud_ref, atol=1e-10)
        lam = np.concatenate([forces[k] for k in ("back_wheels", "caster_wheel", "caster_stick")])
        assert np.allclose(lam, lam_ref, rtol=1e-9, atol=1e-10)


def test_slip_force_with_the_normal_a_multiplier_is_solved_with_it():
    """A block on a plane: contact row u_y (normal), slip row u_x; the kinetic force -mu_k N sign along x with N
    the contact multiplier, against the KKT solve with the friction column moved to the left-hand side."""
    s = kane.System("block", gravity=(0, -9.81, 0))
    s.add_body("frame", mass=0)
    s.add_body("block", mass=2.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "frame", J.Prismatic("x"), coordinates=["x"], speeds=["vx"])
    s.add_joint("frame", "block", J.Prismatic("y"), coordinates=["y"], speeds=["vy"])
    P = s.input("P")
    s.add_force("block", (P, P / 2, 0))
    s.add_motion_constraint("normal", [sp.Symbol("vy")], transient=True)
    s.add_motion_constraint("stick", [sp.Symbol("vx")], transient=True)
    online = OnlineDynamics(kane.derive(s), active=["normal"], slips=[SlipForce("stick", 0.3, 1.0, "normal")])
    ud = online.udot(0.0, np.zeros(2), np.array([1.0, 0.0]), inputs={"P": 4.0})
    N = 2.0 * 9.81 - 2.0  # the pull P/2 lifts part of the weight
    assert ud == pytest.approx([(4.0 - 0.3 * N) / 2.0, 0.0], abs=1e-12)
    forces = online.constraint_forces(0.0, np.zeros(2), np.array([1.0, 0.0]), inputs={"P": 4.0})
    assert forces["normal"][0] == pytest.approx(N, rel=1e-12)
    assert forces["stick"][0] == pytest.approx(-0.3 * N, rel=1e-12)


# ---- impulses and projections ------------------------------------------------------------------------------
def test_impulse_restitution_and_momentum_in_the_permitted_directions():
    online = OnlineDynamics(kane.derive(cart()), active=[])
    rng = np.random.default_rng(4)
    q = rng.uniform(-1, 1, 4)
    u_minus = online.project_velocity(q, rng.normal(size=4))
    res = online.resolve_impulse(q, u_minus, ["caster_stick"], 0.5)
    M, f, A, b, bias = _full(online, 0.0, q, u_minus)
    # A u+ + b = -e (A u- + b) on the new row, 0 on the others
    assert A[2] @ res.u_plus == pytest.approx(-0.5 * (A[2] @ u_minus), abs=1e-12)
    assert np.allclose(A[:2] @ res.u_plus, 0.0, atol=1e-12)
    # reference: u+ = u- + M^-1 A^T Lambda with (A M^-1 A^T) Lambda = target - A u-
    Minv_At = np.linalg.solve(M, A.T)
    target = np.array([0.0, 0.0, -0.5 * A[2] @ u_minus])
    Lam = np.linalg.solve(A @ Minv_At, target - A @ u_minus)
    assert np.allclose(res.u_plus, u_minus + Minv_At @ Lam, atol=1e-12)
    assert res.impulses["caster_stick"] == pytest.approx(Lam[2:], rel=1e-9)
    assert res.delta_kinetic == pytest.approx(0.5 * (res.u_plus @ M @ res.u_plus - u_minus @ M @ u_minus))
    # the plastic projection is the kinetic-energy-nearest consistent velocity
    online.set_mode(["caster_stick"])
    up = online.project_velocity(q, u_minus)
    v = np.linalg.svd(A)[2][3:]  # null space of all three rows
    assert np.allclose(A @ up, 0.0, atol=1e-12)
    assert np.allclose(v @ M @ (up - u_minus), 0.0, atol=1e-10)


# ---- singularity avoidance: a four-bar through the toggle of a fixed choice ---------------------------------
def test_four_bar_passes_configurations_singular_for_a_fixed_choice():
    eqs = kane.derive(four_bar())
    # the analyst's choice "rocker independent" (w1, w2 dependent) is singular where crank and coupler align
    online = OnlineDynamics(eqs, active=["pin"], cond_max=50.0, dependent=["w1", "w2"])
    q0, u0 = four_bar_state(0.4, 8.0)
    sim = Simulator(online, q0=q0, u0=u0, method=Method.DOPRI5, rtol=1e-10, atol=1e-12,
                    projection=online.projection, output_dt=0.01)
    traj = sim.run(1.5)
    # the crank turns more than once, so crank and coupler align (the rocker's dead points) at least twice
    assert traj.q[-1, 0] - q0[0] > 2 * np.pi
    cond_fixed = [np.linalg.cond(online.constraint_rows(0.0, q)[0][:, [0, 1]]) for q in traj.q]  # w1, w2 columns
    assert max(cond_fixed) > 1e3
    reselected = [s for s in online.selections if s[3] == "condition"]
    assert online.selections[0][1] == ("w3",) and len(reselected) >= 1
    assert np.max(np.abs(traj.energy - traj.energy[0])) / abs(traj.energy[0]) < 1e-9
    assert max(np.max(np.abs(online.constraint_residual(0.0, q, u))) for q, u in zip(traj.q, traj.u)) < 1e-10
    assert max(np.max(np.abs(online._fn_holo(0.0, q, u, online._p0, online._w0)[0])) for q, u in
               zip(traj.q, traj.u)) < 1e-10
    # reference: the minimal ODE pre-derived with a dependent block that stays regular on this motion
    good = kane.derive(four_bar(transient=False), reference_q=q0).compile()
    assert good.u_names == ("w2",)
    ref = kane.simulate.simulate(good, (0.0, 1.5), q0, u0[1:2], rtol=1e-11, atol=1e-13, output_dt=0.01)
    assert np.max(np.abs(traj.q - ref.q)) < 1e-8
    # the minimal ODE with the fixed, singular choice loses accuracy passing through the dead points
    fixed = kane.derive(four_bar(transient=False), dependent=["w1", "w2"], reference_q=q0).compile()
    try:
        bad = kane.simulate.simulate(fixed, (0.0, 1.5), q0, u0[2:], rtol=1e-10, atol=1e-12, output_dt=0.01)
    except SimulationError:
        return
    assert np.max(np.abs(bad.q - ref.q)) > 1e-6
    assert np.max(np.abs(bad.energy - bad.energy[0])) > 1e3 * np.max(np.abs(traj.energy - traj.energy[0]))


def test_four_bar_switching_run_records_reselections():
    q0, u0 = four_bar_state(0.4, 8.0)
    eqs = kane.derive(four_bar(transient=False), reference_q=q0)  # a permanent constraint is always active
    traj = simulate_switching(eqs, (0.0, 1.0), q0, u0, [], cond_max=50.0, dependent=["w1", "w2"], output_dt=0.01)
    kinds = [e.kind for e in traj.events]
    assert kinds.count("reselect") >= 1 and traj.events[0].data["independent"] != ["w3"]
    assert all(e.data["condition_number"] > 50.0 for e in traj.events)
    assert np.max(np.abs(traj.energy - traj.energy[0])) / abs(traj.energy[0]) < 1e-8
