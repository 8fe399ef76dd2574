"""kane against independent references: sympy.physics.mechanics' KanesMethod and hand-written Newton-Euler.

Every test builds one model twice, once with kane and once with the reference, and compares the mass matrix
M(q) and the accelerations u' numerically at seeded random states (and random parameters) to 1e-10 relative.
sympy.physics.mechanics is a test-only reference; nothing here calls kane to produce an expected value.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
import sympy as sp
import sympy.physics.mechanics as me

import kane
from kane import joints as J

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from models import pendulum_chain_kane, pendulum_chain_sympy  # noqa: E402

RTOL = 1e-10
TIME = me.dynamicsymbols._t


# ---- helpers ----------------------------------------------------------------------------------------------
def assert_close(actual, expected, rtol=RTOL, what=""):
    """Relative agreement scaled by the largest entry of the reference (entries may pass through zero)."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shapes {actual.shape} != {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= rtol * scale, f"{what}: max abs error {err:.3e} > {rtol:g} * {scale:.3e}"


def sympy_numeric(km, q, u, params=()):
    """Numeric (t, q, u, params) -> (M, forcing) from a KanesMethod whose kinematic equations are q' = u.

    KanesMethod's M and forcing hold q(t), u(t) and t only (q' is already replaced by u); plain xreplace
    of those by symbols is far faster than msubs on large expressions."""
    qs = sp.symbols(f"qq0:{len(q)}")
    us = sp.symbols(f"uu0:{len(u)}")
    ts = sp.Symbol("tt")
    rep = dict(zip(q, qs))
    rep.update(dict(zip(u, us)))
    M = km.mass_matrix.xreplace(rep).xreplace({TIME: ts})
    F = km.forcing.xreplace(rep).xreplace({TIME: ts})
    assert not (M.has(sp.Derivative) or F.has(sp.Derivative)), "sympy reference still holds derivatives"
    leftover = (M.free_symbols | F.free_symbols) - set(qs) - set(us) - set(params) - {ts}
    assert not leftover, f"sympy reference has unexpected symbols {leftover}"
    args = (ts, qs, us, tuple(params))
    return sp.lambdify(args, M, "numpy", cse=True), sp.lambdify(args, F, "numpy", cse=True)


def random_states(rng, n_q, n_u, count, q_scale=np.pi, u_scale=1.5):
    return [(float(rng.uniform(0, 2)), rng.uniform(-q_scale, q_scale, n_q), rng.normal(0, u_scale, n_u))
            for _ in range(count)]


# ---- (a) the n-link 3D pendulum of bench/models.py --------------------------------------------------------
@pytest.mark.parametrize("n", [3, 4])
def test_pendulum_chain_matches_sympy(n):
    s = pendulum_chain_kane(n)
    dyn = kane.derive(s).compile()
    km, q, u = pendulum_chain_sympy(n)
    assert dyn.q_names == tuple(f"q{i + 1}" for i in range(n))
    assert dyn.u_names == tuple(f"u{i + 1}" for i in range(n))

    names = list(dyn.parameter_names)
    symbols = [sp.Symbol(nm) for nm in names]
    M_ref, F_ref = sympy_numeric(km, q, u, symbols)
    rng = np.random.default_rng(100 + n)
    defaults = dict(zip(names, dyn.model.parameter_defaults))
    for k, (t, qv, uv) in enumerate(random_states(rng, n, n, 5)):
        if k == 0:
            params = defaults
        else:  # random physical parameters: principal moments from (b+c, a+c, a+b), small products
            params = {"g": rng.uniform(5, 15), "L": rng.uniform(0.5, 2.0)}
            for i in range(n):
                a, b, c = rng.uniform(0.05, 0.4, 3)
                params.update({f"m{i}": rng.uniform(0.5, 3.0), f"I{i}xx": b + c, f"I{i}yy": a + c,
                               f"I{i}zz": a + b})
                params.update({f"I{i}{p}": rng.uniform(-0.02, 0.02) for p in ("xy", "yz", "zx")})
        pv = [params[nm] for nm in names]
        M_s = np.array(M_ref(t, qv, uv, pv), dtype=float)
        f_s = np.array(F_ref(t, qv, uv, pv), dtype=float).ravel()
        assert_close(dyn.mass_matrix(t, qv, params=params), M_s, what=f"M, state {k}")
        assert_close(dyn.forcing(t, qv, uv, params=params), f_s, what=f"f, state {k}")
        assert_close(dyn.udot(t, qv, uv, params=params), np.linalg.solve(M_s, f_s), what=f"u', state {k}")
        assert_close(dyn.qdot(t, qv, uv, params=params), uv, what=f"q', state {k}")


# ---- (b) a branched tree with offsets, rotated placements and every kind of load --------------------------
def _rational_rotation(a, b, c, d):
    """An exact rotation matrix from the (unnormalized) quaternion (a, b, c, d): rational entries."""
    n = sp.Integer(a * a + b * b + c * c + d * d)
    return sp.Matrix([
        [a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)],
        [2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b)],
        [2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d],
    ]) / n


R = sp.Rational
AX_A = (R(1, 3), R(2, 3), R(2, 3))  # unit axes with rational components
AX_B = (R(2, 3), R(-1, 3), R(2, 3))
GRAVITY = (R(1, 2), R(-3, 10), R(-981, 100))

# name: (mass, com, central inertia (Ixx, Iyy, Izz, Ixy, Iyz, Izx)) -- all positive definite, triangle-valid
TREE_BODIES = {
    "A": (R(3, 2), (R(1, 10), R(-1, 5), R(-3, 10)), (R(3, 10), R(1, 4), R(1, 5), R(1, 50), R(-1, 40), R(1, 30))),
    "B": (R(4, 5), (R(-1, 20), R(1, 10), R(1, 5)), (R(1, 10), R(3, 20), R(1, 8), R(-1, 100), R(1, 80), R(1, 60))),
    "C": (R(6, 5), (R(1, 5), R(1, 20), R(-1, 4)), (R(1, 5), R(9, 40), R(3, 20), R(1, 70), R(1, 90), R(-1, 50))),
    "D": (R(7, 10), (R(0), R(-1, 10), R(-2, 5)), (R(3, 25), R(1, 10), R(2, 25), R(-1, 120), R(1, 150), R(1, 200))),
    "E": (R(1, 2), (R(1, 8), R(0), R(1, 10)), (R(1, 20), R(3, 50), R(1, 25), R(1, 300), R(-1, 250), R(1, 400))),
}

def _axis_rotation(axis, c, s):
    """A rotation about a coordinate axis with cosine c and sine s (rational: sparse and exact)."""
    M = sp.eye(3)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    M[i, i], M[j, j], M[i, j], M[j, i] = c, c, -s, s
    return M


# child: (parent, kind, axis, parent_point, parent_rotation, child_point, child_rotation, q names).
# Generic rotations and the skew revolute axis sit near the leaves: there they cost sympy least.
TREE_JOINTS = {
    "A": ("ground", "revolute", "z", (R(1, 10), R(-1, 5), R(3, 10)), _axis_rotation("x", R(3, 5), R(4, 5)),
          (R(1, 20), R(1, 10), R(-1, 5)), None, ["qa"]),
    "B": ("A", "prismatic", AX_B, (R(2, 5), R(1, 10), R(-3, 10)), _axis_rotation("y", R(5, 13), R(12, 13)),
          (R(-1, 10), R(0), R(1, 5)), None, ["qb"]),
    "C": ("A", "gimbal213", None, (R(-3, 10), R(1, 5), R(-1, 2)), None,
          (R(0), R(1, 10), R(3, 20)), _axis_rotation("z", R(-4, 5), R(3, 5)), ["qc1", "qc2", "qc3"]),
    "D": ("C", "revolute", "y", (R(1, 5), R(0), R(-3, 5)), _rational_rotation(1, 2, 3, 4),
          (R(0), R(0), R(1, 4)), None, ["qd"]),
    "E": ("B", "revolute", AX_A, (R(1, 10), R(-1, 10), R(1, 5)), None,
          (R(-1, 10), R(1, 20), R(0)), _rational_rotation(2, -1, 1, 3), ["qe"]),
}

FORCE_D = dict(body="D", point=(R(1, 10), R(-1, 20), R(3, 10)))  # components in ground axes, time dependent
TORQUE_C = (R(3, 10), R(-1, 5), R(1, 10))  # on C, components in C's own axes
TORQUE_E_IN_A = (R(-1, 10), R(1, 4), R(1, 5))  # on E, components in A's axes
SPRING = dict(body_a="B", point_a=(R(1, 10), R(1, 5), R(0)), body_b="C", point_b=(R(0), R(1, 10), R(-1, 10)),
              stiffness=R(20), rest_length=R(3, 10), damping=R(1, 2))  # between two branches of A
SPRING_FRAME = "A"  # the common parent, where the sympy reference resolves the spring's direction
JOINT_SPRINGS = {"D": (R(3), R(1, 5), R(2, 5)), "B": (R(10), R(1, 20), R(3, 10))}  # joint: (k, rest, c)


def _force_D(t):
    return (R(3, 2), R(-7, 10), 2 * sp.sin(t))


def tree_kane(forces=True, springs=True, joint_springs=True):
    s = kane.System("tree", gravity=GRAVITY)
    for name, (m, com, inertia) in TREE_BODIES.items():
        s.add_body(name, mass=m, com=com, inertia=inertia)
    for child, (parent, kind, axis, pp, pr, cp, cr, qn) in TREE_JOINTS.items():
        joint = {"revolute": lambda: J.Revolute(axis), "prismatic": lambda: J.Prismatic(axis),
                 "gimbal213": lambda: J.Gimbal("213", n_free=3, speeds=J.Speeds.RATES)}[kind]()
        s.add_joint(parent, child, joint, name=child, parent_point=pp, parent_rotation=pr, child_point=cp,
                    child_rotation=cr, coordinates=qn, speeds=["u" + x[1:] for x in qn])
    if forces:
        s.add_force(FORCE_D["body"], _force_D(kane.t), point=FORCE_D["point"], frame="ground")
        s.add_torque("C", TORQUE_C, frame="C")
        s.add_torque("E", TORQUE_E_IN_A, frame="A")
    if springs:
        s.add_spring(**SPRING)
    if joint_springs:
        for joint, (k, rest, c) in JOINT_SPRINGS.items():
            s.add_joint_spring(joint, k, rest, c)
    return s


def _vec(frame, comps):
    return sum((c * e for c, e in zip(comps, (frame.x, frame.y, frame.z))), me.Vector(0))


def tree_sympy():
    """The same tree with sympy.physics.mechanics, written from the definitions (frames, points, loads).

    Angular velocities are stated in the speeds (u = q') and point velocities come from the two-point
    theorems, which keeps sympy's expressions small enough to derive in seconds."""
    N = me.ReferenceFrame("N")
    origin = me.Point("O")
    origin.set_vel(N, 0)
    frames, origins = {"ground": N}, {"ground": origin}
    q_all, u_all, kd = [], [], []
    joint_data = {}
    for child, (parent, kind, axis, pp, pr, cp, cr, qn) in TREE_JOINTS.items():
        P = frames[parent]
        q = [me.dynamicsymbols(n) for n in qn]
        u = [me.dynamicsymbols("u" + n[1:]) for n in qn]
        q_all += q
        u_all += u
        kd += [qi.diff(TIME) - ui for qi, ui in zip(q, u)]
        F = me.ReferenceFrame(f"F_{child}")  # joint frame fixed in the parent: parent.dcm(F) = R_parent_F
        F.orient_explicit(P, sp.eye(3) if pr is None else pr)
        F.set_ang_vel(P, 0)
        jp = origins[parent].locatenew(f"J_{child}", _vec(P, pp))
        jp.v2pt_theory(origins[parent], N, P)
        if kind == "gimbal213":  # body-fixed 2, then 1, then 3
            F1 = F.orientnew(f"F1_{child}", "Axis", (q[0], F.y))
            F1.set_ang_vel(F, u[0] * F.y)
            F2 = F1.orientnew(f"F2_{child}", "Axis", (q[1], F1.x))
            F2.set_ang_vel(F1, u[1] * F1.x)
            Mf = F2.orientnew(f"M_{child}", "Axis", (q[2], F2.z))
            Mf.set_ang_vel(F2, u[2] * F2.z)
            mo = jp
        else:
            a_vec = _vec(F, axis) if not isinstance(axis, str) else {"x": F.x, "y": F.y, "z": F.z}[axis]
            if kind == "revolute":
                Mf = F.orientnew(f"M_{child}", "Axis", (q[0], a_vec))
                Mf.set_ang_vel(F, u[0] * a_vec)
                mo = jp
            else:
                Mf = F.orientnew(f"M_{child}", "Axis", (0, F.x))
                Mf.set_ang_vel(F, 0)
                mo = jp.locatenew(f"Mo_{child}", q[0] * a_vec)
                mo.set_vel(F, u[0] * a_vec)
                mo.v1pt_theory(jp, N, F)
            joint_data[child] = (kind, a_vec, jp, mo, parent)
        C = me.ReferenceFrame(child)  # child body axes: child.dcm(M) = R_child_M
        C.orient_explicit(Mf, (sp.eye(3) if cr is None else cr).T)
        C.set_ang_vel(Mf, 0)
        co = mo.locatenew(f"O_{child}", -_vec(C, cp))
        co.v2pt_theory(mo, N, C)
        frames[child], origins[child] = C, co
        if cr is not None:  # the placement convention, checked on the frames themselves
            assert sp.simplify(Mf.x.express(C).to_matrix(C) - cr[:, 0]) == sp.zeros(3, 1)

    def body_point(name, comps, label):
        p = origins[name].locatenew(label, _vec(frames[name], comps))
        p.v2pt_theory(origins[name], N, frames[name])
        return p

    bodies, loads = [], []
    g = _vec(N, GRAVITY)
    for name, (m, com, inertia) in TREE_BODIES.items():
        C = frames[name]
        cm = body_point(name, com, f"cm_{name}")
        ixx, iyy, izz, ixy, iyz, izx = inertia
        bodies.append(me.RigidBody(f"body_{name}", cm, C, m, (me.inertia(C, ixx, iyy, izz, ixy, iyz, izx), cm)))
        loads.append((cm, m * g))

    pf = body_point(FORCE_D["body"], FORCE_D["point"], "pf")
    loads.append((pf, _vec(N, _force_D(TIME))))
    loads.append((frames["C"], _vec(frames["C"], TORQUE_C)))
    loads.append((frames["E"], _vec(frames["A"], TORQUE_E_IN_A)))
    pa = body_point(SPRING["body_a"], SPRING["point_a"], "pa")
    pb = body_point(SPRING["body_b"], SPRING["point_b"], "pb")
    common = frames[SPRING_FRAME]
    d = pb.pos_from(pa).to_matrix(common)  # components in one frame keep the expressions short
    length = sp.sqrt(d.dot(d))
    e = d / length
    rate = (pb.vel(N) - pa.vel(N)).to_matrix(common).dot(e)
    tension = SPRING["stiffness"] * (length - SPRING["rest_length"]) + SPRING["damping"] * rate
    pull = _vec(common, tension * e)
    loads += [(pa, pull), (pb, -pull)]
    for joint, (k, rest, c) in JOINT_SPRINGS.items():
        kind, a_vec, jp, mo, parent = joint_data[joint]
        qj = me.dynamicsymbols(TREE_JOINTS[joint][7][0])
        uj = me.dynamicsymbols("u" + TREE_JOINTS[joint][7][0][1:])
        gen = -k * (qj - rest) - c * uj
        if kind == "revolute":  # a torque about the axis on the child, its reaction on the parent
            loads += [(frames[joint], gen * a_vec), (frames[parent], -gen * a_vec)]
        else:  # a force along the axis on the child's point M, its reaction on the parent's point J
            loads += [(mo, gen * a_vec), (jp, -gen * a_vec)]
    km = me.KanesMethod(N, q_ind=q_all, u_ind=u_all, kd_eqs=kd)
    km.kanes_equations(bodies, loads)
    return km, q_all, u_all


@pytest.fixture(scope="module")
def tree_pair():
    dyn = kane.derive(tree_kane()).compile()
    km, q, u = tree_sympy()
    return dyn, km, q, u


def test_branched_tree_matches_sympy(tree_pair):
    dyn, km, q, u = tree_pair
    # the same coordinates in the same order (kane orders bodies parent before child)
    names = [str(qi).replace("(t)", "") for qi in q]
    order = [names.index(nm) for nm in dyn.q_names]
    assert sorted(order) == list(range(len(q)))
    assert [nm.replace("q", "u", 1) for nm in dyn.q_names] == list(dyn.u_names)
    M_ref, F_ref = sympy_numeric(km, q, u)
    rng = np.random.default_rng(2024)
    for k, (t, qv, uv) in enumerate(random_states(rng, len(q), len(u), 6)):
        qv[names.index("qb")] = rng.uniform(-0.4, 0.4)  # prismatic: a length, not an angle
        qs, us = qv[order], uv[order]  # sympy's order -> kane's order
        M_s = np.array(M_ref(t, qv, uv, ()), dtype=float)[np.ix_(order, order)]
        f_s = np.array(F_ref(t, qv, uv, ()), dtype=float).ravel()[order]
        udot_s = np.linalg.solve(M_s, f_s)
        assert_close(dyn.mass_matrix(t, qs), M_s, what=f"M, state {k}")
        assert_close(dyn.udot(t, qs, us), udot_s, what=f"u', state {k}")
        assert_close(dyn.qdot(t, qs, us), us, what=f"q', state {k}")
        # not a vacuous match: the time-dependent force alone moves u' far beyond the tolerance
        f_later = np.array(F_ref(t + 0.5, qv, uv, ()), dtype=float).ravel()[order]
        assert np.max(np.abs(np.linalg.solve(M_s, f_later) - udot_s)) > 1e-2


# ---- (c) a free body with body-axis speeds: Newton-Euler by hand ------------------------------------------
def quat_to_R(e):
    w, x, y, z = e
    return np.array([
        [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
    ])


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


FREE_M = 2.3
FREE_COM = np.array([0.12, -0.07, 0.2])
FREE_I = np.array([[0.31, 0.02, -0.015], [0.02, 0.42, 0.03], [-0.015, 0.03, 0.27]])  # central, body axes
FREE_G = np.array([0.3, -0.2, -9.81])
FREE_FORCE = np.array([1.2, -0.4, 3.1])  # ground axes, at FREE_POINT (body axes)
FREE_POINT = np.array([0.3, 0.1, -0.25])
FREE_TORQUE = np.array([-0.2, 0.5, 0.15])  # ground axes


def free_body_kane(com):
    s = kane.System("free", gravity=tuple(FREE_G))
    Ivals = (FREE_I[0, 0], FREE_I[1, 1], FREE_I[2, 2], FREE_I[0, 1], FREE_I[1, 2], FREE_I[2, 0])
    s.add_body("b", mass=FREE_M, com=tuple(com), inertia=Ivals)
    s.add_joint("ground", "b", J.Free(), name="free", coordinates=["x", "y", "z", "qw", "qx", "qy", "qz"],
                speeds=["wx", "wy", "wz", "vx", "vy", "vz"])
    s.add_force("b", tuple(FREE_FORCE), point=tuple(FREE_POINT), frame="ground")
    s.add_torque("b", tuple(FREE_TORQUE), frame="ground")
    return kane.derive(s).compile()


def newton_euler(q, u, com):
    """Body-frame Newton-Euler about the body origin O (centre of mass at c, body axes):

    m (v' + w' x c + w x v + w x (w x c)) = F,   I_O w' + w x I_O w + m c x (v' + w x v) = M_O,
    with I_O = I_c + m (|c|^2 E - c c^T). Returns (w', v') and the mass matrix of (w, v)."""
    m, c = FREE_M, np.asarray(com, dtype=float)
    Rm = quat_to_R(q[3:7] / np.linalg.norm(q[3:7]))
    w, v = u[:3], u[3:]
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    I_O = FREE_I + m * (c @ c * np.eye(3) - np.outer(c, c))
    F_b = Rm.T @ (FREE_FORCE + m * FREE_G)
    M_O = np.cross(FREE_POINT, Rm.T @ FREE_FORCE) + Rm.T @ FREE_TORQUE + np.cross(c, Rm.T @ (m * FREE_G))
    A = np.block([[I_O, m * cx], [-m * cx, m * np.eye(3)]])  # unknowns (w', v')
    rhs = np.concatenate([M_O - np.cross(w, I_O @ w) - m * np.cross(c, np.cross(w, v)),
                          F_b - m * np.cross(w, v) - m * np.cross(w, np.cross(w, c))])
    return np.linalg.solve(A, rhs), A


@pytest.mark.parametrize("com", [np.zeros(3), FREE_COM], ids=["com_at_origin", "com_offset"])
def test_free_body_matches_newton_euler(com):
    dyn = free_body_kane(com)
    assert dyn.n_q == 7 and dyn.n_u == 6
    rng = np.random.default_rng(11)
    for k in range(6):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        q = np.concatenate([rng.normal(0, 2, 3), quat])
        u = np.concatenate([rng.normal(0, 3, 3), rng.normal(0, 2, 3)])
        t = float(rng.uniform(0, 3))
        ref, A = newton_euler(q, u, com)
        assert_close(dyn.mass_matrix(t, q), A, what=f"M, state {k}")
        assert_close(dyn.udot(t, q, u), ref, what=f"u', state {k}")
        # q' = (R v, 0.5 e * (0, w)): position rate in ground axes, quaternion rate from body rates
        Rm = quat_to_R(quat)
        qdot_ref = np.concatenate([Rm @ u[3:], 0.5 * quat_mul(quat, np.concatenate([[0.0], u[:3]]))])
        assert_close(dyn.qdot(t, q, u), qdot_ref, what=f"q', state {k}")
        # kinetic and potential energy from their definitions
        vc = u[3:] + np.cross(u[:3], com)
        ke = 0.5 * FREE_M * vc @ vc + 0.5 * u[:3] @ FREE_I @ u[:3]
        pe = -FREE_M * FREE_G @ (q[:3] + Rm @ com)
        assert_close(dyn.kinetic_energy(t, q, u), ke, what=f"kinetic energy, state {k}")
        assert_close(dyn.potential_energy(t, q), pe, what=f"potential energy, state {k}")
