"""The worked examples of seed 000 (Gillespie 2003) and the rolling disk of seed 002 (Saha & Angeles 1991)."""

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J


def _zero(expr) -> bool:
    return sp.simplify(sp.expand_trig(sp.sympify(expr))) == 0


# ---- Example 1: a disk on a ramp, sliding or rolling -------------------------------------------------------
def disk_on_ramp(rolling: bool, transient: bool = False):
    """Ramp frame A is the ground frame: a1 up the ramp edge, a2 normal to it, a3 = a1 x a2. q1 = p_OBo . a1,
    q2 the disk's angle about a3; u1 = q1', u2 = r q2' (seed 000 Eq. 6). Friction Ff acts on the disk at the
    contact point along -a1."""
    s = kane.System("disk_on_ramp")
    m, J_, r, g, th = (s.parameter(n, v) for n, v in (("m", 2.0), ("J", 0.25), ("r", 0.5), ("g", 9.81),
                                                       ("theta", 0.3)))
    Ff = s.input("Ff")
    s.gravity = (-g * sp.sin(th), -g * sp.cos(th), 0)  # -g n2 with n2 = sin(theta) a1 + cos(theta) a2
    s.add_body("slider", mass=0)  # a massless frame carrying the translation
    s.add_body("disk", mass=m, inertia=(J_, J_, J_))
    s.add_joint("ground", "slider", J.Prismatic("x"), coordinates=["q1"], speeds=["u1"],
                parent_point=(0, r, 0))
    q2 = sp.Symbol("q2")
    s.add_joint("slider", "disk", J.Revolute("z", speeds=J.SpeedMap(Y=((r,),))), coordinates=["q2"],
                speeds=["u2"])
    # the contact point, at -r a2 from the centre, in disk axes
    s.add_force("disk", (-Ff, 0, 0), point=(-r * sp.sin(q2), -r * sp.cos(q2), 0), frame="ground")
    if rolling:
        s.add_motion_constraint("rolling", [sp.Symbol("u1") + sp.Symbol("u2")], transient=transient)
    return s, (m, J_, r, g, th, Ff)


def test_disk_on_ramp_sliding_equations_are_eq40():
    s, (m, J_, r, g, th, Ff) = disk_on_ramp(rolling=False)
    eqs = kane.derive(s)
    M, f = eqs.explicit("M"), eqs.explicit("f")
    # Eq. (40): -m g sin(theta) - Ff - m u1' = 0 and -Ff - (J/r^2) u2' = 0. (The inline "F2 = Ff" printed just
    # above Eq. (40) has the wrong sign: the friction couple -r Ff a3 dotted with a3/r gives -Ff, as Eq. (40).)
    assert _zero(M[0, 0] - m) and _zero(M[1, 1] - J_ / r**2) and _zero(M[0, 1])
    assert _zero(f[0] - (-m * g * sp.sin(th) - Ff))
    assert _zero(f[1] - (-Ff))
    # the kinematic equations of Eq. (6): q1' = u1, q2' = u2 / r
    qdot = eqs.explicit("qdot")
    assert _zero(qdot[0] - sp.Symbol("u1")) and _zero(qdot[1] - sp.Symbol("u2") / r)


@pytest.mark.parametrize("embedding", [kane.Embedding.RECOMBINATION, kane.Embedding.SUBSTITUTION])
def test_disk_on_ramp_rolling_is_eq42(embedding):
    s, (m, J_, r, g, th, Ff) = disk_on_ramp(rolling=True)
    eqs = kane.derive(s, dependent=["u2"], embedding=embedding)
    assert [str(u) for u in eqs.u_independent] == ["u1"]
    M, f = eqs.explicit("M"), eqs.explicit("f")
    # Eq. (42): -m g sin(theta) - (m + J/r^2) u1' = 0; the friction force does no work and drops out
    assert _zero(M[0, 0] - (m + J_ / r**2))
    assert _zero(f[0] + m * g * sp.sin(th))


def test_disk_on_ramp_recombination_equals_substitution_and_eq47():
    s, _ = disk_on_ramp(rolling=True)
    rec = kane.derive(s, dependent=["u2"], embedding=kane.Embedding.RECOMBINATION)
    sub = kane.derive(s, dependent=["u2"], embedding=kane.Embedding.SUBSTITUTION)
    assert _zero(rec.explicit("M")[0] - sub.explicit("M")[0])
    assert _zero(rec.explicit("f")[0] - sub.explicit("f")[0])
    # Eq. (47) with D = [-1]: F~1 = F1 - F2 and F~1* = F1* - F2*, from the unconstrained equations
    free = kane.derive(disk_on_ramp(rolling=False)[0])
    Mf, ff = free.explicit("M"), free.explicit("f")
    assert _zero(rec.explicit("M")[0] - (Mf[0, 0] + Mf[1, 1] - 2 * Mf[0, 1]))
    assert _zero(rec.explicit("f")[0] - (ff[0] - ff[1]))
    # the automatic choice of dependent speed gives the same single equation
    auto = kane.derive(s)
    dyn, dyn_rec = auto.compile(), rec.compile()
    q, u = np.array([0.1, 0.2]), np.array([0.7])
    ud_auto = dyn.udot(0.0, q, u)[0]
    ud_rec = dyn_rec.udot(0.0, q, u)[0]
    full = dyn.full_speeds(0.0, q, u)
    if str(auto.u_independent[0]) == "u2":  # then the state holds u2: compare through the full speeds
        ud_auto = -ud_auto
    m, J_, r, g, th = 2.0, 0.25, 0.5, 9.81, 0.3
    assert ud_rec == pytest.approx(-m * g * np.sin(th) / (m + J_ / r**2), rel=1e-12)
    assert ud_auto == pytest.approx(ud_rec, rel=1e-12)
    assert full[0] == pytest.approx(-full[1], rel=1e-12)


def test_rolling_constraint_force_is_the_friction_that_holds_the_disk():
    """The multiplier of the embedded rolling row is the friction force: from m u1' = -m g sin(th) + lambda with
    u1' of Eq. 42, lambda = (J/r^2) m g sin(th) / (m + J/r^2) (uphill); it does not depend on the choice of
    dependent speed."""
    s, _ = disk_on_ramp(rolling=True)
    m, J_, r, g, th = 2.0, 0.25, 0.5, 9.81, 0.3
    expected = J_ / r**2 * m * g * np.sin(th) / (m + J_ / r**2)
    for dep in (["u1"], ["u2"]):
        dyn = kane.derive(s, dependent=dep).compile()
        lam = dyn.constraint_forces(0.0, np.array([0.4, 0.1]), np.array([0.3]))["rolling"]
        assert lam[0] == pytest.approx(expected, rel=1e-12)


def test_transient_rolling_constraint_keeps_unconstrained_equations_and_rows():
    s, _ = disk_on_ramp(rolling=True, transient=True)
    eqs = kane.derive(s)
    assert eqs.transient_names == ("rolling",) and len(eqs.u_independent) == 2
    A = eqs.full_program.outputs["A"]
    assert list(A) == [1, 1]  # u1 + u2 = 0 (seed 000 Eq. 7)


# ---- Example 2: the spherical wrist ------------------------------------------------------------------------
def wrist(speeds):
    """Links A, B massless, C of mass M with mass centre a distance L along c3 from the joint; gimbal angles
    q1 (about n3 = a3), q2 (about a2 = b2), q3 (about b3 = c3); n1 vertically up, gravity -G n1. A couple
    T1 c1 + T2 c2 + T3 c3 and a force F1 c1 + F2 c2 + F3 c3 at Co act on C."""
    s = kane.System("wrist")
    M_, L, G, I1, I2, I3 = (s.parameter(n, v) for n, v in (("M", 2.0), ("L", 0.3), ("G", 9.81), ("I1", 0.05),
                                                            ("I2", 0.06), ("I3", 0.02)))
    T = [s.input(f"T{k}") for k in (1, 2, 3)]
    F = [s.input(f"F{k}") for k in (1, 2, 3)]
    s.gravity = (-G, 0, 0)
    s.add_body("C", mass=M_, com=(0, 0, L), inertia=(I1, I2, I3))
    s.add_joint("ground", "C", J.Gimbal("323", speeds=speeds), coordinates=["q1", "q2", "q3"],
                speeds=["u1", "u2", "u3"])
    s.add_torque("C", T, frame="C")
    s.add_force("C", F, point=(0, 0, L), frame="C")
    return s, (M_, L, G, I1, I2, I3, T, F)


def test_wrist_body_fixed_speeds_give_eq49_and_eq50():
    s, (M_, L, G, I1, I2, I3, T, F) = wrist(J.Speeds.BODY)
    eqs = kane.derive(s)
    q1, q2, q3, u1, u2, u3 = sp.symbols("q1 q2 q3 u1 u2 u3")
    s1, c1, s2, c2, s3, c3 = sp.sin(q1), sp.cos(q1), sp.sin(q2), sp.cos(q2), sp.sin(q3), sp.cos(q3)
    M = eqs.explicit("M")
    # the mass matrix is diagonal
    assert _zero(M[0, 1]) and _zero(M[0, 2]) and _zero(M[1, 2])
    f = eqs.explicit("f")
    udot = [f[k] / M[k, k] for k in range(3)]
    eq49 = [(T[0] - L * (F[1] + G * M_ * (s1 * c3 + s3 * c1 * c2)) - (I3 - I2 - M_ * L**2) * u2 * u3) / (I1 + M_ * L**2),
            (T[1] + L * (F[0] + G * M_ * (s1 * s3 - c1 * c2 * c3)) + (I3 - I1 - M_ * L**2) * u1 * u3) / (I2 + M_ * L**2),
            (T[2] + (I1 - I2) * u1 * u2) / I3]
    for k in range(3):
        assert _zero(udot[k] - eq49[k]), k
    eq50 = [(s3 * u2 - c3 * u1) / s2, s3 * u1 + c3 * u2, u3 - c2 * (s3 * u2 - c3 * u1) / s2]
    qdot = eqs.explicit("qdot")
    for k in range(3):
        assert _zero(qdot[k] - eq50[k]), k


def test_wrist_operation_counts_favour_body_fixed_speeds():
    rates = kane.derive(wrist(J.Speeds.RATES)[0]).count_ops()
    body = kane.derive(wrist(J.Speeds.BODY)[0]).count_ops()
    # seed 000 Table 3: the dynamical equations with u_i = omega_C . c_i are far shorter (29/16/10 against
    # 790/285/372 operations); their kinematical equations cost a little more (10/4/9 against none). With
    # named intermediates both are much shorter than Autolev's (here 21/12/5 against 61/29/6: each sine and
    # cosine is computed once in either case), and the direction of Table 3 holds.
    b, r = body["M+f"], rates["M+f"]
    assert b.mul_div < r.mul_div / 2 and b.add_sub < r.add_sub / 2 and b.functions <= r.functions
    assert rates["qdot"].total == 0 and body["qdot"].total > 0
    assert body["M"].total == 0  # a constant, diagonal mass matrix


def test_wrist_both_speed_choices_give_the_same_motion():
    dyn_b = kane.derive(wrist(J.Speeds.BODY)[0]).compile()
    dyn_r = kane.derive(wrist(J.Speeds.RATES)[0]).compile()
    rng = np.random.default_rng(2)
    inputs = {"T1": 0.3, "T2": -0.2, "T3": 0.1, "F1": 1.0, "F2": 0.5, "F3": -0.7}
    for _ in range(5):
        q = rng.uniform(0.3, 1.2, 3)
        qd = rng.normal(size=3)
        s1, c1, s2, c2, s3, c3 = np.sin(q[0]), np.cos(q[0]), np.sin(q[1]), np.cos(q[1]), np.sin(q[2]), np.cos(q[2])
        # body-axis angular velocity from the angle rates (inverse of Eq. 50)
        Y = np.array([[-c3 * s2, s3, 0], [s3 * s2, c3, 0], [c2, 0, 1]])
        w = Y @ qd
        ub = dyn_b.udot(0, q, w, inputs=inputs)
        ur = dyn_r.udot(0, q, qd, inputs=inputs)
        # omega' = Y qdd + Y' qd, with Y' from finite differences of Y along qd
        h = 1e-7
        q2 = q + h * qd
        s2b, c2b, s3b, c3b = np.sin(q2[1]), np.cos(q2[1]), np.sin(q2[2]), np.cos(q2[2])
        Yb = np.array([[-c3b * s2b, s3b, 0], [s3b * s2b, c3b, 0], [c2b, 0, 1]])
        wdot = Y @ ur + (Yb - Y) / h @ qd
        assert np.allclose(ub, wdot, rtol=1e-5, atol=1e-6)


# ---- Example 3: the shopping cart ---------------------------------------------------------------------------
def cart(sticking: bool = False):
    """Basket B on a plane (planar joint, body-axis speeds u1 = v_P1 . b1, v_P1 . b2, u2 = omega_B), back wheels
    at P1 (the basket frame's origin) allow no motion along b2; the caster C turns about the vertical at P2
    (L2 along b1) and its wheel, a particle of mass mC at P3 (L3 along -c1 from P2), allows no motion along c2.
    A force F b1 at P1 and a couple tau b3 push the cart."""
    s = kane.System("cart")
    mB, IB, mC, L1, L2, L3 = (s.parameter(n, v) for n, v in (("mB", 20.0), ("IB", 2.0), ("mC", 1.0),
                                                              ("L1", 0.4), ("L2", 0.9), ("L3", 0.1)))
    F, tau = s.input("F"), s.input("tau")
    s.add_body("B", mass=mB, com=(L1, 0, 0), inertia=(IB, IB, IB))
    s.add_body("C", mass=mC, com=(-L3, 0, 0))
    s.add_joint("ground", "B", J.Planar(J.Speeds.BODY), coordinates=["q1", "q2", "q3"],
                speeds=["u1", "v2", "u2"])
    s.add_joint("B", "C", J.Revolute("z"), parent_point=(L2, 0, 0), coordinates=["q4"], speeds=["w4"])
    s.add_force("B", (F, 0, 0), frame="B")
    s.add_torque("B", (0, 0, tau), frame="B")
    s.add_no_slip("back_wheels", "B", (0, 0, 0), (0, 1, 0))
    s.add_no_slip("caster_wheel", "C", (-L3, 0, 0), (0, 1, 0))
    s.add_joint_lock("caster_stick", "B_C", transient=not sticking)
    return s


def test_cart_rolling_constraint_is_eq59_and_eq60():
    eqs = kane.derive(cart(), dependent=["v2", "w4"])
    dyn = eqs.compile()
    rng = np.random.default_rng(5)
    L2, L3 = 0.9, 0.1
    for _ in range(4):
        q = rng.uniform(-1, 1, 4)
        s4, c4 = np.sin(q[3]), np.cos(q[3])
        A, b = dyn.constraints(0.0, q)
        # rows in the model's speeds (u1, v2, u2, w4); the paper's u3 = omega_C . n3 = u2 + w4
        back, caster, stick = A
        assert np.allclose(back, [0, 1, 0, 0]) and np.allclose(b, 0)
        # Eq. (59) [-s4, L2 c4, -L3] (u1, u2, u3) = 0, with v2 = 0 and u3 = u2 + w4
        u1, u2, u3 = rng.normal(size=3)
        u_model = np.array([u1, 0.0, u2, u3 - u2])
        assert caster @ u_model == pytest.approx(-s4 * u1 + L2 * c4 * u2 - L3 * u3, abs=1e-12)
        # Eq. (64): sticking adds the row [0, -1, 1] (u3 - u2 = 0), i.e. the caster's relative rate is zero
        assert stick @ u_model == pytest.approx(u3 - u2, abs=1e-12)
        # Eq. (60): the embedded dependent speed u3 = (-s4/L3) u1 + (L2 c4 / L3) u2
        full = dyn.full_speeds(0.0, q, np.array([u1, u2]))
        assert full[2] + full[3] == pytest.approx(-s4 / L3 * u1 + L2 * c4 / L3 * u2, rel=1e-12)
        assert full[1] == pytest.approx(0.0, abs=1e-14)


def _cart_energy_mass(q4, stick):
    """Generalized inertia of the cart from its kinetic energy written by hand (independent of kane)."""
    mB, IB, mC, L1, L2, L3 = 20.0, 2.0, 1.0, 0.4, 0.9, 0.1
    s4, c4 = np.sin(q4), np.cos(q4)
    b1, b2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    c2 = np.array([-s4, c4])

    def velocities(u1, u2):
        u3 = u2 if stick else (-s4 * u1 + L2 * c4 * u2) / L3
        vBo = u1 * b1 + u2 * L1 * b2
        vP3 = u1 * b1 + u2 * L2 * b2 - L3 * u3 * c2
        return 0.5 * mB * vBo @ vBo + 0.5 * IB * u2**2 + 0.5 * mC * vP3 @ vP3

    if stick:  # u2 = -s4 u1 / Z2 with Z2 = L3 - L2 c4 (seed 000 Eq. 66)
        k = -s4 / (L3 - L2 * c4)
        return np.array([[2 * velocities(1.0, k)]])
    Mm = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            e = np.eye(2)
            Mm[i, j] = velocities(*(e[i] + e[j])) - velocities(*e[i]) - velocities(*e[j])
    return Mm


def test_cart_generalized_inertia_matches_kinetic_energy_by_hand():
    rng = np.random.default_rng(6)
    free = kane.derive(cart(), dependent=["v2", "w4"]).compile()
    stuck = kane.derive(cart(sticking=True), dependent=["v2", "u2", "w4"]).compile()
    for _ in range(4):
        q = rng.uniform(-1.2, 1.2, 4)
        assert np.allclose(free.mass_matrix(0.0, q), _cart_energy_mass(q[3], False), rtol=1e-12, atol=1e-12)
        assert np.allclose(stuck.mass_matrix(0.0, q), _cart_energy_mass(q[3], True), rtol=1e-12, atol=1e-12)


def test_cart_sticking_generalized_active_force_is_eq67():
    stuck = kane.derive(cart(sticking=True), dependent=["v2", "u2", "w4"])
    dyn = stuck.compile()
    q = np.array([0.3, -0.2, 0.4, 0.7])
    L2, L3 = 0.9, 0.1
    s4, c4 = np.sin(q[3]), np.cos(q[3])
    # at rest only the applied loads act: F~1 = F - s4 tau / Z2, Z2 = L3 - L2 c4 (seed 000 Eqs. 66-67)
    f = dyn.forcing(0.0, q, np.zeros(1), inputs={"F": 3.0, "tau": 1.5})
    assert f[0] == pytest.approx(3.0 - s4 * 1.5 / (L3 - L2 * c4), rel=1e-12)


# ---- seed 002: a disk rolling on a plane ---------------------------------------------------------------------
def rolling_disk():
    s = kane.System("rolling_disk", gravity=(0, 0, -9.81))
    m, r = 1.5, 0.4
    s.add_body("disk", mass=m, inertia=(m * r**2 / 4, m * r**2 / 2, m * r**2 / 4))
    s.add_joint("ground", "disk", J.Free(), coordinates=["x", "y", "z", "e0", "e1", "e2", "e3"],
                speeds=["w1", "w2", "w3", "v1", "v2", "v3"])
    s.add_rolling_disk("contact", "disk", radius=r, axis=(0, 1, 0))
    return s, m, r


def _disk_state(rng, r):
    lean = rng.uniform(-0.6, 0.6)
    yaw, spin = rng.uniform(-np.pi, np.pi, 2)
    # orientation: yaw about z, lean about x, spin about the disk axis y
    def quat(axis, angle):
        return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * np.asarray(axis, float)])

    def qmul(a, b):
        w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
        return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])
    e = qmul(qmul(quat([0, 0, 1], yaw), quat([1, 0, 0], lean)), quat([0, 1, 0], spin))
    return e


def _rot(e):
    w, x, y, z = e
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_rolling_disk_generalized_inertia_is_inertia_about_contact_point():
    s, m, r = rolling_disk()
    eqs = kane.derive(s, dependent=["v1", "v2", "v3"])
    assert [str(u) for u in eqs.u_independent] == ["w1", "w2", "w3"]
    dyn = eqs.compile()
    rng = np.random.default_rng(3)
    Ic = np.diag([m * r**2 / 4, m * r**2 / 2, m * r**2 / 4])
    for _ in range(5):
        e = _disk_state(rng, r)
        R = _rot(e)
        a = R @ [0, 1, 0]
        k = np.array([0, 0, 1.0]) - a[2] * a
        contact = -r * k / np.linalg.norm(k)  # from the centre, ground axes
        d = R.T @ contact  # q - c in body axes
        I_Q = Ic + m * (d @ d * np.eye(3) - np.outer(d, d))  # seed 002 Eq. (32)
        q = np.concatenate([[0.1, 0.2, -contact[2]], e])
        assert np.allclose(dyn.mass_matrix(0.0, q), I_Q, rtol=1e-12, atol=1e-14)
        # Eq. (34): the generalized force at rest is the moment of gravity about the contact point
        gamma = m * np.cross(-d, R.T @ [0, 0, -9.81])
        assert np.allclose(dyn.forcing(0.0, q, np.zeros(3)), gamma, rtol=1e-12, atol=1e-12)


def test_rolling_disk_conserves_energy_where_printed_eq33_does_not_hold():
    """Seed 002 Eq. (33) differentiates T as if the contact point were fixed in space; it moves, so the printed
    convective term is incomplete (it disagrees with kane at a spinning, leaning state). The independent check is
    physics: a disk rolling without slip under gravity conserves energy, and its contact stays on the plane."""
    from scipy.integrate import solve_ivp

    s, m, r = rolling_disk()
    dyn = kane.derive(s, dependent=["v1", "v2", "v3"]).compile()
    rng = np.random.default_rng(4)
    e = _disk_state(rng, r)
    R = _rot(e)
    a = R @ [0, 1, 0]
    k = np.array([0, 0, 1.0]) - a[2] * a
    contact = -r * k / np.linalg.norm(k)
    q0 = np.concatenate([[0.0, 0.0, -contact[2]], e])
    w0 = np.array([0.2, 6.0, 0.3])
    d = R.T @ contact
    Ic = np.diag([m * r**2 / 4, m * r**2 / 2, m * r**2 / 4])
    eq33 = -np.cross(w0, Ic @ w0) - m * np.cross(d, w0) * (d @ w0) + m * np.cross(-d, R.T @ [0, 0, -9.81])
    assert not np.allclose(dyn.forcing(0.0, q0, w0), eq33, rtol=1e-3)
    E0 = dyn.energy(0.0, q0, w0)
    sol = solve_ivp(lambda t, x: np.concatenate(dyn.rhs(t, x[:7], x[7:])), (0.0, 2.0), np.concatenate([q0, w0]),
                    method="DOP853", rtol=1e-11, atol=1e-12)
    qf, wf = sol.y[:7, -1], sol.y[7:, -1]
    assert dyn.energy(0.0, qf, wf) == pytest.approx(E0, rel=1e-9)
    assert abs(dyn.configuration_residual(0.0, qf)[0]) < 1e-9  # the contact point's height
    assert np.allclose(dyn.constraint_residual(0.0, qf, wf), 0.0, atol=1e-12)
