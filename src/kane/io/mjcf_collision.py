"""MJCF geoms as kane collision shapes (:mod:`kane.model.collision`), with MuJoCo's pair filter reproduced exactly.

Shapes: ``sphere`` -> :class:`Sphere`, ``box`` -> :class:`Box` (``size`` = half extents), ``capsule`` and
``cylinder`` -> :class:`Capsule`/:class:`Cylinder` with ``length`` = 2 x MuJoCo's half length (``size`` or
``fromto``), ``ellipsoid`` -> :class:`Ellipsoid`, ``plane`` on the world body (or on a body welded to it) ->
:class:`HalfSpace` (the solid below the geom's x-y plane; a plane on a moving body is listed, not imported),
``mesh`` -> the :class:`ConvexMesh` of its vertices' convex hull (what MuJoCo collides too): the ``<asset><mesh>``'s
``vertex`` list, or its ``file`` (STL, OBJ, ... read with trimesh, under the model's folder and ``meshdir``), times
its ``scale``; an unreadable mesh, ``hfield`` and ``sdf`` are listed. Only geoms with ``contype | conaffinity``
non-zero become collisions.

Bodies: MuJoCo treats the bodies welded together (no joint between them) as one body, and every body welded to
the world as the world; so does the import: a geom goes on its weld root (the nearest body with a joint at or above
it, else ``"ground"``), placed in that body's axes at the reference configuration. Names: the geom's ``name``, else
``<body>_geom<k>`` (k counting the body's geoms in file order).

Material: ``friction[0]`` -> ``mu_static = mu_kinetic``; ``condim`` 1 -> frictionless (mu = 0), 3 (default) ->
sliding friction only, 4 -> also ``torsional = friction[1]`` [m], 6 -> also ``rolling = friction[2]`` [m]. A pair
takes each field's maximum (:func:`kane.model.collision.combine_materials`), as MuJoCo does for friction; MuJoCo's
pair condim is the larger of the two, so a condim-1 geom against a condim-3 geom of lower friction gets that lower
friction in kane (MuJoCo: the larger of the two frictions). ``margin``, ``gap``, ``priority`` and ``<contact><pair>``
are listed; ``solref``/``solimp``/``solmix`` (softness) have no counterpart: kane's contact is hard.

Filter: MuJoCo tests geoms a, b when their weld bodies differ, neither weld body is the other's parent's weld body
(both not the world; ``<flag filterparent>``), their bodies are not an ``<exclude>`` pair, and
``(contype_a & conaffinity_b) | (contype_b & conaffinity_a)`` is non-zero. kane's filter asks ``group_a & mask_b``
*and* ``group_b & mask_a``: the import sets ``group = mask = contype | conaffinity`` (every pair MuJoCo tests passes,
and when contype = conaffinity for every geom exactly those) and adds one collision-name exclusion for each pair that
kane's filter would still test but MuJoCo's does not. The pairs kane tests are then exactly MuJoCo's, except with
``filterparent`` disabled (kane always skips a body and its parent; listed).
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ModelError
from ..model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere
from ..model.contact import ContactMaterial
from .mjcf_spec import numbers
from .urdf_collision import _mesh_vertices

__all__ = ["add_mjcf_collisions", "CONDIMS"]

GROUND = "ground"
CONDIMS = (1, 3, 4, 6)
_FRICTION = (1.0, 0.005, 0.0001)


def _flags(root) -> dict:
    out = {}
    for el in root.findall("option"):
        for f in el.findall("flag"):
            out.update(f.attrib)
    return out


def _bits(attrs, key, where, what) -> int:
    raw = attrs.get(key, "1")
    try:
        value = int(raw)
    except ValueError:
        raise ModelError(f"{where}: {what} {key}={raw!r}: expected an integer bit mask") from None
    if not 0 <= value < 2 ** 32:
        raise ModelError(f"{where}: {what} {key}={raw!r}: expected a bit mask in [0, 2^32)")
    return value


def _meshes(root, defaults, where, base_dir) -> dict:
    """MJCF mesh name -> (vertices (n, 3) or None, why not read) of every ``<asset><mesh>``."""
    compiler = {k: v for el in root.findall("compiler") for k, v in el.attrib.items()}
    folder = None if base_dir is None else os.path.join(base_dir, compiler.get("meshdir",
                                                                                compiler.get("assetdir", "")))
    out = {}
    for asset in root.findall("asset"):
        for el in asset.findall("mesh"):
            what = f"<mesh name={el.get('name')!r}>" if el.get("name") else f"<mesh file={el.get('file')!r}>"
            attrs = defaults.attrs(el, None, what)
            file = attrs.get("file")
            name = attrs.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else None)
            if name is None:
                raise ModelError(f"{where}: {what}: expected a name, a file or both")
            scale = numbers(attrs, "scale", 3, where, what, (1, 1, 1))
            if "vertex" in attrs:
                flat = numbers(attrs, "vertex", range(3, 3 * 10 ** 6 + 1), where, what)
                if flat.size % 3:
                    raise ModelError(f"{where}: {what} vertex: expected a multiple of 3 numbers, got {flat.size}")
                out[name] = (flat.reshape(-1, 3) * scale, "")
            elif file is not None:
                vertices, why = _mesh_vertices(file, folder)
                out[name] = (None if vertices is None else vertices * scale, why.replace("URDF", "MJCF"))
            else:
                out[name] = (None, "neither vertex nor file")
    return out


def _shape(g, meshes, where, what):
    """(the kane shape of geom ``g``, "") or (None, why it is not imported)."""
    size = g.size
    if g.kind == "sphere":
        return Sphere(size[0], where=what), ""
    if g.kind == "box":
        return Box(tuple(size), where=what), ""
    if g.kind == "capsule":
        return Capsule(size[0], 2 * size[1], where=what), ""
    if g.kind == "cylinder":
        return Cylinder(size[0], 2 * size[1], where=what), ""
    if g.kind == "ellipsoid":
        return Ellipsoid(tuple(size), where=what), ""
    if g.kind == "plane":
        return HalfSpace(where=what), ""
    if g.kind == "mesh":
        mesh = g.attrs.get("mesh")
        if mesh not in meshes:
            raise ModelError(f"{where}: {what} mesh={mesh!r}: no <asset><mesh> of that name; meshes: "
                             f"{', '.join(meshes) or 'none'}")
        vertices, why = meshes[mesh]
        if vertices is None:
            return None, f"mesh {mesh!r}: {why}"
        return ConvexMesh(vertices, hull=True, where=what), ""
    return None, f"type {g.kind!r} has no kane collision shape"


def _material(g, where, what) -> ContactMaterial:
    friction = numbers(g.attrs, "friction", (1, 2, 3), where, what, _FRICTION)
    friction = np.concatenate([friction, _FRICTION[len(friction):]])
    raw = g.attrs.get("condim", "3")
    try:
        condim = int(raw)
    except ValueError:
        condim = None
    if condim not in CONDIMS:
        raise ModelError(f"{where}: {what} condim={raw!r}: expected one of {', '.join(map(str, CONDIMS))}")
    mu = 0.0 if condim == 1 else float(friction[0])
    return ContactMaterial(mu, torsional=float(friction[1]) if condim >= 4 else 0.0,
                           rolling=float(friction[2]) if condim == 6 else 0.0, where=what)


def add_mjcf_collisions(root, s, records, world_geoms, defaults, where, base_dir, skipped) -> tuple:
    """Add the colliding geoms of ``records`` (the bodies, parents first; each with ``name`` (kane), ``what``
    (MJCF name), ``parent``, ``pos``, ``R``, ``joints``, ``geoms``) and ``world_geoms`` to ``s`` (module
    docstring); returns the collision names. Nothing with ``<flag contact="disable">``."""
    flags = _flags(root)
    if flags.get("contact") == "disable" or flags.get("constraint") == "disable":
        return ()
    if flags.get("filterparent") == "disable":
        skipped.setdefault("filterparent disabled (kane never tests a body against its parent)", []).append("flag")
    for block in root.findall("contact"):
        for el in block.findall("pair"):
            skipped.setdefault("explicit contact pairs (<contact><pair>)", []).append(
                el.get("name") or f"{el.get('geom1')}|{el.get('geom2')}")
    meshes = _meshes(root, defaults, where, base_dir)
    pose, weld, label = {GROUND: (np.eye(3), np.zeros(3))}, {GROUND: GROUND}, {GROUND: "world"}
    parent_weld = {GROUND: GROUND}
    for rec in records:
        R0, p0 = pose[rec.parent]
        pose[rec.name] = (R0 @ rec.R, p0 + R0 @ rec.pos)
        weld[rec.name] = rec.name if rec.joints else weld[rec.parent]
        parent_weld[rec.name] = weld[rec.parent]
        label[rec.name] = rec.what
    owners = [(GROUND, "world", world_geoms)] + [(r.name, r.what, r.geoms) for r in records]
    rows, taken = [], set()
    for body, mj_body, geoms in owners:
        for k, g in enumerate(geoms):
            what = f"<body name={mj_body!r}> <geom name={g.attrs.get('name')!r}>" if g.attrs.get("name") \
                else f"<body name={mj_body!r}> <geom> #{k}"
            contype, conaffinity = (_bits(g.attrs, key, where, what) for key in ("contype", "conaffinity"))
            if not contype | conaffinity:
                continue
            geom_name = g.attrs.get("name") or f"{mj_body}_geom{k}"
            root_body = weld[body]
            if g.kind == "plane" and root_body != GROUND:
                skipped.setdefault("planes on moving bodies (kane's half-space is on the ground only)", []).append(
                    geom_name)
                continue
            shape, why = _shape(g, meshes, where, f"{where}: {what}")
            if shape is None:
                skipped.setdefault("collision geoms kane cannot build", []).append(f"{geom_name} ({why})")
                continue
            for key in ("margin", "gap", "priority"):
                if float(numbers(g.attrs, key, 1, where, what, (0,))[0]) != 0:
                    skipped.setdefault(f"geom {key} (kane's contact is hard, all pairs equal)", []).append(geom_name)
            R_wb, p_wb = pose[body]
            R_wr, p_wr = pose[root_body]
            placement = (R_wr.T @ R_wb @ g.R, R_wr.T @ (p_wb + R_wb @ g.pos - p_wr))
            name = "".join(c if c != "|" else "_" for c in geom_name)
            while name in taken:
                name += "_"
            taken.add(name)
            bits = contype | conaffinity
            s.add_collision(root_body, shape, placement, name=name, material=_material(g, where, f"{where}: {what}"),
                            group=bits, mask=bits)
            rows.append((name, body, root_body, contype, conaffinity))
    _exclude_like_mujoco(root, s, rows, weld, parent_weld, label, flags.get("filterparent") == "disable", where)
    return tuple(r[0] for r in rows)


def _exclude_like_mujoco(root, s, rows, weld, parent_weld, label, no_parent_filter, where):
    """Exclude (by collision names) every pair kane's filter would test and MuJoCo's does not (module docstring)."""
    by_label = {v: k for k, v in label.items()}
    excluded = set()
    for block in root.findall("contact"):
        for el in block.findall("exclude"):
            ends = []
            for key in ("body1", "body2"):
                b = el.get(key)
                if b not in by_label:
                    raise ModelError(f"{where}: <contact><exclude> {key}={b!r}: no body of that name")
                ends.append(by_label[b])
            excluded.add(frozenset(ends))
    if len(rows) < 2:
        return
    names = [r[0] for r in rows]
    body = np.array([r[1] for r in rows], dtype=object)
    root_body = [r[2] for r in rows]
    contype = np.array([r[3] for r in rows], dtype=np.int64)
    conaff = np.array([r[4] for r in rows], dtype=np.int64)
    ids = {b: k for k, b in enumerate(dict.fromkeys(root_body))}
    w = np.array([ids[b] for b in root_body])
    pw = np.array([ids.get(parent_weld[b], -1) for b in root_body])
    ground = np.array([b == GROUND for b in root_body])
    bits = contype | conaff
    kane = (w[:, None] != w[None, :]) & ~(ground[:, None] & ground[None, :]) & ((bits[:, None] & bits[None, :]) != 0)
    mujoco = (w[:, None] != w[None, :]) & (((contype[:, None] & conaff[None, :]) != 0)
                                            | ((contype[None, :] & conaff[:, None]) != 0))
    if not no_parent_filter:
        both_moving = ~ground[:, None] & ~ground[None, :]
        mujoco &= ~(both_moving & ((w[:, None] == pw[None, :]) | (w[None, :] == pw[:, None])))
    for i, j in zip(*np.nonzero(np.triu(kane, 1))):
        if not mujoco[i, j] or frozenset((body[i], body[j])) in excluded:
            s.exclude_collision(names[i], names[j])
