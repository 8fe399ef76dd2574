"""Linearization by exact forward-mode derivatives against sympy's Linearizer (a test-only peer), central
differences of the reduced equations (random trees and constrained models), the classical upright rolling disk
and the mechanical form's physics (K is the Hessian of the potential energy at an equilibrium)."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy.physics.mechanics as me
from scipy.spatial.transform import Rotation

import kane
from kane.analysis import NotSteadyWarning, linearize
from kane.io.model_file import load_model

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0] / "algorithms"))
sys.path.insert(0, str(HERE.parents[0] / "symbolic"))
from _analysis_models import cart_pole, double_pendulum, four_bar, rolling_disk  # noqa: E402
from _trees import random_state, random_tree  # noqa: E402

EXAMPLES = HERE.parents[1] / "examples"


def _close(actual, expected, rtol, what=""):
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    err = float(np.max(np.abs(np.asarray(actual) - np.asarray(expected)), initial=0.0))
    assert err <= rtol * scale, f"{what}: max abs error {err:.3e} > {rtol:g} * {scale:.3e}"


# ---- sympy's Linearizer (test-only peer) ------------------------------------------------------------------
def _sympy_double_pendulum():
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.y])
    B = A.orientnew("B", "Axis", [q2, A.y])
    A.set_ang_vel(N, u1 * N.y)
    B.set_ang_vel(A, u2 * A.y)
    O = me.Point("O")
    O.set_vel(N, 0)
    Ao = O.locatenew("Ao", -0.4 * A.z)
    J2 = O.locatenew("J2", -0.8 * A.z)
    Bo = J2.locatenew("Bo", -0.3 * B.z)
    for P in (Ao, J2, Bo):
        P.v2pt_theory(O if P is not Bo else J2, N, A if P is not Bo else B)
    a = me.RigidBody("a", Ao, A, 1.3, (me.inertia(A, 0.03, 0.04, 0.01), Ao))
    b = me.RigidBody("b", Bo, B, 0.7, (me.inertia(B, 0.02, 0.02, 0.005), Bo))
    loads = [(Ao, -1.3 * 9.81 * N.z), (Bo, -0.7 * 9.81 * N.z)]
    km = me.KanesMethod(N, [q1, q2], [u1, u2], kd_eqs=[q1.diff() - u1, q2.diff() - u2])
    km.kanes_equations([a, b], loads)
    return km, [q1, q2], [u1, u2], []


def _sympy_cart_pole():
    x, th, v, om = me.dynamicsymbols("x theta v omega")
    F = me.dynamicsymbols("F")
    N = me.ReferenceFrame("N")
    P = N.orientnew("P", "Axis", [th, N.y])
    P.set_ang_vel(N, om * N.y)
    O = me.Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", x * N.x)
    C.set_vel(N, v * N.x)
    Po = C.locatenew("Po", 0.7 * P.z)
    Po.v2pt_theory(C, N, P)
    cart = me.Particle("cart", C, 2.0)
    pole = me.RigidBody("pole", Po, P, 0.6, (me.inertia(P, 0.02, 0.03, 0.01), Po))
    loads = [(C, F * N.x - 2.0 * 9.81 * N.z), (Po, -0.6 * 9.81 * N.z)]
    km = me.KanesMethod(N, [x, th], [v, om], kd_eqs=[x.diff() - v, th.diff() - om])
    km.kanes_equations([cart, pole], loads)
    return km, [x, th], [v, om], [F]


def _sympy_A_B(km, q, u, r, qv, uv, rv):
    """A, B of sympy's Linearizer (M [q'; u'] = A [q; u] + B r) at (q, u, r), solved numerically; the speed
    derivatives sympy leaves in A at nonzero speeds are given their values from sympy's own M and forcing."""
    M, A, B, order = km.linearize(A_and_B=False, simplify=False)
    assert list(order) == list(r)
    ops = dict(zip(q, qv)) | dict(zip(u, uv)) | dict(zip(r, rv))
    Mf = np.array(km.mass_matrix_full.subs(ops), dtype=float)
    xdot = np.linalg.solve(Mf, np.array(km.forcing_full.subs(ops), dtype=float).ravel())
    ops |= {s.diff(): val for s, val in zip(list(q) + list(u), xdot)}
    Mn = np.array(me.msubs(M, ops), dtype=float)
    An = np.array(me.msubs(A, ops), dtype=float)
    Bn = np.array(me.msubs(B, ops), dtype=float) if r else np.zeros((len(q) + len(u), 0))
    return np.linalg.solve(Mn, An), np.linalg.solve(Mn, Bn)


@pytest.mark.parametrize("case", ["double_equilibrium", "double_moving", "cart_pole_moving"])
def test_A_and_B_equal_sympys_linearizer(case):
    if case.startswith("double"):
        eqs, (km, q, u, r) = kane.derive(double_pendulum()), _sympy_double_pendulum()
        qv, uv, rv = ([0.0, 0.0], [0.0, 0.0], []) if case == "double_equilibrium" else ([0.4, -0.9], [1.3, -0.6], [])
    else:
        eqs, (km, q, u, r) = kane.derive(cart_pole()), _sympy_cart_pole()
        qv, uv, rv = [0.3, 0.25], [0.8, -1.1], [1.7]
    inputs = {"F": rv[0]} if rv else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin = linearize(eqs, qv, uv, inputs=inputs)
    assert lin.steady == (case == "double_equilibrium")
    assert any(issubclass(w.category, NotSteadyWarning) for w in caught) == (not lin.steady)
    A_ref, B_ref = _sympy_A_B(km, q, u, r, qv, uv, rv)
    _close(lin.A, A_ref, 1e-12, "A")
    _close(lin.B, B_ref, 1e-12, "B")
    assert lin.state_names == tuple(map(str, eqs.model.q)) + tuple(map(str, eqs.model.u))
    assert lin.input_names == (("F",) if rv else ())


# ---- central differences of the reduced equations x' = F(x) ------------------------------------------------
def _quat_mul(a, b):
    return np.concatenate([[a[0] * b[0] - a[1:] @ b[1:]], a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])])


def _turned(e, theta):
    """e (x) exp(theta / 2) by scipy: the body-axis rotation vector theta applied to the scalar-first e."""
    x, y, z, w = (Rotation.from_quat([*e[1:], e[0]]) * Rotation.from_rotvec(theta)).as_quat()
    return np.array([w, x, y, z])


def _jr_inverse(theta):
    """The inverse right Jacobian of SO(3) (Sola et al. 2018, Eq. 144): theta' = Jr^-1(theta) omega_body."""
    a = np.linalg.norm(theta)
    K = np.array([[0, -theta[2], theta[1]], [theta[2], 0, -theta[0]], [-theta[1], theta[0], 0]])
    if a < 1e-12:
        return np.eye(3) + K / 2
    return np.eye(3) + K / 2 + (1 / a ** 2 - (1 + np.cos(a)) / (2 * a * np.sin(a))) * K @ K


def _reduced_rhs(dyn, lin, t, p, w):
    """x -> (x_i', u') in the linearization's coordinates (each quaternion e0 turned by a body-axis rotation vector
    theta, theta' = Jr^-1(theta) omega), the dependent coordinates from C(q) = 0 by Newton (finite differences)."""
    names = list(dyn.q_names)
    quats = {}  # joint -> indices in q of its quaternion
    for name, idx in dyn.model.quaternion_indices():
        quats[name] = idx
    coords = list(lin.coordinate_names)

    def place(q, x):
        for n, value in zip(coords, x):
            if n in names:
                q[names.index(n)] = value
        for joint, idx in quats.items():
            theta = np.array([x[coords.index(f"{joint}.r{a}")] if f"{joint}.r{a}" in coords else 0.0 for a in "xyz"])
            q[idx] = _turned(lin.q[idx], theta)
        return q

    dep = [names.index(n) for n in lin.dependent_coordinates]

    def full_q(xi):
        q = place(lin.q.copy(), xi)
        for _ in range(30):
            if not dep:
                break
            C = dyn.configuration_residual(t, q, p)
            if np.max(np.abs(C)) < 1e-15:
                break
            J = np.empty((len(C), len(dep)))
            for k, d in enumerate(dep):
                e = np.zeros_like(q)
                e[d] = 1e-7
                J[:, k] = (dyn.configuration_residual(t, q + e, p) - dyn.configuration_residual(t, q - e, p)) / 2e-7
            q[dep] -= np.linalg.lstsq(J, C, rcond=None)[0]
        return q

    def rhs(x):
        n = len(coords)
        q = full_q(x[:n])
        qd, ud = dyn.rhs(t, q, x[n:], p, w)
        out = np.array([qd[names.index(c)] if c in names else 0.0 for c in coords])
        for joint, idx in quats.items():
            omega = 2 * _quat_mul(q[idx] * [1, -1, -1, -1], qd[idx])[1:]
            cols = [coords.index(f"{joint}.r{a}") for a in "xyz"]
            out[cols] = _jr_inverse(x[cols]) @ omega
        return np.concatenate([out, ud])

    return rhs


def _check_against_differences(eqs, q, u, t=0.3, rtol=1e-7):
    dyn = eqs.compile("numpy")
    lin = linearize(eqs, q, u, t, warn=False)
    p, w = lin.params, lin.inputs
    rhs = _reduced_rhs(dyn, lin, t, p, w)
    names = list(dyn.q_names)
    x0 = np.concatenate([[lin.q[names.index(n)] if n in names else 0.0 for n in lin.coordinate_names], lin.u])
    _close(rhs(x0), lin.rates, 1e-12, "rates")
    fd = np.empty_like(lin.A)
    for k in range(len(x0)):
        h = 1e-5 * max(1.0, abs(x0[k]))
        xp, xm = x0.copy(), x0.copy()
        xp[k] += h
        xm[k] -= h
        fd[:, k] = (rhs(xp) - rhs(xm)) / (2 * h)
    _close(lin.A, fd, rtol, "A against central differences")
    return lin


def test_A_agrees_with_central_differences_on_a_random_tree():
    """A seeded random tree (a quaternion joint, a spring, joint springs, a time-dependent force, an input)."""
    seed = 4
    eqs = kane.derive(random_tree(seed, kinds=["cylindrical", "spherical"], extra_revolute=0))
    q, u = random_state(eqs.model, np.random.default_rng(seed))
    _check_against_differences(eqs, q, u)


def test_A_agrees_with_central_differences_on_constrained_models():
    # rolling disk (holonomic contact height, nonholonomic rolling), leaning, turning and spinning
    eqs = kane.derive(rolling_disk(), dependent=["vx", "vy", "vz"])
    q = np.array([0.1, -0.2, 0.0, 0.3, 0.25, 0.7])
    q[2] = 0.4 * np.cos(q[4])
    lin = _check_against_differences(eqs, q, [0.4, -0.3, 5.0])
    assert lin.dependent_coordinates == ("z",)
    # four-bar: two dependent coordinates through the loop closure
    fb = kane.derive(four_bar())
    dyn = fb.compile("numpy")
    from scipy.optimize import fsolve
    sol = fsolve(lambda x: dyn.configuration_residual(0.0, np.array([0.5, *x]))[:2], [-0.9, -1.2], xtol=1e-14)
    lin = _check_against_differences(fb, np.array([0.5, *sol]), [0.7])
    assert len(lin.dependent_coordinates) == 2 and lin.A.shape == (2, 2)
    # shopping cart of seed 000 (two knife edges, a caster, inputs that depend on time)
    cart = load_model(EXAMPLES / "shopping_cart.toml").derive()
    rng = np.random.default_rng(2)
    _check_against_differences(cart, rng.normal(0, 0.5, cart.model.n_q),
                               rng.normal(0, 0.8, len(cart.u_independent)), t=0.7)


# ---- the upright rolling disk -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def disk():
    return kane.derive(rolling_disk(r=0.4, g=9.81), dependent=["vx", "vy", "vz"])


@pytest.mark.parametrize("spin", [0.5, 2.0, np.sqrt(9.81 / (3 * 0.4)) * 1.001, 6.0])
def test_upright_rolling_disk_eigenvalues_equal_the_classical_closed_form(disk, spin):
    """Thin disk (I_axle = m r^2/2, I_diam = m r^2/4) rolling upright at spin rate w: lambda^2 = (4/5)(g/r - 3 w^2)
    for the lean mode, every other eigenvalue zero: stable exactly when w^2 > g / (3 r)."""
    r, g = 0.4, 9.81
    lin = linearize(disk, {"z": r}, {"w_spin": spin})
    assert lin.steady and np.max(np.abs(lin.residual)) == 0.0
    assert set(lin.cyclic) == {"x", "y", "heading", "spin"}
    lam = lin.eigenvalues(reduced=True)
    pair = np.sqrt(complex(0.8 * (g / r - 3 * spin ** 2)))
    big = lam[np.argsort(-np.abs(lam))[:2]]
    np.testing.assert_allclose(np.sort_complex(big), np.sort_complex(np.array([pair, -pair])), rtol=1e-12,
                               atol=1e-12)
    assert np.max(np.abs(np.sort(np.abs(lam))[:2])) < 1e-12
    unstable = np.max(lin.eigenvalues().real) > 1e-9
    assert unstable == (spin ** 2 < g / (3 * r))


# ---- mechanical form ----------------------------------------------------------------------------------------
def test_mechanical_form_is_mass_matrix_and_potential_hessian_at_equilibrium():
    eqs = kane.derive(double_pendulum())
    dyn = eqs.compile("numpy")
    lin = linearize(eqs, [0.0, 0.0], [0.0, 0.0])
    mech = lin.mechanical()
    _close(mech.M, dyn.mass_matrix(0.0, np.zeros(2)), 1e-14, "M")
    _close(mech.C, np.zeros((2, 2)), 1e-14, "C")
    H = np.empty((2, 2))
    h = 1e-4
    for i in range(2):
        for j in range(2):
            e_i, e_j = np.eye(2)[i] * h, np.eye(2)[j] * h
            V = lambda q: dyn.potential_energy(0.0, q)  # noqa: E731
            H[i, j] = (V(e_i + e_j) - V(e_i - e_j) - V(-e_i + e_j) + V(-e_i - e_j)) / (4 * h * h)
    _close(mech.K, H, 1e-7, "K")
    # away from equilibrium the quadratic pencil keeps A's eigenvalues
    lin = linearize(eqs, [0.4, -0.9], [1.3, -0.6], warn=False)
    m = lin.mechanical()
    n = 2
    pencil = np.block([[np.zeros((n, n)), np.eye(n)], [-np.linalg.solve(m.M, m.K), -np.linalg.solve(m.M, m.C)]])
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(pencil)), np.sort_complex(lin.eigenvalues()),
                               rtol=1e-10, atol=1e-10)


def test_modes_are_eigenvectors_of_A():
    eqs = kane.derive(cart_pole())
    lin = linearize(eqs, [0.0, 0.0], [0.0, 0.0])
    modes = lin.modes()
    for k, lam in enumerate(modes.eigenvalues):
        v = modes.vectors[:, k]
        _close(lin.A @ v, lam * v, 1e-12, f"mode {k}")
        assert np.isclose(np.max(np.abs(v)), 1.0)
    assert modes.eigenvalues[0].real > 0  # the inverted pole falls


# ---- bad input ----------------------------------------------------------------------------------------------
def test_bad_operating_points_are_named(disk):
    eqs = disk
    with pytest.raises(kane.KaneError, match=r"configuration constraint 'contact': residual -0\.1"):
        linearize(eqs, {"z": 0.3}, {"w_spin": 1.0})
    with pytest.raises(kane.KaneError, match=r"motion constraint 'contact' \(row 0\): residual 0\.2"):
        linearize(eqs, {"z": 0.4}, {"vx": 0.2})
    with pytest.raises(kane.KaneError, match="unknown coordinate 'tilt'; known: x, y, z, heading, lean, spin"):
        linearize(eqs, {"tilt": 0.1}, [0, 0, 1])
    with pytest.raises(kane.KaneError, match="unknown speed 'w_tilt'; known: vx, vy, vz, w_heading, w_lean, w_spin"):
        linearize(eqs, {"z": 0.4}, {"w_tilt": 1.0})
    with pytest.raises(kane.KaneError, match="unknown parameter 'mass'; known: g, r, m"):
        linearize(eqs, {"z": 0.4}, [0, 0, 1], params={"mass": 2})
    with pytest.raises(kane.KaneError, match="no second-order form"):
        linearize(eqs, {"z": 0.4}, [0, 0, 4]).mechanical()


# ---- export -------------------------------------------------------------------------------------------------
def test_scipy_state_space_frequency_response_is_the_resolvent():
    """scipy.signal's transfer functions of the exported system at s = i w equals (i w I - A)^-1 B computed directly."""
    from scipy.signal import ss2tf

    lin = linearize(kane.derive(cart_pole()), [0.0, 0.0], [0.0, 0.0])
    sys_ = lin.state_space()
    np.testing.assert_array_equal(sys_.A, lin.A)
    w = np.array([0.3, 2.0, 7.0])
    num, den = ss2tf(sys_.A, sys_.B, sys_.C, sys_.D)  # one transfer function per state
    for wk in w:
        H = np.array([np.polyval(row, 1j * wk) for row in num]) / np.polyval(den, 1j * wk)
        direct = np.linalg.solve(1j * wk * np.eye(4) - lin.A, lin.B[:, 0])
        np.testing.assert_allclose(H, direct, rtol=1e-9, atol=1e-12)
    try:
        import control  # noqa: F401
    except ImportError:
        with pytest.raises(kane.KaneError, match="python-control"):
            lin.to_control()
    else:
        np.testing.assert_array_equal(lin.to_control().A, lin.A)


def test_a_singular_dependent_block_names_the_speeds():
    """A knife-edge sled with vy dependent: vy = tan(th) vx cannot be formed at th = pi/2."""
    s = kane.System("sled")
    s.add_body("b", mass=3.0, com=(0.2, 0, 0), inertia=(0.3, 0.3, 0.5))
    s.add_joint("ground", "b", kane.joints.Planar(), coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_no_slip("knife", "b", (0, 0, 0), (0, 1, 0))
    eqs = kane.derive(s, dependent=["vy"])
    assert linearize(eqs, [0, 0, 0.3], [1.0, 0.5], warn=False).A.shape == (5, 5)
    with pytest.raises(kane.KaneError, match="dependent speeds vy here .*singular"):
        linearize(eqs, [0, 0, np.pi / 2], [1.0, 0.5], warn=False)
