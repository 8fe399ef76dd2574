"""C source of the joint contract of the generic kernel (:mod:`.c_kernel_text`, :mod:`.c_kernel`): the layout of
a model's arrays and, per joint kind, ``joint_calc`` (R_F_M, p_F_M, the motion subspace S_M, the relative twist
S_M u and its rate S_M' u, in M axes) and ``joint_qdot`` (q' = W(q) u), written from :mod:`kane.model.joints`.

These two functions are the only code of the kernel that looks at the joint kind (layout: :mod:`.c_kernel_text`).
"""

__all__ = ["JOINTS_SOURCE", "KK_NI", "KK_ND", "KK_NW", "KINDS", "OFFSETS"]


KK_NI = 8
KK_ND = 48
KK_NW = 192
#: joint kind codes of the kernel (the C enum below, in order)
KINDS = ("weld", "revolute", "prismatic", "cylindrical", "gimbal_rates", "gimbal_body", "planar_rates",
         "planar_body", "spherical", "free")
#: offsets of the fields of a body's double record
OFFSETS = dict(R_pF=0, r_pF=9, R_cM=12, r_cM=21, m=24, h=25, Ibar=28, axis=37, seq=40, n_free=43, axis_code=44)

JOINTS_SOURCE = r"""
/* GCC's -O3 for the kernel's small fixed loops (about 25% faster than the cache's -O2 here); IEEE semantics
   and -ffp-contract=off are kept */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include <math.h>
#include <string.h>

#define KK_NI 8
#define KK_ND 48
#define KK_NW 192
enum { K_WELD, K_REV, K_PRI, K_CYL, K_GIMBAL_RATES, K_GIMBAL_BODY, K_PLANAR_RATES, K_PLANAR_BODY, K_SPH, K_FREE };
enum { O_RPF = 0, O_rPF = 9, O_RCM = 12, O_rCM = 21, O_M = 24, O_H = 25, O_IBAR = 28, O_AX = 37, O_SEQ = 40,
       O_NFREE = 43, O_ACODE = 44 };
/* per-body scratch offsets */
enum { W_R = 0, W_r = 9, W_S = 12, W_V = 48, W_C = 54, W_IA = 60, W_PA = 96, W_U = 102, W_L = 138, W_DI = 174,
       W_W = 180, W_A = 186 };

const char *kane_source_hash(void) { return "@KEY@"; }

typedef struct { double R[9], p[3], S[36], vJ[6], cJ[6]; } jout;

static void cross3(const double *a, const double *b, double *o) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static void eye3(double *R) { memset(R, 0, 9 * sizeof(double)); R[0] = R[4] = R[8] = 1.0; }

/* R of a right-handed rotation by angle about the unit axis (joints.rotation_about) */
static void rotation_about(const double *d, double angle, double *R) {
    double c = cos(angle), s = sin(angle);
    int code = (int)d[O_ACODE];
    if (code) {
        int k = (code > 0 ? code : -code) - 1, i = (k + 1) % 3, j = (k + 2) % 3;
        if (code < 0) s = -s;
        eye3(R);
        R[i * 3 + i] = c; R[i * 3 + j] = -s; R[j * 3 + i] = s; R[j * 3 + j] = c;
        return;
    }
    const double *a = d + O_AX;
    double t = 1.0 - c;
    R[0] = c + t * a[0] * a[0];        R[1] = t * a[0] * a[1] - s * a[2]; R[2] = t * a[0] * a[2] + s * a[1];
    R[3] = t * a[1] * a[0] + s * a[2]; R[4] = c + t * a[1] * a[1];        R[5] = t * a[1] * a[2] - s * a[0];
    R[6] = t * a[2] * a[0] - s * a[1]; R[7] = t * a[2] * a[1] + s * a[0]; R[8] = c + t * a[2] * a[2];
}

/* rotation about coordinate axis k (0-2) */
static void rotation_axis(int k, double angle, double *R) {
    double c = cos(angle), s = sin(angle);
    int i = (k + 1) % 3, j = (k + 2) % 3;
    eye3(R);
    R[i * 3 + i] = c; R[i * 3 + j] = -s; R[j * 3 + i] = s; R[j * 3 + j] = c;
}

static void quaternion_rotation(const double *e, double *R) {
    double w = e[0], x = e[1], y = e[2], z = e[3];
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

/* e' = 0.5 E(e) omega (joints._quaternion_rate_map) */
static void quaternion_rate(const double *e, const double *w, double *ed) {
    ed[0] = 0.5 * (-e[1] * w[0] - e[2] * w[1] - e[3] * w[2]);
    ed[1] = 0.5 * (e[0] * w[0] - e[3] * w[1] + e[2] * w[2]);
    ed[2] = 0.5 * (e[3] * w[0] + e[0] * w[1] - e[1] * w[2]);
    ed[3] = 0.5 * (-e[2] * w[0] + e[1] * w[1] + e[0] * w[2]);
}

static void matmul3(const double *A, const double *B, double *C) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C[i * 3 + j] = A[i * 3] * B[j] + A[i * 3 + 1] * B[3 + j] + A[i * 3 + 2] * B[6 + j];
}

/* Euler axes of a gimbal seen from M (joints.Gimbal.rate_subspace): s[k] = (R_{k+1} ... R_{n-1})^T e_{d_k};
   R = R_0 ... R_{n-1} */
static void gimbal_axes(const double *d, const double *q, double *s, double *R) {
    int n = (int)d[O_NFREE];
    double T[9], Rk[9], tmp[9];
    eye3(T);
    for (int k = n - 1; k >= 0; k--) {
        int dk = (int)d[O_SEQ + k];
        for (int j = 0; j < 3; j++) s[3 * k + j] = T[dk * 3 + j];
        rotation_axis(dk, q[k], Rk);
        matmul3(Rk, T, tmp);
        memcpy(T, tmp, sizeof tmp);
    }
    memcpy(R, T, sizeof T);
}

/* the joint contract: R_F_M, p_F_M, S_M (column k at S[6k]), the relative twist S_M u and its rate S_M' u */
static void joint_calc(int kind, int nu, const double *d, const double *q, const double *u, jout *o) {
    memset(o->p, 0, sizeof o->p);
    memset(o->S, 0, 6 * nu * sizeof(double));
    memset(o->cJ, 0, sizeof o->cJ);
    const double *a = d + O_AX;
    switch (kind) {
    case K_WELD: eye3(o->R); break;
    case K_REV:
        rotation_about(d, q[0], o->R);
        for (int r = 0; r < 3; r++) o->S[r] = a[r];
        break;
    case K_PRI:
        eye3(o->R);
        for (int r = 0; r < 3; r++) { o->S[3 + r] = a[r]; o->p[r] = a[r] * q[0]; }
        break;
    case K_CYL:
        rotation_about(d, q[0], o->R);
        for (int r = 0; r < 3; r++) { o->S[r] = a[r]; o->S[9 + r] = a[r]; o->p[r] = a[r] * q[1]; }
        break;
    case K_GIMBAL_RATES: case K_GIMBAL_BODY: {
        double s[9];
        gimbal_axes(d, q, s, o->R);
        if (kind == K_GIMBAL_BODY) {
            for (int k = 0; k < 3; k++) o->S[6 * k + k] = 1.0;
        } else {
            for (int k = 0; k < nu; k++)
                for (int r = 0; r < 3; r++) o->S[6 * k + r] = s[3 * k + r];
            for (int k = 0; k < nu; k++)  /* d/dt s_k = s_k x sum_{j>k} s_j u_j */
                for (int j = k + 1; j < nu; j++) {
                    double x[3];
                    cross3(s + 3 * k, s + 3 * j, x);
                    for (int r = 0; r < 3; r++) o->cJ[r] += u[k] * u[j] * x[r];
                }
        }
        break;
    }
    case K_PLANAR_RATES: case K_PLANAR_BODY: {
        double c = cos(q[2]), s = sin(q[2]);
        rotation_axis(2, q[2], o->R);
        o->p[0] = q[0]; o->p[1] = q[1];
        if (kind == K_PLANAR_RATES) {
            o->S[3] = c; o->S[4] = -s; o->S[9] = s; o->S[10] = c; o->S[14] = 1.0;
            double vx = c * u[0] + s * u[1], vy = -s * u[0] + c * u[1];
            o->cJ[3] = u[2] * vy; o->cJ[4] = -u[2] * vx;
        } else {
            o->S[3] = 1.0; o->S[10] = 1.0; o->S[14] = 1.0;
        }
        break;
    }
    case K_SPH:
        quaternion_rotation(q, o->R);
        for (int k = 0; k < 3; k++) o->S[6 * k + k] = 1.0;
        break;
    case K_FREE:
        quaternion_rotation(q + 3, o->R);
        for (int r = 0; r < 3; r++) o->p[r] = q[r];
        for (int k = 0; k < 6; k++) o->S[6 * k + k] = 1.0;
        break;
    }
    for (int r = 0; r < 6; r++) {
        double x = 0.0;
        for (int k = 0; k < nu; k++) x += o->S[6 * k + r] * u[k];
        o->vJ[r] = x;
    }
}

/* q' = W(q) u of the joint */
static void joint_qdot(int kind, int nu, const double *d, const double *q, const double *u, double *qd) {
    switch (kind) {
    case K_GIMBAL_BODY: {  /* u = omega_M = Y q', Y = [s_0 s_1 s_2]: Cramer's rule */
        double s[9], R[9], x[3], det;
        gimbal_axes(d, q, s, R);
        cross3(s + 3, s + 6, x);
        det = s[0] * x[0] + s[1] * x[1] + s[2] * x[2];
        double c0[3], c1[3], c2[3];
        cross3(s + 3, s + 6, c0); cross3(s + 6, s, c1); cross3(s, s + 3, c2);
        qd[0] = (u[0] * c0[0] + u[1] * c0[1] + u[2] * c0[2]) / det;
        qd[1] = (u[0] * c1[0] + u[1] * c1[1] + u[2] * c1[2]) / det;
        qd[2] = (u[0] * c2[0] + u[1] * c2[1] + u[2] * c2[2]) / det;
        break;
    }
    case K_PLANAR_BODY: {
        double c = cos(q[2]), s = sin(q[2]);
        qd[0] = c * u[0] - s * u[1]; qd[1] = s * u[0] + c * u[1]; qd[2] = u[2];
        break;
    }
    case K_SPH: quaternion_rate(q, u, qd); break;
    case K_FREE: {
        double R[9];
        quaternion_rotation(q + 3, R);
        for (int r = 0; r < 3; r++) qd[r] = R[3 * r] * u[3] + R[3 * r + 1] * u[4] + R[3 * r + 2] * u[5];
        quaternion_rate(q + 3, u, qd + 3);
        break;
    }
    default: for (int k = 0; k < nu; k++) qd[k] = u[k];
    }
}

"""
