"""The C source of the simulation loops (see :mod:`.c_loops`), kept as Python text so that it ships with the
package like any module."""

__all__ = ["SOURCE"]

SOURCE = r"""/* kane's simulation loops in C (issue 12, item 3): fixed-step RK4 and semi-implicit Euler,
   Dormand-Prince 5(4) with PI step-size control, dense output at a sampling grid, the energy at every sample
   and the sign watch of compiled event functions. The same arithmetic, in the same order, as kane.simulate.fixed_step and
   kane.simulate.dopri5, so that steps, evaluations and states agree with the Python loop.

   The model's functions are called through pointers to the kane_f entry of generated libraries:
   f(t, q, u, w, pc, out) with out = q' (NQ) then u' (NU); fe: out = kinetic, potential; fg: out = g (NEV). */
#include <math.h>
#include <string.h>

typedef void (*kane_fn)(double t, const double *q, const double *u, const double *w, const double *pc,
                        double *out);

typedef struct {
    long nq, nu, nev, method;            /* method: 0 DOPRI5, 1 RK4, 2 semi-implicit Euler */
    kane_fn f, fe, fg;                   /* fe, fg may be null */
    const double *w, *pc, *pce, *pcg;    /* inputs; parameters + constants of each library */
    double t, t_bound;
    double *x, *x_old;                   /* (n) the state and the state at the start of the last step */
    double t_old;
    double rtol, max_step, min_step, h, err_old, dt, t_start, first_step;
    const double *atol;                  /* (n) */
    long rejected_last, k;
    double *K, *Kd;                      /* (7 n) stages of the next step; of the last step (dense output) */
    double *f0, *f1;                     /* (n) f at x_old, at x (fixed-step dense output), valid flags below */
    long f0_valid, f1_valid;
    long n_fev, n_acc, n_rej;
    long sample_every_step, grid_k, sampling_open, ns, cap;
    double out_dt, grid_t0;
    double *samples;                     /* (cap, 2 + n): t, x, energy */
    double *g, *g1, *work;               /* (nev), (nev), (4 n + 8) */
    long fail;                           /* 1 NaN shrink, 2 step below minimum, 3 non-finite state,
                                            4 no first step */
    double fail_t, fail_h, fail_floor;
    long step_limit;                     /* back to Python when n_acc + n_rej reaches it (-1: none) */
} kane_sim;

static const double C_[7] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double A_[7][6] = {
    {0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0},
    {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
static const double E_[7] = {71.0 / 57600, 0.0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525,
                             -1.0 / 40};
static const double D_[7] = {-12715105075.0 / 11282082432, 0.0, 87487479700.0 / 32700410799,
                             -10690763975.0 / 1880347072, 701980252875.0 / 199316789632,
                             -1453857185.0 / 822651844, 69997945.0 / 29380423};

static void ev(kane_sim *s, double t, const double *x, double *out) {
    s->f(t, x, x + s->nq, s->w, s->pc, out);
    s->n_fev += 1;
}

/* root mean square, scaled by the largest entry (as kane.simulate.dopri5._rms) */
static double rms(const double *v, long n) {
    double big = 0.0, acc = 0.0;
    if (!n) return 0.0;
    for (long i = 0; i < n; ++i) big = fmax(big, fabs(v[i]));
    for (long i = 0; i < n; ++i) big = isnan(v[i]) ? v[i] : big;
    if (!(big > 0 && isfinite(big))) return big;
    for (long i = 0; i < n; ++i) acc += (v[i] / big) * (v[i] / big);
    return big * sqrt(acc / n);
}

/* Hairer's starting step (one extra evaluation), as DormandPrince5._initial_step */
static double initial_step(kane_sim *s) {
    long n = s->nq + s->nu;
    double *sc = s->work, *v = s->work + n, *y = s->work + 2 * n, *f1 = s->work + 3 * n, *f0 = s->K;
    for (long i = 0; i < n; ++i) sc[i] = s->atol[i] + s->rtol * fabs(s->x[i]);
    for (long i = 0; i < n; ++i) v[i] = s->x[i] / sc[i];
    double d0 = rms(v, n);
    for (long i = 0; i < n; ++i) v[i] = f0[i] / sc[i];
    double d1 = rms(v, n);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    double room = s->t_bound - s->t;
    h0 = fmin(h0, fmin(s->max_step, room > 0 ? room : h0));
    if (!(h0 > 0 && isfinite(h0))) return -1.0;
    for (long i = 0; i < n; ++i) y[i] = s->x[i] + h0 * f0[i];
    ev(s, s->t + h0, y, f1);
    for (long i = 0; i < n; ++i) v[i] = (f1[i] - f0[i]) / sc[i];
    double d2 = rms(v, n) / h0;
    double dm = fmax(d1, d2);
    double h1 = !(dm > 1e-15) ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 0.2);
    double h = fmin(100 * h0, h1);
    return h > 0 ? h : -1.0;
}

/* (Re)start at (t, x): DOPRI5 evaluates its first stage and chooses a step; the fixed-step methods forget f. */
int kane_sim_start(kane_sim *s) {
    s->f0_valid = s->f1_valid = 0;
    s->t_start = s->t;
    s->k = 0;
    s->sampling_open = 0;
    if (s->method != 0) return 0;
    ev(s, s->t, s->x, s->K);
    s->err_old = 1e-4;
    s->rejected_last = 0;
    double h = s->first_step > 0 ? s->first_step : initial_step(s);
    if (!(h > 0)) {
        s->fail = 4, s->fail_t = s->t;
        return 4;
    }
    s->h = fmin(h, s->max_step);
    return 0;
}

static int dopri_step(kane_sim *s) {
    long n = s->nq + s->nu;
    double t = s->t, *x = s->x, *K = s->K, *y = s->work, *xn = s->work + n, *absx = s->work + 2 * n;
    double *errv = s->work + 3 * n;
    double av = fabs(t) > 1.0 ? fabs(t) : 1.0;
    double h_floor = fmax(s->min_step, 16 * (nextafter(av, INFINITY) - av));
    int nonfinite = 0;
    double h, err, t_new;
    for (long i = 0; i < n; ++i) absx[i] = fabs(x[i]);
    for (;;) {
        h = fmin(s->h, s->max_step);
        double room = s->t_bound - t;
        int clipped = h >= 0.99 * room;
        if (clipped) h = room;
        if (h < h_floor && !clipped) {
            s->fail = nonfinite ? 1 : 2;
            s->fail_t = t, s->fail_h = h, s->fail_floor = h_floor;
            return 0;
        }
        for (int st = 1; st < 6; ++st) {
            for (long i = 0; i < n; ++i) {
                double acc = 0.0;
                for (int j = 0; j < st; ++j) acc += (h * A_[st][j]) * K[j * n + i];
                y[i] = acc + x[i];
            }
            ev(s, t + C_[st] * h, y, K + st * n);
        }
        t_new = clipped ? s->t_bound : t + h;
        for (long i = 0; i < n; ++i) {
            double acc = 0.0;
            for (int j = 0; j < 6; ++j) acc += (h * A_[6][j]) * K[j * n + i];
            xn[i] = acc + x[i];
        }
        ev(s, t_new, xn, K + 6 * n);
        double ss = 0.0;
        for (long i = 0; i < n; ++i) {
            double sc = fmax(fabs(xn[i]), absx[i]) * s->rtol + s->atol[i];
            double acc = 0.0;
            for (int j = 0; j < 7; ++j) acc += (h * E_[j]) * K[j * n + i];
            errv[i] = acc / sc;
            ss += errv[i] * errv[i];
        }
        err = sqrt(ss / n);
        if (err <= 1.0) break;
        s->n_rej += 1;
        s->rejected_last = 1;
        if (isfinite(err)) {
            nonfinite = 0;
            s->h = h * fmax(0.2, 0.9 * pow(err, -0.2));
        } else {
            nonfinite = 1;
            s->h = h * 0.1;
        }
    }
    double fac = 0.9 * pow(fmax(err, 1e-10), -0.2 + 0.75 * 0.04) * pow(s->err_old, 0.04);
    fac = fmin(10.0, fmax(0.2, fac));
    if (s->rejected_last) fac = fmin(fac, 1.0);
    s->err_old = fmax(err, 1e-4);
    s->rejected_last = 0;
    s->h = h * fac;
    s->n_acc += 1;
    s->t_old = t;
    memcpy(s->x_old, x, n * sizeof(double));
    memcpy(x, xn, n * sizeof(double));
    s->t = t_new;
    memcpy(s->Kd, K, 7 * n * sizeof(double));
    memcpy(K, K + 6 * n, n * sizeof(double));
    return 1;
}

static int fixed_step(kane_sim *s) {
    long n = s->nq + s->nu, nq = s->nq;
    double t = s->t, *x = s->x;
    double t_new = s->t_start + (s->k + 1) * s->dt;
    int clipped = t_new >= s->t_bound - 1e-6 * s->dt;
    if (clipped) t_new = s->t_bound;
    double h = t_new - t, *xn = s->work;
    if (s->method == 1) {
        double hh = 0.5 * h, *k1 = s->f0, *k2 = s->work + n, *k3 = s->work + 2 * n, *k4 = s->work + 3 * n;
        if (s->f1_valid) memcpy(k1, s->f1, n * sizeof(double));
        else ev(s, t, x, k1);
        for (long i = 0; i < n; ++i) xn[i] = x[i] + hh * k1[i];
        ev(s, t + hh, xn, k2);
        for (long i = 0; i < n; ++i) xn[i] = x[i] + hh * k2[i];
        ev(s, t + hh, xn, k3);
        for (long i = 0; i < n; ++i) xn[i] = x[i] + h * k3[i];
        ev(s, t_new, xn, k4);
        for (long i = 0; i < n; ++i) xn[i] = x[i] + (h / 6.0) * ((((k2[i] + k3[i]) * 2.0) + k1[i]) + k4[i]);
        s->f0_valid = 1;
    } else {
        double *fa = s->work + n, *fb = s->work + 2 * n;
        if (s->f1_valid) memcpy(s->f0, s->f1, n * sizeof(double));
        s->f0_valid = s->f1_valid;
        s->f(t, x, x + nq, s->w, s->pc, fa);
        for (long i = nq; i < n; ++i) xn[i] = x[i] + h * fa[i];
        s->f(t, x, xn + nq, s->w, s->pc, fb);
        for (long i = 0; i < nq; ++i) xn[i] = x[i] + h * fb[i];
        s->n_fev += 1;
    }
    s->f1_valid = 0;
    if (clipped) s->t_start = t_new, s->k = 0;
    else s->k += 1;
    s->n_acc += 1;
    s->t_old = t;
    memcpy(s->x_old, x, n * sizeof(double));
    memcpy(x, xn, n * sizeof(double));
    s->t = t_new;
    return 1;
}

/* The dense output of the last step at t into out (n): DOPRI5's continuous extension, or the cubic Hermite
   interpolant of the fixed-step methods (evaluating f at the step's ends when not known yet, as Python does). */
void kane_sim_dense(kane_sim *s, double t, double *out) {
    long n = s->nq + s->nu;
    double t0 = s->t_old, h = s->t - s->t_old, *x0 = s->x_old, *x1 = s->x;
    double sv = (t - t0) / h, s1 = 1.0 - sv;
    if (s->method == 0) {
        const double *K = s->Kd;
        for (long i = 0; i < n; ++i) {
            double r1 = x1[i] - x0[i], r2 = h * K[i] - r1, r3 = r1 - h * K[6 * n + i] - r2, r4 = 0.0;
            for (int j = 0; j < 7; ++j) r4 += D_[j] * K[j * n + i];
            r4 = h * r4;
            out[i] = x0[i] + sv * (r1 + s1 * (r2 + sv * (r3 + s1 * r4)));
        }
        return;
    }
    if (!s->f0_valid) ev(s, t0, x0, s->f0), s->f0_valid = 1;
    if (!s->f1_valid) ev(s, s->t, x1, s->f1), s->f1_valid = 1;
    double s2 = sv * sv, s3 = s2 * sv;
    double a = 2 * s3 - 3 * s2 + 1, b = s3 - 2 * s2 + sv, c = 3 * s2 - 2 * s3, d = s3 - s2;
    for (long i = 0; i < n; ++i)
        out[i] = a * x0[i] + b * (h * s->f0[i]) + c * x1[i] + d * (h * s->f1[i]);
}

static void sample(kane_sim *s, double t, const double *x) {
    long n = s->nq + s->nu;
    double *row = s->samples + s->ns * (n + 2), eo[2];
    row[0] = t;
    if (x != row + 1) memcpy(row + 1, x, n * sizeof(double));
    row[n + 1] = 0.0;
    if (s->fe) {
        s->fe(t, x, x + s->nq, s->w, s->pce, eo);
        row[n + 1] = eo[0] + eo[1];
    }
    s->ns += 1;
}

/* Samples of the last step on the grid t0 + k out_dt (as Simulator._sample_step); 0 when the buffer filled. */
static int sample_step(kane_sim *s) {
    long n = s->nq + s->nu;
    if (s->sample_every_step) {
        if (s->ns >= s->cap) return 0;
        sample(s, s->t, s->x);
        s->sampling_open = 0;
        return 1;
    }
    double tol = 1e-9 * s->out_dt;
    for (;;) {
        double tk = s->grid_t0 + s->grid_k * s->out_dt;
        if (tk > s->t + tol) break;
        if (s->ns >= s->cap) return 0;
        s->grid_k += 1;
        if (tk >= s->t - tol) sample(s, s->t, s->x);
        else {
            double *row = s->samples + s->ns * (n + 2);
            kane_sim_dense(s, tk, row + 1);
            sample(s, tk, row + 1);
        }
    }
    s->sampling_open = 0;
    return 1;
}

/* Advance towards t_end. Returns 0 at t_end, 1 when the sample buffer is full, after 65536 steps or at step_limit, 2 after
   one step left to Python (one_step, or an event function changed sign or sits on zero: the step is taken
   but neither sampled nor checked), 3 on a failure (fail, fail_t say which and where; the state is the last good one). */
int kane_sim_advance(kane_sim *s, double t_end, int one_step) {
    long n = s->nq + s->nu;
    s->t_bound = t_end;
    if (s->sampling_open && !sample_step(s)) return 1;
    for (long taken = 0; s->t < t_end; ++taken) {
        if (taken == 65536) return 1; /* back to Python now and then (signals such as Ctrl-C) */
        if (s->step_limit >= 0 && s->n_acc + s->n_rej >= s->step_limit) return 1;
        int ok = s->method == 0 ? dopri_step(s) : fixed_step(s);
        if (!ok) return 3;
        for (long i = 0; i < n; ++i)
            if (!isfinite(s->x[i])) {
                s->fail = 3, s->fail_t = s->t;
                return 3;
            }
        if (one_step) return 2;
        if (s->nev) {
            int hit = 0;
            s->fg(s->t, s->x, s->x + s->nq, s->w, s->pcg, s->g1);
            for (long i = 0; i < s->nev; ++i) {
                double a = s->g[i], b = s->g1[i];
                hit |= a == 0.0 || (a < 0.0 && b >= 0.0) || (a > 0.0 && b <= 0.0) || isnan(b);
            }
            if (hit) return 2;
            memcpy(s->g, s->g1, s->nev * sizeof(double));
        }
        s->sampling_open = 1;
        if (!sample_step(s)) return 1;
    }
    return 0;
}

const char *kane_source_hash(void) { return "@KEY@"; }
"""
