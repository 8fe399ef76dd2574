"""Collision shapes, their checks and System.add_collision: bad input names the body, shape and key."""

import numpy as np
import pytest

from kane import System
from kane import joints as J
from kane.errors import KaneError, ModelError
from kane.model.collision import (ALL_GROUPS, Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere,
                                  combine_materials)
from kane.model.contact import ContactMaterial

CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


@pytest.mark.parametrize("make, key", [
    (lambda: Sphere(-0.1), "radius"), (lambda: Sphere(0.0), "radius"), (lambda: Sphere(float("nan")), "radius"),
    (lambda: Box((0.1, -0.2, 0.3)), "half_extents"), (lambda: Box((0.1, 0.2)), "half_extents"),
    (lambda: Capsule(0.1, 0.0), "length"), (lambda: Cylinder(-1.0, 1.0), "radius"),
    (lambda: Ellipsoid((1.0, 1.0, float("inf"))), "radii"), (lambda: HalfSpace((0, 0, 0)), "normal"),
    (lambda: ConvexMesh(CUBE[:3]), "vertices")])
def test_bad_sizes_name_shape_and_key(make, key):
    with pytest.raises(ModelError, match=rf"key '{key}'"):
        make()


def test_bad_size_names_the_body_when_given_where():
    with pytest.raises(KaneError, match=r"collision 'c' of body 'b1'.*key 'radius'.*> 0"):
        Sphere(-1.0, where="collision 'c' of body 'b1': Sphere")


def test_non_convex_mesh_refused_unless_hull_taken():
    dented = np.vstack([CUBE, [[0.0, 0.0, 0.5]]])  # a point inside the cube
    with pytest.raises(ModelError, match=r"ConvexMesh: key 'vertices': the mesh is not convex: vertex 8 "
                                         r".*0\.5 m inside"):
        ConvexMesh(dented)
    hull = ConvexMesh(dented, hull=True)
    assert len(hull.vertices) == 8 and len(hull.faces) == 12  # the cube's 8 corners, 2 triangles a face
    # faces point outward: every face plane has the centre on its inner side
    for f in hull.faces:
        a, b, c = hull.vertices[f]
        assert np.dot(np.cross(b - a, c - a), a) > 0
    assert len(ConvexMesh(CUBE).vertices) == 8


@pytest.mark.parametrize("kwargs, key", [({"mu_static": -0.1}, "mu_static"), ({"restitution": 1.5}, "restitution"),
                                         ({"restitution": -0.1}, "restitution")])
def test_bad_material_names_the_collision_and_key(kwargs, key):
    with pytest.raises(ModelError, match=rf"collision 'pad' of body 'b': key '{key}'"):
        ContactMaterial(**kwargs, where="collision 'pad' of body 'b'")


def test_add_collision_records_placement_bits_and_name():
    s = System("s")
    s.add_body("b", 1.0, inertia=(1, 1, 1))
    s.add_joint("ground", "b", J.Free(), name="j")
    R = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    assert s.add_collision("b", Box((1, 2, 3)), (R, (0.1, 0.2, 0.3)), mask=~0) == "b_collision0"
    assert s.add_collision("b", Sphere(0.5), group=4, mask=5) == "b_collision1"
    s.add_collision("ground", HalfSpace((0, 0, 2), -1.0), name="floor")
    m = s.compile()
    a, b, f = m.collisions
    np.testing.assert_array_equal(a.R_body_shape, R)
    np.testing.assert_array_equal(a.r_body_shape, [0.1, 0.2, 0.3])
    assert (a.mask, b.group, b.mask) == (ALL_GROUPS, 4, 5) and ALL_GROUPS == 2**32 - 1
    assert f.shape.normal == (0.0, 0.0, 1.0) and f.shape.offset == -1.0


def test_add_collision_bad_input():
    s = System("s")
    s.add_body("b", 1.0, inertia=(1, 1, 1))
    with pytest.raises(ModelError, match=r"collision on body 'nobody': no such body"):
        s.add_collision("nobody", Sphere(1))
    with pytest.raises(ModelError, match=r"collision 'h' of body 'b': key 'shape': a HalfSpace .* ground only"):
        s.add_collision("b", HalfSpace(), name="h")
    with pytest.raises(ModelError, match=r"collision 'x' of body 'b': key 'placement': R is not a rotation"):
        s.add_collision("b", Sphere(1), (2 * np.eye(3), np.zeros(3)), name="x")
    with pytest.raises(ModelError, match=r"collision 'x' of body 'b': key 'shape': expected one of Sphere"):
        s.add_collision("b", "sphere", name="x")
    with pytest.raises(ModelError, match=r"key 'group': expected an integer"):
        s.add_collision("b", Sphere(1), group=1.5)
    s.add_collision("b", Sphere(1), name="x")
    with pytest.raises(ModelError, match=r"collision 'x' of body 'b': key 'name': another collision"):
        s.add_collision("b", Sphere(1), name="x")
    with pytest.raises(ModelError, match=r"\('b', 'zz'\): expected two different body names or two different "
                                         r"collision names; bodies: b, ground; collisions: x"):
        s.exclude_collision("b", "zz")
    with pytest.raises(ModelError, match=r"\('b', 'x'\): expected two different body names or two"):
        s.exclude_collision("b", "x")  # a body and a collision: not a pair the filter reads


def test_combined_material_is_the_fieldwise_maximum():
    a = ContactMaterial(0.4, 0.3, 0.1, rolling=0.002)
    b = ContactMaterial(0.2, 0.2, 0.6)
    c = combine_materials(a, b)
    assert (c.mu_static, c.mu_kinetic, c.restitution, c.torsional, c.rolling) == (0.4, 0.3, 0.6, 0.0, 0.002)
    assert combine_materials(None, b) is b and combine_materials(None, None) == ContactMaterial()
