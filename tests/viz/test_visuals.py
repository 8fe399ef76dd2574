"""Visual geometry: [[visuals]] tables of model files and URDF <visual> elements become placed, coloured shapes;
a missing or unreadable mesh falls back to the body's default shape with a warning naming the file; bad tables
are errors naming the file, the table, the key and the line."""

import math
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh

import kane
from kane import joints as J
from kane.errors import ModelError
from kane.io.model_file import LoadedModel, ModelFileError, parse_model
from kane.viz.scene import ShapeKind
from kane.viz.visuals import VisualWarning, loaded_shapes, model_visuals, shape_mesh, urdf_visuals

BASE = """
[model]
name = "two"
[parameters]
w = 0.4
[[bodies]]
name = "A"
mass = 2.0
inertia = [0.1, 0.2, 0.25]
[[bodies]]
name = "B"
mass = 1.0
inertia = [0.01, 0.01, 0.01]
[[joints]]
name = "j1"
parent = "ground"
child = "A"
type = "revolute"
axis = "z"
[[joints]]
name = "j2"
parent = "A"
child = "B"
type = "revolute"
axis = "z"
parent_point = [1, 0, 0]
"""


def _model(visuals: str, tmp_path):
    path = tmp_path / "two.toml"
    path.write_text(BASE + textwrap.dedent(visuals))
    return parse_model(path.read_text(), path)


def test_model_file_visuals_are_placed_sized_and_coloured(tmp_path):
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(tmp_path / "brick.stl")
    lm = _model("""
        [[visuals]]
        body = "A"
        shape = "box"
        size = ["w", 0.2, 0.1]
        position = [0.5, 0, 0]
        rotation = [0, 0, 1.5707963267948966]
        color = "#ff8000"
        [[visuals]]
        body = "A"
        shape = "cylinder"
        radius = 0.05
        length = "2*w"
        [[visuals]]
        body = "A"
        shape = "capsule"
        radius = 0.02
        length = 0.3
        color = [0, 1, 0]
        [[visuals]]
        body = "A"
        shape = "mesh"
        file = "brick.stl"
        size = [0.1, 0.1, 0.1]
        """, tmp_path)
    box, cyl, capsule, brick = model_visuals(lm)
    assert box.kind is ShapeKind.BOX and box.size == pytest.approx((0.4, 0.2, 0.1)) and box.color == (255, 128, 0)
    assert box.position == (0.5, 0.0, 0.0)
    np.testing.assert_allclose(box.wxyz, [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)], atol=1e-12)  # yaw 90
    assert cyl.kind is ShapeKind.CYLINDER and cyl.size == pytest.approx((0.1, 0.1, 0.8))
    v, _ = shape_mesh(cyl)
    np.testing.assert_allclose(np.ptp(v, axis=0), [0.1, 0.1, 0.8], rtol=1e-3)  # radius 0.05, 0.8 long along z
    v, _ = shape_mesh(capsule)
    np.testing.assert_allclose(np.ptp(v, axis=0), [0.04, 0.04, 0.3 + 0.04], rtol=1e-3)  # straight part + caps
    assert capsule.color == (0, 255, 0)
    v, faces = shape_mesh(brick)
    np.testing.assert_allclose(np.ptp(v, axis=0), [0.1, 0.2, 0.3], rtol=1e-6)  # the 1 x 2 x 3 brick, scaled
    assert brick.kind is ShapeKind.MESH and brick.file.endswith("brick.stl") and len(faces) == 12
    shapes = loaded_shapes(lm)
    assert [s.body for s in shapes] == ["A"] * 4 + ["B"]  # B has no visual: its default shape
    assert shapes[-1].kind is ShapeKind.BOX and shapes[-1].size == pytest.approx((math.sqrt(0.06),) * 3)


def test_a_missing_or_unreadable_mesh_falls_back_with_a_warning_naming_the_file(tmp_path):
    (tmp_path / "junk.stl").write_bytes(b"\x00not a mesh")
    for name in ("nowhere.stl", "junk.stl"):
        lm = _model(f"""
            [[visuals]]
            body = "B"
            shape = "mesh"
            file = "{name}"
            """, tmp_path)
        with pytest.warns(VisualWarning, match=name):
            shapes = loaded_shapes(lm)
        (b,) = [s for s in shapes if s.body == "B"]
        assert b.kind is ShapeKind.BOX and b.mesh is None  # B's equivalent box of its inertia


@pytest.mark.parametrize("table, key, reason", [
    ('body = "A"\nshape = "cone"', "shape", "expected one of 'box', 'cylinder'"),
    ('body = "A"\nshape = "sphere"', "radius", "missing required key 'radius'"),
    ('body = "Z"\nshape = "sphere"\nradius = 1', "body", "no body named 'Z'"),
    ('body = "A"\nshape = "box"\nsize = [1, 0, 1]', "size", "three box sides > 0"),
    ('body = "A"\nshape = "sphere"\nradius = 1\ncolor = [2, 0, 0]', "color", "each in 0-1"),
    ('body = "A"\nshape = "sphere"\nradius = 1\nlength = 2', "length", "unknown key for a sphere visual"),
])
def test_a_bad_visuals_table_names_the_file_table_key_and_line(tmp_path, table, key, reason):
    lm = _model("\n[[visuals]]\n" + table + "\n", tmp_path)
    with pytest.raises(ModelFileError) as info:
        model_visuals(lm)
    text = str(info.value)
    assert "two.toml" in text and "[[visuals]] #1" in text and f"key '{key}'" in text
    assert reason in text and "line" in text


URDF = """<robot name="arm">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.05" rpy="0 0 0"/><geometry><box size="0.2 0.3 0.1"/></geometry>
      <material name="blue"/></visual>
  </link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.25" rpy="1.5707963267948966 0 0"/>
      <geometry><cylinder radius="0.03" length="0.5"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <visual><geometry><mesh filename="package://arm_pkg/meshes/missing.stl"/></geometry></visual>
    <collision><geometry><sphere radius="0.04"/></geometry></collision>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>
"""


def test_urdf_visuals_with_materials_origins_and_a_missing_mesh(tmp_path):
    path = tmp_path / "arm_pkg" / "urdf" / "arm.urdf"
    path.parent.mkdir(parents=True)
    path.write_text(URDF)
    (tmp_path / "arm_pkg" / "package.xml").write_text("<package/>")  # a ROS package: package:// finds it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        base, arm, stand_in = urdf_visuals(path)
    said = [str(w.message) for w in caught]
    assert any(str(tmp_path / "arm_pkg" / "meshes" / "missing.stl") in s for s in said)  # package:// resolved
    assert any("drawing its <collision> geometry" in s for s in said)
    assert base.body == "base" and base.kind is ShapeKind.BOX and base.size == (0.2, 0.3, 0.1)
    assert base.position == (0.0, 0.0, 0.05) and base.color == (0, 0, 255)
    assert arm.kind is ShapeKind.CYLINDER and arm.size == (0.06, 0.06, 0.5) and arm.color == (255, 0, 0)
    np.testing.assert_allclose(arm.wxyz, [math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0], atol=1e-12)  # roll
    assert stand_in.body == "arm" and stand_in.kind is ShapeKind.SPHERE and stand_in.size == (0.08, 0.08, 0.08)


def test_the_ur5s_collada_visuals_are_drawn_as_authored():
    """example-robot-data's UR5 has .dae visuals: each link is drawn with its own COLLADA mesh (no fallback
    warning), and the mesh's extent is the one pycollada reads from the file's bound triangles directly."""
    import sysconfig

    import collada

    from kane.viz.screenshots import UR5

    urdf = Path(sysconfig.get_paths()["purelib"]) / UR5
    with warnings.catch_warnings():
        warnings.simplefilter("error", VisualWarning)
        warnings.simplefilter("error", PendingDeprecationWarning)  # pycollada's numpy.matrix notice is kept inside
        shapes = urdf_visuals(urdf)
    assert [s.body for s in shapes] == ["base_link", "shoulder_link", "upper_arm_link", "forearm_link",
                                       "wrist_1_link", "wrist_2_link", "wrist_3_link"]
    assert all(s.kind is ShapeKind.MESH and s.file.endswith(".dae") for s in shapes)
    for s in shapes:
        with warnings.catch_warnings():  # pycollada's numpy.matrix notice, in the reference reading too
            warnings.filterwarnings("ignore", "the matrix subclass", PendingDeprecationWarning)
            doc = collada.Collada(s.file)
            points = np.concatenate([t.vertex[t.vertex_index].reshape(-1, 3) for g in doc.scene.objects("geometry")
                                     for t in g.primitives()
                                     if isinstance(t, collada.triangleset.BoundTriangleSet)])
        extent = [points.min(axis=0), points.max(axis=0)]
        np.testing.assert_allclose(s.mesh.bounds, extent, atol=1e-6)  # the file's numbers are float32
        assert len(s.mesh.faces) == len(points) // 3


def test_visuals_declared_in_the_python_builder_are_drawn_and_checked():
    """System.add_visual: a cylinder along the link (rotated by pitch pi/2: its z along the body's x) replaces the
    link's default box; a body without visuals keeps its default; bad declarations name the body and field."""
    s = kane.System("arm", gravity=(0, 0, -9.81))
    s.add_body("link", mass=1.0, com=(0.5, 0, 0), inertia=(0.001, 0.08, 0.08))
    s.add_body("tip", mass=0.2)
    s.add_joint("ground", "link", J.Revolute("y"))
    s.add_joint("link", "tip", J.Revolute("y"), parent_point=(1, 0, 0))
    s.add_visual("link", "cylinder", radius=0.05, length=1.0, position=(0.5, 0, 0), rotation=(0, math.pi / 2, 0),
                 color=(1, 0, 0))
    shapes = {sh.body: sh for sh in loaded_shapes(LoadedModel.from_system(s))}
    cyl = shapes["link"]
    assert cyl.kind is ShapeKind.CYLINDER and cyl.color == (255, 0, 0)
    assert np.allclose(cyl.size, (0.1, 0.1, 1.0)) and np.allclose(cyl.position, (0.5, 0, 0))
    w, x, y, z = cyl.wxyz  # a quarter turn about y: (cos pi/4, 0, sin pi/4, 0)
    assert np.allclose([abs(w), abs(x), abs(y), abs(z)], [math.sqrt(0.5), 0, math.sqrt(0.5), 0], atol=1e-12)
    assert shapes["tip"].kind is not ShapeKind.CYLINDER
    with pytest.raises(ModelError, match="body 'elbow'.*bodies: link, tip"):
        s.add_visual("elbow", "box", size=(1, 1, 1))
    with pytest.raises(ModelError, match="field 'shape'.*box, cylinder"):
        s.add_visual("link", "cone", radius=0.1)
    with pytest.raises(ModelError, match="positive sizes"):
        s.add_visual("link", "sphere", radius=0.0)
