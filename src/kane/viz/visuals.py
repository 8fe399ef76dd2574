"""Visual geometry of bodies, from model files (``[[visuals]]`` tables) and URDF ``<visual>`` elements: boxes,
cylinders, spheres, capsules and mesh files (read with trimesh), each placed in its body's axes with a colour.

A model file's ``[[visuals]]`` tables (keys declared in :data:`VISUALS`; see the model-file reference,
docs/reference/model-file.md)::

    [[visuals]]
    body = "B"
    shape = "box"
    size = [0.8, 0.5, 0.3]
    color = "#cc3333"

Numbers may be expressions of the parameters. A body with no visual is drawn with its default shape
(:func:`kane.viz.scene.default_shapes`). A mesh file that is missing or that trimesh cannot read falls back to the
body's default shape with a :class:`VisualWarning` naming the file; for a URDF link, its ``<collision>`` mesh is
tried first. COLLADA (.dae) visuals, as the UR5's, are read through pycollada (a dependency of kane); a URDF
visual without a ``<material>`` takes its link's palette colour.

Mesh files are data from the model's author: a model file's or URDF's meshes are read only from under the model's
own folder or the folders the user allows (``mesh_roots``); a URDF's ``package://PKG/...`` only from a folder PKG
that is (or lies directly in) one of ``mesh_roots``, or from the ROS package (a folder PKG holding a
``package.xml``) the URDF itself lies in. Absolute paths, ``file://`` URLs, ``..`` and symbolic links that lead
elsewhere, other URLs, files that are not regular files and files larger than ``max_mesh_bytes`` (default
:data:`MAX_MESH_BYTES`, checked with ``os.stat`` before anything is read) are not opened: the mesh is skipped with
a :class:`VisualWarning` that names the file, the reason and the option that allows it, and the body is drawn
by its default shape (meshes are for display only; the dynamics never read them).
"""

from __future__ import annotations

import math
import os
import re
import stat
import urllib.parse
import warnings
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..io.model_schema import KeySpec as K
from ..io.model_schema import KindSpec, TableSpec
from ..io.xml_safe import parse_xml, read_xml_text
from ..spatial import rotation_rpy, rotation_to_quaternion
from .scene import PALETTE, BodyShape, ShapeKind, default_shapes

__all__ = ["VisualWarning", "VISUALS", "MAX_MESH_BYTES", "load_mesh", "model_visuals", "urdf_visuals", "shape_mesh",
           "system_visuals", "body_shapes", "loaded_shapes"]

_RADIUS = K("radius", "expr", "radius", unit="m", required=True, example="0.05")
_LENGTH = K("length", "expr", "length along z (a capsule's straight part)", unit="m", required=True, example="0.2")
VISUALS = TableSpec(
    "visuals", "Shapes drawn for bodies by the viewer (`kane view`); a body with none is drawn with its default "
    "shape. Numbers may be expressions of the parameters.", array=True, keys=(
        K("body", "name", "the body it is fixed in", required=True, example='"B"'),
        K("shape", "string", "the kind of shape", required=True, allowed=("box", "cylinder", "sphere", "capsule",
                                                                          "mesh"), example='"sphere"'),
        K("position", "vec", "its centre in body axes", unit="m", default="[0, 0, 0]", example="[0.4, 0, 0.2]"),
        K("rotation", "vec", "roll, pitch, yaw as URDF's rpy: R = Rz(yaw) Ry(pitch) Rx(roll)", unit="rad",
          default="[0, 0, 0]", example="[0, 0, 0.3]"),
        K("color", "color", "the colour", default="grey",
          example='"#cc3333"'),
    ), kinds=(
        KindSpec("box", "a box centred on position", (
            K("size", "vec", "its sides", unit="m", required=True, example="[0.8, 0.5, 0.3]"),)),
        KindSpec("cylinder", "a cylinder along z", (_RADIUS, _LENGTH)),
        KindSpec("sphere", "a sphere", (_RADIUS,)),
        KindSpec("capsule", "a capsule along z", (_RADIUS, _LENGTH)),
        KindSpec("mesh", "a mesh file (STL, OBJ, PLY, GLB, DAE) read with trimesh, from under the model's folder", (
            K("file", "string", "the file, relative to the model file", required=True, example='"part.stl"'),
            K("size", "vec", "its scale", default="[1, 1, 1]", example="[0.001, 0.001, 0.001]"))),
    ), kind_key="shape", reader="kane.viz.visuals.model_visuals")
_GREY = (170, 170, 170)
MAX_MESH_BYTES = 64 * 2**20  # [bytes]: a larger mesh file is skipped unread (max_mesh_bytes= changes it)


class VisualWarning(UserWarning):
    """A visual could not be drawn as given (a mesh file missing or unreadable); the message names the file and
    what is drawn instead."""


def _skip(path, reason: str) -> None:
    warnings.warn(f"visual mesh {path}: {reason}; drawing the body's default shape", VisualWarning, stacklevel=3)


def load_mesh(path, scale=(1.0, 1.0, 1.0), *, roots=None, max_bytes: int = MAX_MESH_BYTES):
    """The mesh in file ``path`` (any format trimesh reads: STL, OBJ, PLY, GLB, DAE through pycollada...) scaled by
    ``scale`` (3,), as a ``trimesh.Trimesh``; None with a :class:`VisualWarning` naming the file when it is
    missing, cannot be read, lies outside every folder of ``roots`` (when given; symbolic links followed), is not
    a regular file or has more than ``max_bytes`` bytes (checked before it is read)."""
    import trimesh

    path = Path(path)
    real = Path(os.path.realpath(path))
    if roots is not None:
        inside = [Path(os.path.realpath(r)) for r in roots]
        if not any(real == r or r in real.parents for r in inside):
            _skip(path, f"lies outside the folders meshes are read from ({', '.join(map(str, inside))}"
                        f"{'' if real == path.absolute() else f'; it leads to {real}'}); pass mesh_roots=[...] "
                        "to allow its folder")
            return None
    try:
        info = os.stat(real)
    except OSError:
        _skip(path, "no such file")
        return None
    if not stat.S_ISREG(info.st_mode):
        _skip(path, "not a regular file")
        return None
    if info.st_size > max_bytes:
        _skip(path, f"the file has {info.st_size} bytes, more than the limit of {max_bytes} (max_mesh_bytes=... "
                    "raises it); not read")
        return None
    try:
        with warnings.catch_warnings():  # pycollada builds numpy.matrix objects: numpy's notice is not the user's
            warnings.filterwarnings("ignore", "the matrix subclass", PendingDeprecationWarning)
            mesh = trimesh.load(str(real), force="mesh")
        if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
            raise ValueError("no triangles in it")
    except Exception as exc:  # trimesh raises many kinds (ImportError for a missing reader, ValueError, ...)
        warnings.warn(f"visual mesh {path}: cannot be read ({type(exc).__name__}: {exc}); drawing the body's "
                      "default shape", VisualWarning, stacklevel=2)
        return None
    mesh.apply_scale(np.asarray(scale, dtype=float))
    return mesh


def _wxyz(R) -> tuple:
    return tuple(float(x) for x in rotation_to_quaternion(np.asarray(R, dtype=float)))


def _shape(body, kind, size, position, rpy, color, file=None, mesh=None) -> BodyShape:
    return BodyShape(body, kind, tuple(float(s) for s in size), tuple(float(x) for x in position),
                     _wxyz(rotation_rpy(rpy)), color, None if file is None else str(file), mesh)


def _color(ctx, key="color"):
    value = ctx.get(key)
    if value is None:
        return _GREY
    if isinstance(value, str) and re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        return tuple(int(value[i:i + 2], 16) for i in (1, 3, 5))
    if (isinstance(value, list) and len(value) == 3 and all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                            and 0 <= c <= 1 for c in value)):
        return tuple(int(round(255 * c)) for c in value)
    raise ctx.error(key, f"expected [r, g, b] with each in 0-1, or '#rrggbb', got {value!r}")


def model_visuals(loaded, *, mesh_roots=(), max_mesh_bytes: int = MAX_MESH_BYTES) -> tuple[BodyShape, ...]:
    """The shapes of the ``[[visuals]]`` tables of ``loaded`` (a :class:`kane.io.model_file.LoadedModel`);
    errors (a :class:`kane.io.model_file.ModelFileError`) name the file, the table, the key and the line. Meshes
    are read from under the model file's folder or ``mesh_roots`` only, up to ``max_mesh_bytes`` (the module)."""
    bodies = {b.name for b in loaded.system.compile().bodies}
    out = []
    for i in range(len(loaded.tables.get("visuals", []))):
        ctx = loaded.context("visuals", i)
        params = ctx.loader.params
        shape = VISUALS.kind(ctx)
        required = {k.name for k in VISUALS.keys_for(shape) if k.required}
        body = ctx.ref("body", bodies, ground=False)
        vec = {k: [ctx.evaluate(k, e) for e in ctx.vector(k, params, value=ctx.get(k, default))]
               for k, default in (("position", [0, 0, 0]), ("rotation", [0, 0, 0]), ("size", [1, 1, 1]))}
        radius = ctx.number("radius", params, positive=True) if "radius" in required else 0.0
        length = ctx.number("length", params) if "length" in required else 0.0
        if length < 0:
            raise ctx.error("length", f"expected a length >= 0 [m], got {length:g}")
        color = _color(ctx)
        if shape == "box":
            if min(vec["size"]) <= 0:
                raise ctx.error("size", f"expected three box sides > 0 [m], got {vec['size']}")
            out.append(_shape(body, ShapeKind.BOX, vec["size"], vec["position"], vec["rotation"], color))
        elif shape == "mesh":
            base = loaded.path.parent if loaded.path is not None else Path(".")
            file = base / ctx.string("file")
            mesh = load_mesh(file, vec["size"], roots=(base, *mesh_roots), max_bytes=max_mesh_bytes)
            if mesh is not None:
                out.append(_shape(body, ShapeKind.MESH, vec["size"], vec["position"], vec["rotation"], color,
                                  file, mesh))
        else:
            kind = {"cylinder": ShapeKind.CYLINDER, "sphere": ShapeKind.SPHERE, "capsule": ShapeKind.CAPSULE}[shape]
            size = (2 * radius, 2 * radius, 2 * radius if shape == "sphere" else length)
            out.append(_shape(body, kind, size, vec["position"], vec["rotation"], color))
    return tuple(out)


def _resolve(filename: str, urdf_dir: Path, mesh_roots) -> tuple[Path | None, tuple, str]:
    """(path, the folders it must lie under, why not found) of a URDF mesh filename: ``package://PKG/rest`` in a
    folder PKG that is or lies in one of ``mesh_roots``, else in the ROS package PKG (a folder of that name holding
    a package.xml) the URDF lies in; ``file://`` and plain paths (relative to the URDF) under the URDF's folder or
    ``mesh_roots``; other URLs nowhere."""
    roots = (urdf_dir, *mesh_roots)
    if filename.startswith("package://"):
        package, _, rest = filename[len("package://"):].partition("/")
        for root in map(Path, mesh_roots):
            for folder in (root, root / package):
                if folder.name == package and folder.is_dir():
                    return folder / rest, (folder,), ""
        for folder in (urdf_dir, *urdf_dir.parents):
            if folder.name == package and (folder / "package.xml").is_file():
                return folder / rest, (folder,), ""
        return None, (), (f"package {package!r} is not the ROS package (a folder {package!r} with a package.xml) "
                          f"the URDF lies in, nor in mesh_roots; pass mesh_roots=[...] with the folder {package!r} "
                          "or the one that holds it")
    if filename.startswith("file://"):
        parsed = urllib.parse.urlparse(filename)
        if parsed.netloc not in ("", "localhost"):
            return None, (), f"a file URL on host {parsed.netloc!r}; expected a local file"
        return Path(urllib.parse.unquote(parsed.path)), roots, ""
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", filename):
        return None, (), "a URL; meshes are read from local files only"
    return urdf_dir / filename, roots, ""


def _floats(text, n, where, default):
    if text is None and default is None:
        raise ModelError(f"{where}: missing; expected {n} finite number{'s' if n > 1 else ''}")
    if text is None:
        return default
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = []
    if len(values) != n or not all(math.isfinite(v) for v in values):
        raise ModelError(f"{where}: expected {n} finite numbers, got {text!r}")
    return values


def _urdf_geometry(el, link, where, urdf_dir, color, mesh_roots=(), max_bytes=MAX_MESH_BYTES):
    """The BodyShape of one <visual> or <collision> element of ``link``, or None (a mesh unread, warned)."""
    origin = el.find("origin")
    xyz = _floats(None if origin is None else origin.get("xyz"), 3, f"{where}: link {link!r} <origin xyz>", [0, 0, 0])
    rpy = _floats(None if origin is None else origin.get("rpy"), 3, f"{where}: link {link!r} <origin rpy>", [0, 0, 0])
    geometry = el.find("geometry")
    shape = None if geometry is None or len(geometry) == 0 else geometry[0]
    what = f"{where}: link {link!r} <{el.tag}>"
    if shape is None:
        raise ModelError(f"{what}: no <geometry> shape")
    if shape.tag == "box":
        return _shape(link, ShapeKind.BOX, _floats(shape.get("size"), 3, f"{what} <box size>", None), xyz, rpy, color)
    if shape.tag in ("cylinder", "capsule", "sphere"):
        r = _floats(shape.get("radius"), 1, f"{what} <{shape.tag} radius>", None)[0]
        length = 2 * r if shape.tag == "sphere" else _floats(shape.get("length"), 1, f"{what} <{shape.tag} length>",
                                                              None)[0]
        kind = {"cylinder": ShapeKind.CYLINDER, "capsule": ShapeKind.CAPSULE, "sphere": ShapeKind.SPHERE}[shape.tag]
        return _shape(link, kind, (2 * r, 2 * r, length), xyz, rpy, color)
    if shape.tag == "mesh":
        scale = _floats(shape.get("scale"), 3, f"{what} <mesh scale>", [1.0, 1.0, 1.0])
        file, roots, why = _resolve(shape.get("filename", ""), urdf_dir, mesh_roots)
        if file is None:
            _skip(shape.get("filename", ""), why)
            return None
        mesh = load_mesh(file, scale, roots=roots, max_bytes=max_bytes)
        return None if mesh is None else _shape(link, ShapeKind.MESH, scale, xyz, rpy, color, file, mesh)
    raise ModelError(f"{what}: geometry <{shape.tag}>; expected box, cylinder, sphere, capsule or mesh")


def urdf_visuals(path, renamed=None, *, mesh_roots=(), max_mesh_bytes: int = MAX_MESH_BYTES) -> tuple[BodyShape, ...]:
    """The shapes of the ``<visual>`` elements of the URDF file ``path``, on the bodies named as the links (or
    as ``renamed``: link -> body, :attr:`kane.io.urdf.UrdfModel.renamed`); colours from ``<material>`` (inline
    or named at the top level; else the link's colour of :data:`kane.viz.scene.PALETTE`). A link whose visual
    mesh cannot be read takes its ``<collision>`` geometry, else its default shape (warnings name the files).
    Meshes are read from the URDF's folder, its own ROS package and ``mesh_roots`` only, up to ``max_mesh_bytes``
    (the module); the file is decoded as :func:`kane.io.urdf.load_urdf` decodes it."""
    path = Path(path)
    robot = parse_xml(read_xml_text(path, kind="URDF"), str(path))
    renamed = renamed or {}
    palette = {}
    for m in robot.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None:
            palette[m.get("name")] = c.get("rgba")

    def color(el, k):
        m = el.find("material")
        rgba = None if m is None else (m.find("color").get("rgba") if m.find("color") is not None
                                       else palette.get(m.get("name")))
        if rgba is None:
            return PALETTE[k % len(PALETTE)]
        values = _floats(rgba, 4, f"{path}: <material> rgba", None)
        return tuple(int(round(255 * min(max(c, 0.0), 1.0))) for c in values[:3])

    out = []
    for k, link in enumerate(robot.findall("link")):
        name = link.get("name")
        for visual in link.findall("visual"):
            shape = _urdf_geometry(visual, name, path, path.parent, color(visual, k), mesh_roots, max_mesh_bytes)
            if shape is None:
                for collision in link.findall("collision"):
                    shape = _urdf_geometry(collision, name, path, path.parent, color(visual, k), mesh_roots,
                                           max_mesh_bytes)
                    if shape is not None:
                        warnings.warn(f"{path}: link {name!r}: drawing its <collision> geometry "
                                      f"({shape.file or shape.kind.value}) for the visual it could not read",
                                      VisualWarning, stacklevel=2)
                        break
            if shape is not None:
                out.append(BodyShape(renamed.get(name, name), *[getattr(shape, f) for f in (
                    "kind", "size", "position", "wxyz", "color", "file", "mesh")]))
    return tuple(out)


def shape_mesh(shape: BodyShape):
    """(vertices (n, 3) [m], faces (m, 3)) of a cylinder, capsule or mesh ``shape`` in its own axes (the
    cylinder's and capsule's axis along z, centred)."""
    import trimesh

    r, length = 0.5 * shape.size[0], shape.size[2]
    if shape.kind is ShapeKind.CYLINDER:
        mesh = trimesh.creation.cylinder(radius=r, height=length, sections=32)
    elif shape.kind is ShapeKind.CAPSULE:
        mesh = trimesh.creation.capsule(height=length, radius=r, count=(16, 16))
    elif shape.kind is ShapeKind.MESH and shape.mesh is not None:
        mesh = shape.mesh
    else:
        raise ValueError(f"shape_mesh: a {shape.kind.value} shape of body {shape.body!r} has no mesh")
    return np.asarray(mesh.vertices, dtype=np.float32), np.asarray(mesh.faces, dtype=np.uint32)


def system_visuals(model, max_mesh_bytes: int = MAX_MESH_BYTES) -> tuple[BodyShape, ...]:
    """The shapes declared with :meth:`kane.System.add_visual` (``model.visuals``); a mesh that cannot be read or
    has more than ``max_mesh_bytes`` bytes is left out with a :class:`VisualWarning` (its body then gets its
    default shape). The builder's own paths are the program's: they are not confined to a folder."""
    kinds = {"box": ShapeKind.BOX, "cylinder": ShapeKind.CYLINDER, "sphere": ShapeKind.SPHERE,
             "capsule": ShapeKind.CAPSULE, "mesh": ShapeKind.MESH}
    index = {b.name: i for i, b in enumerate(model.bodies)}
    out = []
    for v in getattr(model, "visuals", ()):
        color = PALETTE[index[v.body] % len(PALETTE)] if v.color is None else tuple(int(round(255 * c))
                                                                                    for c in v.color)
        if v.shape == "mesh":
            mesh = load_mesh(Path(v.file), v.size, max_bytes=max_mesh_bytes)
            if mesh is not None:
                out.append(_shape(v.body, ShapeKind.MESH, v.size, v.position, v.rotation, color, Path(v.file), mesh))
            continue
        d = 2 * v.radius
        size = v.size if v.shape == "box" else (d, d, d if v.shape == "sphere" else v.length)
        out.append(_shape(v.body, kinds[v.shape], size, v.position, v.rotation, color))
    return tuple(out)


def body_shapes(model, visuals=(), params=None, max_mesh_bytes: int = MAX_MESH_BYTES, *,
                collisions: bool = False) -> tuple[BodyShape, ...]:
    """``visuals`` (BodyShapes), the model's own (:func:`system_visuals`) and the default shape
    (:func:`default_shapes`) of every body of ``model`` that has none of them; with ``collisions``, also its
    collision shapes (:func:`kane.viz.collision_shapes.collision_shapes`)."""
    visuals = tuple(visuals) + system_visuals(model, max_mesh_bytes)
    drawn = {s.body for s in visuals}
    extra = ()
    if collisions:
        from .collision_shapes import collision_shapes

        extra = collision_shapes(model)
    return tuple(visuals) + tuple(s for s in default_shapes(model, params) if s.body not in drawn) + extra


def loaded_shapes(loaded, params=None, *, mesh_roots=(), max_mesh_bytes: int = MAX_MESH_BYTES,
                  collisions: bool = False) -> tuple[BodyShape, ...]:
    """Every body's shapes for ``loaded`` (a :class:`kane.io.model_file.LoadedModel`): its ``[[visuals]]``, the
    ``<visual>`` elements when it was read from a URDF file (``loaded.path`` ending in .urdf), defaults for the
    rest (and its collision shapes with ``collisions``); meshes only from the model's folder and ``mesh_roots``, up
    to ``max_mesh_bytes`` (the module)."""
    limits = {"mesh_roots": tuple(mesh_roots), "max_mesh_bytes": max_mesh_bytes}
    visuals = model_visuals(loaded, **limits)
    if loaded.path is not None and Path(loaded.path).suffix.lower() == ".urdf":
        visuals += urdf_visuals(loaded.path, **limits)
    return body_shapes(loaded.system.compile(), visuals, params, max_mesh_bytes, collisions=collisions)
