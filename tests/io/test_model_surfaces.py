"""The [[surfaces]] and [[contacts]] tables: good files give the surfaces of their closed forms; bad ones get a
ModelFileError naming the file, table, key and line."""

import numpy as np
import pytest

from kane.io.model_context import ModelFileError
from kane.io.model_file import parse_model
from kane.io.model_surfaces import contacts_of, surfaces_of

BASE = """
[model]
name = "ball_on_patch"

[parameters]
r = 0.25

[[bodies]]
name = "ball"
mass = 1.0
com = [0, 0, 0]
inertia = [0.1, 0.1, 0.1]

[[bodies]]
name = "wheel"
mass = 1.0
com = [0, 0, 0]
inertia = [0.1, 0.1, 0.1]

[[joints]]
name = "j"
parent = "ground"
child = "ball"
type = "free"

[[joints]]
name = "k"
parent = "ground"
child = "wheel"
type = "revolute"
axis = "z"
"""

PATCH = """
[[surfaces]]
name = "floor"
body = "ground"
control_points = [[[0, 0, 0], [0, 2, 0]], [[2, 0, 0], [2, 2, 1]]]
weights = [[1, 1], [1, 1]]
knots_u = [0, 0, 1, 1]
knots_v = [0, 0, 1, 1]
degree_u = 1
degree_v = 1
"""

GOOD = BASE + PATCH + """
[[surfaces]]
name = "shell"
body = "ball"
primitive = "sphere"
radius = "r"
origin = [0, 0, 0.1]

[[surfaces]]
name = "ring"
body = "wheel"
primitive = "torus"
major_radius = 1.0
minor_radius = "r"
rotation = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]

[[contacts]]
name = "touch"
surface_a = "shell"
surface_b = "floor"
parameters_a = [0.0, -1.5]
parameters_b = [0.25, 0.5]
"""


def test_a_good_file_gives_surfaces_that_match_their_closed_forms():
    loaded = parse_model(GOOD, "good.toml")
    surfaces = surfaces_of(loaded)
    assert list(surfaces) == ["floor", "shell", "ring"]
    floor, shell, ring = surfaces.values()
    assert (floor.body, floor.primitive, shell.body, ring.primitive) == ("ground", "nurbs", "ball", "torus")
    s, t = 0.3, 0.6  # bilinear patch: (1-s)(1-t) P00 + (1-s) t P01 + s (1-t) P10 + s t P11
    P = np.array([[[0, 0, 0], [0, 2, 0]], [[2, 0, 0], [2, 2, 1]]], float)
    bilinear = (1 - s) * (1 - t) * P[0, 0] + (1 - s) * t * P[0, 1] + s * (1 - t) * P[1, 0] + s * t * P[1, 1]
    assert np.abs(floor.surface.point(s, t) - bilinear).max() < 1e-14
    lon, lat = 0.4, -0.3
    sphere = 0.25 * np.array([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)]) + [0, 0, 0.1]
    assert np.abs(shell.surface.point(lon, lat) - sphere).max() < 1e-15
    rho = 1.0 + 0.25 * np.cos(lat)  # torus about local z, local z along body -y (the rotation's third column)
    local = np.array([rho * np.cos(lon), rho * np.sin(lon), 0.25 * np.sin(lat)])
    R = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], float)
    assert np.abs(ring.surface.point(lon, lat) - R @ local).max() < 1e-15
    contact = contacts_of(loaded)["touch"]
    assert contact.surface_a is not None and contact.surface_a.name == "shell" and contact.surface_b.name == "floor"
    assert contact.parameters_a == (0.0, -1.5) and contact.parameters_b == (0.25, 0.5)


def test_a_nurbs_surface_is_placed_like_the_primitives():
    # the bilinear patch turned a quarter about z (x -> y, y -> -x) and raised by "r": its points turned and shifted
    text = BASE + PATCH.replace("degree_v = 1", 'degree_v = 1\norigin = [0, 0, "r"]\n'
                                                "rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]")
    floor = surfaces_of(parse_model(text, "placed.toml"))["floor"].surface
    s, t = 0.3, 0.6
    P = np.array([[[0, 0, 0], [0, 2, 0]], [[2, 0, 0], [2, 2, 1]]], float)
    x, y, z = (1 - s) * (1 - t) * P[0, 0] + (1 - s) * t * P[0, 1] + s * (1 - t) * P[1, 0] + s * t * P[1, 1]
    assert np.abs(floor.point(s, t) - [-y, x, z + 0.25]).max() < 1e-14
    bad = BASE + PATCH.replace("degree_v = 1", "degree_v = 1\nrotation = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]")
    with pytest.raises(ModelFileError, match=r"placed\.toml.*\[\[surfaces\]\].*'rotation'.*proper rotation"):
        surfaces_of(parse_model(bad, "placed.toml"))


def test_contact_parameters_default_to_the_middle_of_the_bounds():
    text = BASE + PATCH + '[[surfaces]]\nname = "s"\nbody = "ball"\nprimitive = "sphere"\nradius = 1\n' \
        '[[contacts]]\nname = "c"\nsurface_a = "s"\nsurface_b = "floor"\n'
    contact = contacts_of(parse_model(text, "mid.toml"))["c"]
    assert contact.parameters_b == (0.5, 0.5) and contact.parameters_a == (0.0, 0.0)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


@pytest.mark.parametrize("old, new, key, reason", [
    ("knots_u = [0, 0, 1, 1]", "knots_u = [0, 1, 0, 1]", "knots_u", "non-decreasing"),
    ("weights = [[1, 1], [1, 1]]", "weights = [[1, 0], [1, 1]]", "weights", "positive"),
    ("control_points = [[[0, 0, 0], [0, 2, 0]], [[2, 0, 0], [2, 2, 1]]]",
     "control_points = [[[1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1]]]", "control_points", "same point"),
    ('body = "ground"', 'body = "table"', "body", "no body named 'table'"),
    ("degree_u = 1", "degree_u = 0", "degree_u", "integer >= 1"),
    ("degree_u = 1", "degree_u = 1\nradius = 2", "radius", "unknown key for a nurbs surface"),
    ("knots_v = [0, 0, 1, 1]", 'knots_v = [0, 0, "a", 1]', "knots_v", "finite numbers"),
])
def test_bad_surfaces_name_file_table_key_and_line(old, new, key, reason):
    text = GOOD.replace(old, new, 1)
    with pytest.raises(ModelFileError, match=reason) as info:
        surfaces_of(parse_model(text, "bad.toml"))
    err = info.value
    assert err.path == "bad.toml" and err.key == key and "[[surfaces]] #1 'floor'" in err.table
    assert err.line == line_of(text, f"{key} =")


@pytest.mark.parametrize("old, new, table, key, reason", [
    ('radius = "r"', 'radius = "-r"', "[[surfaces]] #2 'shell'", "radius", "> 0"),
    ('minor_radius = "r"', "minor_radius = 1.5", "[[surfaces]] #3 'ring'", "minor_radius", "smaller"),
    ('primitive = "sphere"', 'primitive = "cone"', "[[surfaces]] #2 'shell'", "primitive", "expected one of"),
    ("rotation = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]", "rotation = [[1, 0, 0], [0, 1, 0], [0, 1, 0]]",
     "[[surfaces]] #3 'ring'", "rotation", "rotation"),
    ('surface_b = "floor"', 'surface_b = "shell"', "[[contacts]] #1 'touch'", "surface_b", "both on 'ball'"),
    ('surface_a = "shell"', 'surface_a = "hull"', "[[contacts]] #1 'touch'", "surface_a", "no surface named"),
    ("parameters_b = [0.25, 0.5]", "parameters_b = [0.25, 1.5]", "[[contacts]] #1 'touch'", "parameters_b",
     r"parameter t = 1.5 of surface 'floor' is outside its bounds \[0, 1\]"),
    ("parameters_a = [0.0, -1.5]", "parameters_a = [0.0]", "[[contacts]] #1 'touch'", "parameters_a", "two"),
])
def test_bad_primitives_and_contacts_are_refused_clearly(old, new, table, key, reason):
    text = GOOD.replace(old, new, 1)
    with pytest.raises(ModelFileError, match=reason) as info:
        contacts_of(parse_model(text, "bad.toml"))
    err = info.value
    assert err.table == table and err.key == key and err.line == line_of(text, new.split(" =")[0] + " =")
    assert "bad.toml" in str(err)
