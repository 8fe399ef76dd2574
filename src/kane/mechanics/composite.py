"""The composite-inertia and bias-force passes of a tree (Featherstone 2008 §5.3 and §6.2; seed 001 §3.1.1), written
once on any scalar type and shared by Kane's method (:mod:`kane.symbolic.kane`) and the traced recursive
algorithms (:mod:`kane.algorithms.crba`, :mod:`kane.algorithms.rnea`).

* :func:`newton_euler_force`: the force I a + v x* I v - f_ext (6,) a body needs for acceleration a (Newton-Euler);
* :func:`composite_pass`: inward (tip to base), composite inertias Ic_parent += X_i^T Ic_i X_i and subtree
  forces F_parent += X_i^T F_i (the bias-force pass of Kane's sums and RNEA's inward pass), either or both;
* :func:`joint_space_inertia`: per joint i, F = Ic_i S_i gives the diagonal block H_ii = S_i^T F; walking inward,
  F = X_j^T F gives the off-diagonal blocks H_ji = S_j^T F for every ancestor joint j.

The scalars are whatever the kinematics' builder names (sympy expressions, traced scalars; floats too for
:func:`newton_euler_force`, with an ``assign`` that returns its argument); the scalar product of a motion and a
force vector is the caller's (``power``), so each formulation keeps its own arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import sympy as sp

from ..model.model import Model
from .inertia import SpatialInertia
from .kinematics import TreeKinematics, crf

__all__ = ["CompositePass", "newton_euler_force", "composite_pass", "joint_space_inertia",
           "joint_inertia_columns"]


@dataclass(frozen=True)
class CompositePass:
    """Result of :func:`composite_pass`: per body (parent-before-child order) the composite inertia of its subtree
    about its origin in its axes (``inertias``) and the subtree force (``forces``, 6-vectors in body axes at the
    origin); each None when not asked for."""

    inertias: tuple | None
    forces: tuple | None


def newton_euler_force(b, apply_inertia: Callable, v, a, f_ext) -> list:
    """I a + v x* I v - f_ext (6,): the force a body of inertia I (``apply_inertia(s)`` = I s) with spatial velocity
    v (6,) needs for spatial acceleration a (6,) against applied forces f_ext (6,), each entry named by ``b``."""
    Ia, Iv = apply_inertia(a), apply_inertia(v)
    vIv = crf(v, Iv)
    return [b.assign(Ia[k] + vIv[k] - f_ext[k]) for k in range(6)]


def composite_pass(model: Model, kin: TreeKinematics, inertias: Sequence[SpatialInertia] | None,
                   forces: Sequence[Sequence] | None = None,
                   on_subtree: Callable[[int, list], None] | None = None) -> CompositePass:
    """Inward pass (tip to base): each body's inertia and force plus its children's, carried to its axes.

    ``inertias`` (n_bodies): every body's own spatial inertia, or None (no composite inertias: RNEA's inward pass);
    ``forces`` (n_bodies x 6) or None; ``on_subtree(i, F_i)``, if given (with ``forces``), is called with body i's
    complete subtree force before it is carried to the parent (RNEA projects it on joint i there).
    """
    b = kin.b
    Ic = None if inertias is None else list(inertias)
    F = None if forces is None else [list(f) for f in forces]
    for i in reversed(range(model.n_bodies)):
        if on_subtree is not None:
            on_subtree(i, F[i])
        p = model.parent[i]
        if p >= 0:
            if F is not None:
                Fp = kin.force_to_parent(i, F[i])
                F[p] = [b.assign(x + y) for x, y in zip(F[p], Fp)]
            if Ic is not None:
                Ic[p] = Ic[p].plus(b, Ic[i].to_parent(b, kin.R_pc[i], kin.r_pc[i]))
    return CompositePass(None if Ic is None else tuple(Ic), None if F is None else tuple(F))


def joint_space_inertia(model: Model, kin: TreeKinematics, composite: Sequence[SpatialInertia],
                        power: Callable) -> sp.Matrix:
    """The joint-space inertia H (n_u x n_u, symmetric) from the composite inertias (:func:`composite_pass`),
    joint by joint (:func:`joint_inertia_columns`)."""
    H = sp.zeros(model.n_u, model.n_u)
    for i in range(model.n_bodies):
        joint_inertia_columns(model, kin, composite, power, i, H)
    return H


def joint_inertia_columns(model: Model, kin: TreeKinematics, composite: Sequence[SpatialInertia], power: Callable,
                          i: int, H: sp.Matrix) -> None:
    """Fill joint i's columns of H (n_u x n_u, and the symmetric rows) in place: the force that moves joint i's
    composite body at a unit speed derivative, F = Ic_i S_i, projected on each ancestor joint j's motion subspace
    by ``power(S_j column (6,), F (6,))`` as it is carried inward (F = X_j^T F)."""
    b, n = kin.b, model.n_u
    for k, col in enumerate(range(n)[model.joints[i].u_slice]):
        F = composite[i].apply(b, list(kin.S[i][:, k]))
        j = i
        while j >= 0:
            for kk, row in enumerate(range(n)[model.joints[j].u_slice]):
                if j != i or row <= col:
                    H[row, col] = H[col, row] = b.assign(power(kin.S[j][:, kk], F))
            if model.parent[j] >= 0:
                F = kin.force_to_parent(j, F)
            j = model.parent[j]
