"""The ``[[collision]]`` and ``[[collision_exclude]]`` tables of a TOML model file: collision shapes on bodies.

Schema (sizes and placement may be expressions of the parameters; vertices are plain numbers)::

    [[collision]]           body (a body or "ground"); shape = "sphere" | "box" | "capsule" | "cylinder"
                            | "ellipsoid" | "mesh" | "halfspace"; name (optional, default "<body>_collision<k>")
                              sphere:    radius [m]
                              box:       half_extents = [hx, hy, hz] (MuJoCo's size) or size = [x, y, z] (full
                                         side lengths, URDF's), one of the two [m]
                              capsule:   radius, length (the segment between the cap centres, along z) [m]
                              cylinder:  radius, length (full height along z) [m]
                              ellipsoid: radii = [a, b, c] [m]
                              mesh:      vertices = [[x, y, z], ...] [m] (convex; hull = true takes their hull)
                              halfspace: normal = [nx, ny, nz] (default [0, 0, 1]), offset [m] (default 0);
                                         the solid normal . x <= offset, on the ground only
                            xyz = [x, y, z] [m], rpy = [roll, pitch, yaw] [rad] (URDF's: R = Rz Ry Rx): the
                            shape's placement in body axes (default 0);
                            mu_static, mu_kinetic, restitution, torsional [m], rolling [m]: the shape's
                            :class:`kane.model.contact.ContactMaterial` (none given: the default material);
                            group, mask: filter bits (integers, default 1 and -1 = all)
    [[collision_exclude]]   a, b: two body or collision names never tested against each other

Every error is a :class:`~kane.io.model_context.ModelFileError` naming the file, the table, the key and the line;
a shape's own check also names the body and the shape (``collision 'pad' of body 'foot': Box: key
'half_extents': expected a finite length > 0 [m]``).
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import ModelError
from ..model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, HalfSpace, Sphere
from ..model.contact import ContactMaterial
from ..spatial import rotation_rpy
from .model_context import Ctx, ModelFileError

__all__ = ["COLLISION_KEYS", "COLLISION_SHAPE_KEYS", "COLLISION_EXCLUDE_KEYS", "add_collisions"]

# the declared keys, in one place: (key, what it holds)
COLLISION_KEYS = (
    ("body", "a body name or 'ground'"), ("shape", "the shape's kind"), ("name", "the collision's name"),
    ("xyz", "position in body axes [m]"), ("rpy", "roll, pitch, yaw in body axes [rad]"),
    ("mu_static", "static friction coefficient"), ("mu_kinetic", "kinetic friction coefficient"),
    ("restitution", "Newton's restitution coefficient"), ("torsional", "torsional resistance length [m]"),
    ("rolling", "rolling resistance length [m]"), ("group", "filter bits of this shape"),
    ("mask", "filter bits of the shapes it meets"))
# shape kind -> (required size keys, optional size keys)
COLLISION_SHAPE_KEYS = (
    ("sphere", ("radius",), ()), ("box", (), ("half_extents", "size")), ("capsule", ("radius", "length"), ()),
    ("cylinder", ("radius", "length"), ()), ("ellipsoid", ("radii",), ()), ("mesh", ("vertices",), ("hull",)),
    ("halfspace", (), ("normal", "offset")))
COLLISION_EXCLUDE_KEYS = ("a", "b")

_MATERIAL_KEYS = ("mu_static", "mu_kinetic", "restitution", "torsional", "rolling")
_SHAPE_CLASS = {"sphere": Sphere, "box": Box, "capsule": Capsule, "cylinder": Cylinder, "ellipsoid": Ellipsoid,
                "mesh": ConvexMesh, "halfspace": HalfSpace}


def _vertices(ctx):
    v = ctx.get("vertices")
    if not (isinstance(v, list) and v and all(isinstance(p, list) and len(p) == 3 for p in v)
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for p in v for x in p)):
        raise ctx.error("vertices", "expected a list of [x, y, z] points (plain numbers) [m]")
    return np.array(v, dtype=float)


def _shape(ctx, kind, where, scope):
    sizes = {k: ctx.number(k, scope) for k in ("radius", "length", "offset") if k in ctx.data}
    vectors = {k: tuple(ctx.evaluate(k, e) for e in ctx.vector(k, scope))
               for k in ("half_extents", "size", "radii", "normal") if k in ctx.data}
    if kind == "sphere":
        return Sphere(sizes["radius"], where=where)
    if kind == "box":
        if ("half_extents" in vectors) == ("size" in vectors):
            raise ctx.error("half_extents", "a box takes one of half_extents (half side lengths) or size (full "
                                            "side lengths)")
        half = vectors["half_extents"] if "half_extents" in vectors else tuple(x / 2 for x in vectors["size"])
        return Box(half, where=where)
    if kind in ("capsule", "cylinder"):
        return _SHAPE_CLASS[kind](sizes["radius"], sizes["length"], where=where)
    if kind == "ellipsoid":
        return Ellipsoid(vectors["radii"], where=where)
    if kind == "mesh":
        return ConvexMesh(_vertices(ctx), hull=ctx.boolean("hull"), where=where)
    return HalfSpace(vectors.get("normal", (0.0, 0.0, 1.0)), sizes.get("offset", 0.0), where=where)


def _reraise(ctx, exc: ModelError, default_key):
    m = re.search(r"key '(\w+)'", str(exc))
    key = m.group(1) if m else default_key
    return ctx.error(key, str(exc))


def add_collisions(L, system, doc: dict, bodies) -> None:
    """Add the ``[[collision]]`` and ``[[collision_exclude]]`` tables of ``doc`` to ``system`` (``bodies``: the
    body names of the file; ``L``: the file's loader)."""
    kinds = {k: (req, opt) for k, req, opt in COLLISION_SHAPE_KEYS}
    common = {k for k, _ in COLLISION_KEYS}
    scope = L.scope()
    added = {"ground", *bodies}
    for i, d in enumerate(doc.get("collision", [])):
        ctx = Ctx(L, "collision", d, i)
        kind = ctx.string("shape", choices=list(kinds))
        if kind is None:
            raise ctx.error("shape", f"missing required key 'shape' (one of: {', '.join(kinds)})")
        required, optional = kinds[kind]
        ctx.check_keys(common | set(required) | set(optional), ("body", *required), f" for a {kind} collision")
        body = ctx.ref("body", bodies)
        name = ctx.string("name")
        where = f"collision {name or f'#{i + 1}'!r} of body {body!r}: {_SHAPE_CLASS[kind].__name__}"
        try:
            shape = _shape(ctx, kind, where, scope)
        except ModelFileError:
            raise
        except ModelError as exc:
            raise _reraise(ctx, exc, "shape") from None
        xyz = [ctx.evaluate("xyz", e) for e in ctx.vector("xyz", scope, value=ctx.get("xyz", [0, 0, 0]))]
        rpy = [ctx.evaluate("rpy", e) for e in ctx.vector("rpy", scope, value=ctx.get("rpy", [0, 0, 0]))]
        bits = {}
        for key, default in (("group", 1), ("mask", -1)):
            v = ctx.get(key, default)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ctx.error(key, f"expected an integer bit mask, got {v!r}")
            bits[key] = v
        material = None
        try:
            if any(k in ctx.data for k in _MATERIAL_KEYS):
                material = ContactMaterial(**{k: ctx.number(k, scope) for k in _MATERIAL_KEYS if k in ctx.data},
                                           where=f"collision {name or f'#{i + 1}'!r} of body {body!r}")
            added.add(system.add_collision(body, shape, (rotation_rpy(rpy), np.array(xyz, dtype=float)),
                                           name=name, material=material, **bits))
        except ModelFileError:
            raise
        except ModelError as exc:
            raise _reraise(ctx, exc, "name") from None
    for i, d in enumerate(doc.get("collision_exclude", [])):
        ctx = Ctx(L, "collision_exclude", d, i)
        ctx.check_keys(set(COLLISION_EXCLUDE_KEYS), COLLISION_EXCLUDE_KEYS)
        a, b = ctx.string("a"), ctx.string("b")
        try:
            system.exclude_collision(a, b)
        except ModelError as exc:
            raise ctx.error("b" if a in added else "a", str(exc)) from None
