"""Parametric surfaces for contact (issue 16, seed 003): one interface (point, tangents, second derivatives, unit
normal, bounds), the analytic primitives, NURBS surfaces and their exact sphere and cylinder, closest points, the
common normal of two surfaces (the rolling joint itself is kane.algorithms.cartesian_contact)."""

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    **dict.fromkeys(("Surface", "SurfaceDerivatives"), ".base"),
    **dict.fromkeys(("ClosestPoint", "closest_point"), ".closest"),
    **dict.fromkeys(("CommonNormal", "common_normal", "common_normal_conditions"), ".contact"),
    **dict.fromkeys(("nurbs_cylinder", "nurbs_sphere"), ".constructions"),
    "MovedSurface": ".moved",
    "NurbsSurface": ".nurbs",
    **dict.fromkeys(("Cylinder", "Ellipsoid", "Plane", "Sphere", "Torus"), ".primitives"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ClosestPoint", "CommonNormal", "Cylinder", "Ellipsoid", "MovedSurface", "NurbsSurface", "Plane", "Sphere",
           "Surface", "SurfaceDerivatives", "Torus", "closest_point", "common_normal", "common_normal_conditions",
           "nurbs_cylinder", "nurbs_sphere"]
