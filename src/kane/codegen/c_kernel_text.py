"""C source of the generic recursive-dynamics kernel (:mod:`.c_kernel`): ABA, CRBA with its L^T D L solve, RNEA,
q' and the energies, looping over a model's arrays (Featherstone 2008, ch. 5-7; seed 001 §2.5, §3).

Layout of the arrays (filled by :mod:`kane.algorithms.kernel`), body i in parent-before-child order:

* ``ib[i * KK_NI + ...]`` (int): parent (-1 ground), joint kind (``KK_*``), q offset, u offset, nu, flags
  (bit 0: the joint frame M is the body frame, so nothing is carried from M; bit 1: F has the parent's axes);
* ``db[i * KK_ND + ...]`` (double): R_parent_F (9, row-major), r_parent_F (3), R_child_M (9), r_child_M (3),
  mass, h = m c (3), Ibar about the body origin (9), joint axis (3, unit), Euler digits (3, 0-2), number of free
  Euler axes, coordinate-axis code of the axis (k + 1 for +e_k, -(k + 1) for -e_k, 0 otherwise);
* ``lam[k]``: the parent of speed k in the expanded tree (-1 at a root), for the L^T D L of CRBA;
* ``work``: the caller's scratch (``KK_NW`` doubles per body + n_u^2 + 4 n_u); one per thread.

The joint contract of :mod:`kane.model.joints` is ``joint_calc`` (R_F_M, p_F_M, S_M, the relative twist S_M u
and its rate S_M' u in M axes) and ``joint_qdot`` (q' = W(q) u), in :mod:`.c_joints_text`: the only functions
that look at the joint kind. The passes here call them and are otherwise the same for every joint.
"""

from .c_joints_text import JOINTS_SOURCE, KINDS, KK_ND, KK_NI, KK_NW, OFFSETS

__all__ = ["SOURCE", "KK_NI", "KK_ND", "KK_NW", "KINDS", "OFFSETS", "ENTRIES"]

#: the ``what`` codes of ``kk_eval``
ENTRIES = dict(qdot=0, udot_aba=1, udot_crba=2, M=3, f=4, tau=5, energy=6)

SOURCE = JOINTS_SOURCE + r"""
/* ---- spatial algebra in body axes (kane.mechanics.kinematics conventions) ---- */
/* X_child_parent m: (R^T w, R^T (v + w x r)) */
static void motion_to_child(const double *R, const double *r, const double *m, double *o) {
    double x[3], vs[3];
    cross3(m, r, x);
    for (int k = 0; k < 3; k++) vs[k] = m[3 + k] + x[k];
    for (int k = 0; k < 3; k++) {
        o[k] = R[k] * m[0] + R[3 + k] * m[1] + R[6 + k] * m[2];
        o[3 + k] = R[k] * vs[0] + R[3 + k] * vs[1] + R[6 + k] * vs[2];
    }
}

/* X^T f: (R n + r x R f, R f) */
static void force_to_parent(const double *R, const double *r, const double *f, double *o) {
    double fp[3], x[3];
    for (int k = 0; k < 3; k++) fp[k] = R[3 * k] * f[3] + R[3 * k + 1] * f[4] + R[3 * k + 2] * f[5];
    cross3(r, fp, x);
    for (int k = 0; k < 3; k++) {
        o[k] = R[3 * k] * f[0] + R[3 * k + 1] * f[1] + R[3 * k + 2] * f[2] + x[k];
        o[3 + k] = fp[k];
    }
}

/* a motion vector of M axes in body axes: (R_cM w, R_cM v + r_cM x R_cM w) */
static void from_M(const double *d, const double *m, double *o) {
    const double *R = d + O_RCM, *r = d + O_rCM;
    double w[3], x[3];
    for (int k = 0; k < 3; k++) w[k] = R[3 * k] * m[0] + R[3 * k + 1] * m[1] + R[3 * k + 2] * m[2];
    cross3(r, w, x);
    for (int k = 0; k < 3; k++) {
        o[k] = w[k];
        o[3 + k] = R[3 * k] * m[3] + R[3 * k + 1] * m[4] + R[3 * k + 2] * m[5] + x[k];
    }
}

/* v x m */
static void crm(const double *v, const double *m, double *o) {
    double a[3], b[3], c[3];
    cross3(v, m, a); cross3(v, m + 3, b); cross3(v + 3, m, c);
    for (int k = 0; k < 3; k++) { o[k] = a[k]; o[3 + k] = b[k] + c[k]; }
}

/* v x* f */
static void crf(const double *v, const double *f, double *o) {
    double a[3], b[3], c[3];
    cross3(v, f, a); cross3(v + 3, f + 3, b); cross3(v, f + 3, c);
    for (int k = 0; k < 3; k++) { o[k] = a[k] + b[k]; o[3 + k] = c[k]; }
}

/* rigid-body inertia times a motion vector: (Ibar w + h x v, m v - h x w) */
static void inertia_apply(const double *d, const double *s, double *o) {
    const double *h = d + O_H, *I = d + O_IBAR;
    double m = d[O_M], hv[3], hw[3];
    cross3(h, s + 3, hv); cross3(h, s, hw);
    for (int k = 0; k < 3; k++) {
        o[k] = I[3 * k] * s[0] + I[3 * k + 1] * s[1] + I[3 * k + 2] * s[2] + hv[k];
        o[3 + k] = m * s[3 + k] - hw[k];
    }
}

/* the 6 x 6 rigid-body inertia [[Ibar, h x], [(h x)^T, m 1]] (row-major) */
static void inertia_matrix(const double *d, double *I) {
    const double *h = d + O_H, *Ib = d + O_IBAR;
    double m = d[O_M];
    double hx[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            I[r * 6 + c] = Ib[3 * r + c];
            I[r * 6 + 3 + c] = hx[3 * r + c];
            I[(3 + r) * 6 + c] = hx[3 * c + r];
            I[(3 + r) * 6 + 3 + c] = r == c ? m : 0.0;
        }
}

static void mv6(const double *I, const double *s, double *o) {
    for (int r = 0; r < 6; r++) {
        const double *Ir = I + 6 * r;
        o[r] = Ir[0] * s[0] + Ir[1] * s[1] + Ir[2] * s[2] + Ir[3] * s[3] + Ir[4] * s[4] + Ir[5] * s[5];
    }
}

/* P += X^T I X for a symmetric 6 x 6 I of the child (aba.inertia_to_parent): blocks [[A, B], [B^T, C]] rotated
   A' = R A R^T, B' = R B R^T, C' = R C R^T, then shifted: A_p = A' - B' rx - (B' rx)^T - rx C' rx,
   B_p = B' + rx C', C_p = C' */
static void inertia_to_parent_add(const double *R, const double *r, const double *I, double *P) {
    double A[9], B[9], C[9], T[9], Ap[9], Bp[9], Cp[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            A[3 * i + j] = I[6 * i + j]; B[3 * i + j] = I[6 * i + 3 + j]; C[3 * i + j] = I[6 * (3 + i) + 3 + j];
        }
    const double *M3[3] = {A, B, C};
    double *O3[3] = {Ap, Bp, Cp};
    for (int m = 0; m < 3; m++) {  /* A' and C' are symmetric: their upper triangles only */
        matmul3(R, M3[m], T);
        for (int i = 0; i < 3; i++)
            for (int j = m == 1 ? 0 : i; j < 3; j++)
                O3[m][3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < i; j++) { Ap[3 * i + j] = Ap[3 * j + i]; Cp[3 * i + j] = Cp[3 * j + i]; }
    double rx[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    double BX[9], CX[9], rCX[9], rC[9];
    matmul3(Bp, rx, BX); matmul3(Cp, rx, CX); matmul3(rx, CX, rCX); matmul3(rx, Cp, rC);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            P[6 * i + j] += Ap[3 * i + j] - BX[3 * i + j] - BX[3 * j + i] - rCX[3 * i + j];
            double b = Bp[3 * i + j] + rC[3 * i + j];
            P[6 * i + 3 + j] += b;
            P[6 * (3 + j) + i] += b;
            P[6 * (3 + i) + 3 + j] += Cp[3 * i + j];
        }
}

/* kinematics, base to tip: X_i (R_pc, r_pc), S_i, v_i, c_i in body axes (trace.Trace) */
static void kinematics(long nb, const int *ib, const double *db, const double *q, const double *u, double *work) {
    jout o;
    for (long i = 0; i < nb; i++) {
        const int *ii = ib + i * KK_NI;
        const double *d = db + i * KK_ND;
        double *w = work + i * KK_NW;
        int p = ii[0], kind = ii[1], nu = ii[4], atM = ii[5] & 1;
        joint_calc(kind, nu, d, q + ii[2], u + ii[3], &o);
        double RF[9], *R = w + W_R, *r = w + W_r, pF[3], vJ[6], cJ[6];
        const double *RpF = d + O_RPF;
        if (ii[5] & 2) { memcpy(RF, o.R, sizeof RF); memcpy(pF, o.p, sizeof pF); }  /* F has the parent's axes */
        else {
            matmul3(RpF, o.R, RF);
            for (int k = 0; k < 3; k++) pF[k] = RpF[3 * k] * o.p[0] + RpF[3 * k + 1] * o.p[1] + RpF[3 * k + 2] * o.p[2];
        }
        if (atM) {
            memcpy(R, RF, sizeof RF);
            for (int k = 0; k < 3; k++) r[k] = d[O_rPF + k] + pF[k];
            memcpy(w + W_S, o.S, 6 * nu * sizeof(double));
            memcpy(vJ, o.vJ, sizeof vJ);
            memcpy(cJ, o.cJ, sizeof cJ);
        } else {
            const double *RcM = d + O_RCM, *rcM = d + O_rCM;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    R[3 * a + b] = RF[3 * a] * RcM[3 * b] + RF[3 * a + 1] * RcM[3 * b + 1] + RF[3 * a + 2] * RcM[3 * b + 2];
            for (int k = 0; k < 3; k++)
                r[k] = d[O_rPF + k] + pF[k] - (R[3 * k] * rcM[0] + R[3 * k + 1] * rcM[1] + R[3 * k + 2] * rcM[2]);
            for (int k = 0; k < nu; k++) from_M(d, o.S + 6 * k, w + W_S + 6 * k);
            from_M(d, o.vJ, vJ);
            from_M(d, o.cJ, cJ);
        }
        double *v = w + W_V, *c = w + W_C, x[6];
        if (p < 0) memcpy(v, vJ, sizeof vJ);
        else {
            motion_to_child(R, r, work + p * KK_NW + W_V, x);
            for (int k = 0; k < 6; k++) v[k] = x[k] + vJ[k];
        }
        crm(v, vJ, x);
        for (int k = 0; k < 6; k++) c[k] = cJ[k] + x[k];
    }
}

static double dot6(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* RNEA after kinematics: tau = S^T f - tau_in for u' = udot (NULL: 0); f_i left in W_PA */
static void rnea(long nb, const int *ib, const double *db, const double *g, const double *udot,
                 const double *tau_in, double *tau, double *work) {
    double a0[6] = {0, 0, 0, -g[0], -g[1], -g[2]};
    for (long i = 0; i < nb; i++) {
        const int *ii = ib + i * KK_NI;
        const double *d = db + i * KK_ND;
        double *w = work + i * KK_NW, *a = w + W_A, Iv[6], x[6];
        int p = ii[0], nu = ii[4];
        motion_to_child(w + W_R, w + W_r, p < 0 ? a0 : work + p * KK_NW + W_A, a);
        for (int r = 0; r < 6; r++) {
            double s = a[r];
            if (udot) for (int k = 0; k < nu; k++) s += w[W_S + 6 * k + r] * udot[ii[3] + k];
            a[r] = s + w[W_C + r];
        }
        inertia_apply(d, a, w + W_PA);
        inertia_apply(d, w + W_V, Iv);
        crf(w + W_V, Iv, x);
        for (int r = 0; r < 6; r++) w[W_PA + r] += x[r];
    }
    for (long i = nb - 1; i >= 0; i--) {
        const int *ii = ib + i * KK_NI;
        double *w = work + i * KK_NW, x[6];
        int p = ii[0], nu = ii[4];
        for (int k = 0; k < nu; k++)
            tau[ii[3] + k] = dot6(w + W_S + 6 * k, w + W_PA) - (tau_in ? tau_in[ii[3] + k] : 0.0);
        if (p >= 0) {
            double *fp = work + p * KK_NW + W_PA;
            force_to_parent(w + W_R, w + W_r, w + W_PA, x);
            for (int r = 0; r < 6; r++) fp[r] += x[r];
        }
    }
}

/* ABA after kinematics (aba.trace_aba, accurate ordering of seed 001 §5.3.1) */
static void aba(long nb, const int *ib, const double *db, const double *g, const double *tau, double *udot,
                double *work) {
    for (long i = 0; i < nb; i++) {
        double *w = work + i * KK_NW, Iv[6];
        const double *d = db + i * KK_ND;
        inertia_matrix(d, w + W_IA);
        inertia_apply(d, w + W_V, Iv);
        crf(w + W_V, Iv, w + W_PA);
    }
    for (long i = nb - 1; i >= 0; i--) {
        const int *ii = ib + i * KK_NI;
        double *w = work + i * KK_NW, *IA = w + W_IA, *pA = w + W_PA, *U = w + W_U, *L = w + W_L, *di = w + W_DI;
        double *S = w + W_S, *wi = w + W_W;
        int p = ii[0], nu = ii[4];
        for (int k = 0; k < nu; k++) mv6(IA, S + 6 * k, U + 6 * k);
        for (int j = 0; j < nu; j++) {  /* D = S^T U = L diag(d) L^T (aba.LDL) */
            double dj = dot6(S + 6 * j, U + 6 * j);
            for (int k = 0; k < j; k++) dj -= L[6 * j + k] * L[6 * j + k] / di[k];
            di[j] = 1.0 / dj;
            for (int i2 = j + 1; i2 < nu; i2++) {
                double s = dot6(S + 6 * i2, U + 6 * j);
                for (int k = 0; k < j; k++) s -= L[6 * i2 + k] * L[6 * j + k] / di[k];
                L[6 * i2 + j] = s * di[j];
            }
        }
        for (int k = 0; k < nu; k++) wi[k] = (tau ? tau[ii[3] + k] : 0.0) - dot6(S + 6 * k, pA);
        if (p < 0) continue;
        double UD[36], Ia[36], pa[6], x[6];  /* UD column k: U D^-1 */
        if (nu == 1) {  /* the common one-speed joint: D^-1 is a number */
            for (int r = 0; r < 6; r++) UD[r] = U[r] * di[0];
            for (int r = 0; r < 6; r++)
                for (int s = r; s < 6; s++) Ia[6 * r + s] = Ia[6 * s + r] = IA[6 * r + s] - UD[r] * U[s];
            mv6(Ia, w + W_C, pa);
            for (int r = 0; r < 6; r++) pa[r] = pA[r] + pa[r] + UD[r] * wi[0];
            double *wp = work + p * KK_NW;
            inertia_to_parent_add(w + W_R, w + W_r, Ia, wp + W_IA);
            force_to_parent(w + W_R, w + W_r, pa, x);
            for (int r = 0; r < 6; r++) wp[W_PA + r] += x[r];
            continue;
        }
        for (int r = 0; r < 6; r++) {
            double y[6];
            for (int i2 = 0; i2 < nu; i2++) {
                double s = U[6 * i2 + r];
                for (int k = 0; k < i2; k++) s -= L[6 * i2 + k] * y[k];
                y[i2] = s;
            }
            for (int i2 = nu - 1; i2 >= 0; i2--) {
                double s = y[i2] * di[i2];
                for (int k = i2 + 1; k < nu; k++) s -= L[6 * k + i2] * UD[6 * k + r];
                UD[6 * i2 + r] = s;
            }
        }
        if (nu < 6) {
            for (int r = 0; r < 6; r++)
                for (int s = r; s < 6; s++) {
                    double e = IA[6 * r + s];
                    for (int k = 0; k < nu; k++) e -= UD[6 * k + r] * U[6 * k + s];
                    Ia[6 * r + s] = Ia[6 * s + r] = e;
                }
        } else memset(Ia, 0, sizeof Ia);
        mv6(Ia, w + W_C, pa);
        for (int r = 0; r < 6; r++) {
            double e = pA[r] + pa[r];
            for (int k = 0; k < nu; k++) e += UD[6 * k + r] * wi[k];
            pa[r] = e;
        }
        double *wp = work + p * KK_NW;
        inertia_to_parent_add(w + W_R, w + W_r, Ia, wp + W_IA);
        force_to_parent(w + W_R, w + W_r, pa, x);
        for (int r = 0; r < 6; r++) wp[W_PA + r] += x[r];
    }
    double a0[6] = {0, 0, 0, -g[0], -g[1], -g[2]};
    for (long i = 0; i < nb; i++) {
        const int *ii = ib + i * KK_NI;
        double *w = work + i * KK_NW, *a = w + W_A, *U = w + W_U, *L = w + W_L, *di = w + W_DI, *S = w + W_S;
        int p = ii[0], nu = ii[4];
        motion_to_child(w + W_R, w + W_r, p < 0 ? a0 : work + p * KK_NW + W_A, a);
        for (int r = 0; r < 6; r++) a[r] += w[W_C + r];
        double y[6], x[6];
        for (int i2 = 0; i2 < nu; i2++) {
            double s = w[W_W + i2] - dot6(U + 6 * i2, a);
            for (int k = 0; k < i2; k++) s -= L[6 * i2 + k] * y[k];
            y[i2] = s;
        }
        for (int i2 = nu - 1; i2 >= 0; i2--) {
            double s = y[i2] * di[i2];
            for (int k = i2 + 1; k < nu; k++) s -= L[6 * k + i2] * x[k];
            x[i2] = s;
            udot[ii[3] + i2] = s;
        }
        for (int k = 0; k < nu; k++)
            for (int r = 0; r < 6; r++) a[r] += S[6 * k + r] * x[k];
    }
}

/* CRBA after kinematics: H (n x n, row-major) (crba.trace_crba) */
static void crba(long nb, long n, const int *ib, const double *db, double *H, double *work) {
    for (long i = 0; i < nb; i++) inertia_matrix(db + i * KK_ND, work + i * KK_NW + W_IA);
    for (long i = nb - 1; i >= 0; i--) {
        int p = ib[i * KK_NI];
        double *w = work + i * KK_NW;
        if (p >= 0) inertia_to_parent_add(w + W_R, w + W_r, w + W_IA, work + p * KK_NW + W_IA);
    }
    memset(H, 0, n * n * sizeof(double));
    for (long i = 0; i < nb; i++) {
        const int *ii = ib + i * KK_NI;
        double *w = work + i * KK_NW;
        for (int k = 0; k < ii[4]; k++) {
            long col = ii[3] + k, j = i;
            double F[6], x[6];
            mv6(w + W_IA, w + W_S + 6 * k, F);
            while (j >= 0) {
                const int *jj = ib + j * KK_NI;
                double *wj = work + j * KK_NW;
                for (int kk = 0; kk < jj[4]; kk++) {
                    long row = jj[3] + kk;
                    if (j != i || row <= col) H[row * n + col] = H[col * n + row] = dot6(wj + W_S + 6 * kk, F);
                }
                if (jj[0] >= 0) {
                    force_to_parent(wj + W_R, wj + W_r, F, x);
                    memcpy(F, x, sizeof F);
                }
                j = jj[0];
            }
        }
    }
}

/* H x = f by H = L^T D L along the expanded tree lam (Featherstone 2008, Tables 6.3, 6.4); H is overwritten */
static void ltdl_solve(long n, const int *lam, double *H, const double *f, double *x) {
    for (long k = n - 1; k >= 0; k--) {
        for (long i = lam[k]; i >= 0; i = lam[i]) {
            double a = H[k * n + i] / H[k * n + k];
            for (long j = i; j >= 0; j = lam[j]) H[i * n + j] -= a * H[k * n + j];
            H[k * n + i] = a;
        }
    }
    for (long i = 0; i < n; i++) x[i] = f[i];
    for (long i = n - 1; i >= 0; i--)
        for (long j = lam[i]; j >= 0; j = lam[j]) x[j] -= H[i * n + j] * x[i];
    for (long i = 0; i < n; i++) x[i] /= H[i * n + i];
    for (long i = 0; i < n; i++)
        for (long j = lam[i]; j >= 0; j = lam[j]) x[i] -= H[i * n + j] * x[j];
}

/* (kinetic, potential) energy [J]: 1/2 sum v^T I v and -sum m g . r_com */
static void energy(long nb, const int *ib, const double *db, const double *g, double *out, double *work) {
    double ke = 0.0, pe = 0.0;
    for (long i = 0; i < nb; i++) {
        const int *ii = ib + i * KK_NI;
        const double *d = db + i * KK_ND;
        double *w = work + i * KK_NW, *R0 = w + W_IA, *r0 = w + W_IA + 9, Iv[6];
        int p = ii[0];
        inertia_apply(d, w + W_V, Iv);
        ke += dot6(w + W_V, Iv);
        if (p < 0) { memcpy(R0, w + W_R, 9 * sizeof(double)); memcpy(r0, w + W_r, 3 * sizeof(double)); }
        else {
            const double *Rp = work + p * KK_NW + W_IA, *rp = Rp + 9, *r = w + W_r;
            matmul3(Rp, w + W_R, R0);
            for (int k = 0; k < 3; k++) r0[k] = rp[k] + Rp[3 * k] * r[0] + Rp[3 * k + 1] * r[1] + Rp[3 * k + 2] * r[2];
        }
        const double *h = d + O_H;  /* m r_com = m r0 + R0 h */
        for (int k = 0; k < 3; k++)
            pe -= g[k] * (d[O_M] * r0[k] + R0[3 * k] * h[0] + R0[3 * k + 1] * h[1] + R0[3 * k + 2] * h[2]);
    }
    out[0] = 0.5 * ke;
    out[1] = pe;
}

/* one entry for every output: what = 0 q', 1 u' by ABA, 2 u' by CRBA, 3 H, 4 f (H u' = f), 5 RNEA tau (x = u'),
   6 (kinetic, potential); B states, rows of q (nq), u (nu), x (nu: tau, or u' for 5) and out (size of what) */
int kk_eval(int what, long B, const long *sizes, const int *ib, const double *db, const double *g, const int *lam,
            const double *q, const double *u, const double *x, double *out, double *work) {
    long nb = sizes[0], nq = sizes[1], n = sizes[2];
    long nout = what == 0 ? nq : what == 3 ? n * n : what == 6 ? 2 : n;
    double *H = work + nb * KK_NW, *f = H + n * n;
    for (long s = 0; s < B; s++) {
        const double *qs = q + s * nq, *us = u + s * n, *xs = x ? x + s * n : 0;
        double *o = out + s * nout;
        if (what == 0) {
            for (long i = 0; i < nb; i++) {
                const int *ii = ib + i * KK_NI;
                joint_qdot(ii[1], ii[4], db + i * KK_ND, qs + ii[2], us + ii[3], o + ii[2]);
            }
            continue;
        }
        kinematics(nb, ib, db, qs, us, work);
        switch (what) {
        case 1: aba(nb, ib, db, g, xs, o, work); break;
        case 2:
            rnea(nb, ib, db, g, 0, xs, f, work);
            for (long k = 0; k < n; k++) f[k] = -f[k];
            crba(nb, n, ib, db, H, work);
            ltdl_solve(n, lam, H, f, o);
            break;
        case 3: crba(nb, n, ib, db, o, work); break;
        case 4:
            rnea(nb, ib, db, g, 0, xs, o, work);
            for (long k = 0; k < n; k++) o[k] = -o[k];
            break;
        case 5: rnea(nb, ib, db, g, xs, 0, o, work); break;
        case 6: energy(nb, ib, db, g, o, work); break;
        default: return -1;
        }
    }
    return 0;
}
"""
