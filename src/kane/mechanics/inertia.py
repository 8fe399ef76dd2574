"""Spatial inertia of rigid bodies on any scalar type (sympy expressions named by a ProgramBuilder).

Shared by Kane's method (:mod:`kane.symbolic.kane`) and the recursive algorithms (:mod:`kane.algorithms`): the
inertia of body i about its origin in its axes, carried to a parent frame, summed into composite inertias.
"""

from __future__ import annotations

import sympy as sp

from ..codegen.program import ProgramBuilder
from ..model.model import Model
from .kinematics import cross, dot3, exact_zero, matmul3, matvec, sum_products

__all__ = ["SpatialInertia", "body_inertia", "body_inertias"]


class SpatialInertia:
    """Spatial inertia about a frame origin, stored as mass m, first moment h = m c (3,) and rotational inertia
    about the origin Ibar (3x3 symmetric)."""

    def __init__(self, m, h, Ibar):
        self.m, self.h, self.Ibar = m, list(h), sp.Matrix(Ibar)
        self._applied = {}

    def apply(self, b: ProgramBuilder, s):
        """I s for a motion vector s = (omega, v): (Ibar omega + h x v, m v - h x omega); formed once per vector."""
        key = (b, tuple(s))  # the builder itself (hashed by identity), so a key never outlives its builder
        if key not in self._applied:
            self._applied[key] = self._apply(b, s)
        return list(self._applied[key])

    def _apply(self, b: ProgramBuilder, s):
        w, v = s[:3], s[3:]
        hv, hw = cross(self.h, v), cross(self.h, w)
        Iw = matvec(self.Ibar, w)
        mv = [0] * 3 if exact_zero(self.m) else [self.m * v[k] for k in range(3)]
        return [b.assign(Iw[k] + hv[k]) for k in range(3)] + [b.assign(mv[k] - hw[k]) for k in range(3)]

    def to_parent(self, b: ProgramBuilder, R, r) -> "SpatialInertia":
        """The same inertia expressed in the parent's axes about the parent's origin (X^T I X)."""
        a = b.assign
        h1 = [a(e) for e in matvec(R, self.h)]
        RI = matmul3(R, self.Ibar)
        Ir = sp.zeros(3, 3)
        for i in range(3):
            for j in range(i, 3):
                Ir[i, j] = Ir[j, i] = sum_products([(RI[i, k], R[j, k]) for k in range(3)])
        massless = exact_zero(self.m)
        rh = 2 * dot3(r, h1) + (0 if massless else self.m * dot3(r, r))
        Ip = sp.zeros(3, 3)
        for i in range(3):
            for j in range(i, 3):
                mrr = 0 if massless or exact_zero(r[i]) or exact_zero(r[j]) else self.m * r[i] * r[j]
                e = Ir[i, j] - (sum_products([(h1[i], r[j]), (r[i], h1[j])]) + mrr)
                if i == j:
                    e += rh
                Ip[i, j] = Ip[j, i] = a(e)
        return SpatialInertia(self.m, [a(h1[k] + (0 if massless else self.m * r[k])) for k in range(3)], Ip)

    def plus(self, b: ProgramBuilder, other: "SpatialInertia") -> "SpatialInertia":
        a = b.assign
        return SpatialInertia(a(self.m + other.m), [a(x + y) for x, y in zip(self.h, other.h)],
                              (self.Ibar + other.Ibar).applyfunc(a))


def body_inertias(model: Model, kin) -> list:
    """The spatial inertia of every body (:func:`body_inertia`), formed once per kinematics object ``kin`` (a
    :class:`kane.mechanics.kinematics.TreeKinematics`) and shared by Kane's sums and the energies."""
    if "inertias" not in kin.memo:
        kin.memo["inertias"] = [body_inertia(model, i) for i in range(model.n_bodies)]
    return kin.memo["inertias"]


def body_inertia(model: Model, i: int) -> SpatialInertia:
    """Spatial inertia of body i about its origin in its axes (constants and parameters only)."""
    body = model.bodies[i]
    m, c = body.mass, list(body.com)
    Ibar = sp.Matrix(body.inertia) + m * (dot3(c, c) * sp.eye(3) - sp.Matrix(c) * sp.Matrix(c).T)
    return SpatialInertia(m, [m * ck for ck in c], Ibar.applyfunc(sp.expand))
