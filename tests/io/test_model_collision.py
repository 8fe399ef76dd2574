"""[[collision]] tables in model files and URDF <collision> geometry: the same shapes as built in Python."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kane import System
from kane import joints as J
from kane.io import ModelFileError, parse_model
from kane.mechanics.collision import contacts, pair_distance
from kane.model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere
from kane.model.contact import ContactMaterial
from kane.spatial import rotation_rpy

SCENE = """
[model]
name = "scene"
[parameters]
r = 0.1
[[bodies]]
name = "box"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
[[bodies]]
name = "arm"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
[[joints]]
name = "free"
type = "free"
parent = "ground"
child = "box"
[[joints]]
name = "hinge"
type = "revolute"
parent = "box"
child = "arm"
axis = "z"
[[collision]]
name = "shell"
body = "box"
shape = "box"
size = [0.4, 0.2, "2*r"]
xyz = [0.0, 0.0, 0.01]
rpy = [0.0, 0.0, 0.2]
mu_static = 0.8
mu_kinetic = 0.6
restitution = 0.3
[[collision]]
name = "ball"
body = "arm"
shape = "sphere"
radius = "r"
xyz = [0.3, 0.0, 0.0]
group = 2
mask = 1
[[collision]]
body = "arm"
shape = "capsule"
radius = 0.05
length = 0.3
[[collision]]
body = "arm"
shape = "cylinder"
radius = 0.05
length = 0.3
[[collision]]
body = "arm"
shape = "ellipsoid"
radii = [0.1, 0.2, 0.3]
[[collision]]
body = "arm"
shape = "mesh"
vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
[[collision]]
name = "floor"
body = "ground"
shape = "halfspace"
mu_static = 0.5
[[collision_exclude]]
a = "ball"
b = "floor"
"""


def test_model_file_collisions_equal_the_python_built_ones():
    m = parse_model(SCENE, "scene.toml").system.compile()
    s = System("py")
    s.add_body("box", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_body("arm", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "box", J.Free(), name="free")
    s.add_joint("box", "arm", J.Revolute("z"), name="hinge")
    s.add_collision("box", Box((0.2, 0.1, 0.1)), (Rotation.from_euler("z", 0.2).as_matrix(), [0, 0, 0.01]),
                    name="shell", material=ContactMaterial(0.8, 0.6, 0.3))
    s.add_collision("arm", Sphere(0.1), (np.eye(3), [0.3, 0, 0]), name="ball", group=2, mask=1)
    s.add_collision("arm", Capsule(0.05, 0.3))
    s.add_collision("arm", Cylinder(0.05, 0.3))
    s.add_collision("arm", Ellipsoid((0.1, 0.2, 0.3)))
    s.add_collision("arm", ConvexMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]))
    s.add_collision("ground", HalfSpace(), name="floor", material=ContactMaterial(0.5))
    s.exclude_collision("ball", "floor")
    ref = s.compile()
    assert [c.name for c in m.collisions] == [c.name for c in ref.collisions] == [
        "shell", "ball", "arm_collision1", "arm_collision2", "arm_collision3", "arm_collision4", "floor"]
    for a, b in zip(m.collisions, ref.collisions):
        assert type(a.shape) is type(b.shape) and a.body == b.body and (a.group, a.mask) == (b.group, b.mask)
        np.testing.assert_allclose(a.R_body_shape, b.R_body_shape, atol=1e-15)
        np.testing.assert_allclose(a.r_body_shape, b.r_body_shape, atol=1e-15)
        assert a.material == b.material
    assert m.collision_excludes == ref.collision_excludes == (frozenset(("ball", "floor")),)
    # the same geometry: a box 0.005 into the floor gives the same 4 points in both
    poses = (np.repeat(np.eye(3)[None], 2, axis=0), np.array([[0, 0, 0.085], [5, 5, 5]]))
    got = [(c.name, round(c.distance, 9)) for c in contacts(m, None, poses)]
    assert got == [(c.name, round(c.distance, 9)) for c in contacts(ref, None, poses)]
    assert got == [("shell|floor", -0.005)] * 4
    assert contacts(m, None, poses)[0].material == ContactMaterial(0.8, 0.6, 0.3)  # max of (0.8, 0.6, 0.3), 0.5


@pytest.mark.parametrize("old, new, key, reason", [
    ('radius = "r"', 'radius = "-r"', "radius", r"collision 'ball' of body 'arm': Sphere: key 'radius': expected "
                                                r"a finite length > 0"),
    ('size = [0.4, 0.2, "2*r"]', 'size = [0.4, -0.2, 0.1]', "half_extents", r"Box: key 'half_extents'"),
    ('vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]',
     'vertices = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 0.1]]', "vertices",
     r"collision '#6' of body 'arm': ConvexMesh: key 'vertices': the mesh is not convex"),
    ("mu_static = 0.8", "mu_static = -0.8", "mu_static", r"collision 'shell' of body 'box': key 'mu_static'"),
    ("restitution = 0.3", "restitution = 1.3", "restitution", r"collision 'shell' of body 'box': key 'restitution'"),
    ('shape = "capsule"', 'shape = "cone"', "shape", r"expected one of 'sphere'"),
    ("length = 0.3\n[[collision]]\nbody = \"arm\"\nshape = \"ellipsoid\"",
     "length = 0.3\nsize = 2\n[[collision]]\nbody = \"arm\"\nshape = \"ellipsoid\"", "size",
     r"unknown key for a cylinder collision"),
    ('name = "floor"\nbody = "ground"', 'name = "floor"\nbody = "table"', "body", r"no body named 'table'"),
    ('b = "floor"', 'b = "nothing"', "b", r"\('ball', 'nothing'\): expected two different body names or two"),
    ("group = 2", "group = 2.5", "group", r"expected an integer bit mask"),
])
def test_bad_collision_tables_name_file_table_key(old, new, key, reason):
    assert old in SCENE
    with pytest.raises(ModelFileError, match=reason) as info:
        parse_model(SCENE.replace(old, new, 1), "scene.toml")
    msg = str(info.value)
    assert "scene.toml" in msg and "[[collision" in msg and f"'{key}'" in msg


URDF = """<robot name="r">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.05" rpy="0 0 0.3"/><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.1"/></geometry></collision>
    <collision><geometry><cylinder radius="0.05" length="0.6"/></geometry></collision>
    <collision><geometry><mesh filename="hull.obj" scale="2 2 2"/></geometry></collision>
    <collision><geometry><mesh filename="package://other/missing.stl"/></geometry></collision>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/></joint>
</robot>
"""


def test_urdf_collision_geometry(tmp_path):
    from kane.io.urdf import UrdfWarning, load_urdf

    (tmp_path / "hull.obj").write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 2 3\nf 1 2 4\nf 1 3 4\n"
                                       "f 2 3 4\n")
    path = tmp_path / "r.urdf"
    path.write_text(URDF)
    with pytest.warns(UrdfWarning, match=r"1 collision geometry not imported .*: link 'arm' <collision> #4 mesh "
                                         r"'package://other/missing.stl': only paths relative to the URDF's folder"):
        robot = load_urdf(path, root_joint="floating")
    m = robot.system.compile()
    shapes = {c.name: c for c in m.collisions}
    assert list(shapes) == ["base_collision0", "arm_collision0", "arm_collision1", "arm_collision2"]
    box, ball, cyl, mesh = shapes.values()
    assert box.shape == Box((0.2, 0.1, 0.05)) and ball.shape == Sphere(0.1) and cyl.shape == Cylinder(0.05, 0.6)
    np.testing.assert_allclose(box.R_body_shape, rotation_rpy([0, 0, 0.3]), atol=1e-15)
    np.testing.assert_allclose(box.r_body_shape, [0, 0, 0.05])
    np.testing.assert_allclose(np.sort(mesh.shape.vertices, axis=0)[-1], [0.2, 0.2, 0.2])  # scaled by 2
    # base at height 0.04: the box's bottom is 0.01 below the floor -> the 4 corners; the arm's ball is far away
    s = robot.system
    s.add_collision("ground", HalfSpace(), name="floor")
    m = s.compile()
    R = np.repeat(np.eye(3)[None], 2, axis=0)
    cs = contacts(m, None, (R, np.array([[0, 0, -0.01], [0, 0, 0.19]])))
    assert {c.name for c in cs} == {"base_collision0|floor", "arm_collision1|floor"}  # box, cylinder (z 0.19-0.3)
    assert len([c for c in cs if c.shape_a == "base_collision0"]) == 4
    d = pair_distance(m, None, (R, np.array([[0, 0, -0.01], [0, 0, 0.19]])), "arm_collision0", "floor")
    assert d.distance == pytest.approx(0.09, abs=1e-9)
    d = pair_distance(m, None, (R, np.array([[0, 0, -0.01], [0, 0, 0.19]])), "arm_collision2", "floor")
    assert d.distance == pytest.approx(0.19, abs=1e-9)  # the mesh's lowest vertex is the arm's origin


def test_urdf_bad_collision_geometry_names_link_and_key():
    from kane.errors import ModelError
    from kane.io.urdf import UrdfWarning, parse_urdf

    bad = URDF.replace('<box size="0.4 0.2 0.1"/>', '<box size="0.4 -0.2 0.1"/>')
    with pytest.raises(ModelError, match=r"link 'base' <collision> #1 \(body 'base'\): <box>: key 'half_extents': "
                                         r"expected a finite length > 0"):
        parse_urdf(bad)
    odd = URDF.replace('<sphere radius="0.1"/>', '<capsule radius="0.1" length="0.2"/>')
    with pytest.warns(UrdfWarning, match=r"3 collision geometries not imported .*<collision> #1 <capsule>: not a URDF "
                                         r"collision geometry kane reads; .*mesh 'hull.obj', .*: the URDF was not read from a"):
        robot = parse_urdf(odd)
    assert [c.name for c in robot.system.compile().collisions] == ["base_collision0", "arm_collision0"]
