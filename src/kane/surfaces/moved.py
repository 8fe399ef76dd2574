"""A surface moved rigidly: S'(s, t) = origin + R S(s, t) (a body's surface seen from another body's axes, as the
rolling joint of seed 003 evaluates it). Parameters, bounds and periodicity are those of the wrapped surface."""

from __future__ import annotations

import numpy as np

from .base import Surface

__all__ = ["MovedSurface"]


class MovedSurface(Surface):
    """``surface`` turned by ``rotation`` R (3, 3) and shifted by ``origin`` (3,) [m]: every derivative is turned
    by R. No checks: R and origin come from a body's pose (already a proper rotation)."""

    def __init__(self, surface: Surface, rotation: np.ndarray, origin: np.ndarray):
        self.surface, self.rotation, self.origin = surface, rotation, origin
        self.name, self.bounds = surface.name, surface.bounds
        self.periodic, self.tangent_scale = surface.periodic, surface.tangent_scale

    def _evaluate(self, s, t, order):
        parts = self.surface._evaluate(s, t, order)
        return [self.origin + parts[0] @ self.rotation.T] + [d @ self.rotation.T for d in parts[1:]]
