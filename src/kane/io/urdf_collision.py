"""URDF ``<collision>`` geometry as kane collision shapes (:mod:`kane.model.collision`) on the links' bodies.

``<box size>`` (full side lengths) becomes ``Box(size / 2)``, ``<sphere radius>`` a ``Sphere``, ``<cylinder radius
length>`` a ``Cylinder`` (along z, centred, as URDF's), each at the element's ``<origin xyz rpy>`` in link axes and
named ``<body>_collision<k>`` in file order. A ``<mesh filename scale>`` becomes the :class:`ConvexMesh` of its
vertices' convex hull (``hull=True``: the concave parts are filled) when the file can be read: a relative path
under the URDF's own folder (no ``package://`` or other URL, no absolute path, nothing that leads outside it), a
regular file of at most :data:`MAX_COLLISION_MESH_BYTES`, read with trimesh. Every mesh that is not read, and every
other geometry (capsule, cone, ...), is skipped and listed in one :class:`kane.io.urdf.UrdfWarning` naming the link,
the element and the reason.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..model.collision import Box, ConvexMesh, Cylinder, Sphere
from ..spatial import rotation_rpy

__all__ = ["MAX_COLLISION_MESH_BYTES", "add_urdf_collisions", "warn_skipped"]

MAX_COLLISION_MESH_BYTES = 64 * 2**20


def _floats(el, attr, n, what, default=None) -> np.ndarray:
    raw = el.get(attr) if el is not None else None
    if raw is None:
        if default is None:
            raise ModelError(f"{what}: missing attribute {attr!r}; expected {n} number(s)")
        return np.array(default, dtype=float)
    try:
        vals = np.array([float(p) for p in raw.replace(",", " ").split()])
    except ValueError:
        raise ModelError(f"{what} {attr}={raw!r}: expected {n} number(s)") from None
    if vals.shape != (n,) or not np.all(np.isfinite(vals)):
        raise ModelError(f"{what} {attr}={raw!r}: expected {n} finite number(s)")
    return vals


def _mesh_vertices(filename: str, mesh_dir) -> tuple[np.ndarray | None, str]:
    """(vertices (n, 3), "") of a readable mesh file, else (None, the reason)."""
    if mesh_dir is None:
        return None, "the URDF was not read from a file, so relative mesh paths have no folder"
    if "://" in filename or os.path.isabs(filename):
        return None, "only paths relative to the URDF's folder are read (no URL, no absolute path)"
    root = Path(os.path.realpath(mesh_dir))
    real = Path(os.path.realpath(root / filename))
    if root not in real.parents:
        return None, f"it leads outside the URDF's folder {root}"
    try:
        info = os.stat(real)
    except OSError:
        return None, "no such file"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a regular file"
    if info.st_size > MAX_COLLISION_MESH_BYTES:
        return None, f"{info.st_size} bytes, more than {MAX_COLLISION_MESH_BYTES}"
    try:
        import trimesh
    except ImportError:
        return None, "trimesh (the mesh reader) is not installed"
    try:
        mesh = trimesh.load(str(real), force="mesh")
        vertices = np.asarray(mesh.vertices, dtype=float)
    except Exception as exc:  # trimesh raises many kinds for a file it cannot read
        return None, f"cannot be read ({type(exc).__name__}: {exc})"
    return vertices, ""


def add_urdf_collisions(system, body: str, link_el, where: str, mesh_dir=None) -> list[str]:
    """Add the ``<collision>`` elements of the URDF ``<link>`` element ``link_el`` to ``body`` of ``system``;
    returns (element, reason) of what was skipped (for one warning, :func:`warn_skipped`)."""
    skipped = []
    link = link_el.get("name")
    for k, el in enumerate(link_el.findall("collision")):
        what = f"{where}: link {link!r} <collision> #{k + 1}"
        origin = el.find("origin")
        xyz = _floats(origin, "xyz", 3, f"{what} <origin>", (0, 0, 0))
        rpy = _floats(origin, "rpy", 3, f"{what} <origin>", (0, 0, 0))
        geometry = el.find("geometry")
        shape_el = None if geometry is None or len(geometry) == 0 else geometry[0]
        if shape_el is None:
            raise ModelError(f"{what}: missing <geometry> with a shape inside")
        tag = shape_el.tag
        shape_where = f"{what} (body {body!r}): <{tag}>"
        if tag == "box":
            shape = Box(tuple(_floats(shape_el, "size", 3, f"{what} <box>") / 2), where=shape_where)
        elif tag == "sphere":
            shape = Sphere(_floats(shape_el, "radius", 1, f"{what} <sphere>")[0], where=shape_where)
        elif tag == "cylinder":
            shape = Cylinder(_floats(shape_el, "radius", 1, f"{what} <cylinder>")[0],
                             _floats(shape_el, "length", 1, f"{what} <cylinder>")[0], where=shape_where)
        elif tag == "mesh":
            filename = shape_el.get("filename") or ""
            vertices, reason = _mesh_vertices(filename, mesh_dir)
            if vertices is not None:
                scale = _floats(shape_el, "scale", 3, f"{what} <mesh>", (1, 1, 1))
                try:
                    shape = ConvexMesh(vertices * scale, hull=True, where=shape_where)
                except ModelError as exc:
                    vertices, reason = None, str(exc)
            if vertices is None:
                skipped.append((f"link {link!r} <collision> #{k + 1} mesh {filename!r}", reason))
                continue
        else:
            skipped.append((f"link {link!r} <collision> #{k + 1} <{tag}>", "not a URDF collision geometry kane reads"))
            continue
        system.add_collision(body, shape, (rotation_rpy(rpy), xyz))
    return skipped


def warn_skipped(skipped: list[tuple[str, str]], where: str, category, shown: int = 3) -> None:
    """One warning of ``category`` naming the skipped collision geometry ((element, reason) pairs; nothing when
    none was), grouped by reason, the first ``shown`` elements of each reason named and the rest counted."""
    if not skipped:
        return
    by_reason: dict = {}
    for element, reason in skipped:
        by_reason.setdefault(reason, []).append(element)
    parts = [f"{', '.join(els[:shown])}{f' and {len(els) - shown} more' if len(els) > shown else ''}: {reason}"
             for reason, els in by_reason.items()]
    warnings.warn(f"{where}: {len(skipped)} collision geometr{'y' if len(skipped) == 1 else 'ies'} not imported "
                  f"(the links keep their other collision shapes): " + "; ".join(parts), category, stacklevel=4)
