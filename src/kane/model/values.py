"""Coercion and checking of the values a user gives the :class:`kane.System` builder: 3-vectors, scalars,
rotation matrices and inertia tensors, with errors that name the field (``what``)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from mpmath.libmp import from_float, round_nearest

from ..errors import ModelError

__all__ = ["_vec", "_scalar", "_real", "_rotation", "_inertia", "check_rotation"]


_ZERO = sp.ImmutableMatrix(3, 1, [0, 0, 0])


def _float(value: float) -> sp.Float:
    """``sp.Float(value)`` of a finite Python float (53 bits, as sympify makes it), built from its binary value
    without the constructor's type lookups: an equal object (same value, precision and hash), in half the time."""
    return sp.Float._new(from_float(value, 53, round_nearest), 53, zero=False)


def _matrix(rows: int, cols: int, entries: list) -> sp.ImmutableMatrix:
    """An immutable ``rows`` x ``cols`` matrix of the flat list ``entries``, which are sympy objects already
    (checked by :func:`_scalar`): sympy's check of each entry again is skipped (it cost 30-50 us a matrix)."""
    return sp.ImmutableMatrix._new(rows, cols, entries, copy=False)


def _vec(value, what: str) -> sp.ImmutableMatrix:
    try:
        items = list(value)
    except TypeError:
        raise ModelError(f"{what}: expected a 3-vector, got {value!r}") from None
    if len(items) != 3:
        raise ModelError(f"{what}: expected a 3-vector, got {len(items)} components")
    if all(type(v) is int and v == 0 for v in items):
        return _ZERO  # the origin, as every joint's default child point: one shared immutable vector
    return _matrix(3, 1, [_scalar(v, what) for v in items])


def _scalar(value, what: str) -> sp.Expr:
    if type(value) is float and math.isfinite(value):  # the common case, as sympify makes it, without its lookups
        return _float(value)
    if type(value) is int:
        return sp.Integer(value)
    if isinstance(value, (str, bytes)):
        raise ModelError(f"{what}: got the string {value!r}; expected a number or a sympy expression "
                         "(model files parse their expressions with kane.io)")
    try:
        out = sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError):
        raise ModelError(f"{what}: expected a number or a sympy expression, got {value!r}") from None
    if out.is_number and not (out.is_finite and out.is_extended_real):
        raise ModelError(f"{what}: expected a finite real number, got {value}")
    return out


def _real(value, what: str) -> float:
    """A plain finite real number (no strings, no expressions)."""
    if isinstance(value, (str, bytes, bool)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(f"{what}: expected a real number, got {value!r}")
    if not np.isfinite(float(value)):
        raise ModelError(f"{what}: expected a finite real number, got {float(value)!r}")
    return float(value)


_IDENTITY = sp.ImmutableMatrix(sp.eye(3))  # immutable: one shared by every frame without a rotation


def _matrix3(value, what: str) -> sp.ImmutableMatrix:
    """``value`` as an immutable matrix; three rows of three entries are built from the flat list of their checked
    entries (sympy builds a matrix from nested lists several times slower)."""
    if not isinstance(value, sp.MatrixBase) and len(value) == 3 and all(
            hasattr(row, "__len__") and not isinstance(row, (str, bytes)) and len(row) == 3 for row in value):
        return _matrix(3, 3, [_scalar(x, what) for row in value for x in row])
    return sp.ImmutableMatrix(value)


def _rotation(value, what: str) -> sp.ImmutableMatrix:
    if value is None:
        return _IDENTITY
    R = _matrix3(value, what)
    if R.shape != (3, 3):
        raise ModelError(f"{what}: expected a 3x3 rotation matrix")
    if all(e.is_number for e in R):
        check_rotation(np.array(R, dtype=float), what)  # float() of each number, as evalf, without a new matrix
    return R


def check_rotation(R: np.ndarray, what: str, where: str = "") -> None:
    """Refuse a (3, 3) array that is not a proper rotation (orthonormal to 1e-9, det +1); ``where`` says at which
    values an expression was evaluated (for rotations written with parameters)."""
    if not (np.all(np.isfinite(R)) and np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0):
        raise ModelError(f"{what}: expected a proper rotation matrix (orthonormal, det +1){where}")


def _inertia(value, what: str) -> sp.ImmutableMatrix:
    items = list(value) if not isinstance(value, sp.MatrixBase) else value
    if isinstance(items, sp.MatrixBase) and items.shape == (3, 3):
        I = sp.ImmutableMatrix(items)
    elif len(items) == 6:
        ixx, iyy, izz, ixy, iyz, izx = (_scalar(v, what) for v in items)
        I = _matrix(3, 3, [ixx, ixy, izx, ixy, iyy, iyz, izx, iyz, izz])
    elif len(items) == 3 and all(not hasattr(v, "__len__") for v in items):
        ixx, iyy, izz = (_scalar(v, what) for v in items)
        zero = sp.S.Zero
        I = _matrix(3, 3, [ixx, zero, zero, zero, iyy, zero, zero, zero, izz])
    else:
        I = _matrix3(items, what)
        if I.shape != (3, 3):
            raise ModelError(f"{what}: expected a 3x3 tensor, (Ixx, Iyy, Izz) or (Ixx, Iyy, Izz, Ixy, Iyz, Izx)")
    if I != I.T:
        diff = I - I.T
        if not all(e.is_number for e in diff) or max(abs(float(e)) for e in diff) > 1e-9 * max(
                1.0, max(abs(float(e)) for e in I if e.is_number)):
            raise ModelError(f"{what}: the inertia tensor must be symmetric")
        I = sp.ImmutableMatrix((I + I.T) / 2)
    return I
