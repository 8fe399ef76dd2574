"""Motion constraints in Pfaffian form, A(q) u + b(q, t) = 0 (seed 000 Eq. 3), and the choice of dependent speeds.

Every declared constraint becomes rows of A and b built from the same kinematics as the equations of motion
(shared by Kane's method and the recursive formulations). The dependent speeds are the user's, or chosen
automatically from the numeric constraint matrix by a rank-revealing factorization (seed 000 Eq. 43): at
derivation by :mod:`kane.symbolic`, during a run by :mod:`kane.switching`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import sympy as sp

from ..errors import DerivationError, ModelError
from ..model.elements import ConstraintKind
from .kinematics import TreeKinematics, cross, dot3, matvec

__all__ = ["ConstraintRows", "constraint_bias", "constraint_rows", "select_dependent", "EmbeddingChoice"]


@dataclass(frozen=True)
class ConstraintRows:
    """Rows of one constraint: A (m x n_u), b (m,), and the position-level residual C (holonomic kinds, else
    None) whose time derivative is the rows ``C_rows`` of A u + b."""

    name: str
    A: sp.Matrix
    b: sp.Matrix
    C: sp.Matrix | None
    C_rows: tuple = ()


def constraint_rows(model, kin: TreeKinematics, constraint) -> ConstraintRows:
    """Pfaffian rows of one constraint in terms of the kinematics' named quantities."""
    kind, data, a = constraint.kind, constraint.data, kin.b.assign
    n = model.n_u
    C = None
    if kind is ConstraintKind.MOTION:
        A, b = sp.zeros(len(data), n), sp.zeros(len(data), 1)
        subs0 = {u: 0 for u in model.u}
        for r, expr in enumerate(data):
            for c, u in enumerate(model.u):
                coeff = expr.diff(u)
                if coeff.free_symbols & set(model.u):
                    raise ModelError(f"constraint {constraint.name!r} row {r + 1}: expected an expression linear in "
                                     f"the speeds (Pfaffian form A(q) u + b = 0); it is nonlinear in {u}")
                A[r, c] = a(coeff)
            b[r] = a(expr.xreplace(subs0))
        return ConstraintRows(constraint.name, A, b, None)
    if kind is ConstraintKind.JOINT_LOCK:
        pj = model.joints[data[0]]
        cols = list(range(n)[pj.u_slice])
        A = sp.zeros(len(cols), n)
        for r, c in enumerate(cols):
            A[r, c] = 1
        return ConstraintRows(constraint.name, A, sp.zeros(len(cols), 1), None)
    if kind is ConstraintKind.POINT_VELOCITY:
        body, point, dirs = data
        V, rem = kin.point_partials(body, point)
        return _project(constraint.name, kin, V, rem, dirs, None)
    if kind is ConstraintKind.NO_SLIP:  # a body-fixed direction: project in the body's own axes
        body, point, direction = data
        V, rem = kin.point_partials_in_body(body, point)
        return _project(constraint.name, kin, V, rem, [list(direction)], None)
    if kind is ConstraintKind.ROLLING_DISK:
        body, p0, normal = data[0], data[4], data[5]
        contact = _disk_contact(kin, data)[0]
        V, rem = kin.point_partials(body, contact)
        C = sp.Matrix([a(dot3(list(normal), [x - y for x, y in zip(kin.point_in_ground(body, contact), p0)]))])
        rows = _project(constraint.name, kin, V, rem, [*plane_tangents(normal), list(normal)], C)
        return ConstraintRows(rows.name, rows.A, rows.b, C, (2,))
    if kind is ConstraintKind.LOOP_CLOSURE:
        ba, pa, bb, pb, frames, dirs = data
        Va, ra = _point_partials(kin, ba, pa, n)
        Vb, rb = _point_partials(kin, bb, pb, n)
        sep = [a(x - y) for x, y in zip(kin.point_in_ground(ba, pa), kin.point_in_ground(bb, pb))]
        C = sp.Matrix([a(dot3(list(d), sep)) for d in dirs])
        rows = _project(constraint.name, kin, Va - Vb, [x - y for x, y in zip(ra, rb)], dirs, C)
        rows = ConstraintRows(rows.name, rows.A, rows.b, C, tuple(range(len(dirs))))
        if not frames:
            return rows
        Wa, wa = _angular_partials(kin, ba, n)
        Wb, wb = _angular_partials(kin, bb, n)
        A = sp.Matrix.vstack(rows.A, (Wa - Wb).applyfunc(a))
        b = sp.Matrix.vstack(rows.b, sp.Matrix([a(x - y) for x, y in zip(wa, wb)]))
        return ConstraintRows(constraint.name, A, b, rows.C, rows.C_rows)
    raise ModelError(f"constraint {constraint.name!r}: unknown kind {kind!r}")


def _disk_contact(kin, data) -> tuple[list, list]:
    """(contact, n_b): the contact point (3,) of a rolling disk in the disk's axes and the plane's normal n_b (3,)
    in them; with k the unit vector of the disk plane closest to n_b, the contact is the rim point nearest the
    plane, centre - r k."""
    body, radius, axis, center, _, normal = data
    a = kin.b.assign
    R0 = kin.rotation_to_ground(body)
    ax = list(axis / sp.sqrt(dot3(list(axis), list(axis))))
    n_b = [a(dot3(list(normal), list(R0[:, j]))) for j in range(3)]
    na = a(dot3(n_b, ax))
    k = [a(n_b[j] - na * ax[j]) for j in range(3)]
    norm = a(sp.sqrt(1 - na * na))
    return [a(center[j] - radius * k[j] / norm) for j in range(3)], n_b


def constraint_bias(model, kin: TreeKinematics, constraint, rows: ConstraintRows) -> list:
    """The velocity-product part A' u + b' (m,) of the rate of one constraint's rows (at u' = 0; seed 000 Eq. 44).

    Rows that constrain a body point's velocity along constant directions (rolling disk, point velocity, no slip,
    loop closure) take it from the bodies' accelerations (:meth:`TreeKinematics.point_velocity_rate`); the other
    rows, and directions that change with q or t, by the builder's time derivative of A u + b."""
    b, kind, data = kin.b, constraint.kind, constraint.data
    u = sp.Matrix(model.u)
    extra = []  # rows after the point rows (a loop closure's frame rows)

    def generic():
        return [b.time_derivative((rows.A[r, :] * u)[0] + rows.b[r]) for r in range(rows.A.shape[0])]

    if kind is ConstraintKind.ROLLING_DISK:
        normal = data[5]
        contact, n_b = _disk_contact(kin, data)
        if all(b.time_derivative(e) == 0 for e in normal):  # n_b = R0^T n, so n_b' = -w x n_b = n_b x w
            for e, rate in zip(n_b, cross(n_b, kin.vel[data[0]][:3])):
                _give_rate(b, e, rate)
        dirs, rate = [*plane_tangents(normal), list(normal)], kin.point_velocity_rate(data[0], contact)
    elif kind is ConstraintKind.POINT_VELOCITY:
        dirs, rate = data[2], kin.point_velocity_rate(data[0], data[1])
    elif kind is ConstraintKind.NO_SLIP:
        dirs, rate = [data[2]], kin.point_velocity_rate(data[0], data[1], ground=False)
    elif kind is ConstraintKind.LOOP_CLOSURE:
        ba, pa, bb, pb, frames, dirs = data
        ra, rb = (kin.point_velocity_rate(i, p) if i >= 0 else [0, 0, 0] for i, p in ((ba, pa), (bb, pb)))
        rate = [x - y for x, y in zip(ra, rb)]
        if frames:  # relative angular velocity in ground axes: (R0 w)' = R0 w' (as R0' w = R0 (w x w) = 0)
            wa, wb = (matvec(kin.rotation_to_ground(i), kin.acc[i][:3]) if i >= 0 else [0, 0, 0] for i in (ba, bb))
            extra = [b.assign(x - y) for x, y in zip(wa, wb)]
    else:
        return generic()
    if any(b.time_derivative(e) != 0 for d in dirs for e in d):
        return generic()
    return [b.assign(dot3(list(d), rate)) for d in dirs] + extra


def _give_rate(b, e, rate) -> None:
    """Tell the builder the time derivative of the named quantity ``e`` (a symbol or a negated symbol), unless it
    has one already: the chain rule through its definition is then never formed."""
    coeff, sym = e.as_coeff_Mul() if e.is_Mul else (sp.S.One, e)
    if sym.is_Symbol and coeff in (1, -1) and b.definition(sym) is not None and sym not in b.rates:
        b.rates[sym] = b.assign(coeff * rate)


def plane_tangents(normal) -> list[list]:
    """Two unit tangents (t1, t2) of a plane with unit normal n, (t1, t2, n) right-handed; for n = z they are x
    and y. t1 is built from the ground axis least aligned with n (y, then z, then x on ties)."""
    n = sp.Matrix(normal)
    axes = [sp.Matrix([0, 1, 0]), sp.Matrix([0, 0, 1]), sp.Matrix([1, 0, 0])]
    e = min(axes, key=lambda v: abs(float(v.dot(n))))
    t1 = e.cross(n)
    t1 = t1 / sp.sqrt(t1.dot(t1))
    t2 = n.cross(t1)
    return [list(t1), list(t2)]


def _point_partials(kin, body, point, n):
    if body < 0:
        return sp.zeros(3, n), [sp.S.Zero] * 3
    return kin.point_partials(body, point)


def _angular_partials(kin, body, n):
    if body < 0:
        return sp.zeros(3, n), [sp.S.Zero] * 3
    return kin.angular_partials_in_ground(body)


def _project(name, kin, V, rem, dirs, C):
    a = kin.b.assign
    A = sp.zeros(len(dirs), V.shape[1])
    b = sp.zeros(len(dirs), 1)
    for r, d in enumerate(dirs):
        d = list(d)
        for c in range(V.shape[1]):
            if any(e != 0 for e in V[:, c]):
                A[r, c] = a(dot3(d, list(V[:, c])))
        b[r] = a(dot3(d, rem))
    return ConstraintRows(name, A, b, C)


@dataclass(frozen=True)
class EmbeddingChoice:
    """Which rows of A are kept (independent constraints) and which speeds are dependent (column indices),
    with the pivot order used to eliminate, all decided numerically at a reference state."""

    rows: tuple[int, ...]
    dependent: tuple[int, ...]
    independent: tuple[int, ...]
    pivots: tuple[int, ...]
    singular_values: tuple[float, ...]


def select_dependent(A_num: np.ndarray, u_names, dependent_names=None, A_generic: np.ndarray | None = None,
                     tol: float = 1e-9, keep_first: bool = False) -> EmbeddingChoice:
    """Choose independent constraint rows and dependent speeds from numeric constraint matrices.

    The number of independent constraints is the number of nonzero singular values (seed 000 Eq. 43) of the
    generic matrix; rows and columns are picked by QR with column pivoting (the best conditioned dependent
    block at the reference state), unless the user names the dependent speeds. With ``keep_first`` the rows are
    kept in declaration order instead (each row that adds to the rank of those before it), so a row that repeats
    earlier ones, or is zero, is the one left out (a dropped redundant row, :func:`kane.derive`).
    """
    A_rank = A_generic if A_generic is not None else A_num
    sv = np.linalg.svd(A_rank, compute_uv=False) if A_rank.size else np.zeros(0)
    scale = max(1.0, float(sv[0])) if sv.size else 1.0
    m = int(np.sum(sv > tol * scale))
    if m == 0:
        return EmbeddingChoice((), (), tuple(range(A_num.shape[1])), (), tuple(sv))
    rows = _rows_in_order(A_rank, tol * scale) if keep_first else ()
    if len(rows) != m:  # not asked for, or the rank test in order disagrees with the SVD's at this tolerance
        _, _, row_perm = sla.qr(A_rank.T, pivoting=True, mode="economic")
        rows = tuple(sorted(int(r) for r in row_perm[:m]))
    A_rows = A_num[list(rows)]
    if np.linalg.matrix_rank(A_rows, tol=tol * scale) < m:  # the reference state is itself a singular
        A_rows = A_rank[list(rows)]  # configuration of the constraints: decide at the generic one
    if dependent_names is not None:
        names = list(u_names)
        missing = [d for d in dependent_names if d not in names]
        if missing:
            raise ModelError(f"dependent speeds {missing}: not speeds of the model; speeds are {', '.join(names)}")
        if len(dependent_names) != m:
            raise ModelError(f"{len(dependent_names)} dependent speeds named but the constraints remove {m} "
                             "degrees of freedom: name exactly that many")
        dep = tuple(names.index(d) for d in dependent_names)
        block = A_rows[:, list(dep)]
        if np.linalg.matrix_rank(block, tol=tol * scale) < m:
            raise ModelError(f"dependent speeds {list(dependent_names)} make the constraint block singular at "
                             "the reference configuration (seed 000 Eq. 5 needs it invertible); choose others or "
                             "let kane choose (dependent=None)")
    else:
        _, _, col_perm = sla.qr(A_rows, pivoting=True, mode="economic")
        dep = tuple(int(c) for c in col_perm[:m])
        if np.linalg.matrix_rank(A_rows[:, list(dep)], tol=tol * scale) < m:
            raise DerivationError("the constraint rows are rank deficient at the reference configuration")
    indep = tuple(c for c in range(A_num.shape[1]) if c not in dep)
    # pivot order for elimination: partial pivoting on the numeric dependent block
    pivots = _lu_pivots(A_rows[:, list(dep)])
    return EmbeddingChoice(rows, dep, indep, pivots, tuple(float(s) for s in sv))


def _rows_in_order(A: np.ndarray, tol: float) -> tuple[int, ...]:
    """The rows of A (m x n) that each add to the rank of the rows before them: the part of a row outside the
    span of those kept (Gram-Schmidt, projected twice) is longer than ``tol``."""
    basis, kept = np.zeros((0, A.shape[1])), []
    for i, row in enumerate(np.asarray(A, dtype=float)):
        rest = row - basis.T @ (basis @ row)
        rest = rest - basis.T @ (basis @ rest)
        size = float(np.linalg.norm(rest))
        if size > tol:
            kept.append(i)
            basis = np.vstack([basis, rest / size])
    return tuple(kept)


def _lu_pivots(block: np.ndarray) -> tuple[int, ...]:
    """Row order of Gaussian elimination with partial pivoting on a numeric square block."""
    B = block.astype(float).copy()
    m = B.shape[0]
    order = list(range(m))
    for k in range(m):
        p = k + int(np.argmax(np.abs(B[k:, k])))
        B[[k, p]] = B[[p, k]]
        order[k], order[p] = order[p], order[k]
        if B[k, k] != 0:
            B[k + 1:] -= np.outer(B[k + 1:, k] / B[k, k], B[k])
    return tuple(order)
