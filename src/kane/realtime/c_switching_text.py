"""The C text of the switching plant's period (issue 32, compiled switching modes): one period of
:class:`kane.realtime.mode_plant.ModePlant` for time-scheduled :class:`kane.switching.Lock` rules, the function the
C period (:mod:`.c_period_text`) calls in place of its plain RK4 step.

Operation for operation what ModePlant.advance does with Lock rules given by time intervals: the current mode's
compiled RK4 ``kane_step`` over what is left of the period (m = ceil(s / dt - 1e-9) steps), its dependent speeds by
its compiled ``u_full``; each rule's event function max_i min(t - a_i, b_i - t) at the step's start and end (as
``SwitchingSimulator._g_lock``), the earliest crossing stepped to (its root is the interval boundary itself: where
the Python path locates it by Brent's method to 1e-14, C takes the boundary), the switch (lock: the impulse of
``kane.switching.rules.resolve_impulse``; unlock: the identity), the new mode over the rest of the period. The lock
impulse is the unique M-orthogonal projection u+ = u- + M^-1 A^T (A M^-1 A^T)^-1 (target - A u-), target = -b -
e (A u- + b) on the locked constraint's rows and -b on the others (Cholesky factorizations of M and of the Schur
complement): the same u+ as the Python path's null-space form, to rounding. Every 8th period the current mode's
conditioning guard ||A||_F / sigma_min(A_dep) (ModePlant._conditioned) is evaluated with the same rows (sigma_min
from Jacobi's eigenvalues of A_dep^T A_dep); where it exceeds cond_max the period returns -1 (the Python path would
go on line, which C cannot: the C loop stops and says so). Each switch is written into an event ring (t, rule,
crossing, q, u-, u+) that Python reads to make the same event records. The text holds no user text.
"""

from __future__ import annotations

__all__ = ["SWITCHING_CDEF", "SWITCHING_SOURCE", "MAX_MODES", "MAX_RULES", "MAX_N", "MAX_BLOCKS"]

MAX_RULES = 4  # Lock rules (their modes: every subset, 2 ** 4)
MAX_MODES = 1 << MAX_RULES
MAX_N = 32  # speeds and constraint rows
MAX_BLOCKS = 16  # declared constraints

_STRUCT = """
typedef struct {
    long nq, nu, nw, n_rules, n_blocks, active, checks, guard_every, skip_rule, switches_left;
    double dt, cond_max, skip_t, mode_now, fail_t, fail_value;
    double *state, *w, *w0, *x1, *scratch;
    void *step_fn[16], *uf_fn[16];
    double *mx[16], *mpc[16], *ufpc[16];
    long mnu[16], mnrows[16], mndep[16];
    long *midx[16], *mrows[16], *mdep[16];
    long n_iv[4], rule_block[4];
    double *iv[4];
    double e[4];
    long blk_start[16], blk_len[16], blk_rule[16];
    void *mab_fn;
    double *mab_pc, *mab_out;
    long off_M, off_A, off_b, n_rows;
    double *ev; long ev_width, ev_cap, ev_head, ev_tail, ev_waits;
} kane_switching;
"""

SWITCHING_CDEF = _STRUCT + """
const char *kane_source_hash(void);
long kane_switching_period(kane_switching *s, const double *force, long nf, const long *idx, double period, long n);
long kane_sw_load(long *where);
void kane_sw_store(long *where, long value);
"""

SWITCHING_SOURCE = r"""/* one period of kane.realtime.mode_plant with time-scheduled locks (generated text, model-independent) */
#include <math.h>
#include <sched.h>
#include <string.h>
""" + _STRUCT + r"""
#define N_MAX 32
typedef long (*step_t)(long, double, void *, void *);
typedef void (*f_t)(double, void *, void *, void *, void *, void *);

const char *kane_source_hash(void) { return "@KEY@"; }
long kane_sw_load(long *where) { return __atomic_load_n(where, __ATOMIC_ACQUIRE); }
void kane_sw_store(long *where, long value) { __atomic_store_n(where, value, __ATOMIC_RELEASE); }

/* SwitchingSimulator._g_lock: max over the intervals of min(t - a, b - t), Python's min and max */
static double g_rule(const kane_switching *s, long r, double t) {
    double g = 0.0;
    long i;
    for (i = 0; i < s->n_iv[r]; ++i) {
        double x = t - s->iv[r][2 * i], y = s->iv[r][2 * i + 1] - t;
        double v = y < x ? y : x;
        if (i == 0 || v > g) g = v;
    }
    return g;
}

/* the crossing's time: the rule's first interval boundary in (t, t1], else t1 */
static double root(const kane_switching *s, long r, double t, double t1) {
    double best = t1;
    long i;
    for (i = 0; i < 2 * s->n_iv[r]; ++i) {
        double a = s->iv[r][i];
        if (t < a && a <= t1 && a < best) best = a;
    }
    return best;
}

/* CompiledMode.advance: (t + h, q, all speeds) into out after m RK4 steps of h / m; 0 when a step is not finite */
static int advance(kane_switching *s, long md, double t, const double *q, const double *u, double h, long m,
                   double *out) {
    double *x = s->mx[md];
    const long nq = s->nq, nui = s->mnu[md];
    long i;
    x[0] = t;
    for (i = 0; i < nq; ++i) x[1 + i] = q[i];
    for (i = 0; i < nui; ++i) x[1 + nq + i] = u[s->midx[md][i]];
    for (i = 0; i < s->nw; ++i) x[1 + nq + nui + i] = s->w[i];
    if (((step_t)s->step_fn[md])(m, h / m, x, s->mpc[md]) != m) { s->fail_t = x[0]; return 0; }
    out[0] = x[0];
    for (i = 0; i < nq; ++i) out[1 + i] = x[1 + i];
    ((f_t)s->uf_fn[md])(x[0], x + 1, x + 1 + nq, s->w0, s->ufpc[md], out + 1 + nq);
    return 1;
}

/* L L^T = a (n x n, row-major, overwritten by L); 0 when not positive definite */
static int cholesky(double *a, long n) {
    long i, j, k;
    for (j = 0; j < n; ++j) {
        double d = a[j * n + j];
        for (k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
        if (!(d > 0.0)) return 0;
        d = sqrt(d);
        a[j * n + j] = d;
        for (i = j + 1; i < n; ++i) {
            double v = a[i * n + j];
            for (k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = v / d;
        }
    }
    return 1;
}

/* x = (L L^T)^-1 x in place */
static void chol_solve(const double *L, long n, double *x) {
    long i, k;
    for (i = 0; i < n; ++i) {
        double v = x[i];
        for (k = 0; k < i; ++k) v -= L[i * n + k] * x[k];
        x[i] = v / L[i * n + i];
    }
    for (i = n - 1; i >= 0; --i) {
        double v = x[i];
        for (k = i + 1; k < n; ++k) v -= L[k * n + i] * x[k];
        x[i] = v / L[i * n + i];
    }
}

/* the lock impulse of resolve_impulse onto the active constraints (the locked one among them, restitution e on
   its rows): u+ = u- + Y lam, Y = M^-1 A^T, (A Y) lam = target - A u-; 0 when a factorization fails */
static int impulse(kane_switching *s, long r, double t, const double *q, const double *um, double *up) {
    const long n = s->nu;
    long rows[N_MAX], nr = 0, bk, i, j, k;
    double er[N_MAX], L[N_MAX * N_MAX], Y[N_MAX * N_MAX], G[N_MAX * N_MAX], lam[N_MAX];
    ((f_t)s->mab_fn)(t, (void *)q, (void *)um, s->w0, s->mab_pc, s->mab_out);
    const double *M = s->mab_out + s->off_M, *A = s->mab_out + s->off_A, *b = s->mab_out + s->off_b;
    for (bk = 0; bk < s->n_blocks; ++bk) {
        long rule = s->blk_rule[bk];
        if (rule == -2 || (rule >= 0 && !((s->active >> rule) & 1))) continue;
        for (i = 0; i < s->blk_len[bk]; ++i) {
            rows[nr] = s->blk_start[bk] + i;
            er[nr++] = rule == r ? s->e[r] : 0.0;
        }
    }
    for (i = 0; i < n; ++i) up[i] = um[i];
    if (!nr) return 1;
    memcpy(L, M, sizeof(double) * n * n);
    if (!cholesky(L, n)) return 0;
    for (k = 0; k < nr; ++k) {  /* column k of Y: M^-1 (row k of A)^T, stored as row k */
        for (i = 0; i < n; ++i) Y[k * n + i] = A[rows[k] * n + i];
        chol_solve(L, n, Y + k * n);
    }
    for (i = 0; i < nr; ++i) {
        double au = 0.0;
        for (j = 0; j < n; ++j) au += A[rows[i] * n + j] * um[j];
        lam[i] = (-b[rows[i]] - er[i] * (au + b[rows[i]])) - au;
        for (j = 0; j < nr; ++j) {
            double g = 0.0;
            for (k = 0; k < n; ++k) g += A[rows[i] * n + k] * Y[j * n + k];
            G[i * nr + j] = g;
        }
    }
    if (!cholesky(G, nr)) return 0;
    chol_solve(G, nr, lam);
    for (k = 0; k < nr; ++k) for (i = 0; i < n; ++i) up[i] += Y[k * n + i] * lam[k];
    return 1;
}

/* the smallest eigenvalue of the symmetric a (n x n, overwritten) by cyclic Jacobi rotations */
static double eig_min(double *a, long n) {
    long sweep, p, r, k;
    for (sweep = 0; sweep < 60; ++sweep) {
        double off = 0.0, scale = 0.0;
        for (p = 0; p < n; ++p) for (r = 0; r < n; ++r) {
            if (p != r) off += a[p * n + r] * a[p * n + r]; else scale += a[p * n + r] * a[p * n + r];
        }
        if (off <= 1e-30 * scale) break;
        for (p = 0; p < n; ++p) for (r = p + 1; r < n; ++r) {
            double apr = a[p * n + r];
            if (apr == 0.0) continue;
            double theta = (a[r * n + r] - a[p * n + p]) / (2.0 * apr);
            double tt = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(tt * tt + 1.0), sn = tt * c;
            for (k = 0; k < n; ++k) {  /* columns p, r */
                double x = a[k * n + p], y = a[k * n + r];
                a[k * n + p] = c * x - sn * y; a[k * n + r] = sn * x + c * y;
            }
            for (k = 0; k < n; ++k) {  /* rows p, r */
                double x = a[p * n + k], y = a[r * n + k];
                a[p * n + k] = c * x - sn * y; a[r * n + k] = sn * x + c * y;
            }
        }
    }
    double m = a[0];
    for (p = 1; p < n; ++p) if (a[p * n + p] < m) m = a[p * n + p];
    return m;
}

/* ModePlant._conditioned: ||A_rows||_F / sigma_min(A_rows,dep) <= cond_max */
static int conditioned(kane_switching *s, long md, double t, const double *q) {
    const long n = s->nu, nr = s->mnrows[md], nd = s->mndep[md];
    const long *rows = s->mrows[md], *dep = s->mdep[md];
    double zero[N_MAX], BtB[N_MAX * N_MAX], fro = 0.0, smin = 0.0;
    long i, j, k;
    if (!nd) return 1;
    for (i = 0; i < n; ++i) zero[i] = 0.0;
    ((f_t)s->mab_fn)(t, (void *)q, zero, s->w0, s->mab_pc, s->mab_out);
    const double *A = s->mab_out + s->off_A;
    for (i = 0; i < nr; ++i) for (j = 0; j < n; ++j) fro += A[rows[i] * n + j] * A[rows[i] * n + j];
    if (nr >= nd) {
        for (i = 0; i < nd; ++i) for (j = 0; j < nd; ++j) {
            double v = 0.0;
            for (k = 0; k < nr; ++k) v += A[rows[k] * n + dep[i]] * A[rows[k] * n + dep[j]];
            BtB[i * nd + j] = v;
        }
        double lmin = eig_min(BtB, nd);
        smin = lmin > 0.0 ? sqrt(lmin) : 0.0;
    }
    double cond = smin > 0.0 ? sqrt(fro) / smin : INFINITY;
    if (cond <= s->cond_max) return 1;
    s->fail_t = t; s->fail_value = cond;
    return 0;
}

/* ModePlant.advance over one period with the force held: n on success, 0 when a step is not finite, -1 when the
   guard fires, -2 when the impulse's factorization fails, -3 beyond the most switches (the state then back at the
   period's start, as the Python path leaves it) */
static long one_period(kane_switching *s, const double *force, long nf, const long *idx, double period, long n) {
    const long nq = s->nq, nu = s->nu;
    double *st = s->state, *q = st + 1, *u = st + 1 + nq, *x1 = s->x1, g0[4];
    long i, r, handled = -1;
    for (i = 0; i < nf; ++i) s->w[idx[i]] = force[i];
    double t = st[0], t_end = t + period, handled_t = 0.0;
    long skip = (s->skip_rule >= 0 && s->skip_t == t) ? s->skip_rule : -1;
    while (t_end - t > 1e-12 * fmax(1.0, fabs(t_end))) {
        const long md = s->active;
        double h = t_end - t;
        long m = (long)ceil(h / s->dt - 1e-9);
        if (m < 1) m = 1;
        for (r = 0; r < s->n_rules; ++r) g0[r] = g_rule(s, r, t);
        if (!advance(s, md, t, q, u, h, m, x1)) return 0;
        long best = -1, crossing = 0;
        double best_s = 0.0;
        for (r = 0; r < s->n_rules; ++r) {
            if (r == skip) continue;
            double a = g0[r], b = g_rule(s, r, x1[0]);
            if (a == 0.0 || !(a * b < 0.0 || b == 0.0)) continue;
            double sr = b == 0.0 ? h : root(s, r, t, x1[0]) - t;
            if (best < 0 || sr < best_s) { best = r; crossing = b > a ? 1 : -1; best_s = sr; }
        }
        if (best < 0) {
            s->checks += 1;
            if (s->checks % s->guard_every == 0 && !conditioned(s, md, x1[0], x1 + 1)) return -1;
            memcpy(st, x1, sizeof(double) * (1 + nq + nu));
            t = st[0];
            break;
        }
        m = (long)ceil(best_s / s->dt - 1e-9);
        if (m < 1) m = 1;
        if (!advance(s, md, t, q, u, best_s, m, x1)) return 0;
        memcpy(st, x1, sizeof(double) * (1 + nq + nu));
        t = st[0];
        if (s->switches_left <= 0) { s->fail_t = t; return -3; }
        s->switches_left -= 1;
        long head = s->ev_head;
        while (head - __atomic_load_n(&s->ev_tail, __ATOMIC_ACQUIRE) >= s->ev_cap) { s->ev_waits += 1; sched_yield(); }
        double *ev = s->ev + (head % s->ev_cap) * s->ev_width;
        ev[0] = t; ev[1] = (double)best; ev[2] = (double)crossing;
        for (i = 0; i < nq; ++i) ev[3 + i] = q[i];
        for (i = 0; i < nu; ++i) ev[3 + nq + i] = u[i];
        if (crossing > 0) {
            s->active |= 1L << best;
            if (!impulse(s, best, t, q, ev + 3 + nq, u)) { s->fail_t = t; return -2; }
        } else {
            s->active &= ~(1L << best);
        }
        for (i = 0; i < nu; ++i) ev[3 + nq + nu + i] = u[i];
        __atomic_store_n(&s->ev_head, head + 1, __ATOMIC_RELEASE);
        skip = best; handled = best; handled_t = t;
    }
    s->skip_rule = (handled >= 0 && handled_t == t) ? handled : -1;
    s->skip_t = handled_t;
    s->mode_now = (double)s->active;
    return n;
}

long kane_switching_period(kane_switching *s, const double *force, long nf, const long *idx, double T, long n) {
    const size_t size = sizeof(double) * (1 + s->nq + s->nu);
    memcpy(s->scratch, s->state, size);
    long done = one_period(s, force, nf, idx, T, n);
    if (done != n) memcpy(s->state, s->scratch, size);
    return done;
}
"""
