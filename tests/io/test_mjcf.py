"""MJCF import: kane's u' equals MuJoCo's qacc (mj_forward, contact, limits, armature and friction loss off) at
seeded random states and motor inputs, for inline models of every joint kind and for dm_control's suite; the
equality constraints against the KKT projection of MuJoCo's unconstrained dynamics; bad and hostile input."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import kane
from kane.io.mjcf import MjcfWarning, load_mjcf, parse_mjcf

mujoco = pytest.importorskip("mujoco")

CHAIN = """<mujoco model="chain">
  <compiler angle="degree" eulerseq="zyx"/>
  <option gravity="0.3 -0.2 -9.81"><flag contact="disable"/></option>
  <default>
    <joint damping="0.3"/>
    <geom density="800"/>
    <default class="arm">
      <joint type="hinge" axis="0 1 0" stiffness="2" springref="10"/>
      <geom type="capsule" size="0.04 0.2"/>
      <default class="wrist"><joint axis="1 0 0" damping="0"/></default>
    </default>
  </default>
  <worldbody>
    <body name="base" pos="0.1 0 1" euler="10 20 30" childclass="arm">
      <joint name="j1" ref="15" pos="0 0 0.1"/>
      <joint name="j2" class="wrist" pos="0.05 0 0"/>
      <geom fromto="0 0 0 0.3 0.1 -0.2"/>
      <geom type="box" size="0.05 0.06 0.07" pos="0.1 0 0" quat="0.9 0.1 0.2 0.3"/>
      <body name="mid" pos="0.3 0.1 -0.2" axisangle="1 1 0 30">
        <joint name="s1" type="slide" axis="1 2 3" ref="0.05"/>
        <joint name="j3" axis="0 0 1"/>
        <geom type="sphere" size="0.07" pos="0 0.1 0"/>
        <geom type="cylinder" size="0.03 0.1" xyaxes="0 1 0 -1 0 0.5" mass="0.4"/>
        <geom type="ellipsoid" size="0.05 0.08 0.03" zaxis="1 -1 2"/>
        <geom type="box" fromto="0 0 0 0.1 0.2 0.3" size="0.02 0.05"/>
        <body name="tip" pos="0 0 -0.3" euler="5 -10 40">
          <inertial pos="0.01 0.02 -0.1" quat="1 0.2 0 0.1" mass="0.7" diaginertia="0.01 0.02 0.015"/>
          <joint name="j4" class="main" axis="0 1 1"/>
          <geom type="box" size="0.1 0.1 0.1" mass="5"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m1" joint="j1" gear="3"/>
    <motor joint="s1" gear="-2" class="arm"/>
    <general name="g" joint="j4" gainprm="1.5" gear="2"/>
  </actuator>
</mujoco>"""

RADIAN = """<mujoco model="radian">
  <compiler angle="radian" eulerseq="XYZ" inertiafromgeom="true"/>
  <option><flag contact="disable"/></option>
  <worldbody>
    <body name="a" pos="0 0.2 0.5" euler="0.3 -0.4 1.1">
      <joint name="ball" type="ball" pos="0 0 0.2"/>
      <inertial pos="1 1 1" mass="100" diaginertia="1 1 1"/>
      <geom type="capsule" fromto="0 0 0 0.2 -0.1 -0.4" size="0.05"/>
      <body name="b" pos="0.2 -0.1 -0.4" xyaxes="0 1 0 -1 0 0">
        <joint name="h" axis="1 0 0" ref="0.7" pos="0 0 0.05" stiffness="3" springref="0.2"/>
        <joint name="h2" axis="0 1 0"/>
        <geom type="box" size="0.1 0.02 0.3" pos="0 0 -0.3" euler="0.1 0.2 0.3"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="h" gear="0.5"/></actuator>
</mujoco>"""

FREE = """<mujoco model="floating">
  <option gravity="0 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="torso" pos="0.1 0.2 1.0" quat="0.8 0.1 -0.3 0.2">
      <freejoint name="root"/>
      <inertial pos="0.05 -0.02 0.03" mass="3" fullinertia="0.1 0.2 0.15 0.01 -0.02 0.005"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="ball"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
        <body name="hand" pos="0.3 0 0">
          <joint name="wrist" axis="0 0 1" pos="0.01 0 0"/>
          <geom type="sphere" size="0.05"/>
        </body>
      </body>
    </body>
    <body name="block" pos="1 0 0">
      <joint name="float" type="free"/>
      <geom type="box" size="0.1 0.2 0.3"/>
    </body>
  </worldbody>
  <actuator><motor name="w" joint="wrist" gear="4"/></actuator>
</mujoco>"""

CONNECT = """<mujoco model="linkage">
  <option gravity="0 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="crank" pos="0 0 1">
      <joint name="a" axis="0 1 0" ref="10"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="coupler" pos="0.3 0 0">
        <joint name="b" axis="0 1 0"/>
        <joint name="e" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.6 0 0.2" size="0.03"/>
      </body>
    </body>
    <body name="rocker" pos="0.8 0 1">
      <joint name="r" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0.2" size="0.03"/>
    </body>
  </worldbody>
  <equality>
    <connect name="pin" body1="coupler" body2="rocker" anchor="0.6 0 0.2"/>
    <joint name="couple" joint1="e" joint2="a" polycoef="0.1 0.5 0.3 0 0"/>
  </equality>
  <actuator><motor joint="a" gear="2"/></actuator>
</mujoco>"""

# the same pin joined by sites: s2 is where the anchor lies at qpos0, in the rocker's axes, by hand: the coupler's
# frame is at (0.3, 0, 1) (the crank's q = ref turns nothing), the anchor at (0.9, 0, 1.2), the rocker at (0.8, 0, 1)
CONNECT_SITES = CONNECT.replace('<joint name="e" axis="1 0 0"/>', '<joint name="e" axis="1 0 0"/><site name="s1" '
                                'pos="0.6 0 0.2"/>').replace('<joint name="r" type="ball"/>', '<joint name="r" '
                                'type="ball"/><site name="s2" pos="0.1 0 0.2"/>').replace(
    'body1="coupler" body2="rocker" anchor="0.6 0 0.2"', 'site1="s1" site2="s2"')
ROCKER_POINT = np.array([0.1, 0.0, 0.2])

WELD = """<mujoco model="welded">
  <option><flag contact="disable"/></option>
  <worldbody>
    <body name="crank" pos="0 0 1">
      <joint name="a" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="c" pos="0.3 0 0">
        <joint name="c" type="ball"/>
        <geom type="box" size="0.05 0.1 0.15" pos="0.05 0 0"/>
      </body>
    </body>
    <body name="r" pos="0.5 0.1 0.9" euler="10 20 30">
      <freejoint name="r"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0.1" size="0.04"/>
    </body>
  </worldbody>
  <equality><weld name="w" body1="c" body2="r" anchor="0.1 0 0"/></equality>
</mujoco>"""

SUITE = ("cartpole", "acrobot", "pendulum", "finger", "walker", "cheetah", "humanoid")


def _neutral(m):
    """Contact, limits and friction loss off, no armature: what kane leaves out (listed in its warning)."""
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                           | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    m.dof_armature[:] = 0
    return m


def _random_state(m, rng):
    q = m.qpos0 + rng.uniform(-1.0, 1.0, m.nq)
    for j in range(m.njnt):  # quaternions normalized
        kind = int(m.jnt_type[j])  # 0 free, 1 ball
        a = m.jnt_qposadr[j] + (3 if kind == 0 else 0)
        if kind in (0, 1):
            q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
    return q, rng.normal(size=m.nv), rng.uniform(-1.0, 1.0, m.nu)


def _imported(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        return load_mjcf(source)


def _assert_qacc_matches(source, m, seed, states=3):
    mm = _imported(source)
    dyn = kane.derive(mm.system).compile()
    assert dyn.q_names == mm.q_names and tuple(dyn.u_names) == mm.u_names
    assert (len(mm.q_names), len(mm.u_names), len(mm.inputs)) == (m.nq, m.nv, m.nu)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    for _ in range(states):
        q, v, ctrl = _random_state(m, rng)
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, ctrl
        mujoco.mj_forward(m, d)
        a = dyn.udot(0.0, q, v, inputs=dict(zip(mm.inputs, ctrl)) or None)
        np.testing.assert_allclose(a, d.qacc, rtol=0, atol=1e-9 * (1 + np.max(np.abs(d.qacc))))
    return mm


@pytest.mark.parametrize("xml", [CHAIN, RADIAN, FREE], ids=["chain-degree-defaults", "radian-ball", "free"])
def test_inline_models_match_mujoco_qacc(xml):
    m = _neutral(mujoco.MjModel.from_xml_string(xml))
    _assert_qacc_matches(xml, m, seed=11, states=4)


def test_q_and_u_follow_qpos_and_qvel():
    mm = _imported(FREE)
    assert mm.q_names == ("q_root_x", "q_root_y", "q_root_z", "q_root_qw", "q_root_qx", "q_root_qy", "q_root_qz",
                          "q_shoulder_qw", "q_shoulder_qx", "q_shoulder_qy", "q_shoulder_qz", "q_wrist",
                          "q_float_x", "q_float_y", "q_float_z", "q_float_qw", "q_float_qx", "q_float_qy",
                          "q_float_qz")
    assert mm.u_names[:6] == ("u_root_vx", "u_root_vy", "u_root_vz", "u_root_wx", "u_root_wy", "u_root_wz")
    assert mm.inputs == ("ctrl_w",)
    assert mm.joints == {"root": "free", "shoulder": "ball", "wrist": "hinge", "float": "free"}
    # the reference configuration is MuJoCo's qpos0 (body pos and quat of a free body, ref of a hinge)
    m = mujoco.MjModel.from_xml_string(FREE)
    for imported, xml in ((mm, FREE), (_imported(CHAIN), CHAIN)):
        q0 = kane.io.LoadedModel.from_system(imported.system).q0
        np.testing.assert_allclose([q0[n] for n in imported.q_names], mujoco.MjModel.from_xml_string(xml).qpos0,
                                   atol=1e-15)


def test_mass_properties_from_geoms_equal_mujocos():
    # the chain's body "mid" has inertia from a sphere, a cylinder given a mass, an ellipsoid and a box placed by
    # fromto; "base" from a
    # capsule (fromto) and a box; "tip" from its <inertial> (its box is left out: inertiafromgeom="auto")
    m = mujoco.MjModel.from_xml_string(CHAIN)
    model = _imported(CHAIN).system.compile()
    for name in ("base", "mid", "tip"):
        b = next(b for b in model.bodies if b.name == name)
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        assert float(b.mass) == pytest.approx(m.body_mass[i], rel=1e-13)
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, m.body_iquat[i])
        R = R.reshape(3, 3)
        np.testing.assert_allclose(np.array(b.com, dtype=float).ravel(), m.body_ipos[i], atol=1e-14)
        np.testing.assert_allclose(np.array(b.inertia, dtype=float), R @ np.diag(m.body_inertia[i]) @ R.T,
                                   atol=1e-13)


def test_geoms_are_kept_as_display_shapes_where_mujoco_places_them():
    from kane.spatial import rotation_rpy

    m = mujoco.MjModel.from_xml_string(CHAIN)
    visuals = _imported(CHAIN).system.compile().visuals
    assert [v.shape for v in visuals] == ["capsule", "box", "sphere", "cylinder", "box", "box", "box"]  # ellipsoid: its box
    for g, v in enumerate(visuals):  # MuJoCo's geom frames in body axes: geom_pos, geom_quat
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, m.geom_quat[g])
        np.testing.assert_allclose(rotation_rpy(v.rotation), R.reshape(3, 3), atol=1e-12)
        np.testing.assert_allclose(v.position, m.geom_pos[g], atol=1e-12)
    assert visuals[0].radius == 0.04 and visuals[0].length == pytest.approx(2 * m.geom_size[0, 1], rel=1e-14)
    np.testing.assert_allclose(visuals[1].size, 2 * m.geom_size[1], rtol=1e-14)


def _kkt_qacc(m, d, eq_rows):
    """MuJoCo's own M, bias and forces with the equalities off, constrained by J a = -J' v (J, J'v from eq_rows)."""
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    tau = d.qfrc_passive + d.qfrc_actuator - d.qfrc_bias
    J, Jdv = eq_rows(m, d)
    n = len(J)
    K = np.block([[M, J.T], [J, np.zeros((n, n))]])
    return np.linalg.solve(K, np.concatenate([tau, -Jdv]))[:m.nv], J


def _connect_and_coupling_rows(m, d):
    rows, bias = [], []
    b1, b2 = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n) for n in ("coupler", "rocker"))
    p1 = d.xpos[b1] + d.xmat[b1].reshape(3, 3) @ np.array([0.6, 0, 0.2])
    p2 = d.xpos[b2] + d.xmat[b2].reshape(3, 3) @ ROCKER_POINT
    jac = []
    for b, p in ((b1, p1), (b2, p2)):
        jp, jdp = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jac(m, d, jp, None, p, b)
        mujoco.mj_jacDot(m, d, jdp, None, p, b)
        jac.append((jp, jdp))
    rows += list(jac[0][0] - jac[1][0])
    bias += list((jac[0][1] - jac[1][1]) @ d.qvel)
    # joint coupling q_e - ref_e = 0.1 + 0.5 x + 0.3 x^2, x = q_a - ref_a: a_e - (0.5 + 0.6 x) a_a - 0.6 v_a^2 = 0
    x = d.qpos[0] - np.radians(10)
    row = np.zeros(m.nv)
    row[2], row[0] = 1.0, -(0.5 + 0.6 * x)
    rows.append(row)
    bias.append(-0.6 * d.qvel[0] ** 2)
    return np.array(rows), np.array(bias)


@pytest.mark.parametrize("xml", [CONNECT, CONNECT_SITES], ids=["anchor", "sites"])
def test_connect_and_joint_equalities_match_the_projection_of_mujocos_dynamics(xml):
    # reference: MuJoCo's mass matrix, bias, spring and motor forces with the equalities off, and the constraint
    # rows from its point Jacobians (mj_jac, mj_jacDot) and the polynomial: the KKT system solved here (MuJoCo's
    # own equality forces are soft, regularized by solimp, so they miss a hard constraint by ~1e-4)
    mm = _imported(xml)
    assert mm.constraints == ("connect_pin", "joint_couple")
    dyn = kane.derive(mm.system).compile()
    m = mujoco.MjModel.from_xml_string(xml)
    if xml is CONNECT:  # MuJoCo's own body2 point of the anchor form is the hand value
        np.testing.assert_allclose(m.eq_data[0, 3:6], ROCKER_POINT, atol=1e-15)
    else:  # the sites are imported, as the constraint's points: not listed as left out
        assert not any(line.startswith("<site>") for line in mm.not_imported)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EQUALITY
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    ind = [mm.u_names.index(n) for n in dyn.u_names]
    for _ in range(3):
        q, _, ctrl = _random_state(m, rng)
        u = rng.normal(size=dyn.n_u)
        v = np.asarray(dyn.full_speeds(0.0, q, u))
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, ctrl
        expected, J = _kkt_qacc(m, d, _connect_and_coupling_rows)
        assert np.max(np.abs(J @ v)) < 1e-12  # kane's dependent speeds satisfy MuJoCo's constraint rows
        a = dyn.udot(0.0, q, u, inputs=dict(zip(mm.inputs, ctrl)))
        np.testing.assert_allclose(a, expected[ind], rtol=0, atol=1e-9 * (1 + np.max(np.abs(expected))))


def _weld_rows(m, d):
    # body2's anchor and the point of body1 that coincides with it at qpos0 (found here by MuJoCo's kinematics)
    c, r = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n) for n in ("c", "r"))
    d0 = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d0)
    p2_0 = d0.xpos[r] + d0.xmat[r].reshape(3, 3) @ np.array([0.1, 0, 0])
    local1 = d0.xmat[c].reshape(3, 3).T @ (p2_0 - d0.xpos[c])
    p1 = d.xpos[c] + d.xmat[c].reshape(3, 3) @ local1
    p2 = d.xpos[r] + d.xmat[r].reshape(3, 3) @ np.array([0.1, 0, 0])
    J, Jd = [], []
    for b, p in ((c, p1), (r, p2)):
        jp, jr, jdp, jdr = (np.zeros((3, m.nv)) for _ in range(4))
        mujoco.mj_jac(m, d, jp, jr, p, b)
        mujoco.mj_jacDot(m, d, jdp, jdr, p, b)
        J.append(np.vstack([jp, jr]))
        Jd.append(np.vstack([jdp, jdr]))
    return J[0] - J[1], (Jd[0] - Jd[1]) @ d.qvel


def test_a_weld_equality_matches_the_projection_of_mujocos_dynamics():
    # the same reference as above: body2's anchor and its body1 point move together and the frames turn together
    mm = _imported(WELD)
    assert mm.constraints == ("weld_w",)
    dyn = kane.derive(mm.system).compile()
    assert dyn.n_u == 10 - 6
    m = mujoco.MjModel.from_xml_string(WELD)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EQUALITY
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    ind = [mm.u_names.index(n) for n in dyn.u_names]
    for _ in range(3):
        q, _, _ = _random_state(m, rng)
        u = rng.normal(size=dyn.n_u)
        v = np.asarray(dyn.full_speeds(0.0, q, u))
        d.qpos[:], d.qvel[:] = q, v
        expected, J = _kkt_qacc(m, d, _weld_rows)
        assert np.max(np.abs(J @ v)) < 1e-12
        np.testing.assert_allclose(dyn.udot(0.0, q, u), expected[ind], rtol=0,
                                   atol=1e-9 * (1 + np.max(np.abs(expected))))


def _suite_path(name):
    import importlib.util  # found without importing dm_control (its import opens a display)

    spec = importlib.util.find_spec("dm_control")
    if spec is None:
        pytest.skip("dm_control is not installed")
    return os.path.join(spec.submodule_search_locations[0], "suite", f"{name}.xml")


@pytest.mark.parametrize("name", SUITE)
def test_dm_control_suite_models_match_mujoco(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its deprecation notes (cheetah's settotalmass) to MUJOCO_LOG.TXT here
    path = _suite_path(name)
    m = _neutral(mujoco.MjModel.from_xml_path(path))
    with pytest.warns(MjcfWarning) as record:
        load_mjcf(path)
    assert len(record) == 1  # one warning lists everything left out
    _assert_qacc_matches(path, m, seed=7, states=2)


def test_what_is_not_imported_is_listed_in_one_warning():
    xml = CHAIN.replace('<flag contact="disable"/>', "").replace(
        '<joint name="j4" class="main" axis="0 1 1"/>',
        '<joint name="j4" class="main" axis="0 1 1" range="-30 30" armature="0.1"/><site name="s"/>').replace(
        "</actuator>", '</actuator><tendon><fixed name="t"><joint joint="j1" coef="1"/></fixed></tendon>'
                       '<sensor><jointpos joint="j1"/></sensor>')
    with pytest.warns(MjcfWarning) as record:
        mm = parse_mjcf(xml, collisions=False)  # the geoms' contacts listed rather than imported
    assert len(record) == 1
    text = str(record[0].message)
    for item in ("joint limits: j4", "armature: j4", "<site> elements: s", "<tendon>", "<sensor>",
                 "contacts of geoms"):
        assert item in text
    assert len(mm.not_imported) == 5  # tendon and sensor share the line of top-level elements


def test_a_chain_nested_deeper_than_pythons_recursion_limit_loads_in_order():
    n = 1500
    xml = ('<mujoco><option><flag contact="disable"/></option><worldbody>' + "".join(f'<body name="b{i}" pos="0 0 -0.1"><joint name="j{i}" axis="0 1 0"/>'
                                           '<geom size="0.01"/>' for i in range(n)) + "</body>" * n
           + "</worldbody></mujoco>")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # contacts switched off by the file are not listed: nothing to warn about
        mm = parse_mjcf(xml)
    assert mm.q_names == tuple(f"q_j{i}" for i in range(n))
    assert list(mm.bodies.items())[-1] == (f"b{n - 1}", f"b{n - 1}")


def test_cli_derives_an_mjcf_file(tmp_path):
    from click.testing import CliRunner

    from kane.cli import main

    path = tmp_path / "chain.xml"
    path.write_text(CHAIN)
    result = CliRunner().invoke(main, ["derive", str(path)])
    assert result.exit_code == 0, result.output
    assert "q_j1, q_j2, q_s1, q_j3, q_j4" in result.output
    bad = tmp_path / "bad.xml"
    bad.write_text(CHAIN.replace('type="slide"', 'type="screw"'))
    result = CliRunner().invoke(main, ["derive", str(bad)])
    assert result.exit_code != 0 and "<joint name='s1'> of body 'mid' type='screw'" in result.output


@pytest.mark.parametrize("xml, message", [
    ("<mujoco><worldbody><body></worldbody></mujoco>", r"MJCF text: not well-formed XML"),
    ("<robot/>", r"the root element is <robot>; expected <mujoco>"),
    ('<mujoco><worldbody><body name="b"><joint name="j" type="screw"/><geom size="1"/></body></worldbody>'
     "</mujoco>", r"<joint name='j'> of body 'b' type='screw': expected one of hinge, slide, ball, free"),
    ('<mujoco><worldbody><body name="b"><joint name="j"/></body></worldbody></mujoco>',
     r"<body name='b'> has joints but neither it nor any body below it has mass"),
    ('<mujoco><worldbody><body name="b"><joint class="nope"/><geom size="1"/></body></worldbody></mujoco>',
     r"<joint name='b_joint0'> of body 'b' class='nope': no <default class='nope'>"),
    ('<mujoco><worldbody><body name="b" childclass="x"><geom size="1"/></body></worldbody></mujoco>',
     r"<body name='b'> childclass='x': no <default class='x'>"),
    ('<mujoco><worldbody><body name="b"><geom type="box" size="1 2"/></body></worldbody></mujoco>',
     r"<body name='b'> <geom> #0 size='1 2': a box needs 3 positive sizes"),
    ('<mujoco><worldbody><body name="b" quat="1 0 0"><geom size="1"/></body></worldbody></mujoco>',
     r"<body name='b'> quat='1 0 0': expected 4 finite number"),
    ('<mujoco><worldbody><body name="b"><geom size="1"/><body><freejoint/><geom size="1"/></body></body>'
     "</worldbody></mujoco>", r"free joint 'body2_joint0' of body 'body2': a free joint must be the only joint of a "
                              r"body of the world body"),
    ('<mujoco><worldbody><body name="b"><joint/><geom size="1"/></body></worldbody><actuator>'
     '<motor joint="nope"/></actuator></mujoco>', r"<motor> #0 joint='nope': no joint of that name"),
    ('<mujoco><worldbody><body name="b"><joint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>',
     r"<body name='b'> <geom> #1 type='mesh': kane computes inertia from sphere, capsule, cylinder, box and "
     r"ellipsoid geoms only"),
    ('<mujoco><worldbody><body name="b"><joint/><geom size="1" shellinertia="true"/></body></worldbody></mujoco>',
     r"<body name='b'> <geom> #1 shellinertia='true': kane computes the inertia of solid geoms only"),
    ('<mujoco><worldbody><body name="b"><joint name="j"/><geom size="1"/></body><body name="c"><joint name="j"/>'
     '<geom size="1"/></body></worldbody></mujoco>', r"joint 'j' \(body 'c'\) is defined twice"),
    ('<mujoco><worldbody><body name="b"><geom size="1"/></body><body name="b"><geom size="1"/></body></worldbody>'
     "</mujoco>", r"<body name='b'> is defined twice"),
    ('<mujoco><include file="other.xml"/></mujoco>', r"<include file='other.xml'>: MJCF text given as a string"),
])
def test_bad_mjcf_gives_a_clear_error(xml, message):
    with pytest.raises(kane.ModelError, match=message):
        parse_mjcf(xml)


def test_hostile_xml_is_refused(tmp_path):
    bomb = ('<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            "<mujoco>&b;</mujoco>")
    with pytest.raises(kane.ModelError, match="declares the entity 'a'"):
        parse_mjcf(bomb)
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    external = f'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY e SYSTEM "file://{secret}">]><mujoco>&e;</mujoco>'
    path = tmp_path / "model.xml"
    path.write_text(external)
    with pytest.raises(kane.ModelError, match=f"{path}: declares the entity 'e'"):
        load_mjcf(path)
    path.write_text('<mujoco><include file="missing.xml"/></mujoco>')
    with pytest.raises(kane.ModelError, match="missing.xml: cannot read the MJCF include file"):
        load_mjcf(path)
