"""Exact NURBS forms of the sphere and the cylinder: the standard quadratic rational circle (Piegl & Tiller, The
NURBS Book, 2nd ed., Sec. 7.5: quarter arcs with weights 1, sqrt(2)/2, 1) swept as a surface of revolution
(Sec. 8.5) or extruded (Sec. 8.3).

Both use the full circle of four quarter arcs in s over [0, 1] (knots 0, 0, 0, 1/4, 1/4, 1/2, 1/2, 3/4, 3/4,
1, 1, 1), starting on the local +x axis and turning about +z. The sphere's meridian is the half circle from the
south pole to the north pole in t over [0, 1] (two quarter arcs); the cylinder's t runs linearly over the height.
The closed circle makes s periodic on both (``periodic`` = (True, False)): the curve is C1 across s = 0 = 1, as
across its interior knots, and its geometry (normal, curvature) is smooth there.
"""

from __future__ import annotations

import numpy as np

from .base import positive_length
from .nurbs import NurbsSurface

__all__ = ["CIRCLE_KNOTS", "circle_control_polygon", "nurbs_cylinder", "nurbs_sphere"]

CIRCLE_KNOTS = np.array([0.0, 0.0, 0.0, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1.0, 1.0, 1.0])
_W = np.sqrt(0.5)


def circle_control_polygon() -> tuple[np.ndarray, np.ndarray]:
    """(points (9, 2), weights (9,)) of the unit circle as four quadratic rational quarter arcs."""
    points = np.array([[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1], [1, 0]], float)
    weights = np.array([1, _W, 1, _W, 1, _W, 1, _W, 1])
    return points, weights


def nurbs_sphere(radius, origin=(0.0, 0.0, 0.0), name: str = "nurbs sphere", *, rotation=None) -> NurbsSurface:
    """The sphere of ``radius`` [m] about ``origin`` (3,) [m] as a biquadratic NURBS surface (9 x 5 control
    points); the rows of the net at t = 0 and t = 1 collapse to the poles, where the normal is undefined. The
    poles lie on the local z axis, turned by ``rotation`` R (3, 3) (world from local, as the primitives'; None:
    the identity): turn them away from where a contact runs (R's third column is the north pole's direction)."""
    r = positive_length(name, "radius", radius)
    circle, w_circle = circle_control_polygon()
    meridian = np.array([[0, -1], [1, -1], [1, 0], [1, 1], [0, 1]], float)  # (radial, z), south to north
    w_meridian = np.array([1, _W, 1, _W, 1])
    P = np.empty((9, 5, 3))
    P[..., 0] = circle[:, None, 0] * meridian[None, :, 0]
    P[..., 1] = circle[:, None, 1] * meridian[None, :, 0]
    P[..., 2] = np.broadcast_to(meridian[None, :, 1], (9, 5))
    knots_t = np.array([0.0, 0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 1.0])
    surface = NurbsSurface(r * P, np.outer(w_circle, w_meridian), CIRCLE_KNOTS, knots_t, 2, 2, name=name,
                           origin=origin, rotation=rotation)
    surface.periodic = (True, False)
    return surface


def nurbs_cylinder(radius, height=(0.0, 1.0), origin=(0.0, 0.0, 0.0), name: str = "nurbs cylinder", *,
                   rotation=None) -> NurbsSurface:
    """The cylinder of ``radius`` [m] about the local z axis through ``origin``, local z from height[0] to
    height[1] [m], as a NURBS surface of degrees (2, 1) (9 x 2 control points); t in [0, 1] maps linearly onto
    the height. ``rotation`` R (3, 3) turns it (world from local, as the primitives'; None: the identity)."""
    r = positive_length(name, "radius", radius)
    circle, w_circle = circle_control_polygon()
    P = np.empty((9, 2, 3))
    P[..., :2] = r * circle[:, None, :]
    P[..., 2] = np.asarray(height, float)[None, :]
    surface = NurbsSurface(P, np.outer(w_circle, [1.0, 1.0]), CIRCLE_KNOTS, [0.0, 0.0, 1.0, 1.0], 2, 1, name=name,
                           origin=origin, rotation=rotation)
    surface.periodic = (True, False)
    return surface
