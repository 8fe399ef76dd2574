"""URDF import: every supported joint type, origins and axes, inertials, limits as data, and clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import kane
from kane.io.urdf import UrdfWarning, load_urdf, parse_urdf
from kane.spatial import rotation_rpy

ROBOT = """<?xml version="1.0"?>
<robot name="sampler">
  <link name="base">
    <inertial><origin xyz="0 0 0.1"/><mass value="5"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial>
    <visual><geometry><box size="1 1 1"/></geometry></visual>
  </link>
  <link name="arm">
    <inertial><origin xyz="0.1 0.2 -0.3" rpy="0.3 -0.2 0.5"/><mass value="2.0"/>
      <inertia ixx="0.05" ixy="0.001" ixz="-0.002" iyy="0.06" iyz="0.003" izz="0.04"/></inertial>
  </link>
  <link name="slider"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial></link>
  <link name="wheel"><inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.02" izz="0.01"/></inertial></link>
  <link name="tool"/>
  <link name="puck"><inertial><mass value="0.3"/><inertia ixx="0.002" iyy="0.002" izz="0.003"/></inertial></link>
  <link name="drone"><inertial><mass value="1.2"/><inertia ixx="0.02" iyy="0.02" izz="0.03"/></inertial></link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0 1.57079632679 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" effort="150" velocity="3.15"/>
    <dynamics damping="0.7" friction="0.1"/>
  </joint>
  <joint name="rail" type="prismatic">
    <parent link="arm"/><child link="slider"/>
    <origin xyz="0.4 0 0"/><axis xyz="1 1 0"/><limit lower="0" upper="0.3" effort="50" velocity="1"/>
  </joint>
  <joint name="spin" type="continuous">
    <parent link="slider"/><child link="wheel"/><axis xyz="0 0 1"/>
  </joint>
  <joint name="mount" type="fixed">
    <parent link="wheel"/><child link="tool"/><origin xyz="0 0 0.1" rpy="0.1 0.2 0.3"/>
  </joint>
  <joint name="table" type="planar">
    <parent link="base"/><child link="puck"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="hover" type="floating">
    <parent link="base"/><child link="drone"/><origin xyz="0 0 2"/>
  </joint>
</robot>
"""


def test_every_joint_type_and_the_data_kept():
    robot = parse_urdf(ROBOT)
    assert robot.name == "sampler" and robot.root == "base"
    assert robot.joint_types == {"shoulder": "revolute", "rail": "prismatic", "spin": "continuous",
                                 "mount": "fixed", "table": "planar", "hover": "floating"}
    assert robot.limits["shoulder"] == {"lower": -2.5, "upper": 2.5, "effort": 150.0, "velocity": 3.15}
    assert robot.limits["rail"]["upper"] == 0.3 and "spin" not in robot.limits
    assert robot.dynamics["shoulder"] == {"damping": 0.7, "friction": 0.1}
    model = robot.system.compile()
    kinds = {pj.name: pj.joint.kind for pj in model.joints}
    assert kinds == {"root_joint": "weld", "shoulder": "revolute", "rail": "prismatic", "spin": "revolute",
                     "mount": "weld", "table": "planar", "hover": "free"}
    assert model.n_q == 1 + 1 + 1 + 3 + 7 and model.n_u == 1 + 1 + 1 + 3 + 6
    assert "q_shoulder" in map(str, model.q) and "u_rail" in map(str, model.u)
    assert [float(g) for g in model.gravity] == [0.0, 0.0, -9.81]


def test_origins_axes_and_inertials_are_converted():
    model = parse_urdf(ROBOT).system.compile()
    arm = model.bodies[model.body_index("arm")]
    R = rotation_rpy([0.3, -0.2, 0.5])
    I_inertial = np.array([[0.05, 0.001, -0.002], [0.001, 0.06, 0.003], [-0.002, 0.003, 0.04]])
    np.testing.assert_allclose(np.array(arm.inertia, dtype=float), R @ I_inertial @ R.T, atol=1e-15)
    np.testing.assert_allclose(np.array(arm.com, dtype=float).ravel(), [0.1, 0.2, -0.3])
    assert float(arm.mass) == 2.0
    tool = model.bodies[model.body_index("tool")]
    assert float(tool.mass) == 0.0  # a link without <inertial> is a massless frame
    shoulder = model.joints[model.joint_index("shoulder")]
    # rpy (0, 1.57079632679, 0) as written in the file: the file's numbers as they are (not snapped to pi/2), so
    # the rotation is R_y of that angle to the last bit, 4.9e-12 away from the exact quarter turn
    np.testing.assert_array_equal(np.array(shoulder.R_parent_F, dtype=float), rotation_rpy([0, 1.57079632679, 0]))
    exact = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    assert 1e-12 < np.max(np.abs(np.array(shoulder.R_parent_F, dtype=float) - exact)) < 1e-11
    assert list(shoulder.r_parent_F) == [0, 0, sp.Float(0.5)]
    rail = model.joints[model.joint_index("rail")].joint
    np.testing.assert_allclose(np.array(rail.axis, dtype=float), np.array([1, 1, 0]) / np.sqrt(2))
    table = model.joints[model.joint_index("table")]  # the plane's normal (URDF axis y) is F's and M's z
    R_F = np.array(table.R_parent_F, dtype=float)
    np.testing.assert_allclose(R_F[:, 2], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(np.array(table.R_child_M, dtype=float), R_F, atol=1e-15)


def test_imported_pendulum_falls_like_the_hand_built_one():
    urdf = """<robot name="p"><link name="top"/>
      <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
        <inertia ixx="0.2" iyy="0.2" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="hinge" type="continuous"><parent link="top"/><child link="bob"/><axis xyz="0 1 0"/></joint>
    </robot>"""
    dyn = kane.derive(parse_urdf(urdf).system).compile()
    theta = 0.4
    # I about the hinge: 0.2 + m l^2 = 0.7; gravity torque about +y: -m g l sin(theta)
    assert dyn.udot(0.0, [theta], [0.0])[0] == pytest.approx(-2 * 9.81 * 0.5 * np.sin(theta) / 0.7, rel=1e-12)


def test_floating_root_and_file_loading(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(ROBOT)
    robot = load_urdf(path, root_joint="floating", gravity=(0, 0, -1.62))
    model = robot.system.compile()
    assert model.joints[0].name == "root_joint" and model.joints[0].joint.kind == "free"
    assert model.n_u == 12 + 6 and [float(g) for g in model.gravity] == [0.0, 0.0, -1.62]


def _with(old, new):
    assert old in ROBOT
    return ROBOT.replace(old, new, 1)


@pytest.mark.parametrize("text, message", [
    (_with('<parent link="arm"/><child link="slider"/>', '<parent link="elbow"/><child link="slider"/>'),
     r"joint 'rail' <parent link='elbow'>: no link named 'elbow'"),
    (_with('<parent link="base"/><child link="arm"/>', '<parent link="wheel"/><child link="arm"/>'),
     r"cycle through links .*'arm'"),
    (_with('type="continuous"', 'type="ball"'),
     r"joint 'spin' has type 'ball'; expected one of fixed, revolute, continuous, prismatic, floating, planar"),
    (_with('<mass value="2.0"/>', '<mass value="-2.0"/>'), r"link 'arm' <mass value='-2.0'>: expected a mass >= 0"),
    (_with('<origin xyz="0.4 0 0"/>', '<origin xyz="0.4 zero 0"/>'),
     r"joint 'rail' <origin> xyz='0.4 zero 0': expected 3 number"),
    (_with('<axis xyz="0 0 1"/>', '<axis xyz="0 0"/>'), r"joint 'spin' <axis> xyz='0 0': expected 3"),
    (_with('ixx="0.05"', 'ixx="big"'), r"link 'arm' <inertia> ixx='big'"),
    (_with('<child link="wheel"/>', '<child link="wheel"/><mimic joint="rail"/>'),
     r"joint 'spin' <mimic joint='rail'>: mimic joints are not imported by default \(load_urdf\(\.\.\., "
     r"mimic='constraint'\) keeps the coupling"),
    (_with('<parent link="base"/><child link="puck"/>', '<parent link="base"/><child link="arm"/>'),
     r"link 'arm' is already the child of joint 'shoulder'"),
    (_with('<link name="tool"/>', '<link name="tool"/><link name="stray"/>'),
     r"links 'base', 'stray' have no parent joint"),
    ("<robot name='x'><link name='a'/>", r"not well-formed XML"),
    ("<model name='x'/>", r"root element is <model>; expected <robot>"),
])
def test_bad_urdf_gives_a_clear_error(text, message):
    with pytest.raises(kane.ModelError, match=message):
        parse_urdf(text)


def test_bad_file_and_arguments(tmp_path):
    with pytest.raises(kane.ModelError, match=r"missing\.urdf: cannot read the URDF file"):
        load_urdf(tmp_path / "missing.urdf")
    with pytest.raises(kane.ModelError, match=r"root_joint='wobbly'"):
        parse_urdf(ROBOT, root_joint="wobbly")


GRIPPER = """<robot name="gripper">
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial></link>
  <link name="left"><inertial><mass value="0.3"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4"/></inertial></link>
  <link name="right"><inertial><mass value="0.2"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4"/></inertial></link>
  <joint name="finger_left" type="prismatic">
    <parent link="palm"/><child link="left"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="finger_right" type="prismatic">
    <parent link="palm"/><child link="right"/><axis xyz="0 1 0"/>
    <mimic joint="finger_left" multiplier="-1" offset="0.02"/>
  </joint>
</robot>"""


def test_a_mimic_joint_kept_as_a_constraint_moves_with_the_joint_it_mimics():
    # two fingers sliding along y (gravity -y), the right one mimicking the left with multiplier -1: an Atwood
    # machine, one DOF; by hand, (m_l + m_r) q_l'' = -g (m_l - m_r) with m_l = 0.3, m_r = 0.2 kg
    robot = parse_urdf(GRIPPER, mimic="constraint", gravity=(0.0, -9.81, 0.0))
    assert robot.mimics == {"finger_right": ("finger_left", -1.0, 0.02)}
    model = robot.system.compile()
    assert [c.name for c in model.constraints] == ["mimic_finger_right"]
    eqs = kane.derive(robot.system)
    dyn = eqs.compile()
    assert dyn.n_u == 1
    q0 = np.array([0.0, 0.02])  # the mimic starts at its offset
    a = dyn.udot(0.0, q0, np.zeros(1))[0]
    a_left = a if str(eqs.u_independent[0]) == "u_finger_left" else -a  # whichever speed was kept
    assert a_left == pytest.approx(-9.81 * (0.3 - 0.2) / (0.3 + 0.2), rel=1e-12)
    # the pair moves as one: simulated, q_r = 0.02 - q_l throughout
    run = kane.simulate.simulate(dyn, (0.0, 0.5), q0, np.zeros(1), rtol=1e-10, atol=1e-12)
    q = np.asarray(run.q)
    assert np.max(np.abs(q[:, 1] - (0.02 - q[:, 0]))) < 1e-9
    assert q[-1, 0] == pytest.approx(-9.81 * 0.1 / 0.5 * 0.5 ** 2 / 2, abs=1e-9)  # uniform acceleration from rest


@pytest.mark.parametrize("mimic, message", [
    ('<mimic joint="elbow"/>', r"joint 'finger_right' <mimic joint='elbow'>: expected another joint of the file"),
    ('<mimic joint="finger_right"/>', r"<mimic joint='finger_right'>: expected another joint of the file"),
    ('<mimic joint="finger_left" multiplier="two"/>', r"<mimic joint='finger_left'> multiplier='two': expected 1"),
])
def test_a_bad_mimic_names_the_joint_and_what_is_wrong(mimic, message):
    text = GRIPPER.replace('<mimic joint="finger_left" multiplier="-1" offset="0.02"/>', mimic)
    with pytest.raises(kane.ModelError, match=message):
        parse_urdf(text, mimic="constraint")


def test_the_pandas_mimic_fingers_as_a_constraint_agree_with_pinocchio_projected():
    # example-robot-data's Panda: finger 2 mimics finger 1. Pinocchio imports the two fingers as independent joints;
    # projected on the mimic's speeds v = T u (T constant), its dynamics are T^T M T u' = -T^T h(q, T u): kane's
    # constrained equations must give the same accelerations
    import sysconfig

    pin = pytest.importorskip("pinocchio")
    path = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots/"
            "panda_description/urdf/panda.urdf")
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    dyn = kane.derive(load_urdf(path, mimic="constraint").system).compile()
    assert dyn.n_q == pm.nq == 9 and dyn.n_u == 8
    order = [dyn.q_names.index(f"q_{n}") for n in list(pm.names)[1:]]  # Pinocchio's joints in kane's q
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, 9)
        q[7:] = 0.02  # both fingers open 2 cm: the mimic's offset is 0, its multiplier 1
        q_kane = np.empty(9)
        q_kane[order] = q
        u = rng.normal(size=8)
        T = np.array([np.asarray(dyn.full_speeds(0.0, q_kane, e))[order] for e in np.eye(8)]).T  # (9, 8)
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.rnea(pm, pd, q, T @ u, np.zeros(9))
        expected = np.linalg.solve(T.T @ M @ T, -T.T @ h)
        np.testing.assert_allclose(dyn.udot(0.0, q_kane, u), expected, rtol=1e-10, atol=1e-10)


def test_a_mimic_of_a_joint_without_a_single_coordinate_is_refused():
    text = GRIPPER.replace('<joint name="finger_left" type="prismatic">', '<joint name="finger_left" type="fixed">')
    with pytest.raises(kane.ModelError, match=r"joint 'finger_right' <mimic joint='finger_left'>: joint 'finger_left' "
                                              r"\(fixed\) has no single coordinate to couple"):
        parse_urdf(text, mimic="constraint")


@pytest.mark.parametrize("mode", ["error", "independent", "constraint"])
def test_a_fixed_joint_with_a_mimic_stays_fixed_with_a_warning(mode):
    # Talos' reduced URDFs fix the gripper's inner joints and keep their <mimic> tags: nothing to couple there
    text = GRIPPER.replace('<joint name="finger_right" type="prismatic">', '<joint name="finger_right" type="fixed">')
    with pytest.warns(UrdfWarning, match=r"joint 'finger_right' <mimic joint='finger_left'>: the joint is fixed; its "
                                         r"mimic is ignored and it stays fixed"):
        um = parse_urdf(text, mimic=mode)
    assert um.joint_types["finger_right"] == "fixed" and um.mimics == {}
    assert um.system.compile().n_q == 1  # finger_left alone moves


def test_talos_arm_with_its_fixed_mimics_agrees_with_pinocchio():
    # example-robot-data's Talos left arm: six fixed gripper joints carry <mimic> tags; Pinocchio imports them as
    # fixed, and kane's forward dynamics must equal Pinocchio's ABA
    import sysconfig
    import warnings

    pin = pytest.importorskip("pinocchio")
    path = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots/"
            "talos_data/robots/talos_left_arm.urdf")
    if not path.is_file():
        pytest.skip("example-robot-data is not installed")
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        dyn = kane.derive(load_urdf(path, mimic="constraint").system).compile()
    assert dyn.n_q == dyn.n_u == pm.nq == pm.nv == 7
    order = [dyn.q_names.index(f"q_{n}") for n in list(pm.names)[1:]]
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, v = rng.uniform(-1.0, 1.0, 7), rng.normal(size=7)
        q_kane, u_kane = np.empty(7), np.empty(7)
        q_kane[order], u_kane[order] = q, v
        expected = pin.aba(pm, pd, q, v, np.zeros(7))
        np.testing.assert_allclose(np.asarray(dyn.udot(0.0, q_kane, u_kane))[order], expected, rtol=1e-10,
                                   atol=1e-10)


def _chain(n, seed=7):
    """A serial chain of n revolute joints with seeded, varied masses, inertias, origins and axes (as the bench)."""
    rng = np.random.default_rng(seed)
    mass, xyz, axis = (rng.uniform(0.5, 2, n + 1).tolist(), rng.uniform(-0.2, 0.2, (n, 3)).tolist(),
                       rng.normal(size=(n, 3)).tolist())
    links = "".join(f'<link name="l{i}"><inertial><mass value="{mass[i]!r}"/><inertia ixx="{0.01 * mass[i]!r}" '
                    f'iyy="{0.02 * mass[i]!r}" izz="{0.025 * mass[i]!r}"/></inertial></link>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="{" ".join(map(repr, xyz[i]))}"/><axis xyz="{" ".join(map(repr, axis[i]))}"/>'
                     "</joint>" for i in range(n))
    return f'<robot name="chain">{links}{joints}</robot>', mass, xyz, axis


def test_a_2000_link_chain_loads_with_every_number_and_name_checked():
    """Loading is linear in the links (bench/bench_urdf.py times 1k/4k/10k): new names are checked against sets,
    and the checks still refuse what they refused."""
    text, mass, xyz, axis = _chain(2000)
    robot = parse_urdf(text)
    assert len(robot.links) == 2001 and robot.links[1500] == "l1500"
    entry = robot.system._joints[1500]  # root_joint first: joint j1499 places link l1500
    assert entry.name == "j1499" and entry.q_names == ("q_j1499",)
    assert [float(x) for x in entry.r_parent_F] == list(xyz[1499])
    unit = np.array(axis[1499]) / np.linalg.norm(axis[1499])
    assert [float(x) for x in entry.joint.axis] == pytest.approx(unit, abs=1e-15)
    body = robot.system._bodies["l1500"]
    assert float(body.mass) == mass[1500] and float(body.inertia[2, 2]) == 0.025 * mass[1500]
    s = robot.system
    with pytest.raises(kane.ModelError, match="'q_j7' is already used"):
        s.add_joint("l2000", "l3", kane.joints.Revolute("z"), name="again", coordinates=["q_j7"], speeds=["u_x"])
    with pytest.raises(kane.ModelError, match="joint name 'j1999' is used twice"):
        s.add_joint("l2000", "l3", kane.joints.Revolute("z"), name="j1999")
    with pytest.raises(kane.ModelError, match="'u_j1999' is already used"):
        s.parameter("u_j1999", 1.0)
