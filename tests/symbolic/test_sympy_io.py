"""kane's equations to sympy and sympy's KanesMethod to kane, checked numerically both ways.

to_sympy: the sympy expressions, evaluated by sympy's own lambdify (with or without the intermediates substituted),
give kane's compiled u' and q' to 1e-12, and the constraint rows vanish on the embedded motion. from_sympy: sympy's
own examples (the rolling disc of sympy's tests, with and without dependent speeds) imported into kane give u' equal
to sympy's M^-1 f (lambdified by sympy from the KanesMethod itself) to 1e-12 at seeded random states.
"""

from __future__ import annotations

import pathlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import sympy as sp
import sympy.physics.mechanics as me

import kane
from kane import joints as J
from kane.errors import KaneError, NotSupportedError
from kane.io.model_file import load_model
from kane.simulate import simulate

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
TOL = 1e-12


def close(actual, expected, what):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= TOL * scale, f"{what}: max error {err:.3e} (scale {scale:.3g})"


def double_pendulum() -> kane.System:
    s = kane.System("double_pendulum")
    g, L1, L2 = s.parameter("g", 9.81), s.parameter("L1", 1.1), s.parameter("L2", 0.7)
    m1, m2 = s.parameter("m1", 1.3), s.parameter("m2", 0.8)
    s.gravity = (0, 0, -g)
    s.add_body("A", mass=m1, com=(0, 0, -L1 / 2), inertia=(0.1, 0.12, 0.02))
    s.add_body("B", mass=m2, com=(0, 0, -L2 / 2), inertia=(0.05, 0.06, 0.01))
    s.add_joint("ground", "A", J.Revolute("x"), name="j1", coordinates=["q1"], speeds=["u1"])
    s.add_joint("A", "B", J.Revolute("x"), name="j2", parent_point=(0, 0, -L1), coordinates=["q2"], speeds=["u2"])
    return s


def sympy_functions(se, params):
    """(t, q, u) -> (M, f, qdot, velocity constraints) evaluated by sympy: the intermediates are evaluated one by
    one with lambdify in their order (each a function of the inputs and the intermediates before it)."""
    args = [se.t, *se.q, *se.u, *se.parameters, *se.inputs]
    steps = [(s, sp.lambdify(args + [x for x, _ in se.intermediates[:k]], e, "math"))
             for k, (s, e) in enumerate(se.intermediates)]
    every = args + [x for x, _ in se.intermediates]
    outs = [sp.lambdify(every, m, "numpy") for m in (se.M, se.f, se.qdot, se.velocity_constraints)]

    def evaluate(t, q, u):
        vals = [t, *q, *u, *params]
        for _, fn in steps:
            vals.append(fn(*vals))
        return [np.array(fn(*vals), dtype=float) for fn in outs]
    return evaluate


@pytest.mark.parametrize("substitute", [False, True])
def test_to_sympy_double_pendulum_gives_kane_udot(substitute):
    eqs = kane.derive(double_pendulum())
    se = eqs.to_sympy(substitute=substitute)
    assert (len(se.q), len(se.u), se.M.shape) == (2, 2, (2, 2))
    assert bool(se.intermediates) != substitute
    params = eqs.model.parameter_values()
    evaluate = sympy_functions(se, params)
    dyn = eqs.compile("numpy")
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, u = rng.uniform(-np.pi, np.pi, 2), rng.normal(0, 2, 2)
        M, f, qdot, _ = evaluate(0.0, q, u)
        close(np.linalg.solve(M, f.ravel()), dyn.udot(0.0, q, u), "u'")
        close(qdot.ravel(), dyn.qdot(0.0, q, u), "q'")
        # M[1,1] by hand: the second link's inertia about the hinge axis x: I2xx + m2 (L2/2)^2
        close(M[1, 1], 0.05 + 0.8 * 0.35 ** 2, "M[1,1]")


def test_to_sympy_rolling_disk_gives_kane_udot_and_zero_constraint_rows():
    eqs = load_model(EXAMPLES / "rolling_disk.toml").derive()
    se = kane.to_sympy(eqs)  # substituted, the disk's expressions grow too long to lambdify in seconds
    assert (len(se.q), len(se.u), len(se.u_dependent)) == (7, 3, 3)
    assert se.velocity_constraints.shape == (3, 1) and se.configuration_constraints.shape[0] >= 1
    params = eqs.model.parameter_values()
    evaluate = sympy_functions(se, params)
    dyn = eqs.compile("numpy")
    rng = np.random.default_rng(5)
    for _ in range(5):
        quat = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
        u = rng.normal(0, 2, 3)
        M, f, qdot, rows = evaluate(0.0, q, u)
        close(np.linalg.solve(M, f.ravel()), dyn.udot(0.0, q, u), "u'")
        close(qdot.ravel(), dyn.qdot(0.0, q, u), "q'")
        close(rows.ravel(), np.zeros(3), "A u + b")


def test_to_sympy_refuses_other_objects():
    with pytest.raises(KaneError, match="expected kane.Equations.*got dict"):
        kane.to_sympy({"M": 1})


# ---- from_sympy: sympy's own examples ----------------------------------------------------------------------
def sympy_rolling_disc(form: bool = True):
    """sympy's test_kane.py::test_rolling_disc: the disc formed from the contact point up (3 coordinates, 3
    speeds, no constraints), gravity on its centre; its equations formed (``kanes_equations``) where ``form``, else
    given the body and load to form them from."""
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols("q1 q2 q3 u1 u2 u3")
    r, m, g = sp.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = me.Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    inertia = me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [me.dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L]
    disc = me.RigidBody("BodyD", Dmc, R, m, (inertia, Dmc))
    if not form:
        return me.KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd, bodies=[disc],
                              forcelist=[(Dmc, -m * g * Y.z)])
    km = me.KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    km.kanes_equations([disc], [(Dmc, -m * g * Y.z)])
    return km


def sympy_rolling_disc_dependent(auxiliary: bool = False):
    """sympy's test_kane2.py::test_aux_dep: the disc with the velocity of its centre as 3 dependent speeds, the
    height of its centre a dependent coordinate (q3 = -r cos q1), the contact point's velocity (auxiliary speeds
    ua0..ua2 where ``auxiliary``, else zero) and I, J its inertias."""
    t = me.dynamicsymbols._t
    r, m, g, I, J = sp.symbols("r m g I J")
    q = me.dynamicsymbols("q:4")
    qd = [qi.diff(t) for qi in q]
    u = me.dynamicsymbols("u:6")
    ua = me.dynamicsymbols("ua:3")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q[0], N.z])
    B = A.orientnew("B", "Axis", [q[1], A.x])
    C = B.orientnew("C", "Axis", [q[2], B.y])
    C.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    C.set_ang_acc(N, C.ang_vel_in(N).diff(t, B) + me.cross(B.ang_vel_in(N), C.ang_vel_in(N)))
    P = me.Point("P")
    P.set_vel(N, ua[0] * A.x + ua[1] * A.y + ua[2] * A.z if auxiliary else 0)
    O = P.locatenew("O", q[3] * A.z + r * sp.sin(q[1]) * A.y)
    O.set_vel(N, u[3] * A.x + u[4] * A.y + u[5] * A.z)
    O.set_acc(N, O.vel(N).diff(t, A) + me.cross(A.ang_vel_in(N), O.vel(N)))
    w_c_n_qd = qd[0] * A.z + qd[1] * B.x + qd[2] * B.y
    v_o_n_qd = O.pos_from(P).diff(t, A) + me.cross(A.ang_vel_in(N), O.pos_from(P))
    kindiffs = sp.Matrix([me.dot(w_c_n_qd - C.ang_vel_in(N), uv) for uv in B] + [me.dot(v_o_n_qd - O.vel(N), A.z)])
    f_c = sp.Matrix([me.dot(-r * B.z, A.z) - q[3]])
    f_v = sp.Matrix([me.dot(O.vel(N) - (P.vel(N) + me.cross(C.ang_vel_in(N), O.pos_from(P))), ai).expand()
                     for ai in A])
    disc = me.RigidBody("disc", O, C, m, (me.inertia(B, I, J, I), O))
    km = me.KanesMethod(N, q_ind=q[:3], u_ind=u[:3], kd_eqs=kindiffs, q_dependent=q[3:],
                        configuration_constraints=f_c, u_dependent=u[3:], velocity_constraints=f_v,
                        u_auxiliary=ua if auxiliary else None)
    km.kanes_equations([disc], [(O, m * g * A.z)])
    return km


def sympy_reference(km, params):
    """sympy's own numbers: (q, u) -> (u' = M^-1 f of every speed, q', the velocity constraint rows B u + c),
    M and f being KanesMethod.mass_matrix and .forcing (acceleration constraints included), lambdified by sympy."""
    t = me.dynamicsymbols._t
    qs = sp.symbols(f"qq0:{len(km.q)}")
    us = sp.symbols(f"uu0:{len(km.u)}")
    rep = dict(zip(km.q, qs)) | dict(zip(km.u, us))
    kdd = km.kindiffdict()
    qdot = sp.Matrix([kdd[x.diff(t)] for x in km.q])
    args = (qs, us)
    M, F, K = (sp.lambdify(args, e.xreplace(rep).subs(params), "numpy", cse=True)
               for e in (km.mass_matrix, km.forcing, qdot))
    B = km._k_nh.xreplace(rep).subs(params) if km._udep else sp.zeros(0, len(km.u))
    Bf = sp.lambdify(args, B, "numpy")

    def evaluate(q, u):
        return (np.linalg.solve(np.array(M(q, u), float), np.array(F(q, u), float).ravel()),
                np.array(K(q, u), float).ravel(), np.array(Bf(q, u), float).reshape(B.shape))
    return evaluate


def test_from_sympy_rolling_disc_gives_sympys_udot():
    km = sympy_rolling_disc()
    params = {"r": 0.4, "m": 1.5, "g": 9.81}
    eqs = kane.from_sympy(km, parameters=params)
    assert [str(s) for s in eqs.model.q] == ["q1", "q2", "q3"] and eqs.model.parameter_defaults
    ref = sympy_reference(km, {sp.Symbol(k): v for k, v in params.items()})
    rng = np.random.default_rng(11)
    for backend in ("numpy", "c"):
        dyn = eqs.compile(backend)
        for _ in range(5):
            q, u = rng.uniform(-1.2, 1.2, 3), rng.normal(0, 2, 3)
            udot, qdot, _ = ref(q, u)
            close(dyn.udot(0.0, q, u), udot, f"u' ({backend})")
            close(dyn.qdot(0.0, q, u), qdot, f"q' ({backend})")
            # no constraint, velocities linear and homogeneous in u: T = u^T M u / 2 (an identity, not sympy's T)
            M = dyn.mass_matrix(0.0, q)
            close(dyn.kinetic_energy(0.0, q, u), 0.5 * u @ M @ u, "kinetic energy")
    # and back: to_sympy of the imported equations, evaluated by sympy, is sympy's u' again
    evaluate = sympy_functions(kane.to_sympy(eqs), eqs.model.parameter_values())
    for _ in range(3):
        q, u = rng.uniform(-1.2, 1.2, 3), rng.normal(0, 2, 3)
        M, f, qdot, _ = evaluate(0.0, q, u)
        close(np.linalg.solve(M, f.ravel()), ref(q, u)[0], "u' of to_sympy(from_sympy(km))")


def test_from_sympy_dependent_speeds_and_coordinate_give_sympys_udot():
    km = sympy_rolling_disc_dependent()
    params = {"r": 0.4, "m": 1.5, "g": 9.81, "I": 0.06, "J": 0.12}
    eqs = kane.from_sympy(km, parameters=params)
    assert [str(s) for s in eqs.u_independent] == ["u0", "u1", "u2"]
    assert [str(s) for s in eqs.u_dependent] == ["u3", "u4", "u5"]
    ref = sympy_reference(km, {sp.Symbol(k): v for k, v in params.items()})
    dyn = eqs.compile("numpy")
    rng = np.random.default_rng(13)
    for _ in range(5):
        q = rng.uniform(-1.2, 1.2, 4)
        q[3] = -0.4 * np.cos(q[1])  # the configuration constraint
        u_ind = rng.normal(0, 2, 3)
        u_all = dyn.full_speeds(0.0, q, u_ind)
        udot, qdot, B = ref(q, u_all)
        close(B @ u_all, np.zeros(3), "sympy's velocity constraints at kane's dependent speeds")
        close(dyn.udot(0.0, q, u_ind), udot[:3], "u'")
        close(dyn.qdot(0.0, q, u_ind), qdot, "q'")
        close(dyn.configuration_residual(0.0, q), [0.0], "C(q)")
    assert not dyn.capabilities.constraint_forces
    with pytest.raises(NotSupportedError, match="constraint_forces.*no unconstrained M and f"):
        dyn.constraint_forces(0.0, q, u_ind)


def test_from_sympy_system_is_imported_too():
    """A spring-mass mechanics System driven by the input F(t): u' = (F - k q) / m."""
    q, u, F = me.dynamicsymbols("q u F")
    m, k = sp.symbols("m k")
    system = me.System()
    block = me.Particle("block", me.Point("P"), m)
    system.add_bodies(block)
    system.q_ind, system.u_ind = [q], [u]
    system.kdes = [q.diff(me.dynamicsymbols._t) - u]
    block.masscenter.set_pos(system.fixed_point, q * system.x)
    block.masscenter.set_vel(system.frame, u * system.x)
    system.add_loads(me.Force(block.masscenter, (F - k * q) * system.x))
    eqs = kane.from_sympy(system, parameters={m: 2.0, k: 8.0})
    dyn = eqs.compile("numpy")
    assert dyn.input_names == ("F",) and dyn.parameter_names == ("k", "m")
    close(dyn.udot(0.0, np.array([0.3]), np.array([1.0])), [-8.0 * 0.3 / 2.0], "spring-mass u' = -k q / m")
    close(dyn.udot(0.0, np.array([0.3]), np.array([1.0]), inputs={"F": 5.0}), [(5.0 - 8.0 * 0.3) / 2.0], "u', F = 5")
    trajectory = simulate(dyn, (0.0, 2.0), [0.3], [0.0], rtol=1e-10, atol=1e-12, output_dt=0.5)
    err = np.max(np.abs(trajectory.q[:, 0] - 0.3 * np.cos(2.0 * trajectory.t)))  # omega = sqrt(k / m) = 2
    assert trajectory.t[-1] == 2.0 and err < 1e-9, err


def test_from_sympy_linearizes_like_sympy_and_keeps_its_critical_speed():
    """kane.linearize of the imported disc equals sympy's own KanesMethod.linearize at a general point, and at the
    upright critical speed u2 = 1/sqrt(3) (r = g = m = 1) every eigenvalue is zero (sympy's test_rolling_disc)."""
    km = sympy_rolling_disc()
    eqs = kane.from_sympy(km, parameters={"r": 1, "m": 1, "g": 1})
    point = {"q": (0.0, 0.3, 0.0), "u": (0.2, 1 / np.sqrt(3), 0.1)}
    lin = kane.linearize(eqs, np.array(point["q"]), np.array(point["u"]), warn=False)
    A = km.linearize(A_and_B=True)[0].subs(dict.fromkeys(sp.symbols("r m g"), 1))
    values = dict(zip(km.q, point["q"])) | dict(zip(km.u, point["u"]))
    assert lin.state_names == ("q1", "q2", "q3", "u1", "u2", "u3")
    close(lin.A, np.array(A.subs(values).evalf(), float), "A")
    upright = kane.linearize(eqs, np.zeros(3), np.array([0.0, 1 / np.sqrt(3), 0.0]))
    assert upright.steady and np.max(np.abs(np.linalg.eigvals(upright.A))) < 1e-6  # a nilpotent A: eps^(1/3)


def test_from_sympy_refuses_auxiliary_speeds_other_objects_and_missing_values():
    with pytest.raises(KaneError, match="auxiliary speeds ua0, ua1, ua2"):
        kane.from_sympy(sympy_rolling_disc_dependent(auxiliary=True), parameters={})
    with pytest.raises(KaneError, match="expected a sympy.physics.mechanics KanesMethod or System, got builtins.str"):
        kane.from_sympy("KanesMethod(N, q_ind=[q1])")
    with pytest.raises(KaneError, match="no value for the parameter.*g, m, r"):
        kane.from_sympy(sympy_rolling_disc(), parameters={})
    with pytest.raises(KaneError, match="parameter values given for zz"):
        kane.from_sympy(sympy_rolling_disc(), parameters={"r": 1, "m": 1, "g": 1, "zz": 2})


def test_from_sympy_dependent_speed_with_acceleration_bias_matches_hand_derivation():
    """A particle in a vertical plane held on y = -cos x by the velocity constraint u2 = sin(x) u1 (u1 = x',
    u2 = y'): by hand, m (1 + sin^2 x) u1' = -m g sin x - m sin x cos x u1^2 (the last term is the constraint's
    acceleration bias cos(x) u1^2 carried through the dependent speed's mass column)."""
    x, y, u1, u2 = me.dynamicsymbols("x y u1 u2")
    m, g = sp.symbols("m g")
    N = me.ReferenceFrame("N")
    O, P = me.Point("O"), me.Point("P")
    O.set_vel(N, 0)
    P.set_pos(O, x * N.x + y * N.y)
    P.set_vel(N, u1 * N.x + u2 * N.y)
    td = me.dynamicsymbols._t
    km = me.KanesMethod(N, q_ind=[x, y], u_ind=[u1], u_dependent=[u2], kd_eqs=[x.diff(td) - u1, y.diff(td) - u2],
                        velocity_constraints=[u2 - sp.sin(x) * u1])
    km.kanes_equations([me.Particle("p", P, m)], [(P, -m * g * N.y)])
    eqs = kane.from_sympy(km, parameters={"m": 0.7, "g": 9.81})
    dyn = eqs.compile("numpy")
    ref = sympy_reference(km, {m: 0.7, g: 9.81})
    rng = np.random.default_rng(17)
    for _ in range(5):
        xv, u = rng.uniform(-2, 2), rng.normal(0, 2, 1)
        q = np.array([xv, -np.cos(xv)])
        s, c = np.sin(xv), np.cos(xv)
        hand = (-9.81 * s - s * c * u[0] ** 2) / (1 + s * s)
        close(dyn.udot(0.0, q, u), [hand], "u1' by hand")
        close(dyn.udot(0.0, q, u), ref(q, dyn.full_speeds(0.0, q, u))[0][:1], "u1' by sympy")
        close(dyn.full_speeds(0.0, q, u), [u[0], s * u[0]], "u2 = sin(x) u1")


def test_from_sympy_forms_the_equations_once_for_threads_at_once():
    """Four threads import one KanesMethod whose equations are not formed yet: each gets sympy's u'."""
    km = sympy_rolling_disc(form=False)
    params = {"r": 0.4, "m": 1.5, "g": 9.81}
    with ThreadPoolExecutor(4) as pool:
        imported = list(pool.map(lambda _: kane.from_sympy(km, parameters=params), range(4)))
    ref = sympy_reference(km, {sp.Symbol(k): v for k, v in params.items()})
    q, u = np.array([0.2, -0.4, 1.0]), np.array([0.5, -1.0, 2.0])
    for eqs in imported:
        close(eqs.compile("numpy").udot(0.0, q, u), ref(q, u)[0], "u'")
