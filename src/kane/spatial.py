"""Featherstone's spatial vector algebra in numpy (seed 001 §2.4; Featherstone 2008, ch. 2).

Conventions (the same as :mod:`kane.mechanics.kinematics` and :mod:`kane.algorithms`):

* a **motion vector** is ``(omega, v)`` (6,): angular velocity [rad/s] first, then the velocity [m/s] of the body-fixed
  point at the frame's origin; a **force vector** is ``(n, f)`` (6,): the moment [N m] about the origin, then the
  force [N]. Both are in the axes of the frame they are expressed in.
* ``R_A_B`` (3, 3) takes B components to A components (v_A = R_A_B v_B); ``p_A_B`` (3,) is the position of B's
  origin from A's origin in A components [m].
* ``X_B_A`` (6, 6) takes a motion vector from frame A to frame B (Featherstone's ^B X_A); force vectors transform
  with ``X_B_A^* = X_B_A^{-T}``, and ``X_B_A^T`` carries a force from B back to A.
* a spatial inertia (6, 6) about a frame's origin is [[I_o, m c x], [m c x^T, m 1]] with I_o = I_c + m c x c x^T.

Every function accepts float arrays with optional leading batch axes (shapes ``(..., 3)``, ``(..., 3, 3)``,
``(..., 6)``, ``(..., 6, 6)``) and returns new arrays.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "quaternion_to_rotation", "rotation_to_quaternion", "rotation_vector", "quaternion_compose", "cross3",
    "skew", "unskew", "crm", "crf", "motion_transform", "force_transform", "inverse_transform", "transform_parts",
    "spatial_inertia", "inertia_parts", "transform_inertia", "rotation_rpy", "rotation_axis_angle",
]


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (..., 3): np.cross without its axis bookkeeping, which dominates for one point
    (the same products and differences: the same bits)."""
    if a.ndim == 1 and b.ndim == 1:
        return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def skew(v) -> np.ndarray:
    """The cross-product matrix (..., 3, 3) of v (..., 3): skew(a) @ b = a x b."""
    v = np.asarray(v, dtype=float)
    if v.shape == (3,):  # one vector: without the batch bookkeeping
        x, y, z = v.tolist()
        return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def unskew(S) -> np.ndarray:
    """The vector (..., 3) of a skew-symmetric matrix (..., 3, 3) (the antisymmetric part is used)."""
    S = np.asarray(S, dtype=float)
    return 0.5 * np.stack([S[..., 2, 1] - S[..., 1, 2], S[..., 0, 2] - S[..., 2, 0], S[..., 1, 0] - S[..., 0, 1]],
                          axis=-1)


def crm(v) -> np.ndarray:
    """Motion cross-product operator (..., 6, 6) of the motion vector v (..., 6): crm(v) @ m = v x m."""
    v = np.asarray(v, dtype=float)
    w, vo = skew(v[..., :3]), skew(v[..., 3:])
    out = np.zeros(v.shape[:-1] + (6, 6))
    out[..., :3, :3] = w
    out[..., 3:, :3] = vo
    out[..., 3:, 3:] = w
    return out


def crf(v) -> np.ndarray:
    """Force cross-product operator (..., 6, 6): crf(v) @ f = v x* f = -crm(v)^T f."""
    return -np.swapaxes(crm(v), -1, -2)


def motion_transform(R_A_B, p_A_B) -> np.ndarray:
    """X_B_A (..., 6, 6): motion vectors from frame A to frame B, given B's orientation R_A_B (..., 3, 3) and
    origin p_A_B (..., 3) in A. X_B_A = [[E, 0], [-E p x, E]] with E = R_A_B^T (Featherstone's rot(E) xlt(p))."""
    R = np.asarray(R_A_B, dtype=float)
    E = np.swapaxes(R, -1, -2)
    out = np.zeros(R.shape[:-2] + (6, 6))
    out[..., :3, :3] = E
    out[..., 3:, 3:] = E
    out[..., 3:, :3] = -E @ skew(p_A_B)
    return out


def force_transform(R_A_B, p_A_B) -> np.ndarray:
    """X_B_A^* (..., 6, 6): force vectors from frame A to frame B, [[E, -E p x], [0, E]]."""
    R = np.asarray(R_A_B, dtype=float)
    E = np.swapaxes(R, -1, -2)
    out = np.zeros(R.shape[:-2] + (6, 6))
    out[..., :3, :3] = E
    out[..., 3:, 3:] = E
    out[..., :3, 3:] = -E @ skew(p_A_B)
    return out


def transform_parts(X) -> tuple[np.ndarray, np.ndarray]:
    """(R_A_B, p_A_B) of a motion transform X_B_A (the inverse of :func:`motion_transform`)."""
    X = np.asarray(X, dtype=float)
    E = X[..., :3, :3]
    R = np.swapaxes(E, -1, -2)
    return R, unskew(-R @ X[..., 3:, :3])


def inverse_transform(X) -> np.ndarray:
    """X_A_B from X_B_A (..., 6, 6), without a general matrix inverse."""
    R, p = transform_parts(X)
    E = np.swapaxes(R, -1, -2)
    return motion_transform(E, -(E @ p[..., None])[..., 0])


def spatial_inertia(mass, com, inertia_c) -> np.ndarray:
    """Spatial inertia (..., 6, 6) about a frame's origin from the mass [kg] (...,), the centre of mass com (..., 3)
    [m] and the central inertia tensor inertia_c (..., 3, 3) [kg m^2], all in the frame's axes."""
    m = np.asarray(mass, dtype=float)
    C = skew(com)
    mC = m[..., None, None] * C
    out = np.zeros(C.shape[:-2] + (6, 6))
    out[..., :3, :3] = np.asarray(inertia_c, dtype=float) + mC @ np.swapaxes(C, -1, -2)
    out[..., :3, 3:] = mC
    out[..., 3:, :3] = np.swapaxes(mC, -1, -2)
    out[..., 3:, 3:] = m[..., None, None] * np.eye(3)
    return out


def inertia_parts(I) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mass, com, central inertia) of a rigid-body spatial inertia (..., 6, 6); com is NaN for a zero mass."""
    I = np.asarray(I, dtype=float)
    m = I[..., 3, 3]
    h = unskew(I[..., :3, 3:])
    with np.errstate(invalid="ignore", divide="ignore"):
        c = h / m[..., None]
        C = skew(c)
        Ic = I[..., :3, :3] - m[..., None, None] * (C @ np.swapaxes(C, -1, -2))
    return m, c, Ic


def transform_inertia(X_B_A, I_B) -> np.ndarray:
    """A spatial inertia given in frame B, expressed in frame A: I_A = X_B_A^T I_B X_B_A (..., 6, 6)."""
    X = np.asarray(X_B_A, dtype=float)
    return np.swapaxes(X, -1, -2) @ np.asarray(I_B, dtype=float) @ X


def rotation_rpy(rpy) -> np.ndarray:
    """R (..., 3, 3) of URDF roll-pitch-yaw angles (..., 3) [rad]: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    a = np.asarray(rpy, dtype=float)
    cr, sr = np.cos(a[..., 0]), np.sin(a[..., 0])
    cp, sp_ = np.cos(a[..., 1]), np.sin(a[..., 1])
    cy, sy = np.cos(a[..., 2]), np.sin(a[..., 2])
    out = np.empty(a.shape[:-1] + (3, 3))
    out[..., 0, 0], out[..., 0, 1], out[..., 0, 2] = cy * cp, cy * sp_ * sr - sy * cr, cy * sp_ * cr + sy * sr
    out[..., 1, 0], out[..., 1, 1], out[..., 1, 2] = sy * cp, sy * sp_ * sr + cy * cr, sy * sp_ * cr - cy * sr
    out[..., 2, 0], out[..., 2, 1], out[..., 2, 2] = -sp_, cp * sr, cp * cr
    return out


def rotation_axis_angle(axis, angle) -> np.ndarray:
    """R (3, 3) of a right-handed rotation by ``angle`` [rad] about ``axis`` (3,) (normalized here; Rodrigues)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    K = skew(a)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def quaternion_to_rotation(e) -> np.ndarray:
    """R (..., 3, 3) of scalar-first quaternions e (..., 4) (normalized here)."""
    e = np.asarray(e, dtype=float)
    if e.shape == (4,):  # one quaternion: the same arithmetic on floats, without the batch bookkeeping
        w, x, y, z = e.tolist()
        n = math.sqrt(w * w + x * x + y * y + z * z)
        w, x, y, z = w / n, x / n, y / n, z / n
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    e = e / np.sqrt((e * e).sum(-1))[..., None]
    w, x, y, z = e[..., 0], e[..., 1], e[..., 2], e[..., 3]
    R = np.empty(e.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)
    return R


def _quaternion_floats(R) -> list:
    """rotation_to_quaternion's arithmetic on Python floats (one matrix, no array bookkeeping: a few us, not 15)."""
    R = [[float(x) for x in row] for row in R]
    tr = R[0][0] + R[1][1] + R[2][2]
    diag = [tr, R[0][0], R[1][1], R[2][2]]
    k = diag.index(max(diag))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + tr)
        e = [s / 4, (R[2][1] - R[1][2]) / s, (R[0][2] - R[2][0]) / s, (R[1][0] - R[0][1]) / s]
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * math.sqrt(max(1.0 + R[i][i] - R[j][j] - R[m][m], 0.0))
        e = [0.0] * 4
        e[0], e[1 + i] = (R[m][j] - R[j][m]) / s, s / 4
        e[1 + j], e[1 + m] = (R[j][i] + R[i][j]) / s, (R[m][i] + R[i][m]) / s
    n = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3])
    e = [x / n for x in e]
    return [-x for x in e] if e[0] < 0 else e


def rotation_to_quaternion(R) -> np.ndarray:
    """The scalar-first unit quaternion (4,) with a non-negative scalar part of a rotation R (3, 3) (Shepperd)."""
    return np.array(_quaternion_floats(R))


def rotation_vector(R) -> np.ndarray:
    """The rotation vector theta a (3,) [rad] of R (3, 3), |theta| <= pi (the logarithm of SO(3))."""
    w, x, y, z = _quaternion_floats(R)
    s = math.sqrt(x * x + y * y + z * z)
    f = 2.0 * math.atan2(s, w) / s if s > 1e-8 else 2.0 / w
    return np.array([x * f, y * f, z * f])


def quaternion_compose(e, dtheta):
    """e (x) exp(dtheta / 2): a quaternion turned by the body-axis rotation vector dtheta (3,)."""
    a = float(np.linalg.norm(dtheta))
    d = np.concatenate([[np.cos(a / 2)], dtheta * (np.sin(a / 2) / a if a > 1e-12 else 0.5)])
    w, x, y, z = e
    return np.array([w * d[0] - x * d[1] - y * d[2] - z * d[3], w * d[1] + x * d[0] + y * d[3] - z * d[2],
                     w * d[2] - x * d[3] + y * d[0] + z * d[1], w * d[3] + x * d[2] - y * d[1] + z * d[0]])
