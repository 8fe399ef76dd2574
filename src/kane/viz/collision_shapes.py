"""Collision shapes (``Model.collisions``, :mod:`kane.model.collision`) as drawn shapes of the viewer's scene.

Each shape on a body becomes a :class:`kane.viz.scene.BodyShape` in :data:`COLLISION_COLOR` at its placement:
a sphere, box, capsule or cylinder as the scene's own kinds, an ellipsoid as a unit sphere mesh scaled by its radii,
a convex mesh as its hull's triangles. Shapes on the ground (a half-space floor) are not drawn: the viewer's grid
stands for them. :func:`kane.viz.visuals.body_shapes` and :func:`~kane.viz.visuals.loaded_shapes` add them with
``collisions=True``.
"""

from __future__ import annotations

import numpy as np

from ..model.collision import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Sphere
from ..spatial import rotation_to_quaternion
from .scene import BodyShape, ShapeKind

__all__ = ["COLLISION_COLOR", "collision_shapes"]

COLLISION_COLOR = (255, 140, 0)  # RGB 0-255: orange, apart from the palette of the visuals


def collision_shapes(model, color=COLLISION_COLOR) -> tuple[BodyShape, ...]:
    """The :class:`BodyShape` of every collision shape of ``model`` on a body (not the ground's), in ``color``."""
    import trimesh

    out = []
    for c in getattr(model, "collisions", ()):
        if c.body == "ground":
            continue
        s, mesh = c.shape, None
        if isinstance(s, Sphere):
            kind, size = ShapeKind.SPHERE, (2 * s.radius,) * 3
        elif isinstance(s, Box):
            kind, size = ShapeKind.BOX, tuple(2 * h for h in s.half_extents)
        elif isinstance(s, (Capsule, Cylinder)):
            kind = ShapeKind.CAPSULE if isinstance(s, Capsule) else ShapeKind.CYLINDER
            size = (2 * s.radius, 2 * s.radius, s.length)
        elif isinstance(s, Ellipsoid):
            kind, size = ShapeKind.MESH, (1.0, 1.0, 1.0)
            mesh = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
            mesh.apply_scale(np.asarray(s.radii, dtype=float))
        elif isinstance(s, ConvexMesh):
            kind, size = ShapeKind.MESH, (1.0, 1.0, 1.0)
            mesh = trimesh.Trimesh(np.asarray(s.vertices), np.asarray(s.faces), process=False)
        else:
            continue
        wxyz = tuple(float(x) for x in rotation_to_quaternion(c.R_body_shape))
        out.append(BodyShape(c.body, kind, tuple(float(x) for x in size), tuple(float(x) for x in c.r_body_shape),
                             wxyz, tuple(color), None, mesh))
    return tuple(out)
