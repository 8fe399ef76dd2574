"""TOML model files: the examples load and derive, agree with the Python-built systems, and every malformed
file gives a ModelFileError naming the file, table and key, with nothing executed."""

import runpy
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J
from kane.io import LoadedModel, ModelFileError, load_model, parse_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ["shopping_cart", "disk_on_ramp", "spherical_wrist", "rolling_disk", "planar_chain"]
DOF = {"shopping_cart": 2, "disk_on_ramp": 1, "spherical_wrist": 3, "rolling_disk": 3, "planar_chain": 7}


@pytest.fixture(scope="module")
def loaded():
    return {n: load_model(EXAMPLES / f"{n}.toml") for n in NAMES}


@pytest.fixture(scope="module")
def compiled(loaded):
    return {n: m.derive().compile() for n, m in loaded.items()}


@pytest.mark.parametrize("name", NAMES)
def test_example_loads_derives_and_evaluates(loaded, compiled, name):
    m, dyn = loaded[name], compiled[name]
    assert isinstance(m, LoadedModel) and isinstance(m.system, kane.System)
    assert dyn.n_u == DOF[name]
    q0, u0 = m.initial_state(dyn)
    M = dyn.mass_matrix(0.0, q0)
    assert np.allclose(M, M.T) and np.all(np.linalg.eigvalsh(M) > 0)
    assert np.all(np.isfinite(dyn.udot(0.0, q0, u0)))


def test_cart_file_gives_the_mass_matrix_of_the_python_cart_and_of_the_energy_by_hand(compiled):
    toml = compiled["shopping_cart"]
    script = runpy.run_path(str(EXAMPLES / "shopping_cart.py"))
    py = kane.derive(script["build"](), dependent=["v2", "w4"]).compile()
    rng = np.random.default_rng(11)
    mB, IB, mC, L1, L2, L3 = 20.0, 2.0, 1.0, 0.4, 0.9, 0.1
    for _ in range(4):
        q = rng.uniform(-1.2, 1.2, 4)
        u = rng.normal(size=2)
        assert np.allclose(toml.mass_matrix(0.0, q), py.mass_matrix(0.0, q), rtol=1e-12, atol=1e-12)
        inputs = {"F": 3.0, "tau": -0.5}
        assert np.allclose(toml.forcing(0.0, q, u, inputs=inputs), py.forcing(0.0, q, u, inputs=inputs),
                           rtol=1e-12, atol=1e-12)
        # kinetic energy by hand (seed 000 Eq. 60: the caster's rate from the no-slip constraint)
        s4, c4 = np.sin(q[3]), np.cos(q[3])

        def kinetic(u1, u2):
            u3 = (-s4 * u1 + L2 * c4 * u2) / L3
            vB = np.array([u1, u2 * L1])
            vP3 = np.array([u1, u2 * L2]) - L3 * u3 * np.array([-s4, c4])
            return 0.5 * mB * vB @ vB + 0.5 * IB * u2**2 + 0.5 * mC * vP3 @ vP3

        e = np.eye(2)
        by_hand = np.array([[kinetic(*(e[i] + e[j])) - kinetic(*e[i]) - kinetic(*e[j]) for j in range(2)]
                            for i in range(2)])
        assert np.allclose(toml.mass_matrix(0.0, q), by_hand, rtol=1e-12, atol=1e-12)


def test_cart_input_schedules_are_evaluated(loaded, compiled):
    m, dyn = loaded["shopping_cart"], compiled["shopping_cart"]
    fn = m.input_function(dyn)
    q0, u0 = m.initial_state(dyn)
    values = fn(0.7, q0, u0)
    assert values["F"] == pytest.approx(20.0 * np.exp(-0.7))
    assert values["tau"] == pytest.approx(np.sin(1.4) * np.exp(-0.7))
    assert m.q0["q4"] == 0.3 and m.simulation.dependent == ("v2", "w4") and m.simulation.t_end == 8.0


def test_disk_on_ramp_file_gives_eq42(compiled):
    dyn = compiled["disk_on_ramp"]
    m, J_, r, g, th = 2.0, 0.25, 0.5, 9.81, 0.3
    q = np.array([0.4, 1.3])
    assert dyn.u_names == ("u1",)
    assert dyn.mass_matrix(0.0, q)[0, 0] == pytest.approx(m + J_ / r**2, rel=1e-12)
    assert dyn.forcing(0.0, q, np.array([0.8]), inputs={"Ff": 5.0})[0] == pytest.approx(-m * g * np.sin(th))


def test_wrist_file_matches_the_python_wrist(compiled):
    s = kane.System("wrist")
    M_, L, G, I1, I2, I3 = (s.parameter(n, v) for n, v in (("M", 2.0), ("L", 0.3), ("G", 9.81), ("I1", 0.05),
                                                            ("I2", 0.06), ("I3", 0.02)))
    T, F = [s.input(f"T{k}") for k in (1, 2, 3)], [s.input(f"F{k}") for k in (1, 2, 3)]
    s.gravity = (-G, 0, 0)
    s.add_body("C", mass=M_, com=(0, 0, L), inertia=(I1, I2, I3))
    s.add_joint("ground", "C", J.Gimbal("323", speeds=J.Speeds.BODY), coordinates=["q1", "q2", "q3"],
                speeds=["u1", "u2", "u3"])
    s.add_torque("C", T, frame="C")
    s.add_force("C", F, point=(0, 0, L), frame="C")
    py, toml = kane.derive(s).compile(), compiled["spherical_wrist"]
    rng = np.random.default_rng(3)
    inputs = {"T1": 0.3, "T2": -0.2, "T3": 0.1, "F1": 1.0, "F2": 0.5, "F3": -0.7}
    for _ in range(3):
        q, u = rng.uniform(0.3, 1.2, 3), rng.normal(size=3)
        assert np.allclose(toml.udot(0.0, q, u, inputs=inputs), py.udot(0.0, q, u, inputs=inputs),
                           rtol=1e-12, atol=1e-12)
        assert np.allclose(toml.qdot(0.0, q, u), py.qdot(0.0, q, u), rtol=1e-12, atol=1e-12)


def test_rolling_disk_file_gives_inertia_about_the_contact_point(compiled):
    dyn = compiled["rolling_disk"]
    m, r = 1.5, 0.4
    q = np.array([0.0, 0.0, r, 1.0, 0.0, 0.0, 0.0])  # upright: the contact is r below the centre
    d = np.array([0.0, 0.0, -r])
    I_Q = np.diag([m * r**2 / 4, m * r**2 / 2, m * r**2 / 4]) + m * (d @ d * np.eye(3) - np.outer(d, d))
    assert dyn.u_dependent_names == ("v1", "v2", "v3")
    assert np.allclose(dyn.mass_matrix(0.0, q), I_Q, rtol=1e-12, atol=1e-12)


def test_planar_chain_file_is_the_prr_robot(compiled):
    dyn = compiled["planar_chain"]
    q = np.zeros(7)
    # horizontal at rest: the potential energy is zero and the first link's inertia about joint 1 is the
    # whole chain's moment of inertia about the base
    assert dyn.energy(0.0, q, np.zeros(7)) == pytest.approx(0.0, abs=1e-12)
    izz = (1.0 + 0.01) / 12
    expected = sum(izz + (k + 0.5) ** 2 for k in range(7))
    assert dyn.mass_matrix(0.0, q)[0, 0] == pytest.approx(expected, rel=1e-12)


# ---- malformed files ------------------------------------------------------------------------------------------
BASE = """\
[model]
name = "pendulum"
gravity = [0, 0, "-g"]

[parameters]
g = 9.81
m = 1.0

[[bodies]]
name = "link"
mass = "m"
com = [0, 0, -0.5]
inertia = [0.02, 0.02, 0.001]

[[joints]]
name = "hinge"
parent = "ground"
child = "link"
type = "revolute"
axis = "y"
coordinates = ["theta"]
speed_names = ["omega"]
"""


def _error(tmp_path, text, name="bad.toml") -> ModelFileError:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    err = info.value
    assert isinstance(err, kane.ModelError)
    msg = str(err)
    assert str(path) in msg and "\n" not in msg and "Traceback" not in msg
    return err


def test_base_file_loads(tmp_path):
    p = tmp_path / "ok.toml"
    p.write_text(BASE)
    m = load_model(p)
    assert m.name == "pendulum" and m.parameters == {"g": 9.81, "m": 1.0}
    assert len(m.derive().u_independent) == 1


def test_wrong_type_names_table_key_line_and_expectation(tmp_path):
    err = _error(tmp_path, BASE.replace('mass = "m"', "mass = [1, 2]"))
    assert err.table == "[[bodies]] #1 'link'" and err.key == "mass" and err.line == 11
    assert "expected a number or an expression string, got a list" in str(err)
    assert "line 11" in str(err) and "[[bodies]] #1 'link'" in str(err)


def test_unknown_key_lists_the_allowed_keys(tmp_path):
    err = _error(tmp_path, BASE.replace('axis = "y"', 'axis = "y"\nspeed = "body"'))
    assert err.key == "speed" and err.table == "[[joints]] #1 'hinge'" and err.line == 21
    assert "allowed keys:" in str(err) and "speed_names" in str(err) and "speeds" in str(err)


def test_unknown_table_and_missing_key(tmp_path):
    err = _error(tmp_path, BASE + "\n[simulaton]\nt_end = 1.0\n")
    assert err.key == "simulaton" and "[simulation]" in str(err)
    err = _error(tmp_path, BASE.replace('child = "link"\n', ""))
    assert err.key == "child" and "missing required key 'child'" in str(err)


def test_bad_expression_is_located(tmp_path):
    err = _error(tmp_path, BASE.replace('gravity = [0, 0, "-g"]', 'gravity = [0, 0, "-g*"]'))
    assert err.table == "[model]" and err.key == "gravity" and err.line == 3 and "syntax" in str(err)
    err = _error(tmp_path, BASE.replace('mass = "m"', 'mass = "mm"'))
    assert "unknown name 'mm'" in str(err) and "did you mean 'm'" in str(err)


@pytest.mark.parametrize("attack", ["__import__('os').system('touch {marker}')", "g.__class__",
                                    "().__class__.__bases__[0]", "open('{marker}', 'w')",
                                    "lambda: 0", "[x for x in (1,)]"])
def test_code_in_an_expression_is_refused_and_never_run(tmp_path, attack):
    marker = tmp_path / "pwned"
    text = BASE.replace('mass = "m"', f'mass = "{attack.format(marker=marker)}"')
    err = _error(tmp_path, text)
    assert err.key == "mass" and err.table == "[[bodies]] #1 'link'" and "bad expression" in str(err)
    assert not marker.exists()


def test_attribute_access_in_a_load_expression(tmp_path):
    text = BASE + '\n[[loads]]\ntype = "force"\nbody = "link"\nvector = ["g.__class__", 0, 0]\n'
    err = _error(tmp_path, text)
    assert err.table == "[[loads]] #1" and err.key == "vector" and "attribute access" in str(err)


def test_unknown_body_and_joint_names(tmp_path):
    err = _error(tmp_path, BASE.replace('parent = "ground"', 'parent = "base"'))
    assert err.key == "parent" and "no body named 'base'" in str(err) and "ground" in str(err)
    text = BASE + '\n[[constraints]]\nname = "stop"\ntype = "joint_lock"\njoint = "elbow"\n'
    err = _error(tmp_path, text)
    assert err.table == "[[constraints]] #1 'stop'" and "no joint named 'elbow'" in str(err) and "hinge" in str(err)


def test_malformed_toml_gives_the_line(tmp_path):
    err = _error(tmp_path, BASE.replace("m = 1.0", "m = 1.0.0"))
    assert err.line == 7 and "not valid TOML" in str(err)


def test_wrong_joint_options_and_simulation_settings(tmp_path):
    err = _error(tmp_path, BASE.replace('axis = "y"', 'axis = "w"'))
    assert err.key == "type" or err.key == "axis"
    assert "'x', 'y', 'z'" in str(err)
    err = _error(tmp_path, BASE.replace('type = "revolute"\naxis = "y"', 'type = "planar"\naxis = "y"'))
    assert err.key == "axis" and "planar joint" in str(err)
    err = _error(tmp_path, BASE + '\n[simulation]\nmethod = "euler"\n')
    assert err.key == "method" and "'rk4'" in str(err)
    err = _error(tmp_path, BASE + '\n[simulation]\nmethod = "rk4"\n')
    assert err.key == "dt" and "fixed-step" in str(err)
    err = _error(tmp_path, BASE + '\n[simulation]\nrtol = "fast"\n')
    assert err.key == "rtol" and "unknown name 'fast'" in str(err)


def test_name_clash_between_a_parameter_and_a_coordinate(tmp_path):
    err = _error(tmp_path, BASE.replace('coordinates = ["theta"]', 'coordinates = ["g"]'))
    assert err.key == "coordinates" and "'g' is already used" in str(err)


def test_parse_model_from_text_and_parameter_expressions():
    text = BASE.replace("m = 1.0", 'm = "2*g/9.81"')
    m = parse_model(text, "inline.toml")
    assert m.parameters["m"] == pytest.approx(2.0)
    assert m.path == Path("inline.toml")
    bodies = m.system.compile().bodies
    assert bodies[0].mass == sp.Symbol("m")


KITCHEN_SINK = '''
[model]
name = "sink"
gravity = [0, 0, "-g"]
[parameters]
g = 9.81
k = 50.0
c = "0.1*k"
L = 0.5
[inputs]
tau = "0.1*sin(t) - 0.01*w1"
[[bodies]]
name = "A"
mass = 1.0
com = [0, 0, "-L/2"]
inertia = [0.1, 0.1, 0.01, 0, 0, 0]
[[bodies]]
name = "B"
mass = 0.5
inertia = [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.01]]
[[bodies]]
name = "P"
mass = 0.2
inertia = [0.001, 0.001, 0.001]
[[bodies]]
name = "Q"
particle = true
mass = 0.1
[[bodies]]
name = "W"
mass = 0.1
inertia = [0.001, 0.001, 0.001]
[[joints]]
name = "j1"
parent = "ground"
child = "A"
type = "universal"
sequence = "12"
coordinates = ["a1", "a2"]
speed_names = ["w1", "w2"]
q0 = [0.1, "pi/20"]
[[joints]]
name = "j2"
parent = "A"
child = "B"
type = "prismatic"
axis = [0, 0, -1]
parent_point = [0, 0, "-L"]
parent_rotation = { sequence = "3", angles = ["pi/2"] }
[[joints]]
name = "j3"
parent = "B"
child = "P"
type = "spherical"
child_point = [0, 0, 0.1]
[[joints]]
name = "j4"
parent = "B"
child = "W"
type = "weld"
parent_point = [0.1, 0, 0]
[[joints]]
name = "j5"
parent = "P"
child = "Q"
type = "revolute"
axis = "x"
parent_point = [0, 0.1, 0]
child_point = [0, 0, 0.2]
[[loads]]
type = "spring"
body_a = "ground"
point_a = [0, 0, 0]
body_b = "B"
point_b = [0, 0, 0]
stiffness = "k"
rest_length = "L"
damping = "c"
[[loads]]
type = "spring"
body_a = "A"
point_a = [0, 0, 0]
body_b = "P"
point_b = [0, 0, 0]
tension = "k*stretch + 2*stretch**3 + 0.1*stretch_rate"
[[loads]]
type = "joint_spring"
joint = "j2"
stiffness = "k"
rest = 0.1
[[loads]]
type = "joint_torque"
joint = "j1"
values = ["tau", 0]
[[constraints]]
name = "lock"
type = "joint_lock"
joint = "j2"
transient = true
[[constraints]]
name = "pv"
type = "point_velocity"
body = "B"
directions = [[1, 0, 0]]
transient = true
[[constraints]]
name = "loop"
type = "loop_closure"
body_a = "A"
point_a = [0, 0, 0]
body_b = "B"
point_b = [0, 0, 0]
frames = true
transient = true
[simulation]
t_end = 0.5
method = "rk4"
dt = 0.001
'''


def test_every_joint_load_and_constraint_kind_loads():
    m = parse_model(KITCHEN_SINK, "sink.toml")
    eqs = m.derive()
    assert eqs.transient_names == ("lock", "pv", "loop") and len(eqs.u_independent) == 7
    model = eqs.model
    assert [pj.joint.kind for pj in model.joints] == ["gimbal", "prismatic", "spherical", "weld", "revolute"]
    assert len(model.springs) == 2 and len(model.joint_loads) == 2
    assert [b.name for b in model.bodies if b.is_particle] == ["Q"]
    assert m.q0["a2"] == pytest.approx(np.pi / 20) and m.parameters["c"] == pytest.approx(5.0)
    assert m.simulation.method == "rk4" and m.simulation.dt == 0.001
    dyn = eqs.compile()
    q0, u0 = m.initial_state(dyn)
    inputs = m.input_function(dyn)(0.3, q0, u0 + 1.0)
    assert inputs["tau"] == pytest.approx(0.1 * np.sin(0.3) - 0.01)
    assert np.all(np.isfinite(dyn.udot(0.0, q0, u0, inputs=inputs)))


def test_errors_found_when_the_system_compiles_name_the_table(tmp_path):
    err = _error(tmp_path, BASE.replace("inertia = [0.02, 0.02, 0.001]", "inertia = [0.02, 0.02, -0.001]"))
    assert err.table == "[[bodies]] #1 'link'" and err.key == "inertia" and "positive-definite" in str(err)
    err = _error(tmp_path, BASE + '\n[simulation]\ndependent = ["spin"]\n')
    assert err.table == "[simulation]" and err.key == "dependent" and "no speed named 'spin'" in str(err)
    err = _error(tmp_path, BASE.replace('speed_names = ["omega"]', 'speed_names = ["omega"]\nspeeds = {Y = [[0]]}'))
    assert err.key == "speeds" and "singular" in str(err)
