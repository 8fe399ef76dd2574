"""Hostile model files, URDF leniency and API argument shapes (issue 10, cases 1-6 and 12-15).

Each case checks a clear error (a kane.KaneError naming the file, table, key and line where known) or a number
against an independent reference (math module arithmetic, a hand derivation, the same model written plainly).
A SIGALRM guard turns a regression into a hang into a failed test rather than a stuck suite.
"""

import math
import signal
import sysconfig
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner

import kane
from kane import joints as J
from kane.cli import main
from kane.errors import ArgumentError, DerivationError, KaneError, ModelError
from kane.io import ExpressionError, ModelFileError, parse_expression, parse_model, parse_number
from kane.io.urdf import UrdfWarning, parse_urdf
from kane.model.model import float_value

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PENDULUM = """
[parameters]
g = 9.81
m = 2.0
c = 0.5

[model]
gravity = [0, "-g", 0]

[[bodies]]
name = "rod"
mass = "m"
com = ["c", 0, 0]
inertia = [0.01, 0.02, 0.03]

[[joints]]
name = "hinge"
parent = "ground"
child = "rod"
type = "revolute"
axis = "z"
coordinates = ["q1"]
speed_names = ["u1"]
q0 = [0.3]

[simulation]
t_end = 2.0
"""


@contextmanager
def no_hang(seconds=60):
    """Fail (instead of hanging the suite) if the block runs past ``seconds``."""
    def stop(signum, frame):
        raise AssertionError(f"still running after {seconds} s: a hang")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def refused(text, *fragments, path="hostile.toml"):
    """The ModelFileError of ``text``, checked to name the file and each fragment."""
    with no_hang(), pytest.raises(ModelFileError) as info:
        parse_model(text, path)
    message = str(info.value)
    assert path in message
    for fragment in fragments:
        assert fragment in message, message
    return info.value


# ---- case 1: towers are refused at once, evaluated in floating point -----------------------------------------
@pytest.mark.parametrize("key, old, new", [
    ("mass", 'mass = "m"', 'mass = "exp(exp(exp(exp(exp(1)))))"'),
    ("q0", "q0 = [0.3]", 'q0 = ["g**g**g**g"]'),
    ("com", 'com = ["c", 0, 0]', 'com = ["c", "pi**pi**pi**pi", 0]'),
    ("t_end", "t_end = 2.0", 't_end = "exp(exp(exp(10)))"'),
])
def test_towers_are_refused_naming_the_key(key, old, new):
    error = refused(PENDULUM.replace(old, new), f"key '{key}'", "beyond the range of a double")
    assert error.key == key and error.line == PENDULUM.replace(old, new).splitlines().index(new) + 1


def test_float_evaluation_matches_the_math_module():
    g, m = sp.Symbol("g"), sp.Symbol("m")
    expr = parse_expression("sin(g)*m**2/3 - exp(m)*atan2(g, m) + sqrt(g) - abs(-m)", {"g": g, "m": m})
    by_hand = math.sin(9.81) * 4 / 3 - math.exp(2) * math.atan2(9.81, 2) + math.sqrt(9.81) - 2
    assert float_value(expr, {g: 9.81, m: 2.0}) == pytest.approx(by_hand, rel=1e-15)
    with pytest.raises(OverflowError):
        float_value(parse_expression("g**g**g**g", {"g": g}), {g: 9.81})


# ---- case 2: an expression of parameters is one symbol of the derivation -------------------------------------
def test_a_long_parameter_sum_is_computed_once_and_does_not_grow_the_equations():
    terms = "+".join(f"sin(m*{i})" for i in range(1, 400))
    assert len(terms) < 10_000
    com_value = math.fsum(math.sin(2.0 * i) for i in range(1, 400))
    with no_hang():
        long = parse_model(PENDULUM.replace('com = ["c", 0, 0]', f'com = ["{terms}", 0, 0]'), "long.toml")
        plain = parse_model(PENDULUM.replace('com = ["c", 0, 0]', f'com = [{com_value!r}, 0, 0]'), "plain.toml")
        eq_long, eq_plain = long.derive(), plain.derive()
    counts_long, counts_plain = eq_long.count_ops(), eq_plain.count_ops()
    assert counts_long["M+f"].total <= counts_plain["M+f"].total  # the sum is one symbol inside M and f
    assert counts_long["constants"].functions >= 399  # ... computed once, in the parameter prelude
    dyn_long, dyn_plain = eq_long.compile(backend="numpy"), eq_plain.compile(backend="numpy")
    q, u = np.array([0.7]), np.array([-0.4])
    # by hand: (I_zz + m c^2) u' = -m g c cos(q)
    hand = -2.0 * 9.81 * com_value * math.cos(0.7) / (0.03 + 2.0 * com_value**2)
    assert dyn_long.udot(0.0, q, u)[0] == pytest.approx(hand, rel=1e-12)
    assert dyn_plain.udot(0.0, q, u)[0] == pytest.approx(hand, rel=1e-12)


# ---- case 3: values beyond double range ------------------------------------------------------------------------
@pytest.mark.parametrize("old, new, key", [
    ('com = ["c", 0, 0]', 'com = ["1e308*10", 0, 0]', "com"),
    ('mass = "m"', 'mass = "exp(710)"', "mass"),
    ("t_end = 2.0", 't_end = "1e308*10"', "t_end"),
    ("m = 2.0", 'm = "1e300*1e20"', "m"),
    ('inertia = [0.01, 0.02, 0.03]', 'inertia = [0.01, 0.02, "cosh(1000)"]', "inertia"),
])
def test_values_beyond_double_range_are_refused_naming_the_field(old, new, key):
    refused(PENDULUM.replace(old, new), f"key '{key}'", "range of a double")


def test_parse_number_refuses_overflow_and_keeps_finite_values():
    with pytest.raises(ExpressionError, match="range of a double"):
        parse_number("exp(710)")
    assert parse_number("exp(709)") == math.exp(709)
    assert parse_number("2*pi") == 2 * math.pi


# ---- case 4: zero degrees of freedom --------------------------------------------------------------------------
def test_a_model_with_zero_degrees_of_freedom_is_a_clear_error_naming_the_file():
    welded = PENDULUM.replace('type = "revolute"', 'type = "weld"').replace('axis = "z"\n', "")
    welded = welded.replace('coordinates = ["q1"]\nspeed_names = ["u1"]\nq0 = [0.3]\n', "")
    lm = parse_model(welded, "welded.toml")
    with pytest.raises(ModelFileError, match=r"welded\.toml.*zero degrees of freedom"):
        lm.derive()
    s = kane.System("bolted")
    s.add_body("plate", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("ground", "plate", J.Weld())
    with pytest.raises(ModelError, match="'bolted' has zero degrees of freedom"):
        kane.derive(s)


# ---- case 5: errors name the right key, the line, plain numbers, the file ------------------------------------
def test_joint_builder_errors_name_their_own_key():
    text = PENDULUM.replace('axis = "z"', 'axis = "z"\nparent_rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 2]]')
    error = refused(text, "key 'parent_rotation'", "rotation")
    assert error.line == text.splitlines().index("parent_rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 2]]") + 1


def test_a_body_named_ground_is_reported_under_name():
    text = PENDULUM.replace('name = "rod"', 'name = "ground"')
    line = text.splitlines().index('name = "ground"') + 1
    refused(text, "[[bodies]] #1 'ground', key 'name'", f"(line {line})")


def test_quoted_table_headers_keep_their_line_numbers():
    text = PENDULUM.replace("[[bodies]]", '[["bodies"]]').replace('mass = "m"', 'mass = "m +"')
    error = refused(text, "key 'mass'")
    assert error.line == text.splitlines().index('mass = "m +"') + 1


def test_numbers_are_shown_plainly():
    s = kane.System("s")
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(ModelError) as info:
        s.add_joint("ground", "b", J.Revolute("z"), q0=[np.float64(-np.inf)])
    assert "got -inf" in str(info.value) and "np.float64" not in str(info.value)


def test_derive_stage_errors_name_the_file():
    text = PENDULUM + """
[[constraints]]
name = "stop"
type = "motion"
rows = ["u1"]

[[constraints]]
name = "stop_again"
type = "motion"
rows = ["2*u1"]
"""
    with pytest.raises(KaneError, match=r"model file twice\.toml:.*redundant"):
        parse_model(text, "twice.toml").derive()


def test_the_dependent_option_is_checked_like_the_simulation_table(tmp_path):
    cart = EXAMPLES / "shopping_cart.toml"
    result = CliRunner().invoke(main, ["derive", str(cart), "--dependent", "v2,nope", "-o", str(tmp_path / "e")])
    assert result.exit_code == 2
    assert "shopping_cart.toml" in result.output and "--dependent" in result.output
    assert "no speed named 'nope'; expected some of: u1, v2, u2, w4" in result.output
    pend = parse_model(PENDULUM, "pendulum.toml")
    with pytest.raises(ModelFileError, match="no permanent constraints"):
        pend.derive(["u1"])
    with pytest.raises(ArgumentError, match="list of speed names"):
        pend.derive("u1")


# ---- case 6: what used to be raw exceptions -------------------------------------------------------------------
@pytest.mark.parametrize("old, new, key", [
    ('mass = "m"', 'mass = "acos(2)"', "mass"),                       # ValueError (math domain)
    ("q0 = [0.3]", 'q0 = ["1/(g - 9.81)"]', "q0"),                    # ZeroDivisionError at the values
    ('com = ["c", 0, 0]', 'com = ["' + "(" * 300 + "c" + ")" * 300 + '", 0, 0]', "com"),   # RecursionError
    ("q0 = [0.3]", 'q0 = ["log(c - 0.5)"]', "q0"),                    # log(0) at the values
    ("q0 = [0.3]", "q0 = [[0.3]]", "q0"),                             # TypeError: a list in a list
    ('axis = "z"', "axis = [0, 0, 1e308]\nparent_point = [\"exp(709)*10\", 0, 0]", "parent_point"),
    ("t_end = 2.0", "t_end = 2.0\ndependent = [\"u1\", \"u1\"]", "dependent"),  # KeyError-prone names
])
def test_formerly_raw_exceptions_are_model_file_errors_with_the_key(old, new, key):
    refused(PENDULUM.replace(old, new), f"key '{key}'")


# ---- case 12: URDF inertias: round-off accepted with a warning, real faults refused with the link --------------
def _urdf(inertia: str) -> str:
    return f"""<robot name="r"><link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/><inertia {inertia}/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>"""


def test_a_round_off_triangle_violation_is_repaired_with_a_warning():
    text = _urdf('ixx="0.001" iyy="0.001" izz="0.0020000004" ixy="0" ixz="0" iyz="0"')
    with pytest.warns(UrdfWarning, match="link 'arm'.*repaired"):
        robot = parse_urdf(text)
    model = robot.system.compile()
    I = np.array(model.bodies[model.body_index("arm")].inertia, dtype=float)
    assert np.allclose(np.diag(I), [0.0010000002, 0.0010000002, 0.0020000004], rtol=0, atol=1e-16)
    assert robot.repaired["arm"] == pytest.approx(2e-10, rel=1e-6)
    with pytest.raises(ModelError, match="link 'arm' <inertia>"):
        parse_urdf(text, strict=True)


def test_a_tiny_negative_eigenvalue_is_accepted_and_a_real_fault_refused():
    with pytest.warns(UrdfWarning, match="link 'arm'"):
        parse_urdf(_urdf('ixx="-1e-22" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"')).system.compile()
    bad = _urdf('ixx="0.001" iyy="0.001" izz="0.005" ixy="0" ixz="0" iyz="0"')
    with pytest.raises(ModelError, match=r"link 'arm' <inertia>.*miss by 0\.0015 kg m\^2.*inertia_tolerance"):
        parse_urdf(bad)
    with pytest.warns(UrdfWarning):
        robot = parse_urdf(bad, inertia_tolerance=0.01)
    model = robot.system.compile()
    assert np.allclose(np.diag(np.array(model.bodies[model.body_index("arm")].inertia, dtype=float)),
                       [0.0025, 0.0025, 0.005], rtol=1e-12, atol=1e-12)


# ---- case 13: a massless moving subtree: refused naming the joints, or welded ----------------------------------
MASSLESS = """<robot name="hand">
  <link name="palm"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger1"/><link name="finger2"/>
  <joint name="wrist" type="revolute"><parent link="world"/><child link="palm"/><axis xyz="0 0 1"/></joint>
  <joint name="knuckle" type="revolute"><parent link="palm"/><child link="finger1"/><axis xyz="0 0 1"/></joint>
  <joint name="tip" type="revolute"><parent link="finger1"/><child link="finger2"/><axis xyz="0 0 1"/></joint>
  <link name="world"/>
</robot>"""


def test_joints_that_move_no_mass_are_refused_by_name_or_welded():
    with pytest.raises(ModelError, match="joints 'knuckle', 'tip' move no mass.*massless='weld'"):
        parse_urdf(MASSLESS, gravity=(0, -9.81, 0))
    with pytest.warns(UrdfWarning, match="'knuckle', 'tip'"):
        robot = parse_urdf(MASSLESS, gravity=(0, -9.81, 0), massless="weld")
    assert robot.welded == ("knuckle", "tip")
    dyn = kane.derive(robot.system).compile(backend="numpy")
    recursive = kane.algorithms.RecursiveDynamics(robot.system, method=kane.Formulation.ABA)
    assert dyn.n_u == 1
    # by hand: (I_zz + m c^2) u' = -m g c cos(q); the symbolic and the recursive formulation both give it
    hand = -1.5 * 9.81 * 0.2 * math.cos(0.4) / (0.03 + 1.5 * 0.2**2)
    assert dyn.udot(0.0, [0.4], [0.0])[0] == pytest.approx(hand, rel=1e-12)
    assert recursive.udot(0.0, np.array([0.4]), np.array([0.0]))[0] == pytest.approx(hand, rel=1e-12)


ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"


@pytest.mark.skipif(not ROBOTS.is_dir(), reason="example-robot-data is not installed")
def test_common_robots_load_with_repaired_inertias_and_a_real_fault_is_refused():
    for path in ("go1_description/urdf/go1.urdf", "anymal_b_simple_description/robots/anymal.urdf",
                 "hyq_description/robots/hyq_no_sensors.urdf", "tiago_description/robots/tiago.urdf",
                 "icub_description/robots/icub.urdf", "allegro_hand_description/urdf/allegro_left_hand.urdf"):
        with pytest.warns(UrdfWarning, match="repaired"):
            robot = kane.io.load_urdf(ROBOTS / path, mimic="independent")
        assert robot.repaired and max(robot.repaired.values()) <= 1e-5 + 1e-6
        robot.system.compile()
    pr2 = ROBOTS / "pr2_description/urdf/pr2.urdf"
    with pytest.raises(ModelError, match="pr2.urdf: link 'sensor_mount_link' <inertia>"):
        kane.io.load_urdf(pr2, mimic="independent")
    with pytest.warns(UrdfWarning):
        kane.io.load_urdf(pr2, mimic="independent", inertia_tolerance=1e-2).system.compile()
    with pytest.raises(ModelError, match="romeo.urdf: joints 'LHand', 'RHand', 'LFinger12'.* move no mass"):
        kane.io.load_urdf(ROBOTS / "romeo_description/urdf/romeo.urdf", mimic="independent")


# ---- case 14: a root link called "ground" ----------------------------------------------------------------------
def test_a_root_link_named_ground_is_renamed():
    text = """<robot name="arm"><link name="ground"/>
  <link name="palm"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist" type="revolute"><parent link="ground"/><child link="palm"/><axis xyz="0 0 1"/></joint>
</robot>"""
    with pytest.warns(UrdfWarning, match="link 'ground' is imported as body 'ground_link'"):
        robot = parse_urdf(text, gravity=(0, -9.81, 0))
    assert robot.renamed == {"ground": "ground_link"} and robot.root == "ground_link"
    dyn = kane.derive(robot.system).compile(backend="numpy")
    hand = -1.5 * 9.81 * 0.2 * math.cos(0.4) / (0.03 + 1.5 * 0.2**2)
    assert dyn.udot(0.0, [0.4], [0.0])[0] == pytest.approx(hand, rel=1e-12)


# ---- case 15: argument shapes of the Python API -------------------------------------------------------------------
@pytest.fixture(scope="module")
def chain():
    lm = kane.io.load_model(EXAMPLES / "planar_chain.toml")
    return lm, lm.derive().compile(backend="numpy")


@pytest.mark.parametrize("q, u", [(1.0, None), (np.zeros((1, 1, 1)), None), (np.zeros((3, 7)), np.zeros((4, 7))),
                                  (np.zeros(7), np.zeros(3)), (np.zeros((7, 1)), None)])
def test_wrong_shapes_are_argument_errors_with_the_expected_shape(chain, q, u):
    _, dyn = chain
    calls = [lambda: dyn.udot(0.0, q, np.zeros(7) if u is None else u),
             lambda: dyn.rhs(0.0, q, np.zeros(7) if u is None else u)]
    if u is None:
        calls.append(lambda: dyn.mass_matrix(0.0, q))
    for call in calls:
        with pytest.raises(ArgumentError, match=r"expected q of shape \(7,\) or \(B, 7\)"):
            call()


@pytest.mark.parametrize("kwargs, message", [
    ({"t_span": "x"}, "t_span = 'x': expected"), ({"t_span": (0.0, -1.0)}, "end not before the start"),
    ({"t_span": (0.0, math.nan)}, "finite times"), ({"method": "foo"}, "unknown integration method 'foo'"),
    ({"rtol": -1.0}, "rtol must be a finite number > 0"), ({"u0": np.zeros((2, 7))}, "u0 has 14 entries, expected 7"),
])
def test_simulate_argument_errors_are_kane_errors(chain, kwargs, message):
    lm, dyn = chain
    q0, u0 = lm.initial_state(dyn)
    args = {"t_span": (0.0, 0.01), "q0": q0, "u0": u0, **kwargs}
    with pytest.raises(ArgumentError, match=message) as info:
        kane.simulate.simulate(dyn, **args)
    assert isinstance(info.value, ValueError)


def test_no_derivation_error_is_lost_for_python_models():
    """A model built in Python (no file) keeps kane's own error types."""
    s = kane.System("free")
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("ground", "b", J.Revolute("z"))
    s.add_motion_constraint("c1", [sp.Symbol("u_ground_b")])
    s.add_motion_constraint("c2", [2 * sp.Symbol("u_ground_b")])
    with pytest.raises(DerivationError):
        kane.derive(s)
