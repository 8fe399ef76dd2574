"""The ``[[collision]]`` and ``[[collision_exclude]]`` tables of a TOML model file: collision shapes on bodies.

Their keys (shape kinds, sizes [m], placement, contact material, filter bits) are declared once below
(:data:`COLLISION`, :data:`COLLISION_EXCLUDE`): the reader checks items against them and the model-file
reference (docs/reference/model-file.md) lists them. A box takes ``half_extents`` (MuJoCo's size convention; a
URDF's full ``size`` is halved by the URDF importer).

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
from .model_schema import KeySpec, KindSpec, TableSpec

__all__ = ["COLLISION", "COLLISION_EXCLUDE", "add_collisions"]

K = KeySpec
_SHAPE_BODY = K("body", "name", "the body that carries the shape (a body of the file, or \"ground\")", required=True,
                example='"B"')
_RADIUS = K("radius", "expr", "the radius", unit="m", required=True, example="0.1")
_LENGTH = K("length", "expr", "the full length along the shape's z axis (a capsule's: between its cap centres)",
            unit="m", required=True, example="0.3")
COLLISION = TableSpec(
    "collision", "Collision shapes on bodies (contact geometry, through coal). Sizes and placement may be "
    "expressions of the parameters (evaluated at their values in the file); mesh vertices are plain numbers.",
    array=True, kind_key="shape", reader="kane.io.model_collision.add_collisions", keys=(
        K("shape", "string", "the shape's kind", required=True,
          allowed=("sphere", "box", "capsule", "cylinder", "ellipsoid", "mesh", "halfspace"), example='"sphere"'),
        K("name", "string", "the collision's name (default \"<body>_collision<k>\")", example='"pad"'),
        K("xyz", "vec", "the shape's position in body axes", unit="m", default="[0, 0, 0]", example="[0, 0, 0.1]"),
        K("rpy", "vec", "the shape's roll, pitch, yaw in body axes (R = Rz Ry Rx, URDF's)", unit="rad",
          default="[0, 0, 0]", example="[0, 0, 0.3]"),
        K("mu_static", "expr", "static friction coefficient (>= 0)", default="0.5", example="0.6"),
        K("mu_kinetic", "expr", "kinetic friction coefficient (0 <= mu_kinetic <= mu_static)",
          default="mu_static", example="0.4"),
        K("restitution", "expr", "Newton's restitution coefficient, in [0, 1]", default="0", example="0.5"),
        K("torsional", "expr", "torsional resistance length (torque bound / normal force)", unit="m", default="0",
          example="0.01"),
        K("rolling", "expr", "rolling resistance length", unit="m", default="0", example="0.001"),
        K("group", "integer", "filter bits of this shape", default="1", example="2"),
        K("mask", "integer", "filter bits of the shapes it meets (a pair is tested when each one's group meets "
          "the other's mask)", default="-1", example="3"),
    ), kinds=(
        KindSpec("sphere", "a sphere about the placement's origin", (_SHAPE_BODY, _RADIUS)),
        KindSpec("box", "a box centred on the placement", (
            _SHAPE_BODY, K("half_extents", "vec", "half side lengths along x, y, z (MuJoCo's box size)", unit="m",
                           required=True, example="[0.2, 0.1, 0.05]"))),
        KindSpec("capsule", "a capsule along z", (_SHAPE_BODY, _RADIUS, _LENGTH)),
        KindSpec("cylinder", "a cylinder along z", (_SHAPE_BODY, _RADIUS, _LENGTH)),
        KindSpec("ellipsoid", "an ellipsoid with semi-axes along x, y, z", (
            _SHAPE_BODY, K("radii", "vec", "the semi-axes", unit="m", required=True, example="[0.1, 0.2, 0.3]"))),
        KindSpec("mesh", "a convex mesh", (
            _SHAPE_BODY, K("vertices", "numbers", "the vertices [[x, y, z], ...] (convex unless hull = true)",
                           unit="m", required=True, example="[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]"),
            K("hull", "boolean", "take the convex hull of the vertices", default="false", example="true"))),
        KindSpec("halfspace", "the solid normal . x <= offset, on the ground only", (
            K("body", "name", "\"ground\" (a half-space is fixed)", required=True, example='"ground"'),
            K("normal", "vec", "the outward normal", default="[0, 0, 1]", example="[0, 0, 1]"),
            K("offset", "expr", "the offset along the normal", unit="m", default="0", example="0.0"))),
    ))
COLLISION_EXCLUDE = TableSpec(
    "collision_exclude", "Pairs of bodies or collisions never tested against each other.", array=True,
    reader="kane.io.model_collision.add_collisions", keys=(
        K("a", "name", "a body or collision name", required=True, example='"B"'),
        K("b", "name", "another body or collision name", required=True, example='"C"')))

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
               for k in ("half_extents", "radii", "normal") if k in ctx.data}
    if kind == "sphere":
        return Sphere(sizes["radius"], where=where)
    if kind == "box":
        return Box(vectors["half_extents"], where=where)
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
    scope = L.scope()
    added = {"ground", *bodies}
    for i, d in enumerate(doc.get("collision", [])):
        ctx = Ctx(L, "collision", d, i)
        kind = COLLISION.kind(ctx, what="collision")
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
        COLLISION_EXCLUDE.check(ctx)
        a, b = ctx.string("a"), ctx.string("b")
        try:
            system.exclude_collision(a, b)
        except ModelError as exc:
            raise ctx.error("b" if a in added else "a", str(exc)) from None
