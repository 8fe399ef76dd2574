"""kane.mechanics.composite: the composite inertias (and subtree forces) equal the direct sum over each subtree, on
traced scalars and on floats; the joint-space inertia gives the kinetic energy; the Newton-Euler force and the L^T D L
solve work on floats as on traced scalars."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import sympy as sp

from kane.algorithms.crba import LTDL
from kane.algorithms.trace import Trace
from kane.codegen.numpy_backend import compile_program
from kane.mechanics.composite import composite_pass, joint_space_inertia, newton_euler_force
from kane.mechanics.inertia import SpatialInertia, body_inertia
from kane.mechanics.kinematics import TreeKinematics

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "algorithms"))
from _trees import assert_close, random_inertia, random_rotation, random_state, random_tree  # noqa: E402


def _evaluate(tr, outputs, q, u):
    """Numeric values of the traced ``outputs`` (name -> list or matrix of expressions) at (q, u)."""
    names = tuple(outputs)
    fn = compile_program(tr.b.build(outputs), names)
    w = np.zeros(len(tr.groups["inputs"]))
    return dict(zip(names, fn(0.0, q, u, tr.model.parameter_values(), w)))


def _subtrees(model):
    sub = [[i] for i in range(model.n_bodies)]
    for i in reversed(range(model.n_bodies)):
        if model.parent[i] >= 0:
            sub[model.parent[i]] += sub[i]
    return sub


def test_composite_inertias_equal_the_direct_sum_over_each_subtree():
    model = random_tree(11, loads=False).compile()
    tr = Trace(model)
    kin, nb = tr.kin, model.n_bodies
    Ic = composite_pass(model, kin, [body_inertia(model, i) for i in range(nb)]).inertias
    outputs = {}
    for i in range(nb):
        outputs[f"m{i}"], outputs[f"h{i}"], outputs[f"I{i}"] = [Ic[i].m], list(Ic[i].h), sp.Matrix(Ic[i].Ibar)
        outputs[f"R{i}"], outputs[f"r{i}"] = sp.Matrix(kin.rotation_to_ground(i)), list(kin.origin_in_ground(i))
    q, u = random_state(model, np.random.default_rng(3))
    val = _evaluate(tr, outputs, q, u)
    sub = _subtrees(model)
    assert max(len(s) for s in sub) >= 4  # a real tree: some subtree holds several bodies
    for i in range(nb):
        Ri, ri = val[f"R{i}"], val[f"r{i}"]
        m, h, I = 0.0, np.zeros(3), np.zeros((3, 3))
        for k in sub[i]:  # every body of the subtree, moved to body i's axes about its origin (parallel axes)
            body = model.bodies[k]
            mk, ck = float(body.mass), np.array(list(body.com), dtype=float).reshape(3)
            Jk = np.array(sp.Matrix(body.inertia).tolist(), dtype=float)  # central inertia, body k's axes
            Rik = Ri.T @ val[f"R{k}"]
            p = Ri.T @ (val[f"r{k}"] + val[f"R{k}"] @ ck - ri)
            m += mk
            h += mk * p
            I += Rik @ Jk @ Rik.T + mk * (p @ p * np.eye(3) - np.outer(p, p))
        assert_close(val[f"m{i}"], [m], 1e-13, f"mass of subtree {i}")
        assert_close(val[f"h{i}"], h, 1e-12, f"first moment of subtree {i}")
        assert_close(val[f"I{i}"], I, 1e-12, f"rotational inertia of subtree {i}")


def test_joint_space_inertia_gives_the_kinetic_energy():
    model = random_tree(12, loads=False).compile()
    tr = Trace(model)
    own = [body_inertia(model, i) for i in range(model.n_bodies)]
    H = joint_space_inertia(model, tr.kin, composite_pass(model, tr.kin, own).inertias,
                            lambda m, f: sum(x * y for x, y in zip(m, f)))
    tr.energies()
    q, u = random_state(model, np.random.default_rng(4))
    val = _evaluate(tr, {"H": H, "kinetic": tr.outputs["kinetic"]}, q, u)
    assert np.allclose(val["H"], val["H"].T, rtol=0, atol=1e-14)
    assert_close([0.5 * u @ val["H"] @ u], val["kinetic"], 1e-12, "u^T H u / 2 against the kinetic energy")


class _Floats:
    """A builder for plain floats: every quantity is its own name."""

    @staticmethod
    def assign(x):
        return x


def _crm(v):
    """The 6 x 6 spatial cross product matrix v x (motion vectors), Featherstone 2008 Eq. 2.31."""
    w, vo = v[:3], v[3:]

    def skew(a):
        return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])

    return np.block([[skew(w), np.zeros((3, 3))], [skew(vo), skew(w)]])


def test_newton_euler_force_on_floats_matches_the_matrix_formula():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(6, 6))
    I6 = A @ A.T + 6 * np.eye(6)
    v, a, f_ext = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    got = newton_euler_force(_Floats, lambda s: list(I6 @ np.array(s, dtype=float)), list(v), list(a), list(f_ext))
    expected = I6 @ a - _crm(v).T @ (I6 @ v) - f_ext  # v x* = -(v x)^T
    assert_close(got, expected, 1e-13, "I a + v x* I v - f_ext")


def test_ltdl_solve_on_floats_matches_numpy_and_keeps_tree_zeros():
    rng = np.random.default_rng(6)
    n, parent = 7, [-1, 0, 1, 0, 3, 3, 5]
    related = np.eye(n, dtype=bool)  # H[i, j] != 0 only when one of i, j is the other's ancestor
    for i in range(n):
        j = parent[i]
        while j >= 0:
            related[i, j] = related[j, i] = True
            j = parent[j]
    A = rng.normal(size=(n, n))
    H = np.where(related, A @ A.T + n * np.eye(n), 0.0)
    H = H + n * np.eye(n)
    assert np.all(np.linalg.eigvalsh(H) > 0)
    f = rng.normal(size=n)
    fac = LTDL(_Floats, [[float(x) if x != 0 else 0 for x in row] for row in H])
    assert_close(fac.solve(list(f)), np.linalg.solve(H, f), 1e-12, "L^T D L solve")
    L = np.array([[fac.L[i][j] if j < i else 0.0 for j in range(n)] for i in range(n)], dtype=float)
    assert np.all(L[~related] == 0)  # no fill-in outside the ancestor pattern


class _FloatTree:
    """A tree with numeric joint placements, standing in for TreeKinematics: parent indices, R_pc[i] (body i's axes
    to its parent's) and r_pc[i] (body i's origin in parent axes), a float builder and the same force transform."""

    force_to_parent = TreeKinematics.force_to_parent

    def __init__(self, rng, parent):
        self.parent, self.n_bodies, self.b = list(parent), len(parent), _Floats
        self.R_pc = [random_rotation(rng) for _ in parent]
        self.r_pc = [list(rng.normal(0, 0.5, 3)) for _ in parent]


def test_composite_pass_on_floats_equals_the_direct_sum():
    rng = np.random.default_rng(8)
    tree = _FloatTree(rng, [-1, 0, 1, 0, 3, 3, 5, 2])
    own = []
    for _ in range(tree.n_bodies):
        m, c, J = float(rng.uniform(0.5, 3.0)), rng.normal(0, 0.2, 3), random_inertia(rng)
        own.append((m, c, J))
    inertias = [SpatialInertia(m, list(m * c), J + m * (c @ c * np.eye(3) - np.outer(c, c))) for m, c, J in own]
    forces = [list(rng.normal(size=6)) for _ in range(tree.n_bodies)]
    gathered = composite_pass(tree, tree, inertias, forces)
    R0, r0 = [None] * tree.n_bodies, [None] * tree.n_bodies  # body poses in the root's parent frame
    for i, p in enumerate(tree.parent):
        R, r = np.array(tree.R_pc[i]), np.array(tree.r_pc[i])
        R0[i], r0[i] = (R, r) if p < 0 else (R0[p] @ R, r0[p] + R0[p] @ r)
    for i, sub in enumerate(_subtrees(tree)):
        m_i, h_i, I_i, F_i = 0.0, np.zeros(3), np.zeros((3, 3)), np.zeros(6)
        for k in sub:
            mk, ck, Jk = own[k]
            Rik, dk = R0[i].T @ R0[k], R0[i].T @ (r0[k] - r0[i])  # body k in body i's axes
            p = dk + Rik @ ck
            m_i += mk
            h_i += mk * p
            I_i += Rik @ Jk @ Rik.T + mk * (p @ p * np.eye(3) - np.outer(p, p))
            f = Rik @ np.array(forces[k][3:])
            F_i += np.concatenate([Rik @ np.array(forces[k][:3]) + np.cross(dk, f), f])
        Ic = gathered.inertias[i]
        assert_close([float(Ic.m)], [m_i], 1e-14, f"mass {i}")
        assert_close(np.array(Ic.h, dtype=float), h_i, 1e-13, f"first moment {i}")
        assert_close(np.array(Ic.Ibar.tolist(), dtype=float), I_i, 1e-13, f"rotational inertia {i}")
        assert_close(np.array(gathered.forces[i], dtype=float), F_i, 1e-13, f"subtree force {i}")
