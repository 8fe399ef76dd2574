"""Constraint rows, automatic choice of dependent speeds (seed 000 Eq. 43) and embedding (Eqs. 5, 44-45)."""

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kane
from kane import joints as J


def four_bar(q0=(0.5, -0.9, -1.2)):
    """Crank (1 m), coupler (2 m), rocker (1.5 m) hinged about z; the rocker's tip is closed on the ground pivot
    at (2, 0, 0) by a point loop closure at velocity level. Gravity along -y."""
    s = kane.System("four_bar", gravity=(0, -9.81, 0))
    lengths = (1.0, 2.0, 1.5)
    parent, point = "ground", (0, 0, 0)
    for i, L in enumerate(lengths):
        s.add_body(f"l{i}", mass=1.0 + i, com=(L / 2, 0, 0), inertia=(0.01, (1.0 + i) * L**2 / 12, (1.0 + i) * L**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i + 1}"],
                    speeds=[f"u{i + 1}"], q0=[q0[i]])
        parent, point = f"l{i}", (L, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0), directions=[(1, 0, 0), (0, 1, 0)])
    return s


def _assemble(dyn, q_guess):
    """Solve C(q) = 0 for q2, q3 given q1 (scipy's fsolve; independent of kane's own projection)."""
    from scipy.optimize import fsolve

    q1 = q_guess[0]
    sol = fsolve(lambda x: dyn.configuration_residual(0.0, np.array([q1, *x]))[:2], q_guess[1:], xtol=1e-14)
    q = np.array([q1, *sol])
    assert np.abs(dyn.configuration_residual(0.0, q)).max() < 1e-12
    return q


def test_four_bar_rank_and_automatic_choice():
    eqs = kane.derive(four_bar())
    # two independent constraints by the SVD, one degree of freedom
    assert len(eqs.u_independent) == 1 and len(eqs.u_dependent) == 2
    sv = eqs.embedding.singular_values
    assert len(sv) == 2 and sv[1] > 1e-3


def _closure_in_3d(scale_z_row=None):
    """The four-bar closed by a point closure in all three directions: its z row vanishes identically (a planar
    mechanism), or, with ``scale_z_row``, a third row that is a multiple of the x row."""
    s = four_bar()
    s._constraints.clear()
    third = (0, 0, 1) if scale_z_row is None else (scale_z_row, 0, 0)
    s.add_loop_closure("closure", "l2", (1.5, 0, 0), "ground", (2.0, 0, 0),
                       directions=[(1, 0, 0), (0, 1, 0), third])
    return s


@pytest.mark.parametrize("scale", [None, 3.0], ids=["zero_row", "multiple_of_x"])
def test_redundant_constraint_rows_are_refused_or_dropped_by_name(scale):
    with pytest.raises(kane.DerivationError, match=r"constraint rows 'closure' row \d are redundant.*redundant='drop'"):
        kane.derive(_closure_in_3d(scale))
    with pytest.warns(kane.symbolic.RedundantConstraintWarning, match="'closure' row"):
        eqs = kane.derive(_closure_in_3d(scale), redundant="drop", dependent=["u2", "u3"])
    assert len(eqs.embedding.rows) == 2
    # the same motion as the two-row closure, and the dropped row's multiplier is reported as undefined (NaN)
    ref = kane.derive(four_bar(), dependent=["u2", "u3"]).compile(backend="numpy")
    dyn = eqs.compile(backend="numpy")
    q = _assemble(ref, [0.5, -0.3, 2.0])
    np.testing.assert_allclose(dyn.udot(0.0, q, [1.2]), ref.udot(0.0, q, [1.2]), rtol=1e-12)
    lam, lam_ref = dyn.constraint_forces(0.0, q, [1.2])["closure"], ref.constraint_forces(0.0, q, [1.2])["closure"]
    assert np.isnan(lam).sum() == 1
    kept = lam[~np.isnan(lam)]
    if scale is None:  # the x and y rows are the same rows as the reference's: the same multipliers
        np.testing.assert_allclose(kept, lam_ref, rtol=1e-9)
    else:  # rows x, y, 3x: the force along x is lam_x + 3 lam_3x, whichever of the two was kept
        x_force = np.nan_to_num(lam[0]) + 3.0 * np.nan_to_num(lam[2])
        np.testing.assert_allclose([x_force, lam[1]], lam_ref, rtol=1e-9)


def test_four_bar_embedded_energy_and_velocity_constraint():
    eqs = kane.derive(four_bar(), dependent=["u2", "u3"])
    dyn = eqs.compile()
    q0 = _assemble(dyn, [0.5, -0.3, 2.0])
    u0 = np.array([1.5])
    E0 = dyn.energy(0.0, q0, u0)
    sol = solve_ivp(lambda t, x: np.concatenate(dyn.rhs(t, x[:3], x[3:])), (0.0, 1.0), np.concatenate([q0, u0]),
                    method="DOP853", rtol=1e-11, atol=1e-12)
    qf, uf = sol.y[:3, -1], sol.y[3:, -1]
    assert dyn.energy(0.0, qf, uf) == pytest.approx(E0, rel=1e-8)
    assert np.abs(dyn.constraint_residual(0.0, qf, uf)).max() < 1e-10
    # at velocity level the closure drifts only by the integration error
    assert np.abs(dyn.configuration_residual(0.0, qf)).max() < 1e-7


def test_singular_dependent_choice_is_a_model_error():
    # a knife edge only involves the sled's velocity: its heading rate cannot be the dependent speed
    with pytest.raises(kane.ModelError, match="singular"):
        kane.derive(_sled(), dependent=["w"])


def test_degenerate_reference_configuration_falls_back_to_a_generic_one():
    # with every link along the x axis the closure's x-row vanishes; the choice is judged at a generic state
    eqs = kane.derive(four_bar(q0=(0.0, 0.0, 0.0)), dependent=["u1", "u2"])
    assert [str(u) for u in eqs.u_independent] == ["u3"]


def test_wrong_number_of_dependent_speeds_and_unknown_names():
    with pytest.raises(kane.ModelError, match="exactly"):
        kane.derive(four_bar(), dependent=["u2"])
    with pytest.raises(kane.ModelError, match="not speeds"):
        kane.derive(four_bar(), dependent=["u2", "w9"])


def test_motion_constraint_must_be_linear_in_speeds():
    s = kane.System("x")
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("ground", "b", J.Planar(), coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_motion_constraint("bad", [s.u("vx") * s.u("vy")])
    with pytest.raises(kane.ModelError, match="linear in"):
        kane.derive(s)


def test_knife_edge_rows_and_embedding_against_hand_derivation():
    """A sled (planar joint, joint-rate speeds) with a knife edge at its origin along its y axis: the row is
    [-sin th, cos th, 0]; embedded with vy dependent, M~ = C^T M C with C = [1, tan th, 0; 0, 0, 1]."""
    s = kane.System("sled")
    s.add_body("b", mass=3.0, com=(0.2, 0, 0), inertia=(0.3, 0.3, 0.5))
    s.add_joint("ground", "b", J.Planar(), coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_no_slip("edge", "b", (0, 0, 0), (0, 1, 0))
    eqs = kane.derive(s, dependent=["vy"])
    dyn = eqs.compile()
    q = np.array([0.3, -0.1, 0.4])
    A, _ = dyn.constraints(0.0, q)
    th = q[2]
    assert np.allclose(A, [[-np.sin(th), np.cos(th), 0.0]])
    free = kane.derive(_without_constraints()).compile()
    M = free.mass_matrix(0.0, q)
    C = np.array([[1.0, 0.0], [np.tan(th), 0.0], [0.0, 1.0]])
    assert np.allclose(dyn.mass_matrix(0.0, q), C.T @ M @ C, rtol=1e-12, atol=1e-12)


def _without_constraints():
    t = kane.System("sled_free")
    t.add_body("b", mass=3.0, com=(0.2, 0, 0), inertia=(0.3, 0.3, 0.5))
    t.add_joint("ground", "b", J.Planar(), coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    return t


def _sled():
    t = _without_constraints()
    t.add_no_slip("edge", "b", (0, 0, 0), (0, 1, 0))
    return t


def test_knife_edge_constraint_force_is_the_lateral_force_on_the_mass_centre():
    """The knife edge's multiplier is the lateral force at the edge: with no other load on the sled, Newton's law
    for the mass centre (at c along the body x axis) gives F = m (c w' + v w), v the forward speed."""
    dyn = kane.derive(_sled(), dependent=["vy"]).compile()
    m, c = 3.0, 0.2
    q = np.array([0.3, -0.1, 0.4])
    u = np.array([1.2, 0.7])  # x' and theta'; y' = tan(theta) x' from the knife edge
    wdot = dyn.udot(0.0, q, u)[1]
    v = u[0] / np.cos(q[2])
    lam = dyn.constraint_forces(0.0, q, u)["edge"][0]
    assert lam == pytest.approx(m * (c * wdot + v * u[1]), rel=1e-10)


def _euler_disk(extra=(), r=0.4, m=1.5, g=9.81):
    """A thin disk on the floor z = 0: centre on slides x, y, z, then a 312 gimbal (heading, lean, spin), rolling
    without slip ("contact"). ``extra``: "again" declares the same contact a second time (three rows that repeat
    the first three), "still" a zero row (the x slide's origin has no velocity along y at any configuration)."""
    s = kane.System("disk_euler", gravity=(0, 0, -g))
    for name in ("sx", "sy", "sz"):
        s.add_body(name, mass=0)
    s.add_body("disk", mass=m, inertia=(m * r ** 2 / 4, m * r ** 2 / 2, m * r ** 2 / 4))
    for parent, child, axis, q, u in (("ground", "sx", "x", "x", "vx"), ("sx", "sy", "y", "y", "vy"),
                                      ("sy", "sz", "z", "z", "vz")):
        s.add_joint(parent, child, J.Prismatic(axis), coordinates=[q], speeds=[u])
    s.add_joint("sz", "disk", J.Gimbal("312"), coordinates=["heading", "lean", "spin"],
                speeds=["w_heading", "w_lean", "w_spin"])
    s.add_rolling_disk("contact", "disk", r, axis=(0, 1, 0), plane_normal=(0, 0, 1))
    if "again" in extra:
        s.add_rolling_disk("again", "disk", r, axis=(0, 1, 0), plane_normal=(0, 0, 1))
    if "still" in extra:
        s.add_point_velocity_constraint("still", "sx", (0, 0, 0), directions=[(0, 1, 0)])
    return s


def test_dropped_rows_of_a_rolling_disk_leave_the_contact_force_of_the_disk_without_them():
    ref = kane.derive(_euler_disk()).compile(backend="numpy")
    with pytest.warns(kane.symbolic.RedundantConstraintWarning, match="'again' row 0, 'again' row 1, 'again' row 2"
                      ", 'still' row 0 are redundant"):
        eqs = kane.derive(_euler_disk(("again", "still")), redundant="drop")
    assert eqs.constraint_layout["again"].dropped == (0, 1, 2) and eqs.constraint_layout["still"].dropped == (0,)
    assert eqs.constraint_layout["contact"].dropped == ()  # the first declared rows are kept, the repeats dropped
    dyn = eqs.compile(backend="numpy")
    m, g, r = 1.5, 9.81, 0.4
    # upright at rest, and upright rolling straight at 10 rad/s: the floor carries the weight, N = m g, no friction
    for spin in (0.0, 10.0):
        q, u = np.array([0.0, 0.0, r, 0.3, 0.0, 0.0]), np.array([0.0, 0.0, spin])
        forces = dyn.constraint_forces(0.0, q, u)
        np.testing.assert_allclose(forces["contact"], [0.0, 0.0, m * g], rtol=1e-12, atol=1e-12)
        assert np.isnan(forces["again"]).all() and np.isnan(forces["still"]).all()
    # leaned, turning and spinning: the same forces as the disk declared without the redundant rows
    rng = np.random.default_rng(4)
    for _ in range(5):
        lean = rng.uniform(-0.5, 0.5)
        q = np.array([*rng.normal(size=2), r * np.cos(lean), rng.uniform(-3, 3), lean, rng.uniform(-3, 3)])
        u = rng.normal(0.0, 3.0, 3)
        np.testing.assert_allclose(dyn.udot(0.0, q, u), ref.udot(0.0, q, u), rtol=1e-12, atol=1e-12)
        forces, expected = dyn.constraint_forces(0.0, q, u), ref.constraint_forces(0.0, q, u)["contact"]
        np.testing.assert_allclose(forces["contact"], expected, rtol=1e-12, atol=1e-12 * m * g)
        assert np.isnan(forces["again"]).all() and np.isnan(forces["still"]).all()


def _disk_on_slider(tilt):
    """A disk spinning on a cart that slides along x, rolling on a plane through the origin whose normal is
    tilted by ``tilt`` about y: level, the disk rolls as the cart slides (one degree of freedom); tilted away from
    the slide, the contact would have to climb the plane: the rolling rows leave no independent speed."""
    r = 0.3
    s = kane.System("disk_on_slider", gravity=(0, 0, -9.81))
    s.add_body("cart", mass=2.0, inertia=(0.1, 0.1, 0.1))
    s.add_body("disk", mass=1.0, inertia=(r * r / 4, r * r / 2, r * r / 4))
    s.add_joint("ground", "cart", J.Prismatic("x"), coordinates=["x"], speeds=["v"], parent_point=(0, 0, r))
    s.add_joint("cart", "disk", J.Revolute("y"), coordinates=["spin"], speeds=["w"])
    s.add_rolling_disk("contact", "disk", r, axis=(0, 1, 0), plane_normal=(np.sin(tilt), 0, np.cos(tilt)))
    return s


def test_constraints_that_leave_nothing_free_are_refused_by_name():
    with pytest.warns(kane.symbolic.RedundantConstraintWarning):
        level = kane.derive(_disk_on_slider(0.0), redundant="drop")
    assert [str(u) for u in level.u_independent] == ["w"]  # v = r w: the contact point v - r w stays still
    dyn = level.compile(backend="numpy")
    np.testing.assert_allclose(dyn.full_speeds(0.0, [0.0, 0.0], [2.0]), [0.6, 2.0], rtol=1e-14)
    for redundant in ("error", "drop"):
        with pytest.raises(kane.DerivationError, match=r"'disk_on_slider': the permanent constraints 'contact' "
                           r"leave no independent speed.*v, w\): nothing can move; besides, constraint rows "
                           r"'contact' row 1 are redundant"):
            kane.derive(_disk_on_slider(0.3), redundant=redundant)
    # a switched system's mode may hold everything on purpose: derived without independent speeds when asked
    with pytest.warns(kane.symbolic.RedundantConstraintWarning):
        held = kane.derive(_disk_on_slider(0.3), redundant="drop", immobile="allow")
    assert held.u_independent == () and [str(u) for u in held.u_dependent] == ["v", "w"]
    np.testing.assert_allclose(held.compile(backend="numpy").full_speeds(0.0, [0.0, 0.0], []), [0.0, 0.0], atol=0)
    with pytest.raises(kane.ModelError, match="immobile must be one of \\['error', 'allow'\\], got 'yes'"):
        kane.derive(_disk_on_slider(0.3), immobile="yes")


def test_a_declared_q0_off_a_loop_closure_is_named_at_derivation():
    # crank 0, coupler 0, rocker 0: the rocker's tip at (4.5, 0), 2.5 m from its ground pivot (2, 0) along x
    with pytest.warns(kane.symbolic.InconsistentInitialStateWarning,
                      match=r"'four_bar'.*q0 violates.*'closure' \(max \|C\(q0\)\| = 2\.5\)"):
        kane.derive(four_bar(q0=(0.0, 0.0, 0.0)), dependent=["u2", "u3"])
    dyn = kane.derive(four_bar(), dependent=["u2", "u3"]).compile(backend="numpy")
    q = _assemble(dyn, [0.5, -0.3, 2.0])  # a closed loop: derivation says nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kane.derive(four_bar(q0=tuple(q)))
        kane.derive(four_bar(q0=(0.0, 0.0, 0.0)).compile())  # a Model declares no initial state of its own


TWO_LINKS = """
[model]
name = "two_links"
gravity = [0, -9.81, 0]

[[bodies]]
name = "a"
mass = 1.0
com = [0.5, 0, 0]
inertia = [0.01, 0.1, 0.1]

[[bodies]]
name = "b"
mass = 1.0
com = [0.5, 0, 0]
inertia = [0.01, 0.1, 0.1]

[[joints]]
name = "shoulder"
parent = "ground"
child = "a"
type = "revolute"
axis = "z"
coordinates = ["q1"]
speed_names = ["u1"]
q0 = [{q1}]

[[joints]]
name = "elbow"
parent = "a"
child = "b"
type = "revolute"
axis = "z"
parent_point = [1, 0, 0]
coordinates = ["q2"]
speed_names = ["u2"]
q0 = [{q2}]

[[constraints]]
name = "on_the_wall"
type = "loop_closure"
body_a = "b"
point_a = [1, 0, 0]
body_b = "ground"
point_b = [1.5, 0, 0]
directions = [[1, 0, 0]]
"""


def test_a_model_files_q0_off_its_closure_is_named_at_derivation():
    # two 1 m links, the tip held on the wall x = 1.5: stretched out (q = 0) the tip is at x = 2, 0.5 m off
    with pytest.warns(kane.symbolic.InconsistentInitialStateWarning,
                      match=r"'two_links'.*'on_the_wall' \(max \|C\(q0\)\| = 0\.5\)"):
        kane.io.parse_model(TWO_LINKS.format(q1=0.0, q2=0.0), "two_links.toml").derive()
    q1 = 0.4  # cos(q1) + cos(q1 + q2) = 1.5 by hand
    q2 = np.arccos(1.5 - np.cos(q1)) - q1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kane.io.parse_model(TWO_LINKS.format(q1=q1, q2=repr(float(q2))), "two_links.toml").derive()
