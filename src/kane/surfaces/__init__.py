"""Parametric surfaces for contact (issue 16, seed 003): one interface (point, tangents, second derivatives, unit
normal, bounds), the analytic primitives, NURBS surfaces and their exact sphere and cylinder, closest points, the
common normal of two surfaces (the rolling joint itself is kane.algorithms.cartesian_contact)."""

from .base import Surface, SurfaceDerivatives
from .closest import ClosestPoint, closest_point
from .contact import CommonNormal, common_normal, common_normal_conditions
from .constructions import nurbs_cylinder, nurbs_sphere
from .moved import MovedSurface
from .nurbs import NurbsSurface
from .primitives import Cylinder, Ellipsoid, Plane, Sphere, Torus

__all__ = ["ClosestPoint", "CommonNormal", "Cylinder", "Ellipsoid", "MovedSurface", "NurbsSurface", "Plane", "Sphere",
           "Surface", "SurfaceDerivatives", "Torus", "closest_point", "common_normal", "common_normal_conditions",
           "nurbs_cylinder", "nurbs_sphere"]
