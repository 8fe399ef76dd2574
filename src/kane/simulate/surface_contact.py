"""A sphere on a body touching a surface fixed in the ground, as one holonomic constraint row for assembly
(seed 003's surface contact, in the form used while dragging: the contact coordinates (s, t) are the closest
point of the surface to the sphere's centre, carried from frame to frame).

    C(q) = (x(q) - S(s*, t*)) . n(s*, t*) - r,        dC/dt = n . x'(q) = n^T J_x u,

x the centre in ground axes, (s*, t*) the closest point (Newton, :func:`kane.surfaces.closest_point`, warm-started
from the previous solution), n the unit normal there (the sphere on the side n points to). At the closest point
the derivative of |x - S| with respect to (s, t) vanishes, so the row n^T J_x is exact (the envelope theorem).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from .assembly import AssemblyError
from ..surfaces import Surface, closest_point

__all__ = ["SphereOnSurface"]


@dataclass
class SphereOnSurface:
    """A sphere of ``radius`` [m] about ``center`` (3,) [m, axes of ``body``] kept touching ``surface`` (in
    ground axes), its contact parameters starting at ``s``, ``t`` and updated by each evaluation."""

    body: str
    center: tuple
    radius: float
    surface: Surface
    s: float = 0.0
    t: float = 0.0

    def __post_init__(self):
        if not self.radius >= 0 or len(tuple(self.center)) != 3:
            raise ArgumentError(f"contact of {self.body!r} with surface {self.surface.name!r}: radius >= 0 [m] and "
                                f"center (x, y, z) expected, got {self.radius!r}, {self.center!r}")
        self.surface.parameters(self.s, self.t)  # parameters outside the bounds are named there

    @property
    def name(self) -> str:
        return f"{self.body}-{self.surface.name}"

    def rows(self, x: np.ndarray, J_x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(C (1,), A (1, n_u)) at the centre x (3,) [m] with velocity rows J_x (3, n_u) (x' = J_x u)."""
        found = closest_point(self.surface, x, self.s, self.t)
        if not found.converged:
            raise AssemblyError(f"contact {self.name!r}: no closest point of surface {self.surface.name!r} to "
                                  f"the centre {np.round(x, 9).tolist()} (residual {found.residual:.3g} after "
                                  f"{found.iterations} Newton steps from (s, t) = ({self.s:g}, {self.t:g}))")
        self.s, self.t = found.s, found.t
        n = self.surface.normal(found.s, found.t)
        return np.array([float((x - found.point) @ n) - self.radius]), (n @ J_x)[None, :]
