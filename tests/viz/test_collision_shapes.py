"""Collision shapes drawn in the viewer's scene: sizes, placements and meshes from the Collision records."""

import numpy as np
from scipy.spatial.transform import Rotation

from kane import System
from kane import joints as J
from kane.model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere
from kane.viz.collision_shapes import COLLISION_COLOR, collision_shapes
from kane.viz.scene import ShapeKind
from kane.viz.visuals import body_shapes


def test_collision_shapes_sizes_placements_and_toggle():
    s = System("s")
    s.add_body("b", 1.0, inertia=(0.1, 0.1, 0.1))
    s.add_joint("ground", "b", J.Free(), name="j")
    R = Rotation.from_euler("xyz", [0.1, 0.2, 0.3]).as_matrix()
    s.add_collision("b", Box((0.1, 0.2, 0.3)), (R, [1.0, 2.0, 3.0]))
    s.add_collision("b", Sphere(0.5))
    s.add_collision("b", Capsule(0.1, 0.4))
    s.add_collision("b", Cylinder(0.2, 0.6))
    s.add_collision("b", Ellipsoid((0.1, 0.2, 0.3)))
    s.add_collision("b", ConvexMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]))
    s.add_collision("ground", HalfSpace())
    m = s.compile()
    box, ball, cap, cyl, ell, tet = collision_shapes(m)  # the ground's half-space is not drawn
    assert [x.kind for x in (box, ball, cap, cyl, ell, tet)] == [ShapeKind.BOX, ShapeKind.SPHERE, ShapeKind.CAPSULE,
                                                                ShapeKind.CYLINDER, ShapeKind.MESH, ShapeKind.MESH]
    np.testing.assert_allclose(box.size, [0.2, 0.4, 0.6])
    assert box.position == (1.0, 2.0, 3.0) and box.color == COLLISION_COLOR
    q = Rotation.from_matrix(R).as_quat(scalar_first=True)
    np.testing.assert_allclose(np.abs(np.dot(box.wxyz, q)), 1.0, atol=1e-12)
    assert ball.size == (1.0, 1.0, 1.0) and cap.size == (0.2, 0.2, 0.4) and cyl.size == (0.4, 0.4, 0.6)
    np.testing.assert_allclose(np.ptp(ell.mesh.vertices, axis=0), [0.2, 0.4, 0.6], atol=1e-12)
    assert len(tet.mesh.faces) == 4
    plain = body_shapes(m)
    assert not any(x.color == COLLISION_COLOR for x in plain)
    assert body_shapes(m, collisions=True) == plain + (box, ball, cap, cyl, ell, tet)


def test_open_run_draws_collision_shapes_on_request(tmp_path):
    import kane
    from kane.io.model_file import load_model
    from kane.viz.viewer import open_run

    path = tmp_path / "drop.toml"
    path.write_text("""
[model]
name = "drop"
gravity = [0, 0, -9.81]
[[bodies]]
name = "box"
mass = 1.0
inertia = [0.1, 0.1, 0.1]
[[joints]]
name = "free"
type = "free"
parent = "ground"
child = "box"
q0 = [0, 0, 1, 1, 0, 0, 0]
[[collision]]
body = "box"
shape = "box"
half_extents = [0.1, 0.2, 0.3]
xyz = [0, 0, 0.05]
""")
    lm = load_model(path)
    dyn = lm.derive().compile()
    q0, u0 = lm.initial_state(dyn)
    run = tmp_path / "drop.h5"
    kane.simulate.simulate(dyn, (0.0, 0.02), q0, u0, output_dt=0.01, path=run, description=f"drop ({path})")
    drawn = open_run(run, path, collisions=True).shapes
    (box,) = [x for x in drawn if x.color == COLLISION_COLOR]
    assert box.kind is ShapeKind.BOX and box.size == (0.2, 0.4, 0.6) and box.position == (0.0, 0.0, 0.05)
    assert not any(x.color == COLLISION_COLOR for x in open_run(run, path).shapes)
