"""Contact between collision shapes as plain data: the material of a pair and one contact point at a configuration.

These two records are the interface between collision geometry (``kane.mechanics.collision``, built on coal), which
finds the contact points of a configuration, and the contact dynamics (``kane.switching``: event-driven stick/slip
embedding, and velocity-level time stepping with friction cones), which turns them into constraint rows and forces.

Conventions: SI units; vectors in world axes, shape ``(3,)``; the normal points from shape a to shape b, so a
positive normal impulse on b pushes b along ``normal_world`` and a the other way; ``distance`` is the signed
distance between the shapes [m] (> 0 apart, < 0 penetrating).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..spatial import cross3

__all__ = ["ContactMaterial", "ContactPoint"]


def _number(value, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: expected a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ModelError(f"{what}: expected a finite number, got {value!r}")
    return x


@dataclass(frozen=True)
class ContactMaterial:
    """Isotropic Coulomb friction and restitution of a contact pair.

    ``mu_static`` (>= 0) bounds the tangential force of a sticking contact, ``mu_kinetic`` (0 <= mu_kinetic <=
    mu_static) gives the friction force of a slipping one, both as a fraction of the normal force; ``restitution``
    in [0, 1] is Newton's coefficient (normal velocity after an impact = -e x before); ``torsional`` [m] and
    ``rolling`` [m] are the optional torsional and rolling resistance lengths (torque bound = length x normal
    force; 0 turns them off). ``where`` names the pair in error messages (e.g. ``"collision 'box' of body 'b1'"``).
    """

    mu_static: float = 0.5
    mu_kinetic: float | None = None
    restitution: float = 0.0
    torsional: float = 0.0
    rolling: float = 0.0
    where: str = field(default="contact material", compare=False)

    def __post_init__(self):
        w = self.where
        mu_s = _number(self.mu_static, f"{w}: key 'mu_static'")
        if mu_s < 0:
            raise ModelError(f"{w}: key 'mu_static': expected a friction coefficient >= 0, got {self.mu_static!r}")
        mu_k = mu_s if self.mu_kinetic is None else _number(self.mu_kinetic, f"{w}: key 'mu_kinetic'")
        if not 0 <= mu_k <= mu_s:
            raise ModelError(f"{w}: key 'mu_kinetic': expected 0 <= mu_kinetic <= mu_static = {mu_s:g}, "
                             f"got {self.mu_kinetic!r}")
        e = _number(self.restitution, f"{w}: key 'restitution'")
        if not 0 <= e <= 1:
            raise ModelError(f"{w}: key 'restitution': expected a coefficient in [0, 1], got {self.restitution!r}")
        for key in ("torsional", "rolling"):
            if _number(getattr(self, key), f"{w}: key '{key}'") < 0:
                raise ModelError(f"{w}: key '{key}': expected a length >= 0 [m], got {getattr(self, key)!r}")
        object.__setattr__(self, "mu_static", mu_s)
        object.__setattr__(self, "mu_kinetic", mu_k)
        object.__setattr__(self, "restitution", e)
        object.__setattr__(self, "torsional", float(self.torsional))
        object.__setattr__(self, "rolling", float(self.rolling))


@dataclass(frozen=True)
class ContactPoint:
    """One contact point between shape a (on ``body_a``) and shape b (on ``body_b``) at one configuration.

    ``body_a``/``body_b`` are body names (``"ground"`` for the fixed frame); ``shape_a``/``shape_b`` the names of
    the collision shapes; ``point_a_world``/``point_b_world`` the witness points on each shape [m], ``(3,)``;
    ``normal_world`` the unit normal from a to b, ``(3,)``; ``distance`` the signed distance [m];
    ``material`` the pair's :class:`ContactMaterial`.
    """

    body_a: str
    body_b: str
    shape_a: str
    shape_b: str
    point_a_world: np.ndarray
    point_b_world: np.ndarray
    normal_world: np.ndarray
    distance: float
    material: ContactMaterial

    @property
    def name(self) -> str:
        """The pair's name, ``"<shape_a>|<shape_b>"`` (used for outputs such as ``<name>.normal_force``)."""
        return f"{self.shape_a}|{self.shape_b}"

    def tangents_world(self) -> tuple[np.ndarray, np.ndarray]:
        """Two unit tangents ``(t1, t2)`` [(3,), (3,)] with (t1, t2, n) right-handed, chosen continuously from n."""
        n = np.asarray(self.normal_world, dtype=float)
        a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        t1 = cross3(a, n)
        t1 /= np.linalg.norm(t1)
        return t1, cross3(n, t1)
