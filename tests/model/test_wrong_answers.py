"""No silent wrong answers: cases that once gave wrong numbers without a word now give the right number (checked
against a hand derivation or a second model) or a clear error naming the joint, constraint or parameter."""

from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.errors import ArgumentError, ComplexArgumentError

G = 9.81
INERTIA = (0.02, 0.03, 0.015)  # central, body axes [kg m^2]


def pendulum(axis_of, mass=1.0, names=("th", "w"), param="a", value=2.0):
    """A body on a revolute joint through the origin, centre of mass 0.5 m below it."""
    s = kane.System("p", gravity=(0, 0, -G))
    a = s.parameter(param, value)
    s.add_body("link", mass=mass(a) if callable(mass) else mass, com=(0, 0, -0.5), inertia=INERTIA)
    s.add_joint("ground", "link", J.Revolute(axis_of(a)), name="hinge", coordinates=[names[0]], speeds=[names[1]])
    return s


def test_a_parametric_axis_is_a_direction():
    """Axis (a, a, 0), a = 2: rotation about n = (1, 1, 0)/sqrt(2). By hand, the inertia about n is
    n^T I n + m (|c|^2 - (n.c)^2) = 0.025 + 0.25 and the gravity moment -m g 0.5 sin(theta)."""
    dyn = kane.derive(pendulum(lambda a: (a, a, 0))).compile(backend="numpy")
    unit = kane.derive(pendulum(lambda a: (2**-0.5, 2**-0.5, 0))).compile(backend="numpy")
    th, w = 0.3, 0.2
    hand = -1.0 * G * 0.5 * np.sin(th) / (0.5 * (INERTIA[0] + INERTIA[1]) + 0.25)
    assert dyn.udot(0.0, [th], [w])[0] == pytest.approx(hand, rel=1e-12)
    assert unit.udot(0.0, [th], [w])[0] == pytest.approx(hand, rel=1e-12)
    assert dyn.udot(0.0, [th], [w], params={"a": 7.0})[0] == pytest.approx(hand, rel=1e-12)


def test_an_axis_that_is_zero_at_the_default_parameters_names_the_joint():
    with pytest.raises(kane.ModelError, match="joint 'hinge'.*axis is zero"):
        kane.derive(pendulum(lambda a: (a - 2, 0, 0)))


def test_axis_components_are_never_strings_and_never_evaluated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostile = "__import__('pathlib').Path('INJECTED').touch() or 1"
    for axis, why in [((hostile, 0, 0), "got the string"), (("x", 0, 0), "got the string"),
                      ((float("nan"), 0, 0), "expected a finite real"), ((0, float("inf"), 0), "expected a finite real")]:
        with pytest.raises(kane.ModelError, match=why):
            J.Revolute(axis)
    assert not Path("INJECTED").exists()


def test_user_names_never_collide_with_kane_intermediates():
    """A parameter z0 as the mass, a coordinate z1 and a speed z_2: M = z0 (0.5)^2 + I_yy by hand."""
    s = pendulum(lambda a: (0, 1, 0), mass=lambda z0: z0, names=("z1", "z_2"), param="z0", value=2.0)
    eqs = kane.derive(s)
    dyn = eqs.compile(backend="numpy")
    assert dyn.mass_matrix(0.0, [0.3])[0, 0] == pytest.approx(2.0 * 0.25 + INERTIA[1], rel=1e-14)
    hand = -2.0 * G * 0.5 * np.sin(0.3) / (2.0 * 0.25 + INERTIA[1])
    assert dyn.udot(0.0, [0.3], [0.1])[0] == pytest.approx(hand, rel=1e-12)
    text = eqs.to_text()
    defined = [line.split(" = ")[0] for line in text.splitlines() if not line.startswith("#")]
    assert "z0" not in defined and "z1" not in defined  # kane's own names are printed apart from the user's
    assert sp.Symbol("z0") in eqs.program.expression("M").free_symbols


@pytest.mark.parametrize("add, name", [
    (lambda s: s.add_motion_constraint("c", [sp.Integer(1)]), "c"),
    (lambda s: s.add_motion_constraint("c", [0]), "c"),
    (lambda s: s.add_motion_constraint("c", []), "c"),
    (lambda s: s.add_motion_constraint("c", [sp.Symbol("th") + 1]), "c"),
    (lambda s: s.add_no_slip("knife", "link", (0, 0, 0), (0, 0, 0)), "knife"),
    (lambda s: s.add_loop_closure("loop", "link", (0, 0, 0), "link", (0, 0, 1)), "loop"),
    (lambda s: s.add_point_velocity_constraint("pv", "ground", (0, 0, 0)), "pv"),
    (lambda s: s.add_rolling_disk("disk", "link", 0.0), "disk"),
], ids=["row_1", "row_0", "no_rows", "row_without_speeds", "zero_direction", "body_to_itself", "ground_point",
        "radius_0"])
def test_constraints_that_constrain_nothing_are_refused_by_name(add, name):
    s = pendulum(lambda a: (0, 1, 0))
    add(s)
    with pytest.raises(kane.ModelError, match=f"constraint '{name}'"):
        kane.derive(s)


def test_run_time_parameters_are_checked_for_type_and_range():
    s = pendulum(lambda a: (0, 1, 0), mass=lambda m: m, param="m", value=1.0)
    s.parameter("k", 5.0, lower=1.0, upper=10.0)
    dyn = kane.derive(s).compile(backend="numpy")
    for bad, why in [({"m": None}, "expected a real number"), ({"m": "2"}, "expected a real number"),
                     ({"m": -1.0}, r"in \[0, inf\]"), ({"k": 11.0}, r"in \[1, 10\]"), ({"m": np.nan}, "finite"),
                     ({"m": True}, "expected a real number")]:
        with pytest.raises(kane.ModelError, match=f"parameter '{next(iter(bad))}'.*{why}"):
            dyn.udot(0.0, [0.1], [0.0], params=bad)
    hand = -3.0 * G * 0.5 * np.sin(0.1) / (3.0 * 0.25 + INERTIA[1])
    assert dyn.udot(0.0, [0.1], [0.0], params={"m": 3.0})[0] == pytest.approx(hand, rel=1e-12)
    with pytest.raises(kane.ModelError, match="default 0 lies outside"):
        kane.System("x").parameter("c", 0.0, lower=1.0)


def test_a_joint_torque_is_no_potential():
    """The energy of a pendulum is the same with or without an input torque on its joint."""
    plain = pendulum(lambda a: (0, 1, 0))
    driven = pendulum(lambda a: (0, 1, 0))
    driven.add_joint_torque("hinge", [driven.input("tau", 0.7)])
    e0 = kane.derive(plain).compile(backend="numpy")
    e1 = kane.derive(driven).compile(backend="numpy")
    q, u = [0.4], [1.3]
    assert e1.potential_energy(0.0, q) == pytest.approx(e0.potential_energy(0.0, q), rel=1e-14)
    assert e1.potential_energy(0.0, q) == pytest.approx(-1.0 * G * 0.5 * np.cos(0.4), rel=1e-12)
    assert e1.energy(0.0, q, u) == pytest.approx(e0.energy(0.0, q, u), rel=1e-14)


def _disk(gravity, normal=None):
    s = kane.System("disk", gravity=gravity)
    s.add_body("disk", mass=1.5, inertia=(0.06, 0.12, 0.06))
    s.add_joint("ground", "disk", J.Free(), name="float", coordinates=["x", "y", "z", "e0", "e1", "e2", "e3"],
                speeds=["w1", "w2", "w3", "v1", "v2", "v3"])
    s.add_rolling_disk("contact", "disk", 0.4, axis=(0, 1, 0), plane_normal=normal)
    return kane.derive(s, dependent=["v1", "v2", "v3"]).compile(backend="numpy")


def test_a_rolling_disk_rolls_on_the_plane_normal_to_gravity():
    """The world turned by -90 deg about x (z up becomes y up): the same motion in body axes, so the same u'."""
    up_z, up_y = _disk((0, 0, -G)), _disk((0, -G, 0))
    explicit = _disk((0, -G, 0), normal=(0, 1, 0))
    c, s_ = np.cos(-np.pi / 4), np.sin(-np.pi / 4)  # quaternion of the world rotation Rx(-90 deg)
    qw = np.array([c, s_, 0.0, 0.0])
    rng = np.random.default_rng(4)
    e = rng.normal(size=4)
    e /= np.linalg.norm(e)
    w0, x0, y0, z0 = qw
    w1, x1, y1, z1 = e
    e_rot = [w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1, w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
             w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1, w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1]
    p = np.array([0.3, -0.2, 0.5])
    p_rot = np.array([p[0], p[2], -p[1]])  # Rx(-90 deg): (x, y, z) -> (x, z, -y)
    w = np.array([0.4, 9.0, -0.7])
    q_z = np.concatenate([p, e])
    q_y = np.concatenate([p_rot, e_rot])
    np.testing.assert_allclose(up_y.udot(0.0, q_y, w), up_z.udot(0.0, q_z, w), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(explicit.udot(0.0, q_y, w), up_y.udot(0.0, q_y, w), rtol=1e-13, atol=1e-13)


def test_complex_and_misshapen_arguments_get_clear_errors():
    dyn = kane.derive(pendulum(lambda a: (0, 1, 0))).compile(backend="numpy")
    with pytest.raises(ComplexArgumentError, match="complex") as info:
        dyn.udot(0.0, np.array([0.1 + 1e-20j]), [0.0])
    assert isinstance(info.value, TypeError)
    for q, u in [(0.1, [0.0]), (np.zeros((1, 1, 1)), [0.0]), (np.zeros((3, 1)), np.zeros((2, 1))),
                 ([0.1, 0.2], [0.0]), (["a"], [0.0])]:
        with pytest.raises(ArgumentError, match=r"q of shape \(1,\) or \(B, 1\)|real numbers"):
            dyn.udot(0.0, q, u)


def test_gravity_may_be_a_parameter_of_the_same_system():
    """With g a parameter, the pendulum's u' scales with g at run time: -g m 0.5 sin(theta) / I."""
    s = pendulum(lambda a: (0, 1, 0))
    s.set_gravity((0, 0, -s.parameter("g", 9.81)))
    dyn = kane.derive(s).compile(backend="numpy")
    inertia = 0.25 + INERTIA[1]
    for g in (9.81, 1.62):
        hand = -g * 0.5 * np.sin(0.2) / inertia
        assert dyn.udot(0.0, [0.2], [0.0], params={"g": g})[0] == pytest.approx(hand, rel=1e-12)
    with pytest.raises(kane.ModelError, match="gravity.*string"):
        s.set_gravity(("0", "0", "-g"))


def test_q_and_u_follow_the_order_in_which_joints_were_added():
    """Joints a1, a2 (child of a1), b1: q = (a1, a2, b1), depth-first as declared (not breadth-first); a joint
    added before its parent's comes right after the parent."""
    s = kane.System("tree")
    for body in ("A1", "A2", "B1", "C"):
        s.add_body(body, mass=1.0, com=(0, 0, -0.5), inertia=INERTIA)
    s.add_joint("ground", "A1", J.Revolute("y"), name="a1", coordinates=["qa1"], speeds=["ua1"])
    s.add_joint("A1", "A2", J.Revolute("y"), name="a2", coordinates=["qa2"], speeds=["ua2"])
    s.add_joint("B1", "C", J.Revolute("x"), name="c", coordinates=["qc"], speeds=["uc"])
    s.add_joint("ground", "B1", J.Revolute("y"), name="b1", coordinates=["qb1"], speeds=["ub1"])
    model = s.compile()
    assert [str(x) for x in model.q] == ["qa1", "qa2", "qb1", "qc"]
    assert [str(x) for x in model.u] == ["ua1", "ua2", "ub1", "uc"]
    assert [b.name for b in model.bodies] == ["A1", "A2", "B1", "C"]


def test_a_parametric_placement_rotation_is_checked_at_the_default_parameters():
    """The same matrix is refused with a literal 2 and with a parameter whose default is 2; with the default 1 it
    is a rotation (a quarter turn about z) and the pendulum hangs as with the numeric matrix."""
    for value, ok in ((2.0, False), (1.0, True)):
        s = kane.System("p", gravity=(0, 0, -G))
        c = s.parameter("c", value)
        s.add_body("link", mass=1.0, com=(0, 0, -0.5), inertia=INERTIA)
        s.add_joint("ground", "link", J.Revolute("y"), name="hinge", parent_rotation=[[0, -c, 0], [c, 0, 0], [0, 0, 1]])
        if not ok:
            with pytest.raises(kane.ModelError, match="joint 'hinge' field 'parent_rotation': expected a proper "
                                                      r"rotation.*c = 2"):
                s.compile()
            with pytest.raises(kane.ModelError, match="'parent_rotation': expected a proper rotation"):
                kane.System("x").add_joint("ground", "link", J.Revolute("y"),
                                           parent_rotation=[[0, -2, 0], [2, 0, 0], [0, 0, 1]])
        else:
            # F (and the body with it) turned a quarter about the vertical: the joint axis is the body's y still, so
            # the pendulum swings as the unturned one, -g 0.5 sin(theta) / (I_yy + 0.25)
            dyn = kane.derive(s).compile(backend="numpy")
            hand = -G * 0.5 * np.sin(0.3) / (INERTIA[1] + 0.25)
            assert dyn.udot(0.0, [0.3], [0.0])[0] == pytest.approx(hand, rel=1e-12)


def test_a_zero_quaternion_is_refused_in_q0_and_at_the_start_of_a_run():
    s = kane.System("ball", gravity=(0, 0, -G))
    s.add_body("ball", mass=1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "ball", J.Free(), name="float", q0=(0, 0, 1, 0, 0, 0, 0))
    with pytest.raises(kane.ModelError, match=r"joint 'float': q0 holds the quaternion .* of norm 0"):
        s.compile()
    s2 = kane.System("ball", gravity=(0, 0, -G))
    s2.add_body("ball", mass=1.0, inertia=(0.1, 0.1, 0.1))
    s2.add_joint("ground", "ball", J.Free(), name="float")
    dyn = kane.derive(s2).compile(backend="numpy")
    with pytest.raises(kane.ModelError, match="joint 'float': q0 holds the quaternion"):
        kane.simulate.simulate(dyn, (0.0, 1.0), [0, 0, 1, 0, 0, 0, 0], np.zeros(6))
    traj = kane.simulate.simulate(dyn, (0.0, 1.0), [0, 0, 1, 1, 0, 0, 0], np.zeros(6), rtol=1e-10, atol=1e-12)
    assert traj.q[-1, 2] == pytest.approx(1.0 - 0.5 * G, rel=1e-9)  # free fall: z = z0 - g t^2 / 2


def _gimbal_121():
    s = kane.System("g", gravity=(0, 0, -G))
    s.add_body("b", mass=1.0, com=(0, 0, -0.3), inertia=(0.1, 0.2, 0.3))
    s.add_joint("ground", "b", J.Gimbal("121", speeds=kane.Speeds.BODY), name="gim")
    return kane.derive(s).compile(backend="numpy")


def test_a_singular_state_raises_the_same_named_error_for_one_state_and_a_batch():
    """Gimbal 121 with body speeds: q' has 1/sin(q2), singular at q2 = 0 (by hand, W = [[0, s3, c3]/s2, ...])."""
    from kane.errors import SingularStateError

    dyn = _gimbal_121()
    with pytest.raises(SingularStateError, match=r"ZeroDivisionError.*sin\(q_gim_2\)") as one:
        dyn.qdot(0.0, np.zeros(3), np.ones(3))
    Q = np.array([[0.1, 0.4, 0.2], [0.3, 0.0, 0.5], [0.2, 0.3, 0.1]])  # the second state is singular
    with pytest.raises(SingularStateError, match=r"state 1 of a batch of 3") as many:
        dyn.qdot(0.0, Q, np.ones((3, 3)))
    assert isinstance(one.value, ArithmeticError) and one.value.quantity == many.value.quantity
    assert many.value.state == 1
    # the regular states still evaluate, to the hand formula q1' = (s3 w2 + c3 w3) / s2
    q = Q[0]
    hand = (np.sin(q[2]) * 1.0 + np.cos(q[2]) * 1.0) / np.sin(q[1])
    assert dyn.qdot(0.0, Q[[0, 2]], np.ones((2, 3)))[0, 0] == pytest.approx(hand, rel=1e-12)
    # a NaN given as the state comes back as NaN from both paths (nothing singular about the equations)
    assert np.isnan(dyn.qdot(0.0, np.full(3, np.nan), np.ones(3))).all()
    assert np.isnan(dyn.qdot(0.0, np.full((2, 3), np.nan), np.ones((2, 3)))).all()


def test_a_force_singular_at_t_0_names_the_quantity():
    s = pendulum(lambda a: (0, 1, 0))
    s.add_force("link", (1 / kane.t, 0, 0), point=(0, 0, -0.5))
    dyn = kane.derive(s).compile(backend="numpy")
    from kane.errors import SingularStateError

    with pytest.raises(SingularStateError, match=r"ZeroDivisionError .* = cos\(th\)/t"):
        dyn.udot(0.0, [0.1], [0.0])
    with pytest.raises(SingularStateError, match=r"state 0 of a batch"):
        dyn.udot(np.array([0.0, 1.0]), np.zeros((2, 1)), np.zeros((2, 1)))
    with pytest.raises(kane.SimulationError, match=r"cos\(th\)/t"):
        kane.simulate.simulate(dyn, (0.0, 1.0), [0.1], [0.0])


def test_a_singular_dependent_block_names_the_dependent_speeds():
    """A knife-edge sled whose ground-frame y rate is the dependent speed: the edge's normal row is
    (-sin th, cos th, 0) (by hand), so the block is cos(th) and its condition 1 / |cos th|, singular when the sled
    turns across y at th = pi/2. A run toward it is warned past 1e6 and stopped past 1e12, state saved."""
    from kane.errors import SingularStateError
    from kane.symbolic.dynamics import SingularityWarning

    s = kane.System("sled")
    s.add_body("sled", mass=2.0, inertia=(0.1, 0.1, 0.2))
    s.add_joint("ground", "sled", J.Planar(), name="plane", coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_no_slip("edge", "sled", (0, 0, 0), (0, 1, 0))
    dyn = kane.derive(s, dependent=["vy"]).compile(backend="numpy")
    for th in (0.0, 0.3, 1.2, np.pi / 2 - 1e-9):
        assert dyn.dependent_block_condition(0.0, [0.0, 0.0, th]) == pytest.approx(1 / abs(np.cos(th)), rel=1e-6)
    with pytest.warns(SingularityWarning, match=r"dependent speeds vy has condition number .* th=1\.57"):
        dyn.dependent_block_monitor()(0.0, [0.0, 0.0, np.pi / 2 - 1e-7], [1.0, 0.5])
    with pytest.raises(SingularStateError, match=r"dependent speeds vy .* cannot be solved for here"):
        dyn.dependent_block_monitor()(0.0, [0.0, 0.0, np.pi / 2 - 1e-13], [1.0, 0.5])
    # a run started there stops at once with the state saved, rather than integrating garbage
    with pytest.raises(kane.SimulationError, match=r"dependent speeds vy .* cannot be solved for") as info:
        kane.simulate.simulate(dyn, (0.0, 1.0), [0.0, 0.0, np.pi / 2 - 1e-13], [0.1, 1.0],
                               monitors={"dependent_block": dyn.dependent_block_monitor()})  # as `kane simulate` does
    assert info.value.t_good == 0.0 and info.value.q[2] == np.pi / 2 - 1e-13


def test_the_power_of_the_loads_closes_the_work_energy_balance():
    """E' = the power of the loads without a potential (the work-energy theorem), checked against a central
    difference of E along (q', u') on a seeded random tree with forces, couples, springs, dampers and inputs."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "algorithms"))
    from _trees import random_tree

    dyn = kane.derive(random_tree(3, kinds=["revolute", "prismatic", "spherical", "gimbal_body"])).compile(
        backend="numpy")
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = dyn.model.normalize_quaternions(np.array(dyn.model.q0) + rng.uniform(-0.5, 0.5, dyn.n_q))
        u, t = rng.normal(0, 1.0, dyn.n_u), 0.4
        qd, ud = dyn.rhs(t, q, u)
        h = 1e-6
        dE = (dyn.energy(t + h, q + h * qd, u + h * ud) - dyn.energy(t - h, q - h * qd, u - h * ud)) / (2 * h)
        assert dyn.power(t, q, u) == pytest.approx(dE, rel=1e-6, abs=1e-7)


def test_a_driven_run_reports_its_work_energy_balance(tmp_path):
    """The pushed shopping cart: the energy changes by the work of the push (9.5 J), and the summary says so with
    a small residual instead of a relative 'energy change' of 1."""
    from click.testing import CliRunner

    from kane.cli import main

    root = Path(__file__).resolve().parents[2]
    out = CliRunner().invoke(main, ["simulate", str(root / "examples" / "shopping_cart.toml"), "-o",
                                    str(tmp_path / "cart.h5")], terminal_width=200)
    assert out.exit_code == 0, out.output
    change = float(out.output.split("energy change")[1].split()[1])
    work = float(out.output.split("work of inputs and non-conservative loads")[1].split()[1])
    residual = float(out.output.split("work-energy residual (relative)")[1].split()[1])
    assert change > 1.0 and work == pytest.approx(change, rel=1e-3) and residual < 1e-3


def test_an_exactly_singular_dependent_block_names_the_dependent_speeds():
    """The sled with its x rate dependent (chosen at th = 0.5): the block is -sin(th), exactly zero at th = 0,
    where u' divides by it; the error names the dependent speed and the pivot, for one state and a batch."""
    from kane.errors import SingularStateError

    s = kane.System("sled")
    s.add_body("sled", mass=2.0, inertia=(0.1, 0.1, 0.2))
    s.add_joint("ground", "sled", J.Planar(), name="plane", coordinates=["x", "y", "th"], speeds=["vx", "vy", "w"])
    s.add_no_slip("edge", "sled", (0, 0, 0), (0, 1, 0))
    dyn = kane.derive(s, dependent=["vx"], reference_q=[0.0, 0.0, 0.5]).compile(backend="numpy")
    with pytest.raises(SingularStateError, match=r"constraint block of the dependent speeds vx: they cannot be "):
        dyn.udot(0.0, [0.0, 0.0, 0.0], [1.0, 0.2])
    with pytest.raises(SingularStateError, match=r"state 1 of a batch of 2 .* dependent speeds vx"):
        dyn.udot(0.0, np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 0.0]]), np.array([[1.0, 0.2], [1.0, 0.2]]))
    # at th = 0.5 the sled moves along its edge: vx = vy cos(th)/sin(th) by hand
    assert dyn.full_speeds(0.0, [0.0, 0.0, 0.5], [1.0, 0.2])[0] == pytest.approx(np.cos(0.5) / np.sin(0.5), rel=1e-12)
