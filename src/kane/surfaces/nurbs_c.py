"""A compiled evaluator of NURBS surfaces (Piegl & Tiller, The NURBS Book, 2nd ed.: A2.1 span, A2.3 basis
derivatives, A3.6 on the homogeneous net, A4.4 quotient rule) and of the common-normal conditions of two of them
(kane.surfaces.contact) in one call: hand-written C99, compiled once per machine by the system compiler through
the on-disk cache of kane.codegen (keyed by this source), loaded with cffi.

Without a C compiler (or when it fails) :func:`kernel` returns None, says why once (a :class:`RuntimeWarning`),
and the callers keep the numpy evaluator of kane.surfaces.nurbs. Degree at most 15 in each direction.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

__all__ = ["MAX_DEGREE", "NurbsKernel", "kernel"]

MAX_DEGREE = 15

_CDEF = """
typedef struct { const double *Pw; const double *U; const double *V; long nu, nv, p, q; } kane_nurbs;
const char *kane_source_hash(void);
void kane_nurbs_eval(const kane_nurbs *S, long n, const double *s, const double *t, int order, double *out);
double kane_common_normal(const kane_nurbs *S1, const kane_nurbs *S2, const double *R, const double *o,
                          const double *z, double *out);
"""

_SOURCE = r"""
#include <math.h>
#define MAXP 15
typedef struct { const double *Pw; const double *U; const double *V; long nu, nv, p, q; } kane_nurbs;

const char *kane_source_hash(void) { return "@KEY@"; }

/* A2.1 as kane.surfaces.bspline.find_span: knots[i] <= u < knots[i + 1], clipped to the non-empty spans */
static long span_of(const double *U, long p, long n, double u) {
    double end = U[n];
    long last = n, lo, hi, i;
    while (last > 0 && U[last - 1] >= end) last--;
    last -= 1;
    if (u >= end) i = last;
    else {
        lo = 0; hi = n + p + 1;            /* first index with U[k] > u */
        while (lo < hi) { long mid = (lo + hi) / 2; if (U[mid] <= u) lo = mid + 1; else hi = mid; }
        i = lo - 1;
    }
    if (i < p) i = p;
    if (i > last) i = last;
    return i;
}

/* A2.3: ders[k][j], k = 0..order, the k-th derivative of N_{i - p + j, p} at u */
static void basis_ders(long i, double u, long p, int order, const double *U, double ders[3][MAXP + 1]) {
    double ndu[MAXP + 1][MAXP + 1], left[MAXP + 1], right[MAXP + 1], a[2][MAXP + 1];
    long j, r, k, s1, s2, rk, pk, j1, j2, top = order < p ? order : p;
    ndu[0][0] = 1.0;
    for (j = 1; j <= p; j++) {
        double saved = 0.0;
        left[j] = u - U[i + 1 - j];
        right[j] = U[i + j] - u;
        for (r = 0; r < j; r++) {
            double temp;
            ndu[j][r] = right[r + 1] + left[j - r];
            temp = ndu[r][j - 1] / ndu[j][r];
            ndu[r][j] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        ndu[j][j] = saved;
    }
    for (j = 0; j <= p; j++) { ders[0][j] = ndu[j][p]; ders[1][j] = 0.0; ders[2][j] = 0.0; }
    for (r = 0; r <= p; r++) {
        s1 = 0; s2 = 1; a[0][0] = 1.0;
        for (k = 1; k <= top; k++) {
            double d = 0.0;
            long tmp;
            rk = r - k; pk = p - k;
            if (r >= k) { a[s2][0] = a[s1][0] / ndu[pk + 1][rk]; d = a[s2][0] * ndu[rk][pk]; }
            j1 = rk >= -1 ? 1 : -rk;
            j2 = (r - 1 <= pk) ? k - 1 : p - r;
            for (j = j1; j <= j2; j++) {
                a[s2][j] = (a[s1][j] - a[s1][j - 1]) / ndu[pk + 1][rk + j];
                d += a[s2][j] * ndu[rk + j][pk];
            }
            if (r <= pk) { a[s2][k] = -a[s1][k - 1] / ndu[pk + 1][r]; d += a[s2][k] * ndu[r][pk]; }
            ders[k][r] = d;
            tmp = s1; s1 = s2; s2 = tmp;
        }
    }
    r = p;
    for (k = 1; k <= top; k++) { for (j = 0; j <= p; j++) ders[k][j] *= (double)r; r *= (p - k); }
}

/* S and its derivatives at one point: out[6][3] = S, S_s, S_t, S_ss, S_st, S_tt (the first 1, 3 or 6) */
static void eval1(const kane_nurbs *S, double s, double t, int order, double out[6][3]) {
    double Nu[3][MAXP + 1], Nv[3][MAXP + 1], Aw[3][3][4], T[3][4], SKL[3][3][3];
    long su = span_of(S->U, S->p, S->nu, s), sv = span_of(S->V, S->q, S->nv, t), i, j, k, l, c, ii, jj;
    static const double bin[3][3] = {{1, 0, 0}, {1, 1, 0}, {1, 2, 1}};
    basis_ders(su, s, S->p, order, S->U, Nu);
    basis_ders(sv, t, S->q, order, S->V, Nv);
    for (k = 0; k <= order; k++)
        for (l = 0; l <= order - k; l++)
            for (c = 0; c < 4; c++) Aw[k][l][c] = 0.0;
    for (i = 0; i <= S->p; i++) {           /* T[k] = sum_j N_v ... per row i, then Aw[k][l] += Nu[k][i] T[l] */
        const double *row = S->Pw + ((su - S->p + i) * S->nv + (sv - S->q)) * 4;
        for (l = 0; l <= order; l++)
            for (c = 0; c < 4; c++) {
                double acc = 0.0;
                for (j = 0; j <= S->q; j++) acc += Nv[l][j] * row[4 * j + c];
                T[l][c] = acc;
            }
        for (k = 0; k <= order; k++)
            for (l = 0; l <= order - k; l++)
                for (c = 0; c < 4; c++) Aw[k][l][c] += Nu[k][i] * T[l][c];
    }
    for (k = 0; k <= order; k++)            /* A4.4: derivatives of A / w */
        for (l = 0; l <= order - k; l++)
            for (c = 0; c < 3; c++) {
                double v = Aw[k][l][c];
                for (jj = 1; jj <= l; jj++) v -= bin[l][jj] * Aw[0][jj][3] * SKL[k][l - jj][c];
                for (ii = 1; ii <= k; ii++) {
                    v -= bin[k][ii] * Aw[ii][0][3] * SKL[k - ii][l][c];
                    for (jj = 1; jj <= l; jj++) v -= bin[k][ii] * bin[l][jj] * Aw[ii][jj][3] * SKL[k - ii][l - jj][c];
                }
                SKL[k][l][c] = v / Aw[0][0][3];
            }
    for (c = 0; c < 3; c++) {
        out[0][c] = SKL[0][0][c];
        if (order >= 1) { out[1][c] = SKL[1][0][c]; out[2][c] = SKL[0][1][c]; }
        if (order >= 2) { out[3][c] = SKL[2][0][c]; out[4][c] = SKL[1][1][c]; out[5][c] = SKL[0][2][c]; }
    }
}

/* n points; out (parts, n, 3) with parts = 1, 3, 6 for order 0, 1, 2 */
void kane_nurbs_eval(const kane_nurbs *S, long n, const double *s, const double *t, int order, double *out) {
    long m, parts = order == 0 ? 1 : (order == 1 ? 3 : 6), k, c;
    double d[6][3];
    for (m = 0; m < n; m++) {
        eval1(S, s[m], t[m], order, d);
        for (k = 0; k < parts; k++)
            for (c = 0; c < 3; c++) out[(k * n + m) * 3 + c] = d[k][c];
    }
}

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross(const double *a, const double *b, double *r) {
    r[0] = a[1] * b[2] - a[2] * b[1]; r[1] = a[2] * b[0] - a[0] * b[2]; r[2] = a[0] * b[1] - a[1] * b[0];
}

/* kane.surfaces.contact.common_normal_conditions for S1 and o + R S2 at z = (u1, v1, u2, v2):
   out = F (4), J (4 x 4, row-major), d1 (6 x 3), d2 (6 x 3, moved), n1 (3), |S1_u| |S1_v|;
   returns |S1_u x S1_v| */
double kane_common_normal(const kane_nurbs *S1, const kane_nurbs *S2, const double *R, const double *o,
                          const double *z, double *out) {
    double a[6][3], raw[6][3], b[6][3], d[3], N[3], n1[3], size, P[3][3], x[3], y[3], w[3], n1u[3], n1v[3];
    double *F = out, *J = out + 4;
    long k, i, j;
    eval1(S1, z[0], z[1], 2, a);
    eval1(S2, z[2], z[3], 2, raw);
    for (k = 0; k < 6; k++)
        for (i = 0; i < 3; i++)
            b[k][i] = R[3 * i] * raw[k][0] + R[3 * i + 1] * raw[k][1] + R[3 * i + 2] * raw[k][2];
    for (i = 0; i < 3; i++) { b[0][i] += o[i]; d[i] = b[0][i] - a[0][i]; }
    cross(a[1], a[2], N);
    size = sqrt(dot(N, N));
    for (i = 0; i < 3; i++) n1[i] = N[i] / size;
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) P[i][j] = ((i == j ? 1.0 : 0.0) - n1[i] * n1[j]) / size;
    cross(a[3], a[2], x); cross(a[1], a[4], y);
    for (i = 0; i < 3; i++) w[i] = x[i] + y[i];
    for (i = 0; i < 3; i++) n1u[i] = dot(P[i], w);
    cross(a[4], a[2], x); cross(a[1], a[5], y);
    for (i = 0; i < 3; i++) w[i] = x[i] + y[i];
    for (i = 0; i < 3; i++) n1v[i] = dot(P[i], w);
    F[0] = dot(a[1], d); F[1] = dot(a[2], d); F[2] = dot(n1, b[1]); F[3] = dot(n1, b[2]);
    J[0] = dot(a[3], d) - dot(a[1], a[1]); J[1] = dot(a[4], d) - dot(a[1], a[2]);
    J[2] = dot(a[1], b[1]); J[3] = dot(a[1], b[2]);
    J[4] = dot(a[4], d) - dot(a[2], a[1]); J[5] = dot(a[5], d) - dot(a[2], a[2]);
    J[6] = dot(a[2], b[1]); J[7] = dot(a[2], b[2]);
    J[8] = dot(n1u, b[1]); J[9] = dot(n1v, b[1]); J[10] = dot(n1, b[3]); J[11] = dot(n1, b[4]);
    J[12] = dot(n1u, b[2]); J[13] = dot(n1v, b[2]); J[14] = dot(n1, b[4]); J[15] = dot(n1, b[5]);
    for (k = 0; k < 6; k++)
        for (i = 0; i < 3; i++) { out[20 + 3 * k + i] = a[k][i]; out[38 + 3 * k + i] = b[k][i]; }
    for (i = 0; i < 3; i++) out[56 + i] = n1[i];
    out[59] = sqrt(dot(a[1], a[1])) * sqrt(dot(a[2], a[2]));
    return size;
}
"""

_state: dict = {}
_lock = threading.Lock()


class NurbsKernel:
    """The loaded C library and its cffi FFI; :meth:`bind` makes the C descriptor of one surface."""

    def __init__(self, lib, ffi):
        self.lib, self.ffi = lib, ffi

    def bind(self, homogeneous: np.ndarray, knots_u: np.ndarray, knots_v: np.ndarray, p: int, q: int):
        """(descriptor, kept arrays): a ``kane_nurbs *`` over the net Pw (n_u, n_v, 4) and the knot vectors; the
        arrays must stay alive while the descriptor is used (keep the second element)."""
        kept = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in (homogeneous, knots_u, knots_v))
        desc = self.ffi.new("kane_nurbs *")
        desc.Pw, desc.U, desc.V = (self.ffi.cast("double *", self.ffi.from_buffer(a)) for a in kept)
        desc.nu, desc.nv, desc.p, desc.q = homogeneous.shape[0], homogeneous.shape[1], p, q
        return desc, kept


def kernel() -> NurbsKernel | None:
    """The compiled kernel, built on first use (later processes load it from the cache), or None without a
    working C compiler (a RuntimeWarning says so once per process). ``KANE_SURFACES_NUMPY=1`` forces None."""
    import os

    if os.environ.get("KANE_SURFACES_NUMPY") == "1":
        return None
    with _lock:
        if "kernel" in _state:
            return _state["kernel"]
        from ..codegen.c_backend import _cffi, load_library
        from ..codegen.c_cache import CCompileError

        try:
            lib, _ = load_library(("kane.surfaces.nurbs_c\0" + _SOURCE).encode(), lambda: _SOURCE, _CDEF)
            _state["kernel"] = NurbsKernel(lib, _cffi(_CDEF))
        except CCompileError as exc:
            warnings.warn(f"kane.surfaces: NURBS surfaces are evaluated in numpy (slower), not in C: {exc}",
                          RuntimeWarning, stacklevel=2)
            _state["kernel"] = None
        return _state["kernel"]
