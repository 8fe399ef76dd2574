"""kane.spatial: the identities of Featherstone's spatial algebra, and the traced inertia transform against it."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import sympy as sp

from kane import spatial as S
from kane.algorithms.aba import inertia_to_parent
from kane.codegen.trace import TraceBuilder
from kane.codegen.numpy_backend import compile_program

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _trees import random_inertia, random_rotation  # noqa: E402

rng = np.random.default_rng(3)


def test_cross_products():
    a, b = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(S.skew(a) @ b, np.cross(a, b))
    np.testing.assert_allclose(S.unskew(S.skew(a)), a)
    v, m, f = rng.normal(size=(3, 6))
    np.testing.assert_allclose(S.crm(v) @ m, np.r_[np.cross(v[:3], m[:3]), np.cross(v[:3], m[3:]) +
                                                   np.cross(v[3:], m[:3])])
    np.testing.assert_allclose(S.crf(v), -S.crm(v).T)
    assert abs(m @ (S.crf(v) @ f) + (S.crm(v) @ m) @ f) < 1e-12  # power is invariant: (v x m).f = -m.(v x* f)


def test_transforms():
    R, p = random_rotation(rng), rng.normal(size=3)
    X = S.motion_transform(R, p)  # X_B_A with B at p, turned by R, in A
    # a rigid motion (omega, v_A at A's origin) seen at B's origin in B's axes
    w, vA = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(X @ np.r_[w, vA], np.r_[R.T @ w, R.T @ (vA + np.cross(w, p))])
    np.testing.assert_allclose(S.force_transform(R, p), np.linalg.inv(X).T, atol=1e-12)
    np.testing.assert_allclose(S.inverse_transform(X) @ X, np.eye(6), atol=1e-12)
    R2, p2 = S.transform_parts(X)
    np.testing.assert_allclose(R2, R)
    np.testing.assert_allclose(p2, p, atol=1e-12)
    batch = S.motion_transform(np.stack([R, R.T]), np.stack([p, -p]))
    assert batch.shape == (2, 6, 6)
    np.testing.assert_allclose(batch[0], X)


def test_inertia():
    m, c, Ic = 2.5, rng.normal(size=3), random_inertia(rng)
    I = S.spatial_inertia(m, c, Ic)
    m2, c2, Ic2 = S.inertia_parts(I)
    assert m2 == m
    np.testing.assert_allclose(c2, c)
    np.testing.assert_allclose(Ic2, Ic, atol=1e-12)
    # kinetic energy is the same in any frame: 1/2 v_B^T I_B v_B = 1/2 v_A^T (X^T I_B X) v_A
    X = S.motion_transform(random_rotation(rng), rng.normal(size=3))
    vA = rng.normal(size=6)
    I_A = S.transform_inertia(X, I)
    assert abs(vA @ I_A @ vA - (X @ vA) @ I @ (X @ vA)) < 1e-12
    # the transformed rigid inertia is the rigid inertia of the same body described in A
    _, cA, IcA = S.inertia_parts(I_A)
    R_A_B, p_A_B = S.transform_parts(X)
    np.testing.assert_allclose(cA, p_A_B + R_A_B @ c, atol=1e-12)
    np.testing.assert_allclose(IcA, R_A_B @ Ic @ R_A_B.T, atol=1e-12)
    np.testing.assert_allclose(S.rotation_rpy([0.1, 0.2, 0.3]), S.rotation_axis_angle([0, 0, 1], 0.3)
                               @ S.rotation_axis_angle([0, 1, 0], 0.2) @ S.rotation_axis_angle([1, 0, 0], 0.1))


def test_traced_inertia_transform_equals_X_T_I_X():
    """The block formula that ABA traces, evaluated through a Program, against the 6 x 6 product."""
    A = rng.normal(size=(6, 6))
    I_child = A @ A.T + 6 * np.eye(6)  # a general symmetric positive-definite (articulated) inertia
    R, r = random_rotation(rng), rng.normal(size=3)
    b = TraceBuilder({"t": (), "q": (), "u": (), "params": (), "inputs": ()})
    out = inertia_to_parent(b, [[sp.Float(x) for x in row] for row in I_child], sp.Matrix(R),
                            [sp.Float(x) for x in r])
    prog = b.build({"I": sp.Matrix(out)})
    got = compile_program(prog, ["I"])(0.0, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0))[0]
    np.testing.assert_allclose(got, S.transform_inertia(S.motion_transform(R, r), I_child), atol=1e-12)


def test_quaternion_utilities_against_scipy_rotation():
    from scipy.spatial.transform import Rotation

    from kane.spatial import quaternion_compose, quaternion_to_rotation, rotation_to_quaternion, rotation_vector

    rng = np.random.default_rng(4)
    for _ in range(20):
        rot = Rotation.random(random_state=rng)
        x, y, z, w = rot.as_quat()  # scipy is scalar-last
        e = np.array([w, x, y, z])
        assert np.allclose(quaternion_to_rotation(e), rot.as_matrix(), atol=1e-14)
        e2 = rotation_to_quaternion(rot.as_matrix())
        assert np.allclose(e2, e if e[0] >= 0 else -e, atol=1e-12)
        assert np.allclose(rotation_vector(rot.as_matrix()), rot.as_rotvec(), atol=1e-10)
        d = rng.normal(size=3) * 0.3
        turned = (rot * Rotation.from_rotvec(d)).as_matrix()  # a body-axis turn
        assert np.allclose(quaternion_to_rotation(quaternion_compose(e, d)), turned, atol=1e-12)
