"""The state-dependent terms of the absolute-coordinate equations (:mod:`.cartesian`) traced once into a
straight-line :class:`kane.codegen.Program` and compiled by the numpy backend, so that one evaluation is one call
of generated code instead of a Python loop over joints and bodies with small numpy arrays.

Given the Cartesian state (positions, quaternions, body twists), the joints' fitted coordinates q_J, their pose
errors err (6 per joint with rows) and, for joints whose motion subspace varies, an orthonormal basis T of its
complement, the program returns, for every joint and loop closure, the rows G, the bias gamma (before Baumgarte),
C' and C, the fitted joint speeds u_J, and the body forces F (gyroscopic, gravity, applied forces and torques,
springs, joint actuation) in body axes at the origins; and, for the methods besides udot, each joint's T placed at
its rows, actuation wrench, blocks of v_rel = J nu, acceleration bias kappa, S and S^+, and the potential energy.
This is the only implementation of the formulas of the :mod:`.cartesian` docstring, written over sympy scalars with
every intermediate named by a :class:`~kane.algorithms.recursive.TraceBuilder`.
"""

from __future__ import annotations

import sympy as sp

from ..codegen.numpy_backend import compile_program
from ..model.model import KaneSymbol, stretch, stretch_rate
from ..codegen.trace import TraceBuilder
from ..mechanics.kinematics import crf, crm, cross, matTvec, matvec

__all__ = ["compile_terms", "trace_fit", "trace_terms"]

OUTPUTS = ("G", "gamma", "Cdot", "C", "F", "u_joint")  # what udot needs
ALL_OUTPUTS = OUTPUTS + ("T", "act", "J", "kappa", "S", "P", "V")  # and the other public methods


class _Tracer:
    def __init__(self, b):
        self.b = b

    def vec(self, v):
        return [self.b.assign(x) for x in v]

    def mat(self, M):
        return sp.Matrix(M).applyfunc(self.b.assign)

    # motion transform X(R, p) = [[E, 0], [-E p x, E]], E = R^T, applied to a motion vector and transposed to a force
    def X(self, R, p, m):
        w, v = m[:3], m[3:]
        return self.vec(matTvec(R, w) + matTvec(R, [v[k] - c for k, c in enumerate(cross(p, w))]))

    def XT(self, R, p, f):
        n, fo = f[:3], f[3:]
        Rf = self.vec(matvec(R, fo))
        return self.vec([a + c for a, c in zip(matvec(R, n), cross(p, Rf))] + Rf)

    def crm(self, v, m):  # v x m
        return self.vec(crm(v, m))

    def crf(self, v, f):  # v x* f
        return self.vec(crf(v, f))

    def matrix(self, fn):
        """The 6 x 6 matrix of the linear map ``fn`` on motion vectors, column by column."""
        cols = [fn([sp.S.One if r == c else sp.S.Zero for r in range(6)]) for c in range(6)]
        return [[cols[c][r] for c in range(6)] for r in range(6)]

    def pinv(self, S):
        """S^+ = (S^T S)^-1 S^T (n x 6) for S (6, n) of full column rank."""
        if not S.free_symbols:
            return (S.T * S).inv() * S.T
        Sm = self.mat(S)
        A = self.mat(Sm.T * Sm)
        return Sm.T / A[0, 0] if S.shape[1] == 1 else A.LUsolve(Sm.T)

    def pinv_apply(self, S, rhs):
        """S^+ rhs = (S^T S)^-1 S^T rhs for S (6, n) of full column rank."""
        n = S.shape[1]
        if not n:
            return []
        Stb = self.vec([sum((S[r, k] * rhs[r] for r in range(6)), sp.S.Zero) for k in range(n)])
        if not S.free_symbols:
            A = (S.T * S).inv()
            return self.vec(list(A * sp.Matrix(Stb)))
        A = self.mat(S.T * S)
        if n == 1:
            return [self.b.assign(Stb[0] / A[0, 0])]
        return self.vec(list(A.LUsolve(sp.Matrix(Stb))))


def _poses(tr, cq, nb):
    """Every body's rotation (normalized quaternion) and position, from the Cartesian q symbols."""
    R, p = [], []
    for i in range(nb):
        w, x, y, z = cq[7 * i + 3:7 * i + 7]
        s = tr.b.assign(2 / (w * w + x * x + y * y + z * z))
        R.append(tr.mat([[1 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y)],
                         [s * (x * y + w * z), 1 - s * (x * x + z * z), s * (y * z - w * x)],
                         [s * (x * z - w * y), s * (y * z + w * x), 1 - s * (x * x + y * y)]]))
        p.append(list(cq[7 * i:7 * i + 3]))
    return R, p


def _relative(tr, R, p, pj, par, j):
    """(R_parent_F, r_parent_F, R_child_M, r_child_M, R_FM, p_FM) of joint j from the bodies' poses."""
    RpF, rpF, RcM, rcM = (sp.Matrix(m) for m in (pj.R_parent_F, pj.r_parent_F, pj.R_child_M, pj.r_child_M))
    if par < 0:
        R0F, oF = RpF, list(rpF)
    else:
        R0F, oF = tr.mat(R[par] * RpF), tr.vec([p[par][k] + c for k, c in enumerate(matvec(R[par], rpF))])
    R_FM = tr.mat(R0F.T * tr.mat(R[j] * RcM))
    p_FM = tr.vec(matTvec(R0F, [p[j][k] + c - oF[k] for k, c in enumerate(matvec(R[j], rcM))]))
    return RpF, rpF, RcM, rcM, R_FM, p_FM


def trace_terms(cd):
    """(program, groups) for a :class:`~kane.algorithms.cartesian.CartesianDynamics` ``cd``: the q group holds the
    Cartesian q (7 Nb), the joint coordinates (n_q), the pose errors and the varying complements (in
    ``cd._terms_layout`` order), the u group the body twists (6 Nb)."""
    model, nb = cd.model, cd.n_bodies
    cq = sp.symbols(f"_cq0:{7 * nb}", cls=KaneSymbol)
    cu = sp.symbols(f"_cu0:{6 * nb}", cls=KaneSymbol)
    err_syms, T_syms, extra = {}, {}, []
    for j, jd in enumerate(cd.joints):
        k = 6 - jd.nu
        if k:
            err_syms[j] = sp.symbols(f"_err{j}_0:6", cls=KaneSymbol)
            extra += err_syms[j]
            if jd.T_const is None:
                T_syms[j] = sp.Matrix(6, k, sp.symbols(f"_T{j}_0:{6 * k}", cls=KaneSymbol))
                extra += list(T_syms[j])
    groups = {"t": (model.t,), "q": tuple(cq) + tuple(model.q) + tuple(extra), "u": tuple(cu),
              "params": tuple(model.parameters), "inputs": tuple(model.inputs)}
    b = TraceBuilder(groups)
    tr = _Tracer(b)
    R, p = _poses(tr, cq, nb)
    nu = [list(cu[6 * i:6 * i + 6]) for i in range(nb)]
    G = sp.zeros(cd.n_constraints, 6 * nb)
    gam, Cd, C = [sp.S.Zero] * cd.n_constraints, [sp.S.Zero] * cd.n_constraints, [sp.S.Zero] * cd.n_constraints
    uJ = [sp.S.Zero] * model.n_u
    Tb, Jr, P = sp.zeros(6 * nb, cd.n_constraints), sp.zeros(6 * nb, 6 * nb), sp.zeros(model.n_u, 6 * nb)
    S_out = sp.zeros(6 * nb, model.n_u)
    kappa = [sp.S.Zero] * (6 * nb)
    info, row = [], 0
    for j, jd in enumerate(cd.joints):
        pj, par = jd.pj, model.parent[j]
        RpF, rpF, RcM, rcM, R_FM, p_FM = _relative(tr, R, p, pj, par, j)
        qs, us, jk, bias = jd.sym[:4]
        S = jk.S_M
        vF = tr.X(RpF, rpF, nu[par]) if par >= 0 else [sp.S.Zero] * 6
        XvF = tr.X(R_FM, p_FM, vF)
        vM = tr.X(RcM, rcM, nu[j])
        v_rel = tr.vec([a - c for a, c in zip(vM, XvF)])
        sig = list(jk.sigma_M)
        uj = tr.pinv_apply(S, [a - c for a, c in zip(v_rel, sig)])
        for k, ui in enumerate(uj):
            uJ[pj.u_slice.start + k] = ui
        info.append((pj, par, RpF, rpF, RcM, rcM, R_FM, p_FM, S, jk.W, dict(zip(us, uj))))
        bj = tr.vec(list(sp.Matrix(bias).xreplace(dict(zip(us, uj)))))
        cv = tr.crm(v_rel, XvF)
        kappa[6 * j:6 * j + 6] = [a - c for a, c in zip(bj, cv)]  # S' u + sigma' + XvF x v_rel
        # v_rel = X_Mc nu_j - X_MF X_Fp nu_parent: the blocks of J (v_rel = J nu)
        Jr[6 * j:6 * j + 6, 6 * j:6 * j + 6] = sp.Matrix(tr.matrix(lambda m: tr.X(RcM, rcM, m)))
        if par >= 0:
            Jr[6 * j:6 * j + 6, 6 * par:6 * par + 6] = -sp.Matrix(
                tr.matrix(lambda m: tr.X(R_FM, p_FM, tr.X(RpF, rpF, m))))
        if jd.nu:
            P[pj.u_slice, 6 * j:6 * j + 6] = tr.pinv(S).applyfunc(b.assign)
            S_out[6 * j:6 * j + 6, pj.u_slice] = S.applyfunc(b.assign)
        k = 6 - jd.nu
        if not k:
            continue
        Tm = sp.Matrix(jd.T_const) if jd.T_const is not None else T_syms[j]
        Tb[6 * j:6 * j + 6, row:row + k] = Tm
        for r in range(k):
            t_col = list(Tm[:, r])
            gc = tr.XT(RcM, rcM, t_col)
            gp = tr.XT(RpF, rpF, tr.XT(R_FM, p_FM, t_col)) if par >= 0 else None
            for c in range(6):
                G[row, 6 * j + c] = gc[c]
                if gp is not None:
                    G[row, 6 * par + c] = -gp[c]
            gam[row] = b.assign(sum((t_col[i] * (bj[i] - cv[i]) for i in range(6)), sp.S.Zero))
            Cd[row] = b.assign(sum((t_col[i] * v_rel[i] for i in range(6)), sp.S.Zero))
            C[row] = b.assign(sum((t_col[i] * err_syms[j][i] for i in range(6)), sp.S.Zero))
            row += 1
    for _, sides, frames, D in cd.loops:
        n = len(D)
        for body, r, sign in sides:
            Dm = sp.Matrix(D.tolist()) * sign
            if body < 0:
                for a in range(n):
                    C[row + a] += float(sign * D[a] @ r)
                continue
            w = nu[body][:3]
            rr = [sp.Float(x) for x in r]
            vP = tr.vec([a + c for a, c in zip(nu[body][3:], cross(w, rr))])
            pos = [p[body][k] + c for k, c in enumerate(matvec(R[body], rr))]
            vel = matvec(R[body], vP)
            acc = matvec(R[body], cross(w, vP))
            # G block: D R [-r x, 1]: on omega, D R (-r x) w = D R (w x r)
            for a in range(n):
                d = list(Dm[a, :])
                C[row + a] = b.assign(C[row + a] + sum((d[k] * pos[k] for k in range(3)), sp.S.Zero))
                Cd[row + a] = b.assign(Cd[row + a] + sum((d[k] * vel[k] for k in range(3)), sp.S.Zero))
                gam[row + a] = b.assign(gam[row + a] - sum((d[k] * acc[k] for k in range(3)), sp.S.Zero))
                dR = matTvec(R[body], d)  # (D R) row
                rx = cross(rr, dR)  # row of D R (-r x): (dR)(-r x) w = dR . (w x r) = w . (r x dR)
                for c in range(3):
                    G[row + a, 6 * body + c] = b.assign(G[row + a, 6 * body + c] + rx[c])
                    G[row + a, 6 * body + 3 + c] = b.assign(G[row + a, 6 * body + 3 + c] + dR[c])
            if frames:
                for a in range(3):
                    for c in range(3):
                        G[row + n + a, 6 * body + c] = b.assign(G[row + n + a, 6 * body + c] + sign * R[body][a, c])
                    Cd[row + n + a] = b.assign(Cd[row + n + a] + sign * matvec(R[body], w)[a])
        row += n + (3 if frames else 0)
    F, act, V = _forces(cd, b, tr, R, p, nu, info, uJ)
    prog = b.build({"G": G, "gamma": list(gam), "Cdot": list(Cd), "C": list(C), "F": F, "u_joint": list(uJ),
                    "T": Tb, "act": act, "J": Jr, "kappa": kappa, "S": S_out, "P": P, "V": [V]})
    return prog, groups


def _forces(cd, b, tr, R, p, nu, info, uJ):
    model = cd.model
    usub = dict(zip(model.u, uJ))
    ex = lambda e: sp.sympify(e).xreplace(usub)
    F = []
    for i, body in enumerate(model.bodies):
        m, com, Ic = sp.sympify(body.mass), list(body.com), sp.Matrix(body.inertia)
        Cm = sp.Matrix([[0, -com[2], com[1]], [com[2], 0, -com[0]], [-com[1], com[0], 0]])
        Ibar = tr.mat(Ic + m * Cm * Cm.T)
        h = tr.vec([m * c for c in com])
        w, v = nu[i][:3], nu[i][3:]
        Inu = tr.vec([a + c for a, c in zip(matvec(Ibar, w), cross(h, v))] + [m * v[k] - c for k, c in
                                                                             enumerate(cross(h, w))])
        F.append([-x for x in tr.crf(nu[i], Inu)])

    def add(body, point, vec, frame):
        if body < 0:
            return
        vec = [ex(x) for x in vec]
        f = tr.vec(matTvec(R[body], vec if frame < 0 else matvec(R[frame], vec)))
        mo = cross([ex(x) for x in point], f) if point is not None else [0, 0, 0]
        F[body] = [a + c for a, c in zip(F[body], list(mo) + f)]

    g = list(model.gravity)
    for i, body in enumerate(model.bodies):
        add(i, list(body.com), [sp.sympify(body.mass) * x for x in g], -1)
    for f in model.forces:
        add(f.body, list(f.point) if f.point is not None else None, list(f.vector), f.frame)
    for tq in model.torques:
        if tq.body >= 0:
            vec = [ex(x) for x in tq.vector]
            mo = tr.vec(matTvec(R[tq.body], vec if tq.frame < 0 else matvec(R[tq.frame], vec)))
            F[tq.body] = [a + c for a, c in zip(F[tq.body], mo + [0, 0, 0])]
    V, st = sp.S.Zero, sp.S.Zero  # the potential energy, where every spring and joint load has one
    if cd._has_potential:
        V = -sum((sp.sympify(body.mass) * sum((ex(g[k]) * c for k, c in enumerate(
            [p[i][a] + x for a, x in enumerate(matvec(R[i], list(body.com)))])), sp.S.Zero)
            for i, body in enumerate(model.bodies)), sp.S.Zero)
    for s in model.springs:
        ends = []
        for body, pt in ((s.body_a, s.point_a), (s.body_b, s.point_b)):
            pt = [ex(x) for x in pt]
            if body < 0:
                ends.append((body, pt, pt, [0, 0, 0]))
            else:
                pos = tr.vec([p[body][k] + c for k, c in enumerate(matvec(R[body], pt))])
                vel = tr.vec(matvec(R[body], [nu[body][3 + k] + c for k, c in enumerate(cross(nu[body][:3], pt))]))
                ends.append((body, pt, pos, vel))
        d = tr.vec([a - c for a, c in zip(ends[1][2], ends[0][2])])
        length = b.assign(sp.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2))
        inv = b.assign(1 / length)
        e = tr.vec([x * inv for x in d])
        st = b.assign(length - ex(s.rest_length))
        rate = b.assign(sum((d[k] * (ends[1][3][k] - ends[0][3][k]) for k in range(3)), sp.S.Zero) * inv)
        tension = b.assign(ex(s.tension).xreplace({stretch: st, stretch_rate: rate}))
        if cd._has_potential:
            V += ex(s.potential).xreplace({stretch: st, stretch_rate: 0})
        for (body, point, _, _), sign in zip(ends, (1, -1)):
            add(body, point, [sign * tension * x for x in e], -1)
    act = {}
    for ld in model.joint_loads:
        pj, par, RpF, rpF, RcM, rcM, R_FM, p_FM, S, W, _ = info[ld.joint]
        Q = [ex(x) for x in ld.Q]
        WtQ = [sum((W[r, k] * Q[r] for r in range(W.shape[0])), sp.S.Zero) for k in range(W.shape[1])]
        if not S.shape[1]:
            continue
        if not S.free_symbols:
            y = list((S.T * S).inv() * sp.Matrix(WtQ))
        else:
            A = tr.mat(S.T * S)
            y = list(A.LUsolve(sp.Matrix(tr.vec(WtQ))))
        a = tr.vec([sum((S[r, k] * y[k] for k in range(S.shape[1])), sp.S.Zero) for r in range(6)])
        act[ld.joint] = [x + c for x, c in zip(act.get(ld.joint, [0] * 6), a)]
    if cd._has_potential:
        V += sum((ex(ld.potential).xreplace({stretch: st, stretch_rate: 0}) for ld in model.joint_loads), sp.S.Zero)
    act_out = [sp.S.Zero] * (6 * len(F))
    for j, a in act.items():
        pj, par, RpF, rpF, RcM, rcM, R_FM, p_FM, *_ = info[j]
        a = act_out[6 * j:6 * j + 6] = tr.vec(a)
        fc = tr.XT(RcM, rcM, a)
        F[j] = [x + c for x, c in zip(F[j], fc)]
        if par >= 0:
            fp = tr.XT(RpF, rpF, tr.XT(R_FM, p_FM, a))
            F[par] = [x - c for x, c in zip(F[par], fp)]
    return [b.assign(x) for f in F for x in f], act_out, b.assign(V)


def compile_terms(cd, program=None, full=False):
    """The compiled terms of ``cd``: ``fn(t, q_ext, u, params, inputs) -> (G, gamma (without Baumgarte), Cdot, C,
    F (6 Nb,), u_joint)`` with q_ext = (Cartesian q, joint coordinates, then per joint with rows its pose error
    and, where S varies, its complement T row-major). ``full``: also T (6 Nb, m) the joints' complements placed at
    their rows, act (6 Nb,) the joints' actuation wrenches in M axes, J (6 Nb, 6 Nb) the map v_rel = J nu, kappa
    (6 Nb,) the joints' S' u + sigma' + (X_MF v_F) x v_rel (so that J nu' = S u'_J + kappa), S (6 Nb, n_u) and P
    (n_u, 6 Nb) the blocks S and S^+, and V (1,) the potential energy (zero where one is unknown)."""
    return compile_program(trace_terms(cd)[0] if program is None else program, ALL_OUTPUTS if full else OUTPUTS)


def trace_fit(cd, fast):
    """The Gauss-Newton pieces of the joints ``fast`` (indices, joints without quaternion coordinates) traced into
    one Program: q group = the joint coordinates (n_q) then the Cartesian q (7 Nb); outputs E (12 per fast joint:
    R(q_J)^T R_FM and R(q_J)^T (p_FM - p(q_J))), P (n_u, 6 Nb) the blocks S^+, W (n_q, n_u) the blocks W and
    S (6 Nb, n_u) the blocks S, all at q_J."""
    model, nb = cd.model, cd.n_bodies
    cq = sp.symbols(f"_cq0:{7 * nb}", cls=KaneSymbol)
    groups = {"t": (model.t,), "q": tuple(model.q) + tuple(cq), "params": tuple(model.parameters)}
    b = TraceBuilder(groups)
    tr = _Tracer(b)
    Rb, pb = _poses(tr, cq, nb)
    E = []
    P, W, S_out = sp.zeros(model.n_u, 6 * nb), sp.zeros(model.n_q, model.n_u), sp.zeros(6 * nb, model.n_u)
    for j in fast:
        jd = cd.joints[j]
        pj = jd.pj
        qs, us, jk, bias, Rq, pq = jd.sym
        Rq, pq = tr.mat(Rq), tr.vec(list(pq))
        RFM, pFM = _relative(tr, Rb, pb, pj, model.parent[j], j)[4:]
        E += list(tr.mat(Rq.T * RFM)) + tr.vec(matTvec(Rq, [pFM[k] - pq[k] for k in range(3)]))
        S, nu = jk.S_M, jd.nu
        if not nu:
            continue
        if not S.free_symbols:
            Sp = (S.T * S).inv() * S.T
        else:
            Sm = tr.mat(S)
            A = tr.mat(Sm.T * Sm)
            Sp = Sm.T / A[0, 0] if nu == 1 else A.LUsolve(Sm.T)
        u0, q0 = pj.u_slice.start, pj.q_slice.start
        for r in range(nu):
            for c in range(6):
                P[u0 + r, 6 * j + c] = b.assign(Sp[r, c])
                S_out[6 * j + c, u0 + r] = b.assign(S[c, r])
        for r in range(jd.nq):
            for c in range(nu):
                W[q0 + r, u0 + c] = b.assign(jk.W[r, c])
    prog = b.build({"E": E, "P": P, "W": W, "S": S_out})
    return compile_program(prog, ("E", "P", "W", "S"))
