"""MJCF geoms imported as collision shapes (kane.io.mjcf_collision) against MuJoCo's own compiled model: the shapes'
frames against data.geom_xpos/geom_xmat after mj_forward at random states (kane's poses from kane's kinematics),
contact points, normals and distances against mj_collision's data.contact, and the pair filter against the pairs
MuJoCo collides in a scene where every pair overlaps."""

import warnings

import numpy as np
import pytest

import kane
from kane.errors import ModelError
from kane.io.mjcf import MjcfWarning, parse_mjcf
from kane.analysis.kinematic_outputs import kinematic_outputs
from kane.mechanics.collision import CollisionData, CollisionOptions, body_poses, collision_model, contacts
from kane.model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere
from kane.viz.scene import poses_at

mujoco = pytest.importorskip("mujoco")

TETRA = "0 0 0  0.2 0 0  0 0.15 0  0 0 0.1  0.05 0.05 0.02"  # the last vertex inside: the hull drops it

PLACEMENT = f"""<mujoco model="placement">
  <compiler angle="radian"/>
  <asset><mesh name="tet" vertex="{TETRA}" scale="1 2 1"/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1" pos="0.1 -0.2 0.05" euler="0.1 -0.2 0.3"/>
    <body name="table" pos="1 0 0.3" euler="0 0 0.4">
      <geom name="top" type="box" size="0.5 0.4 0.02" pos="0 0 0.1"/>
    </body>
    <body name="root" pos="0.2 0.1 1.0">
      <freejoint/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.2 0.3"/>
      <geom name="ball" type="sphere" size="0.1" pos="0.1 0 0"/>
      <geom name="brick" type="box" size="0.1 0.2 0.3" pos="0 0.2 0" euler="0.3 0.2 -0.5"/>
      <geom name="rod" type="capsule" size="0.05" fromto="0 0 0  0.3 0.2 -0.1"/>
      <geom name="can" type="cylinder" size="0.07 0.15" pos="-0.1 0 0.2" quat="0.9 0.1 0.3 0.2"/>
      <geom name="egg" type="ellipsoid" size="0.1 0.15 0.2" pos="0 -0.3 0" axisangle="1 1 0 0.7"/>
      <geom name="gem" type="mesh" mesh="tet" pos="0.2 0.2 0.2" euler="0.5 0 0.1"/>
      <body name="arm" pos="0.3 0 0" euler="0.2 0 0">
        <joint name="elbow" axis="0 1 1"/>
        <geom name="arm_geom" type="capsule" size="0.04 0.2" pos="0.1 0 0" euler="0 1.2 0"/>
        <body name="hand" pos="0.4 0.1 0" euler="0 0.3 0.2">
          <geom name="palm" type="box" size="0.05 0.04 0.01" pos="0.02 0 0" euler="0.4 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def _geom(m, name):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, name)


def _random_qpos(m, rng):
    q = m.qpos0 + 0.3 * rng.standard_normal(m.nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    return q


def test_shapes_sizes_and_frames_equal_mujocos_compiled_geoms():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)  # the undrawn mesh and world geoms
        mm = parse_mjcf(PLACEMENT)
    m = mujoco.MjModel.from_xml_string(PLACEMENT)
    d = mujoco.MjData(m)
    model = mm.system.compile()
    by_name = {c.name: c for c in model.collisions}
    assert set(by_name) == {"floor", "top", "ball", "brick", "rod", "can", "egg", "gem", "arm_geom", "palm"}
    assert by_name["top"].body == "ground" and by_name["palm"].body == "arm"  # MuJoCo's weld bodies
    kinds = {"ball": Sphere, "brick": Box, "rod": Capsule, "can": Cylinder, "egg": Ellipsoid, "gem": ConvexMesh,
             "floor": HalfSpace, "top": Box, "arm_geom": Capsule, "palm": Box}
    for name, kind in kinds.items():
        shape, size = by_name[name].shape, m.geom_size[_geom(m, name)]
        assert isinstance(shape, kind)
        if kind in (Box, Ellipsoid):
            np.testing.assert_array_equal(getattr(shape, "half_extents", getattr(shape, "radii", None)), size)
        elif kind in (Capsule, Cylinder):
            assert (shape.radius, shape.length) == pytest.approx((size[0], 2 * size[1]), abs=1e-15)
        elif kind is Sphere:
            assert shape.radius == size[0]
    assert len(by_name["gem"].shape.vertices) == 4
    eqs = kane.derive(mm.system)
    outputs = kinematic_outputs(eqs)

    rng = np.random.default_rng(3)
    for _ in range(3):
        q = _random_qpos(m, rng)
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        pos, wxyz = poses_at(outputs, 0.0, q, np.zeros(m.nv))
        R_s, r_s = collision_model(model).shape_poses(body_poses(model, (pos, wxyz)))
        for k, c in enumerate(model.collisions):
            g = _geom(m, c.name)
            if c.name == "gem":  # MuJoCo re-centres a mesh: compare the world vertices instead
                mine = c.shape.vertices @ R_s[k].T + r_s[k]
                theirs = m.mesh_vert[m.mesh_vertadr[0]:m.mesh_vertadr[0] + m.mesh_vertnum[0]]
                theirs = theirs @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
                dist = np.linalg.norm(mine[:, None] - theirs[None], axis=2)
                # MuJoCo keeps mesh vertices in float32: equal to its round-off (measured 1.7e-8 m); it keeps
                # the inner vertex too (its collision uses the hull, as kane's shape)
                assert dist.min(axis=1).max() < 1e-7 and np.sum(dist.min(axis=0) < 1e-7) == len(mine) == 4
                assert len(theirs) == 5
                continue
            np.testing.assert_allclose(r_s[k], d.geom_xpos[g], rtol=0, atol=1e-12)
            np.testing.assert_allclose(R_s[k], d.geom_xmat[g].reshape(3, 3), rtol=0, atol=1e-12)


def _scene(bodies: str, world: str = '<geom name="floor" type="plane" size="5 5 0.1"/>') -> str:
    return f"<mujoco><worldbody>{world}{bodies}</worldbody></mujoco>"


def _poses(mm, model, m, d):
    """kane's body poses from MuJoCo's body frames (the collision bodies are MJCF bodies; frames: identity)."""
    R, r = np.repeat(np.eye(3)[None], model.n_bodies, axis=0), np.zeros((model.n_bodies, 3))
    for mj_name, kname in mm.bodies.items():
        i, b = model.body_index(kname), mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, mj_name)
        R[i], r[i] = d.xmat[b].reshape(3, 3), d.xpos[b]
    return R, r


def _both(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        mm = parse_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)  # runs mj_collision
    model = mm.system.compile()
    return mm, model, m, d, contacts(model, CollisionData(model, CollisionOptions()), _poses(mm, model, m, d))


BOX_ON_PLANE = _scene('<body name="b" pos="0.3 -0.2 0.049" euler="0 0 30"><freejoint/>'
                      '<geom name="box" type="box" size="0.2 0.1 0.05"/></body>')
SPHERE_ON_BOX = _scene('<body name="s" pos="0.05 0.02 0.3498"><freejoint/><geom name="ball" size="0.05"/></body>',
                       '<body name="table" pos="0 0 0.2"><geom name="top" type="box" size="0.4 0.3 0.1"/></body>')
CAPSULE_ON_PLANE = _scene('<body name="c" pos="0 0 0.047" euler="0 90 0"><freejoint/>'
                          '<geom name="rod" type="capsule" size="0.05 0.2"/></body>')


@pytest.mark.parametrize("xml, count", [(BOX_ON_PLANE, 4), (SPHERE_ON_BOX, 1), (CAPSULE_ON_PLANE, 2)],
                         ids=["box-plane", "sphere-box", "capsule-plane"])
def test_contacts_equal_mujocos_mj_collision(xml, count):
    mm, model, m, d, cs = _both(xml)
    assert d.ncon == count and len(cs) == count
    for con in d.contact[:d.ncon]:
        names = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in (con.geom1, con.geom2)}
        sign = 1.0
        mid = [(c, 0.5 * (c.point_a_world + c.point_b_world)) for c in cs if {c.shape_a, c.shape_b} == names]
        c, p = min(mid, key=lambda cp: np.linalg.norm(cp[1] - con.pos))  # MuJoCo's point is midway
        if c.shape_a != mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, con.geom1):
            sign = -1.0  # kane's normal points from its shape a to b, MuJoCo's from geom1 to geom2
        np.testing.assert_allclose(p, con.pos, rtol=0, atol=1e-9)
        np.testing.assert_allclose(sign * c.normal_world, con.frame[:3], rtol=0, atol=1e-9)
        assert c.distance == pytest.approx(con.dist, abs=1e-9)


FILTER = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="table" pos="0 0 0.1"><geom name="top" size="0.3"/></body>
    <body name="A" pos="0 0 0.1"><freejoint/><geom name="a" size="0.3" contype="1" conaffinity="2"/>
      <body name="C" pos="0.05 0 0"><joint axis="0 0 1"/><geom name="c" size="0.3"/>
        <body name="D" pos="0.05 0 0"><geom name="d" size="0.3" contype="3" conaffinity="3"/></body>
        <body name="G" pos="0 0.05 0"><joint axis="1 0 0"/><geom name="g" size="0.3"/></body>
      </body>
    </body>
    <body name="B" pos="0 0.05 0.1"><freejoint/><geom name="b" size="0.3" contype="2" conaffinity="0"/></body>
    <body name="E" pos="0.05 0.05 0.1"><freejoint/><geom name="e" size="0.3" contype="5" conaffinity="4"/>
      <geom name="e2" type="box" size="0.2 0.2 0.2" contype="4" conaffinity="0"/></body>
    <body name="F" pos="0 -0.05 0.1"><freejoint/><geom name="f" size="0.3" contype="0" conaffinity="0"/></body>
  </worldbody>
  <contact><exclude body1="A" body2="E"/></contact>
</mujoco>"""


def test_pair_filter_equals_mujocos():
    mm, model, m, d, cs = _both(FILTER)
    assert "f" not in mm.collisions and len(mm.collisions) == 9
    theirs = {frozenset(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in (c.geom1, c.geom2))
              for c in d.contact[:d.ncon]}
    mine = {frozenset((c.shape_a, c.shape_b)) for c in cs}
    cm = collision_model(model)
    allowed = {frozenset((model.collisions[i].name, model.collisions[j].name)) for i, j in zip(*np.nonzero(cm.allowed))}
    assert mine == theirs == allowed  # every pair overlaps: the pairs MuJoCo collides are the pairs it tests
    assert len(theirs) == 16  # hand count: floor and top with a, c, d, g, e; a-g, a-b, c-e, d-b, d-e, g-e
    assert frozenset(("a", "b")) in theirs and frozenset(("b", "c")) not in theirs
    assert frozenset(("a", "c")) not in theirs and frozenset(("c", "d")) not in theirs  # parent; one weld body
    assert frozenset(("a", "e")) not in theirs and frozenset(("floor", "top")) not in theirs  # exclude; both static


def test_materials_follow_friction_and_condim():
    xml = _scene('<body name="s" pos="0 0 1"><freejoint/>'
                 '<geom name="s1" size="0.1" friction="0.7 0.02 0.003" condim="6"/>'
                 '<geom name="s2" size="0.1" friction="0.6" condim="4"/>'
                 '<geom name="s3" size="0.1" friction="0.8" condim="1"/>'
                 '<geom name="s4" size="0.1"/></body>')
    with pytest.warns(MjcfWarning, match="world geoms"):  # the floor is not drawn
        mats = {c.name: c.material for c in parse_mjcf(xml).system.compile().collisions}
    assert (mats["s1"].mu_static, mats["s1"].mu_kinetic, mats["s1"].torsional, mats["s1"].rolling) == (
        0.7, 0.7, 0.02, 0.003)
    assert (mats["s2"].mu_static, mats["s2"].torsional, mats["s2"].rolling) == (0.6, 0.005, 0.0)
    assert mats["s3"].mu_static == 0.0 and mats["s4"].mu_static == 1.0  # condim 1: frictionless; MuJoCo's default


def test_option_off_and_what_is_listed():
    xml = _scene('<body name="s" pos="0 0 1"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
                 '<geom name="ball" size="0.1" margin="0.01"/>'
                 '<geom name="wall" type="plane" size="1 1 0.1"/><geom name="hf" type="hfield"/>'
                 '</body>')
    with pytest.warns(MjcfWarning) as record:
        mm = parse_mjcf(xml)
    text = str(record[0].message)
    assert mm.collisions == ("floor", "ball")
    for item in ("planes on moving bodies (kane's half-space is on the ground only): wall", "geom margin",
                 "collision geoms kane cannot build: hf"):
        assert item in text
    with pytest.warns(MjcfWarning, match=r"contacts of geoms \(collisions=False\): floor, ball, wall, hf \(4\)"):
        off = parse_mjcf(xml, collisions=False)
    assert off.collisions == () and off.system.compile().collisions == ()


def test_mesh_file_beside_the_model_and_bad_input(tmp_path):
    (tmp_path / "tet.obj").write_text("v 0 0 0\nv 0.2 0 0\nv 0 0.2 0\nv 0 0 0.2\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n")
    xml = ('<mujoco><asset><mesh file="tet.obj" scale="2 1 1"/><mesh name="gone" file="missing.stl"/></asset>'
           '<worldbody><body name="b"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
           '<geom name="g" type="mesh" mesh="tet"/><geom name="h" type="mesh" mesh="gone"/></body>'
           '</worldbody></mujoco>')
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    with pytest.warns(MjcfWarning, match=r"collision geoms kane cannot build: h \(mesh 'gone': no such file\)"):
        mm = kane.io.load_mjcf(path)
    (c,) = mm.system.compile().collisions
    np.testing.assert_allclose(np.sort(np.ptp(c.shape.vertices, axis=0)), [0.2, 0.2, 0.4])
    for bad, match in [('condim="2"', r"<geom name='s'> condim='2': expected one of 1, 3, 4, 6"),
                       ('friction="-1"', r"<geom name='s'>: key 'mu_static': expected a friction coefficient >= 0"),
                       ('contype="-1"', r"<geom name='s'> contype='-1': expected a bit mask")]:
        with pytest.raises(ModelError, match=match):
            parse_mjcf(_scene(f'<body name="b"><freejoint/><geom name="s" size="0.1" {bad}/></body>'))
    with pytest.raises(ModelError, match=r"<contact><exclude> body2='nope': no body of that name"):
        parse_mjcf(_scene('<body name="b"><freejoint/><geom size="0.1"/></body>').replace(
            "</worldbody>", '</worldbody><contact><exclude body1="b" body2="nope"/></contact>'))


def test_pair_filter_of_dm_controls_humanoid_equals_mujocos_probe():
    """MuJoCo does not list the pairs it tests; the probe: margins and bounding boxes inflated to 10 m and more, so
    that every tested geom pair reports a contact. It misses the floor against a body with several geoms (MuJoCo's
    plane-against-body-tree path keeps the compiled boxes; measured 6 pairs, all the floor's): listed below."""
    dm_control = pytest.importorskip("dm_control")
    import os

    path = os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        mm = kane.io.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    m.geom_margin[:], m.geom_rbound[:], m.geom_aabb[:, 3:], m.bvh_aabb[:, 3:] = 10.0, 50.0, 50.0, 50.0
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    theirs = {frozenset(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in (c.geom1, c.geom2))
              for c in d.contact[:d.ncon]}
    model = mm.system.compile()
    cm = collision_model(model)
    allowed = {frozenset((model.collisions[i].name, model.collisions[j].name)) for i, j in zip(*np.nonzero(cm.allowed))}
    several = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom)
               if m.body_geomnum[m.geom_bodyid[g]] > 1}
    assert len(mm.collisions) == m.ngeom == 20 and len(theirs) == 155 and len(allowed) == 161
    assert theirs <= allowed
    assert allowed - theirs == {frozenset(("floor", g)) for g in several}


def test_flags_contact_off_and_filterparent_off():
    body = '<body name="s" pos="0 0 1"><freejoint/><geom name="ball" size="0.1"/></body>'
    off = _scene(body).replace("<worldbody>", '<option><flag contact="disable"/></option><worldbody>')
    with pytest.warns(MjcfWarning) as record:
        assert parse_mjcf(off).collisions == ()
    assert "contact" not in str(record[0].message)  # switched off by the file: nothing left out
    no_parent = _scene(body).replace("<worldbody>", '<option><flag filterparent="disable"/></option><worldbody>')
    with pytest.warns(MjcfWarning, match=r"filterparent disabled \(kane never tests a body against its parent\)"):
        assert parse_mjcf(no_parent).collisions == ("floor", "ball")
