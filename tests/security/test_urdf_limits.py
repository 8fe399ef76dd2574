"""Hostile URDF files (issue 27, item 7): decoding by the XML declaration or a clear refusal, entity declarations
refused, and meshes read only from the model's folder, its ROS package or the roots the user allows, as regular
files up to a size limit checked before reading."""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh

import kane
from kane.io.urdf import load_urdf
from kane.viz.visuals import VisualWarning, urdf_visuals

NAME = "bras_\u00e9l\u00e8ve"  # "bras_élève": bytes differ between latin-1, cp1252, UTF-8, UTF-16
ROBOT = """<?xml version="1.0" encoding="{encoding}"?>
<robot name="r">
  <link name="base"/>
  <link name="{name}"><inertial><mass value="2.5"/><inertia ixx="0.1" iyy="0.2" izz="0.25"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="{name}"/><axis xyz="0 0 1"/></joint>
</robot>
"""


def _robot(encoding, name=NAME):
    return ROBOT.format(encoding=encoding, name=name)


@pytest.mark.parametrize("declared, codec, bom", [
    ("ISO-8859-1", "latin-1", b""), ("latin-1", "latin-1", b""), ("windows-1252", "cp1252", b""),
    ("UTF-8", "utf-8", b""), ("UTF-8", "utf-8", b"\xef\xbb\xbf"), ("UTF-16", "utf-16-le", b"\xff\xfe"),
    ("UTF-16", "utf-16-be", b"\xfe\xff"), ("UTF-16", "utf-16-le", b""), ("UTF-32", "utf-32-le", b"\xff\xfe\x00\x00"),
])
def test_a_file_is_decoded_as_its_declaration_or_mark_says(tmp_path, declared, codec, bom):
    path = tmp_path / "r.urdf"
    path.write_bytes(bom + _robot(declared).encode(codec))
    robot = load_urdf(path)
    assert robot.links == ("base", NAME)  # the name as written, whatever the bytes
    body = robot.system.compile().bodies[1]
    assert float(body.mass) == 2.5 and [float(body.inertia[i, i]) for i in range(3)] == [0.1, 0.2, 0.25]


@pytest.mark.parametrize("data, message", [
    (_robot("UTF-8").encode("latin-1"), r"offset 97 \(e9 6c e8 76\) are not utf-8 text \(its XML declaration\)"),
    (_robot("UTF-8").replace('<?xml version="1.0" encoding="UTF-8"?>\n', "").encode("latin-1"),
     r"are not utf-8 text \(no encoding declared: UTF-8\)"),
    (_robot("us-ascii").encode("latin-1"), r"are not ascii text \(its XML declaration\)"),
    (_robot("cp1252", "x\u00e9").encode("latin-1").replace(b"x\xe9", b"x\x81"), r"\(81 .*not cp1252 text"),
    (_robot("UTF-16").encode("latin-1"), r"says 'UTF-16' but the file is 8-bit text"),
    (_robot("rot13").encode(), r"names the encoding 'rot13', which kane does not read"),
    (_robot("unicode_escape").encode(), r"names the encoding 'unicode_escape', which kane does not read"),
    (_robot("base64").encode(), r"names the encoding 'base64'"),
    (_robot("no-such-codec").encode(), r"names the encoding 'no-such-codec'"),
])
def test_bytes_that_are_not_the_declared_text_are_refused_naming_the_file(tmp_path, data, message):
    path = tmp_path / "bad.urdf"
    path.write_bytes(data)
    with pytest.raises(kane.ModelError, match=message) as info:
        load_urdf(path)
    assert str(info.value).startswith(f"{path}: ")
    with pytest.raises(kane.ModelError, match=message):  # the viewer reads the file the same way
        urdf_visuals(path)
    with pytest.raises(kane.ModelError, match=message):
        load_urdf(data)


LAUGHS = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">'
          + "".join(f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">' for k in range(8))
          + ']><robot name="&i;"><link name="l"/></robot>')


@pytest.mark.parametrize("text, entity", [
    ('<!DOCTYPE robot [<!ENTITY n "base">]><robot name="r"><link name="&n;"/></robot>', "n"),
    (LAUGHS, "a"),  # a billion laughs: refused at the first declaration, nothing expanded
    ('<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot name="&x;"><link name="l"/></robot>', "x"),
    ('<!DOCTYPE robot [<!ENTITY % p SYSTEM "http://example.invalid/x.dtd"> %p;]><robot name="r"/>', "p"),
])
def test_entity_declarations_are_refused_before_expansion(tmp_path, text, entity):
    path = tmp_path / "ent.urdf"
    path.write_text(text)
    with pytest.raises(kane.ModelError, match=rf"ent\.urdf: declares the entity '{entity}'; a model file needs no"):
        load_urdf(path)


# ---- meshes --------------------------------------------------------------------------------------------------
BOX = (0.1, 0.2, 0.3)


def _mesh(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=BOX).export(path)
    return path


def _urdf(path: Path, filename: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<robot name="r"><link name="base"><visual><geometry><mesh filename="{filename}"/></geometry>'
                    '</visual></link></robot>')
    return path


def _shapes(path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shapes = urdf_visuals(path, **options)
    return shapes, [str(w.message) for w in caught if issubclass(w.category, VisualWarning)]


@pytest.fixture
def site(tmp_path):
    """A model folder (with a mesh), a ROS package holding the URDF, and a folder outside both with a mesh."""
    _mesh(tmp_path / "model" / "meshes" / "in.stl")
    _mesh(tmp_path / "outside" / "secret.stl")
    (tmp_path / "pkg" / "urdf").mkdir(parents=True)
    (tmp_path / "pkg" / "package.xml").write_text("<package/>")
    _mesh(tmp_path / "pkg" / "meshes" / "p.stl")
    return tmp_path


def _drawn(shapes):
    assert len(shapes) == 1 and shapes[0].mesh is not None
    np.testing.assert_allclose(shapes[0].mesh.extents, BOX, rtol=1e-6)  # the box trimesh wrote


def test_meshes_under_the_model_folder_and_its_package_are_read(site):
    _drawn(_shapes(_urdf(site / "model" / "r.urdf", "meshes/in.stl"))[0])
    _drawn(_shapes(_urdf(site / "model" / "r.urdf", f"file://{site}/model/meshes/in.stl"))[0])
    _drawn(_shapes(_urdf(site / "pkg" / "urdf" / "r.urdf", "package://pkg/meshes/p.stl"))[0])


@pytest.mark.parametrize("filename, reason", [
    ("{site}/outside/secret.stl", "lies outside the folders meshes are read from"),
    ("../outside/secret.stl", "lies outside the folders meshes are read from"),
    ("meshes/../../outside/secret.stl", "lies outside the folders meshes are read from"),
    ("file://{site}/outside/secret.stl", "lies outside the folders meshes are read from"),
    ("file://elsewhere.example/outside/secret.stl", "a file URL on host 'elsewhere.example'"),
    ("https://example.invalid/m.stl", "a URL; meshes are read from local files only"),
    ("package://outside/secret.stl", "package 'outside' is not the ROS package"),
    ("package://pkg/meshes/p.stl", "package 'pkg' is not the ROS package"),  # the model is not inside pkg
    ("meshes/link.stl", "it leads to {site}/outside/secret.stl"),  # a symbolic link out of the folder
])
def test_meshes_elsewhere_are_not_opened(site, filename, reason):
    os.symlink(site / "outside" / "secret.stl", site / "model" / "meshes" / "link.stl")
    shapes, said = _shapes(_urdf(site / "model" / "r.urdf", filename.format(site=site)))
    assert shapes == ()  # the body keeps its default shape
    assert len(said) == 1 and reason.format(site=site) in said[0] and "drawing the body's default shape" in said[0]


def test_mesh_roots_allow_a_folder_and_a_package(site):
    path = _urdf(site / "model" / "r.urdf", f"{site}/outside/secret.stl")
    _drawn(_shapes(path, mesh_roots=[site / "outside"])[0])
    _urdf(path, "package://pkg/meshes/p.stl")
    _drawn(_shapes(path, mesh_roots=[site])[0])  # a root holding the package folder
    _drawn(_shapes(path, mesh_roots=[site / "pkg"])[0])  # the package folder itself
    _urdf(path, "package://pkg/../outside/secret.stl")
    assert _shapes(path, mesh_roots=[site / "pkg"])[0] == ()  # '..' out of the package


def test_a_mesh_above_the_size_limit_is_skipped_unread(site, monkeypatch):
    calls = []
    monkeypatch.setattr(trimesh, "load", lambda *a, **k: calls.append(a))
    big = site / "model" / "meshes" / "huge.stl"
    with open(big, "wb") as fh:  # 600 MiB claimed, sparse: nothing is written or read
        fh.truncate(600 * 2**20)
    shapes, said = _shapes(_urdf(site / "model" / "r.urdf", "meshes/huge.stl"))
    assert shapes == () and calls == []
    assert f"the file has {600 * 2**20} bytes, more than the limit of {64 * 2**20}" in said[0]
    size = (site / "model" / "meshes" / "in.stl").stat().st_size
    _urdf(site / "model" / "r.urdf", "meshes/in.stl")
    shapes, said = _shapes(site / "model" / "r.urdf", max_mesh_bytes=size - 1)
    assert shapes == () and calls == [] and f"the file has {size} bytes, more than the limit of {size - 1}" in said[0]


def test_a_fifo_is_not_opened(site):
    os.mkfifo(site / "model" / "meshes" / "pipe.stl")  # reading it would block forever
    shapes, said = _shapes(_urdf(site / "model" / "r.urdf", "meshes/pipe.stl"))
    assert shapes == () and "not a regular file" in said[0]


@pytest.mark.parametrize("geometry, message", [
    ('<cylinder length="0.5"/>', "<cylinder radius>: missing; expected 1 finite number"),
    ('<box/>', "<box size>: missing; expected 3 finite numbers"),
    ('<sphere radius="nan"/>', "<sphere radius>: expected 1 finite numbers, got 'nan'"),
])
def test_a_visual_missing_its_numbers_is_refused_naming_the_file(tmp_path, geometry, message):
    """Found by bench/fuzz_urdf.py (a raw TypeError before): the message names the file, link and attribute."""
    path = tmp_path / "v.urdf"
    path.write_text(f'<robot name="r"><link name="base"><visual><geometry>{geometry}</geometry></visual></link></robot>')
    with pytest.raises(kane.ModelError, match=re.escape(f"{path}: link 'base' <visual> {message}")):
        urdf_visuals(path)


TOML = """
[[bodies]]
name = "B"
mass = 1.0
inertia = [1, 1, 1]
[[joints]]
type = "prismatic"
parent = "ground"
child = "B"
axis = "x"
[[visuals]]
body = "B"
shape = "mesh"
file = "{file}"
"""


@pytest.mark.parametrize("file, drawn", [("meshes/in.stl", True), ("../outside/secret.stl", False),
                                         ("{site}/outside/secret.stl", False)])
def test_a_model_files_meshes_follow_the_same_rule(site, file, drawn):
    from kane.io.model_file import parse_model
    from kane.viz.visuals import model_visuals

    loaded = parse_model(TOML.format(file=file.format(site=site)), path=str(site / "model" / "m.toml"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shapes = model_visuals(loaded)
    if drawn:
        _drawn(shapes)
    else:
        assert shapes == () and "lies outside the folders meshes are read from" in str(caught[0].message)
        _drawn(model_visuals(loaded, mesh_roots=[site / "outside"]))


# ---- fuzzing (bench/fuzz_urdf.py; 5,000 files in a recorded run) ----------------------------------------------
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import fuzz_urdf  # noqa: E402


def test_200_hostile_urdfs_end_ok_or_in_a_kane_error_naming_the_file():
    result = fuzz_urdf.fuzz(200, seed=20261127, workers=2, limit_s=20.0)
    assert result.files == 200
    assert {k: result.counts[k] for k in fuzz_urdf.FAILURES} == dict.fromkeys(fuzz_urdf.FAILURES, 0), result.examples
    assert result.counts["ok"] >= 40 and result.counts["KaneError"] >= 80  # the mutations reach past the parser


def test_a_mesh_read_from_outside_would_be_counted(tmp_path, monkeypatch):
    """The fuzzer's escape check is live: with the folder check switched off, the planted mesh is read and seen."""
    import kane.viz.visuals as visuals

    model = fuzz_urdf._site(tmp_path)
    path = _urdf(model / "escape.urdf", "../outside/secret.stl")
    assert fuzz_urdf.check_file(path, "error") == ("ok", "")
    unchecked = visuals.load_mesh
    monkeypatch.setattr(visuals, "load_mesh", lambda file, scale, roots=None, max_bytes=0: unchecked(file, scale))
    outcome, detail = fuzz_urdf.check_file(path, "error")
    assert outcome == "escape" and "secret.stl" in detail
