"""Analytic surfaces in closed form: plane, sphere, cylinder, torus, ellipsoid (for checks and speed, issue 16).

Each is written in a local frame and placed by ``origin`` (3,) [m] and ``rotation`` R (3, 3) (world from local):
S(s, t) = origin + R S_local(s, t). Parameterizations (angles in rad; normals S_s x S_t point outward):

* Plane: S = s e1 + t e2 (e1, e2 the local x, y axes), normal +z; s, t unbounded unless ``bounds`` are given.
* Sphere: S = r (cos t cos s, cos t sin s, sin t), s the longitude in [-pi, pi] (periodic), t the latitude in
  [-pi/2, pi/2] (the poles are degenerate: the normal there raises).
* Cylinder: S = (r cos s, r sin s, t), s in [-pi, pi] (periodic), t in ``height`` = (z_min, z_max) [m].
* Torus: S = ((R + r cos t) cos s, (R + r cos t) sin s, r sin t), s and t in [-pi, pi], both periodic, 0 < r < R.
* Ellipsoid: S = (a cos t cos s, b cos t sin s, c sin t), as the sphere.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .base import Surface, placement, positive_length

__all__ = ["Cylinder", "Ellipsoid", "Plane", "Sphere", "Torus"]

_PI = np.pi


class _Placed(Surface):
    """A surface written in a local frame and placed by origin (3,) and rotation (3, 3)."""

    def __init__(self, name: str, origin, rotation):
        self.name = str(name)
        self.origin, self.rotation = placement(self.name, origin, rotation)

    def _evaluate(self, s, t, order):
        local = self._local(s, t, order)
        return [self.origin + local[0] @ self.rotation.T] + [d @ self.rotation.T for d in local[1:]]

    def _local(self, s, t, order) -> list[np.ndarray]:
        raise NotImplementedError


def _stack(x, y, z) -> np.ndarray:
    """The components (arrays of one shape, or broadcasting) as vectors (..., 3)."""
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and isinstance(z, np.ndarray) \
            and x.shape == y.shape == z.shape:  # the common case: no broadcasting to work out
        out = np.empty(x.shape + (3,))
        out[..., 0], out[..., 1], out[..., 2] = x, y, z
        return out
    return np.stack(np.broadcast_arrays(x, y, z), axis=-1)


class Plane(_Placed):
    """The plane through ``origin`` spanned by the rotation's first two columns; S_s = e1, S_t = e2 [m]."""

    def __init__(self, origin=None, rotation=None, bounds=None, name: str = "plane"):
        super().__init__(name, origin, rotation)
        if bounds is not None:
            b = np.array(bounds, dtype=float)
            if b.shape != (2, 2) or np.isnan(b).any() or not np.all(b[:, 0] < b[:, 1]):
                raise ModelError(f"surface {self.name!r}: field 'bounds' must be ((s_min, s_max), (t_min, t_max)) "
                                 f"with min < max, got {bounds!r}")
            self.bounds = ((float(b[0, 0]), float(b[0, 1])), (float(b[1, 0]), float(b[1, 1])))

    def _local(self, s, t, order):
        zero = np.zeros_like(s)
        out = [_stack(s, t, zero)]
        if order >= 1:
            out += [_stack(1.0 + zero, zero, zero), _stack(zero, 1.0 + zero, zero)]
        if order >= 2:
            out += [_stack(zero, zero, zero)] * 3
        return out


class Ellipsoid(_Placed):
    """Semi-axes a, b, c [m] along the local x, y, z; s the longitude (periodic), t the latitude."""

    bounds = ((-_PI, _PI), (-_PI / 2, _PI / 2))
    periodic = (True, False)

    def __init__(self, a, b, c, origin=None, rotation=None, name: str = "ellipsoid"):
        super().__init__(name, origin, rotation)
        self.axes = np.array([positive_length(self.name, f, v) for f, v in zip(("a", "b", "c"), (a, b, c))])
        self.tangent_scale = (float(self.axes.max()), float(self.axes.max()))

    def _local(self, s, t, order):
        a, b, c = self.axes
        cs, ss, ct, st = np.cos(s), np.sin(s), np.cos(t), np.sin(t)
        out = [_stack(a * ct * cs, b * ct * ss, c * st)]
        if order >= 1:
            out += [_stack(-a * ct * ss, b * ct * cs, 0.0 * s), _stack(-a * st * cs, -b * st * ss, c * ct)]
        if order >= 2:
            out += [_stack(-a * ct * cs, -b * ct * ss, 0.0 * s), _stack(a * st * ss, -b * st * cs, 0.0 * s),
                    _stack(-a * ct * cs, -b * ct * ss, -c * st)]
        return out


class Sphere(Ellipsoid):
    """Radius r [m] about ``origin``; S = origin + R r (cos t cos s, cos t sin s, sin t)."""

    def __init__(self, radius, origin=None, rotation=None, name: str = "sphere"):
        r = positive_length(str(name), "radius", radius)
        super().__init__(r, r, r, origin, rotation, name)
        self.radius = r


class Cylinder(_Placed):
    """Radius r [m] about the local z axis, t the height in ``height`` = (z_min, z_max) [m]."""

    periodic = (True, False)

    def __init__(self, radius, height=(0.0, 1.0), origin=None, rotation=None, name: str = "cylinder"):
        super().__init__(name, origin, rotation)
        self.radius = positive_length(self.name, "radius", radius)
        h = np.array(height, dtype=float)
        if h.shape != (2,) or not np.all(np.isfinite(h)) or not h[0] < h[1]:
            raise ModelError(f"surface {self.name!r}: field 'height' must be (z_min, z_max) [m] with z_min < z_max, "
                             f"got {height!r}")
        self.bounds = ((-_PI, _PI), (float(h[0]), float(h[1])))
        self.tangent_scale = (self.radius, 1.0)

    def _local(self, s, t, order):
        r = self.radius
        cs, ss, zero = np.cos(s), np.sin(s), np.zeros_like(s)
        out = [_stack(r * cs, r * ss, t)]
        if order >= 1:
            out += [_stack(-r * ss, r * cs, zero), _stack(zero, zero, 1.0 + zero)]
        if order >= 2:
            out += [_stack(-r * cs, -r * ss, zero), _stack(zero, zero, zero), _stack(zero, zero, zero)]
        return out


class Torus(_Placed):
    """Major radius R and minor radius r [m] (0 < r < R) about the local z axis; s around the axis, t around
    the tube, both periodic."""

    bounds = ((-_PI, _PI), (-_PI, _PI))
    periodic = (True, True)

    def __init__(self, major_radius, minor_radius, origin=None, rotation=None, name: str = "torus"):
        super().__init__(name, origin, rotation)
        self.major_radius = positive_length(self.name, "major_radius", major_radius)
        self.minor_radius = positive_length(self.name, "minor_radius", minor_radius)
        if self.minor_radius >= self.major_radius:
            raise ModelError(f"surface {self.name!r}: field 'minor_radius' = {self.minor_radius!r} must be smaller "
                             f"than 'major_radius' = {self.major_radius!r} (a ring torus)")
        self.tangent_scale = (self.major_radius + self.minor_radius, self.minor_radius)

    def _local(self, s, t, order):
        R, r = self.major_radius, self.minor_radius
        cs, ss, ct, st = np.cos(s), np.sin(s), np.cos(t), np.sin(t)
        rho = R + r * ct
        zero = np.zeros_like(s)
        out = [_stack(rho * cs, rho * ss, r * st)]
        if order >= 1:
            out += [_stack(-rho * ss, rho * cs, zero), _stack(-r * st * cs, -r * st * ss, r * ct)]
        if order >= 2:
            out += [_stack(-rho * cs, -rho * ss, zero), _stack(r * st * ss, -r * st * cs, zero),
                    _stack(-r * ct * cs, -r * ct * ss, -r * st)]
        return out
