"""Bad input gets a kane.ModelError whose message names the body, joint or field at fault; nothing half-built.

Every case starts from a small valid system (checked to compile), adds one mistake, and asserts that the call
raises ModelError (not a bare TypeError/ValueError/KeyError) with the offending names in the message, and that
the builder or compiler hands back nothing half-built: a failed ``add_*`` registers nothing (the same name can be
used again), and a failed ``compile``/``derive`` returns no model.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp

import kane
from kane import joints as J


def base() -> kane.System:
    """A valid one-body pendulum: body 'a' on revolute joint 'ja' from ground."""
    s = kane.System("err", gravity=(0, 0, -9.81))
    s.add_body("a", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.05))
    s.add_joint("ground", "a", J.Revolute("x"), name="ja", coordinates=["qa"], speeds=["ua"])
    return s


def with_body_b(mass=1.0, inertia=(0.2, 0.3, 0.4), com=(0, 0, 0)) -> kane.System:
    s = base()
    s.add_body("b", mass=mass, com=com, inertia=inertia)
    s.add_joint("a", "b", J.Revolute("y"), name="jb", parent_point=(0, 0, -1), coordinates=["qb"],
                speeds=["ub"])
    return s


def mentions(*names):
    """A regex requiring every name (quoted or bare) somewhere in the message, in any order."""
    return "".join(f"(?=[\\s\\S]*{re.escape(n)})" for n in names)


def assert_compile_fails(s: kane.System, *names):
    """compile() and derive() both raise ModelError naming ``names``; neither returns anything."""
    result = None
    with pytest.raises(kane.ModelError, match=mentions(*names)):
        result = s.compile()
    assert result is None
    with pytest.raises(kane.ModelError, match=mentions(*names)):
        result = kane.derive(s)
    assert result is None


def test_valid_baselines_compile():
    assert base().compile().n_u == 1
    m = with_body_b().compile()
    assert [b.name for b in m.bodies] == ["a", "b"] and m.n_u == 2


# ---- topology ---------------------------------------------------------------------------------------------
def test_parent_that_does_not_exist():
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("nope", "b", J.Revolute("x"), name="jb")
    assert_compile_fails(s, "'jb'", "'nope'")


def test_child_that_does_not_exist():
    s = base()
    s.add_joint("a", "ghost", J.Revolute("x"), name="jg")
    assert_compile_fails(s, "'jg'", "'ghost'")


def test_cycle_without_ground_connection():
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_body("c", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("b", "c", J.Revolute("x"), name="jbc")
    s.add_joint("c", "b", J.Revolute("x"), name="jcb")
    assert_compile_fails(s, "cycle", "b", "c")


def test_two_joints_for_one_child():
    s = base()
    s.add_joint("ground", "a", J.Revolute("y"), name="ja2")
    assert_compile_fails(s, "'a'", "'ja'", "'ja2'")


def test_body_without_joint():
    s = base()
    s.add_body("floating", mass=1.0, inertia=(1, 1, 1))
    assert_compile_fails(s, "'floating'")


def test_body_jointed_to_itself():
    s = base()
    s.add_joint("a", "a", J.Revolute("x"), name="self")
    assert_compile_fails(s, "'self'", "'a'")


# ---- mass properties --------------------------------------------------------------------------------------
@pytest.mark.parametrize("inertia", [(1.0, 1.0, -0.5), (1.0, 1.0, 1.0, 2.0, 0.0, 0.0), (0.3, -0.3, 0.2)],
                         ids=["negative_moment", "large_product", "negative_moment_2"])
def test_inertia_not_positive_definite(inertia):
    assert_compile_fails(with_body_b(inertia=inertia), "'b'", "inertia")


@pytest.mark.parametrize("inertia", [(1.0, 1.0, 3.0), (0.1, 0.5, 0.2)], ids=["zz_too_big", "yy_too_big"])
def test_inertia_violating_triangle_inequality(inertia):
    assert_compile_fails(with_body_b(inertia=inertia), "'b'", "inertia", "triangle")


def test_inertia_triangle_inequality_in_rotated_axes():
    """Principal moments (1, 1, 3) hidden in rotated axes: the check must use eigenvalues, not the diagonal."""
    c, s_ = np.cos(0.7), np.sin(0.7)
    Q = np.array([[c, -s_, 0], [s_, c, 0], [0, 0, 1]]) @ np.array([[1, 0, 0], [0, c, -s_], [0, s_, c]])
    In = Q @ np.diag([1.0, 1.0, 3.0]) @ Q.T
    assert In[0, 0] + In[1, 1] > In[2, 2]  # the diagonal alone looks fine
    tensor = (In[0, 0], In[1, 1], In[2, 2], In[0, 1], In[1, 2], In[2, 0])
    assert_compile_fails(with_body_b(inertia=tensor), "'b'", "inertia", "triangle")


def test_asymmetric_inertia_matrix():
    with pytest.raises(kane.ModelError, match=mentions("'b'", "inertia", "symmetric")):
        base().add_body("b", mass=1.0, inertia=[[1, 0.2, 0], [0, 1, 0], [0, 0, 1]])


def test_negative_mass():
    assert_compile_fails(with_body_b(mass=-1.0), "'b'", "mass")


def test_negative_mass_from_parameter_default():
    s = base()
    m = s.parameter("mb", -2.0)
    s.add_body("b", mass=m, inertia=(1, 1, 1))
    s.add_joint("a", "b", J.Revolute("x"), name="jb")
    assert_compile_fails(s, "'b'", "mass")


def test_mass_depending_on_a_coordinate():
    s = base()
    s.add_body("b", mass=1 + s.q("qa") ** 2, inertia=(1, 1, 1))
    s.add_joint("a", "b", J.Revolute("x"), name="jb")
    with pytest.raises(kane.ModelError, match=mentions("'b'")):
        s.compile()


# ---- symbols in expressions -------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["force", "force_point", "torque", "joint_torque", "spring"])
def test_unknown_symbol_in_a_load(where):
    s = base()
    zeta = sp.Symbol("zeta")
    if where == "force":
        s.add_force("a", (zeta, 0, 0), point=(0, 0, -0.5))
        names = ("force on 'a'", "zeta")
    elif where == "force_point":
        s.add_force("a", (1, 0, 0), point=(0, 0, zeta))
        names = ("'a'", "zeta")
    elif where == "torque":
        s.add_torque("a", (0, zeta, 0))
        names = ("torque on 'a'", "zeta")
    elif where == "joint_torque":
        s.add_joint_torque("ja", [3 * zeta])
        names = ("'ja'", "zeta")
    else:
        s.add_spring("a", (0, 0, 0), "ground", (0, 0, 1), stiffness=zeta)
        names = ("spring", "zeta")
    assert_compile_fails(s, *names)


def test_known_symbols_are_accepted():
    """Control: parameters, inputs, coordinates, speeds and t are all fine in a force."""
    s = base()
    k = s.parameter("k", 2.0)
    w = s.input("w")
    s.add_force("a", (k * s.q("qa") + w, s.u("ua"), sp.sin(kane.t)), point=(0, 0, -0.5))
    assert len(s.compile().forces) == 1


def test_load_on_unknown_body_and_joint():
    s = base()
    s.add_force("nobody", (1, 0, 0))
    assert_compile_fails(s, "'nobody'")
    s = base()
    s.add_joint_spring("nojoint", 10.0)
    assert_compile_fails(s, "'nojoint'")


# ---- coordinate and speed names ---------------------------------------------------------------------------
@pytest.mark.parametrize("joint,coords,speeds", [
    (J.Revolute("x"), ["x1", "x2"], None),
    (J.Revolute("x"), [], None),
    (J.Spherical(), None, ["w1", "w2", "w3", "w4"]),
    (J.Free(), ["x", "y", "z", "e0", "e1", "e2"], None),
    (J.Universal("12"), None, ["v1"]),
], ids=["revolute_2q", "revolute_0q", "spherical_4u", "free_6q", "universal_1u"])
def test_wrong_number_of_coordinate_or_speed_names(joint, coords, speeds):
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(kane.ModelError, match=mentions("'jb'", joint.kind, str(joint.nq), str(joint.nu))):
        s.add_joint("a", "b", joint, name="jb", coordinates=coords, speeds=speeds)
    # nothing half-built: the joint and its names are not registered, the same call with good names works
    s.add_joint("a", "b", joint, name="jb")
    m = s.compile()
    assert [j.name for j in m.joints] == ["ja", "jb"]
    assert m.n_q == 1 + joint.nq and m.n_u == 1 + joint.nu


def test_coordinate_name_already_used():
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(kane.ModelError, match=mentions("'qa'")):
        s.add_joint("a", "b", J.Revolute("x"), name="jb", coordinates=["qa"])


def test_wrong_number_of_initial_values():
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("a", "b", J.Spherical(), name="jb", q0=[1.0, 0.0, 0.0])
    assert_compile_fails(s, "'jb'", "q0")


# ---- strings where numbers are expected -------------------------------------------------------------------
@pytest.mark.parametrize("call,names", [
    (lambda s: s.add_body("b", mass="1.0"), ("'b'", "mass", "string")),
    (lambda s: s.add_body("b", mass=1.0, com=(0, "0.1", 0)), ("'b'", "com", "string")),
    (lambda s: s.add_body("b", mass=1.0, inertia=("1", 1, 1)), ("'b'", "inertia")),
    (lambda s: s.add_joint("a", "b2", J.Revolute("x"), name="jb", parent_point=("0", 0, 0)),
     ("'jb'", "parent_point", "string")),
    (lambda s: s.add_joint("a", "b2", J.Revolute("x"), name="jb", child_point=(0, 0, "1")),
     ("'jb'", "child_point", "string")),
    (lambda s: s.add_force("a", ("1", 0, 0)), ("'a'", "string")),
    (lambda s: s.add_torque("a", (0, 0, "2")), ("'a'", "string")),
    (lambda s: s.add_spring("a", (0, 0, 0), "ground", (0, 0, 1), stiffness="10"), ("stiffness", "string")),
], ids=["mass", "com", "inertia", "parent_point", "child_point", "force", "torque", "spring_stiffness"])
def test_string_instead_of_number_is_rejected_at_once(call, names):
    s = base()
    with pytest.raises(kane.ModelError, match=mentions(*names)):
        call(s)
    assert s.compile().n_bodies == 1  # nothing was registered by the failed call


def _string_q0(s):
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("a", "b", J.Revolute("x"), name="jb", q0=["0.3"])
    s.compile()


def _string_joint_spring(s):
    s.add_joint_spring("ja", "10")
    s.compile()


def _string_joint_torque(s):
    s.add_joint_torque("ja", ["2.5"])
    s.compile()


def _string_gravity(s):
    s.gravity = ("0", 0, "-9.81")
    s.compile()


@pytest.mark.parametrize("call,names", [
    (lambda s: s.parameter("k", "abc"), ("'k'",)),
    (lambda s: s.parameter("k", "1.5"), ("'k'",)),
    (_string_q0, ("'jb'", "q0")),
    (_string_joint_spring, ("'ja'",)),
    (_string_joint_torque, ("'ja'",)),
    (_string_gravity, ("gravity",)),
], ids=["parameter_default", "parameter_default_numeric", "q0", "joint_spring_stiffness", "joint_torque",
        "gravity"])
def test_string_instead_of_number_is_rejected_elsewhere(call, names):
    """Either the add_* call or compile() must raise ModelError naming the entry (never sympify a string)."""
    s = base()
    with pytest.raises(kane.ModelError, match=mentions(*names)):
        call(s)


# ---- placements ------------------------------------------------------------------------------------------
def test_improper_rotation_registers_nothing():
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    reflection = np.diag([1.0, 1.0, -1.0])
    sheared = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for bad in (reflection, sheared):
        with pytest.raises(kane.ModelError, match=mentions("'jb'", "parent_rotation")):
            s.add_joint("a", "b", J.Revolute("x"), name="jb", parent_rotation=bad, coordinates=["qb"])
    with pytest.raises(kane.ModelError, match=mentions("'jb'", "child_rotation")):
        s.add_joint("a", "b", J.Revolute("x"), name="jb", child_rotation=np.eye(2), coordinates=["qb"])
    # the name 'jb' and the coordinate 'qb' are still free
    s.add_joint("a", "b", J.Revolute("x"), name="jb", coordinates=["qb"])
    assert [str(q) for q in s.compile().q] == ["qa", "qb"]


def test_failed_add_body_registers_nothing():
    s = base()
    with pytest.raises(kane.ModelError, match=mentions("'b'", "mass")):
        s.add_body("b", mass="heavy")
    with pytest.raises(kane.ModelError, match=mentions("'b'", "com")):
        s.add_body("b", mass=1.0, com=(0, 0))
    s.add_body("b", mass=2.0, inertia=(1, 1, 1))  # the name is still free
    s.add_joint("a", "b", J.Prismatic("z"), name="jb")
    m = s.compile()
    assert [b.name for b in m.bodies] == ["a", "b"]
    assert float(m.bodies[1].mass) == 2.0


def test_duplicate_and_reserved_names():
    s = base()
    with pytest.raises(kane.ModelError, match=mentions("'a'")):
        s.add_body("a", mass=1.0)
    with pytest.raises(kane.ModelError, match=mentions("'ground'")):
        s.add_body("ground", mass=1.0)
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(kane.ModelError, match=mentions("'ja'")):
        s.add_joint("a", "b", J.Revolute("x"), name="ja")
    with pytest.raises(kane.ModelError, match=mentions("'g'")):
        s.parameter("g", 1.0), s.parameter("g", 2.0)


def test_not_a_joint_object():
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(kane.ModelError, match=mentions("'jb'")):
        s.add_joint("a", "b", "revolute", name="jb")


def test_unknown_parameter_name_at_run_time():
    s = base()
    s.parameter("k", 1.0)
    dyn = kane.derive(s).compile()
    with pytest.raises(kane.ModelError, match=mentions("'kk'", "k")):
        dyn.udot(0.0, [0.1], [0.0], params={"kk": 2.0})
    with pytest.raises(kane.ModelError, match=mentions("parameter")):
        dyn.udot(0.0, [0.1], [0.0], params=[1.0, 2.0])


# ---- joint definitions and non-finite numbers ---------------------------------------------------------------
BAD_JOINTS = [(J.Universal("12", speeds=J.Speeds.BODY), "body-fixed speeds"), (J.Revolute((0, 0, 0)), "nonzero"),
              (J.Prismatic((0.0, 0.0, 0.0)), "nonzero")]
BAD_JOINT_IDS = ["universal_body_speeds", "revolute_zero_axis", "prismatic_zero_axis"]


def _add_bad_joint(joint):
    s = base()
    s.add_body("b", mass=1.0, inertia=(1, 1, 1))
    s.add_joint("a", "b", joint, name="jb")
    return s.compile()


@pytest.mark.parametrize("joint,why", BAD_JOINTS, ids=BAD_JOINT_IDS)
def test_invalid_joint_definition_raises_model_error(joint, why):
    with pytest.raises(kane.ModelError, match=mentions(why)):
        _add_bad_joint(joint)


@pytest.mark.parametrize("joint,why", BAD_JOINTS, ids=BAD_JOINT_IDS)
def test_invalid_joint_definition_names_the_joint(joint, why):
    with pytest.raises(kane.ModelError, match=mentions("'jb'", why)):
        _add_bad_joint(joint)


@pytest.mark.parametrize("field,value", [("mass", float("nan")), ("inertia", (1.0, 1.0, float("nan")))])
def test_nan_mass_properties(field, value):
    kwargs = {"mass": 1.0, "inertia": (1, 1, 1), field: value}
    with pytest.raises(kane.ModelError, match=mentions("'b'", field, "finite")):
        with_body_b(**kwargs)


@pytest.mark.parametrize("field", ["com", "parent_point"])
def test_non_finite_vectors(field):
    s = base()
    pp = (0, 0, float("nan")) if field == "parent_point" else (0, 0, 0)
    with pytest.raises(kane.ModelError, match=mentions(field)):
        s.add_body("b", mass=1.0, inertia=(1, 1, 1), com=(0, float("inf"), 0) if field == "com" else (0, 0, 0))
        s.add_joint("a", "b", J.Revolute("x"), name="jb", parent_point=pp)
        s.compile()
