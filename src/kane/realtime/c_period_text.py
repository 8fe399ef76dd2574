"""The C text of the haptic period (issue 32): one function run by a native thread that waits for each period on
CLOCK_MONOTONIC, takes the device's sample from a ring filled ahead by Python, evaluates the coupler (point or full
pose, saturated), steps the compiled RK4 dynamics (single rate, or every k periods with the mean force, the body
point extrapolated in between), writes the log row into a lock-free single-producer / single-consumer ring and
keeps the deadline statistics. Model-independent: the model's functions come in as pointers to the ``kane_f`` and
``kane_step`` of the C backend's libraries (:mod:`kane.codegen.c_backend`), so this library is built once.

Same arithmetic as :mod:`kane.realtime.loop`, :mod:`.coupler`, :mod:`.multirate` and :func:`kane.spatial.
rotation_vector`, operation for operation (the library is built without contraction into FMA), so the C period and
the Python period agree to rounding. The text holds no user text.
"""

from __future__ import annotations

__all__ = ["PERIOD_CDEF", "PERIOD_SOURCE", "ROW_POINT", "ROW_POSE", "DEVICE_WIDTH"]

ROW_POINT = 23  # the floats of kane.realtime.log.ROW_FIELDS
ROW_POSE = 50  # ... and of POSE_FIELDS
DEVICE_WIDTH = 20  # a device slot: status, t, x (3), v (3), R (9), w (3)

_STRUCT = """
typedef struct {
    long n_periods, substeps, every, nq, nu, rot, virtual_clock, priority, timeout_periods, has_ufull;
    long idx[6];
    double t0, period, spin, k, b, kr, br, max_force, max_torque;
    void *step_fn, *point_fn, *ufull_fn, *deriv_fn;
    double *x, *step_pc, *point_pc, *ufull_pc, *point_w, *ubuf, *pout, *qx, *qdot, *deriv_out;
    double *dev; long dev_cap; long dev_produced;
    double *rows; long row_width, row_cap; long head, tail;
    double *compute, *late; long stat_cap;
    double *edges; long n_edges; long *late_hist, *compute_hist;
    long periods, missed, saturated, refused, missing, log_waits, stop, status, sched_result, running, m_left;
    double port_energy, compute_max, late_max, status_t;
    unsigned long thread;
    long dev_kind, udp_fd, udp_pose, udp_paired, udp_ip, udp_port, udp_has_filter, udp_filter_ip, udp_filter_port;
    unsigned long long udp_last, udp_first; long udp_have_last;
    unsigned long long udp_seen[4096]; long udp_n_seen, udp_seen_pos;
    long udp_counts[10];
    double udp_sample[20]; long udp_have_sample, udp_fresh_at, udp_hold_ns;
    double ws_lo[3], ws_hi[3], ws_max_speed, ws_max_angular;
    void *sw_fn, *sw; double *mode_now;
} kane_period;
"""

PERIOD_CDEF = _STRUCT + """
const char *kane_source_hash(void);
void kane_period_run(kane_period *c);
int kane_period_start(kane_period *c);
int kane_period_join(kane_period *c);
long kane_load(long *where);
void kane_store(long *where, long value);
"""

PERIOD_SOURCE = r"""/* the haptic period of kane.realtime (generated text, model-independent) */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
""" + _STRUCT + r"""
typedef long (*step_t)(long, double, void *, void *);
typedef void (*f_t)(double, void *, void *, void *, void *, void *);
typedef long (*sw_t)(void *, const double *, long, const long *, double, long);

const char *kane_source_hash(void) { return "@KEY@"; }
long kane_load(long *where) { return __atomic_load_n(where, __ATOMIC_ACQUIRE); }
void kane_store(long *where, long value) { __atomic_store_n(where, value, __ATOMIC_RELEASE); }

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void wait_until(long deadline, long spin) {
    long wake = deadline - spin;
    if (wake > now_ns()) {
        struct timespec ts;
        ts.tv_sec = wake / 1000000000L;
        ts.tv_nsec = wake % 1000000000L;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
    }
    while (now_ns() < deadline) {}
}

/* kane.spatial._quaternion_floats then rotation_vector, of the 3x3 row-major m */
static void rotation_vector(const double *m, double *th) {
    double R[3][3], e[4], s, n, f;
    int r, c, k = 0;
    for (r = 0; r < 3; ++r) for (c = 0; c < 3; ++c) R[r][c] = m[3 * r + c];
    double tr = R[0][0] + R[1][1] + R[2][2];
    double diag[4] = {tr, R[0][0], R[1][1], R[2][2]};
    for (r = 1; r < 4; ++r) if (diag[r] > diag[k]) k = r;
    if (k == 0) {
        s = 2.0 * sqrt(1.0 + tr);
        e[0] = s / 4; e[1] = (R[2][1] - R[1][2]) / s; e[2] = (R[0][2] - R[2][0]) / s; e[3] = (R[1][0] - R[0][1]) / s;
    } else {
        int i = k - 1, j = k % 3, l = (k + 1) % 3;
        double a = 1.0 + R[i][i] - R[j][j] - R[l][l];
        s = 2.0 * sqrt(a > 0.0 ? a : 0.0);
        e[0] = (R[l][j] - R[j][l]) / s; e[1 + i] = s / 4;
        e[1 + j] = (R[j][i] + R[i][j]) / s; e[1 + l] = (R[l][i] + R[i][l]) / s;
    }
    n = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3]);
    for (r = 0; r < 4; ++r) e[r] = e[r] / n;
    if (e[0] < 0) for (r = 0; r < 4; ++r) e[r] = -e[r];
    s = sqrt(e[1] * e[1] + e[2] * e[2] + e[3] * e[3]);
    f = s > 1e-8 ? 2.0 * atan2(s, e[0]) / s : 2.0 / e[0];
    th[0] = e[1] * f; th[1] = e[2] * f; th[2] = e[3] * f;
}

/* coupler._turn: the rotation vector of after before^T */
static void turn(const double *b, const double *a, double *th) {
    double m[9];
    int r, c;
    for (r = 0; r < 3; ++r) for (c = 0; c < 3; ++c)
        m[3 * r + c] = a[3 * r] * b[3 * c] + a[3 * r + 1] * b[3 * c + 1] + a[3 * r + 2] * b[3 * c + 2];
    rotation_vector(m, th);
}

static long bin_of(const kane_period *c, double v) {
    long i = 0; /* searchsorted(edges[1:-1], max(v, 0), side="right") */
    if (v < 0.0) v = 0.0;
    while (i < c->n_edges - 2 && c->edges[i + 1] <= v) ++i;
    return i;
}

/* ---- the UDP device (kane.realtime.udp: protocol v1, and v2 with the pose) ---- */
enum { RECEIVED, USED, LOST, LATE, REPLAYED, MALFORMED, OVERSIZED, SUPERSEDED, REPLIES, FOREIGN };
#define SEEN 4096
#define HALF 9223372036854775808ULL

static double f64(const unsigned char *b) { double v; memcpy(&v, b, 8); return v; }
static unsigned long long u64(const unsigned char *b) { unsigned long long v; memcpy(&v, b, 8); return v; }

static int seen(const kane_period *c, unsigned long long seq) {
    long i;
    for (i = 0; i < c->udp_n_seen; ++i) if (c->udp_seen[i] == seq) return 1;
    return 0;
}

static void remember(kane_period *c, unsigned long long seq) {
    c->udp_seen[c->udp_seen_pos] = seq;
    c->udp_seen_pos = (c->udp_seen_pos + 1) % SEEN;
    if (c->udp_n_seen < SEEN) c->udp_n_seen += 1;
}

/* UdpDevice._sequence: count seq; 1 when it is ahead of the newest */
static int sequence(kane_period *c, unsigned long long seq) {
    long *n = c->udp_counts;
    if (seen(c, seq)) { n[REPLAYED] += 1; return 0; }
    if (!c->udp_have_last) {
        c->udp_first = seq;
    } else {
        unsigned long long ahead = seq - c->udp_last;
        if (ahead >= HALF) {
            unsigned long long behind = 0ULL - ahead;
            n[LATE] += 1;
            if (behind < SEEN && behind < c->udp_last - c->udp_first && n[LOST] > 0) n[LOST] -= 1;
            remember(c, seq);
            return 0;
        }
        n[LOST] += (long)(ahead - 1);
    }
    remember(c, seq);
    c->udp_last = seq;
    c->udp_have_last = 1;
    return 1;
}

/* kane.realtime.check_sample on a slot (t, x, v, R, w): 0 usable, 1 refused */
static long refused(const kane_period *c, const double *s) {
    int i, j, k;
    for (i = 1; i < (c->udp_pose ? 20 : 8); ++i) if (!isfinite(s[i])) return 1;
    for (i = 0; i < 3; ++i) if (!(c->ws_lo[i] <= s[2 + i] && s[2 + i] <= c->ws_hi[i])) return 1;
    if (sqrt(s[5] * s[5] + s[6] * s[6] + s[7] * s[7]) > c->ws_max_speed) return 1;
    if (!c->udp_pose) return 0;
    const double *R = s + 8, *w = s + 17;
    double gram = 0.0;
    for (i = 0; i < 3; ++i) for (j = 0; j < 3; ++j) {
        double g = 0.0;
        for (k = 0; k < 3; ++k) g += R[3 * k + i] * R[3 * k + j];
        g = fabs(g - (i == j));
        if (g > gram) gram = g;
    }
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6])
                 + R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (gram > 1e-6 || det < 0) return 1;
    return sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) > c->ws_max_angular;
}

/* UdpDevice.read: drain the socket (512 datagrams at most); the newest fresh state into slot, the held one while
   younger than hold, else status missing */
static void udp_read(kane_period *c, double t, double *slot) {
    unsigned char buf[129];
    const long size = c->udp_pose ? 128 : 72, version = c->udp_pose ? 2 : 1;
    long *n = c->udp_counts, i, fresh = 0;
    for (i = 0; i < 512; ++i) {
        struct sockaddr_in from;
        socklen_t len = sizeof from;
        ssize_t got = recvfrom((int)c->udp_fd, buf, (size_t)(size + 1), MSG_DONTWAIT, (struct sockaddr *)&from, &len);
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
            continue;
        }
        long ip = (long)from.sin_addr.s_addr, port = (long)ntohs(from.sin_port);
        int admitted = c->udp_paired ? (ip == c->udp_ip && port == c->udp_port)
                       : (!c->udp_has_filter || (ip == c->udp_filter_ip && (c->udp_filter_port == 0 || c->udp_filter_port == port)));
        if (!admitted) { n[FOREIGN] += 1; continue; }
        n[RECEIVED] += 1;
        if (got > size) { n[OVERSIZED] += 1; continue; }
        if (got < size) { n[MALFORMED] += 1; continue; }
        if (memcmp(buf, "KRTS", 4) != 0 || (long)(buf[4] | (buf[5] << 8)) != version) { n[MALFORMED] += 1; continue; }
        if (!sequence(c, u64(buf + 8))) continue;
        c->udp_paired = 1; c->udp_ip = ip; c->udp_port = port;
        if (fresh) n[SUPERSEDED] += 1;
        fresh = 1;
        double *s = c->udp_sample;
        int j;
        for (j = 0; j < 6; ++j) s[2 + j] = f64(buf + 24 + 8 * j);
        if (c->udp_pose) {
            double w = f64(buf + 72), x = f64(buf + 80), y = f64(buf + 88), z = f64(buf + 96);
            double ww = w * w, xx = x * x, yy = y * y, zz = z * z;
            s[8] = ww + xx - yy - zz; s[9] = 2 * (x * y - w * z); s[10] = 2 * (x * z + w * y);
            s[11] = 2 * (x * y + w * z); s[12] = ww - xx + yy - zz; s[13] = 2 * (y * z - w * x);
            s[14] = 2 * (x * z - w * y); s[15] = 2 * (y * z + w * x); s[16] = ww - xx - yy + zz;
            for (j = 0; j < 3; ++j) s[17 + j] = f64(buf + 104 + 8 * j);
        }
    }
    long now = now_ns();
    if (fresh) {
        n[USED] += 1;
        c->udp_have_sample = 1;
        c->udp_fresh_at = now;
    } else if (!(c->udp_have_sample && now - c->udp_fresh_at <= c->udp_hold_ns)) {
        slot[0] = 2;
        return;
    }
    memcpy(slot, c->udp_sample, sizeof c->udp_sample);
    slot[1] = t;
    slot[0] = (double)refused(c, slot);
}

/* UdpDevice.write_force / write_torque: the displayed force (and torque), echoing the newest sequence number */
static void udp_write(kane_period *c, double t, const double *shown) {
    unsigned char p[72];
    unsigned long long seq = c->udp_have_last ? c->udp_last : 0ULL;
    unsigned short version = c->udp_pose ? 2 : 1, flags = 0;
    long size = c->udp_pose ? 72 : 48, j;
    struct sockaddr_in to;
    if (!c->udp_paired) return;
    memcpy(p, "KRTF", 4);
    p[4] = (unsigned char)(version & 255); p[5] = (unsigned char)(version >> 8);
    memcpy(p + 6, &flags, 2);
    memcpy(p + 8, &seq, 8);
    memcpy(p + 16, &t, 8);
    for (j = 0; j < (c->udp_pose ? 6 : 3); ++j) memcpy(p + 24 + 8 * j, shown + j, 8);
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = (in_addr_t)c->udp_ip;
    to.sin_port = htons((unsigned short)c->udp_port);
    if (sendto((int)c->udp_fd, p, (size_t)size, 0, (struct sockaddr *)&to, sizeof to) == size) c->udp_counts[REPLIES] += 1;
}

/* the body point's 6 (18 with a pose) floats at (t, q, u) into c->pout */
static void point(kane_period *c, double t, double *q, double *u) {
    if (c->has_ufull) {
        ((f_t)c->ufull_fn)(t, q, u, c->point_w, c->ufull_pc, c->ubuf);
        u = c->ubuf;
    }
    ((f_t)c->point_fn)(t, q, u, c->point_w, c->point_pc, c->pout);
}

static void timing(kane_period *c, long k, long woke, double late, double *row) {
    double compute = (now_ns() - woke) * 1e-9;
    if (row) { row[21] = compute; row[22] = late; }
    c->compute[k % c->stat_cap] = compute;
    c->late[k % c->stat_cap] = late;
    c->late_hist[bin_of(c, late)] += 1;
    c->compute_hist[bin_of(c, compute)] += 1;
    if (compute > c->compute_max) c->compute_max = compute;
    if (late > c->late_max) c->late_max = late;
    if (late + compute > c->period) c->missed += 1;
    __atomic_store_n(&c->periods, k + 1, __ATOMIC_RELEASE);
}

void kane_period_run(kane_period *c) {
    const long nq = c->nq, nu = c->nu, rot = c->rot, nf = rot ? 6 : 3, W = c->row_width;
    double *x = c->x, *q = x + 1, *u = x + 1 + nq, *w = x + 1 + nq + nu;
    double prev_force[6] = {0, 0, 0, 0, 0, 0}, prev_x[3] = {0, 0, 0}, prev_r[9], sum[6] = {0, 0, 0, 0, 0, 0};
    double force[6], th[3];
    const double nan = NAN, t_start = x[0];
    int have_prev_x = 0, have_prev_r = 0;
    long bad_run = 0, m = 0, k, flag = 0, i;
    const long spin = (long)(c->spin * 1e9);
    const double period_ns_exact = c->period * 1e9;
    if (c->priority > 0) {
        struct sched_param sp;
        sp.sched_priority = (int)c->priority;
        c->sched_result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    }
    c->status = 0;
    long wall0 = now_ns() + (long)period_ns_exact;
    for (k = 0; c->n_periods < 0 || k < c->n_periods; ++k) {
        if (__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) { c->status = 1; break; }
        double t = t_start + k * c->period, late = 0.0;
        long woke;
        if (c->virtual_clock) {
            woke = now_ns();
        } else {
            long scheduled = wall0 + (long)(k * period_ns_exact);
            wait_until(scheduled, spin);
            woke = now_ns();
            late = (woke - scheduled) * 1e-9;
        }
        /* the device's sample: the ring's slot k when Python has filled it, else missing */
        const double *s = NULL;
        double udp_slot[20];
        if (c->dev_kind == 1) {
            udp_read(c, t, udp_slot);
            s = udp_slot[0] == 2 ? NULL : udp_slot;
        } else if (c->virtual_clock)  /* no clock to keep: wait for Python to fill the slot */
            while (__atomic_load_n(&c->dev_produced, __ATOMIC_ACQUIRE) <= k && !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
                sched_yield();
        if (c->dev_kind == 0 && __atomic_load_n(&c->dev_produced, __ATOMIC_ACQUIRE) > k)
            s = c->dev + (k % c->dev_cap) * 20;
        long st = s ? (long)s[0] : 2;
        /* the state the coupler sees: the plant's, or extrapolated between slow steps */
        double *qs = q;
        if (c->every > 1 && m > 0) {
            double h = m * c->period;
            for (i = 0; i < nq; ++i) c->qx[i] = q[i] + h * c->qdot[i];
            qs = c->qx;
        }
        point(c, t, qs, u);
        const double *pt = c->pout;
        double power = 0.0, spring = nan;
        const double *xh = s ? s + 2 : NULL, *vh = s ? s + 5 : NULL, *rh = s ? s + 8 : NULL, *wh = s ? s + 17 : NULL;
        if (st == 0) {
            if (have_prev_x)
                c->port_energy += (prev_force[0] * (xh[0] - prev_x[0]) + prev_force[1] * (xh[1] - prev_x[1])
                                   + prev_force[2] * (xh[2] - prev_x[2]));
            if (rot && have_prev_r) {
                turn(prev_r, rh, th);
                c->port_energy += prev_force[3] * th[0] + prev_force[4] * th[1] + prev_force[5] * th[2];
            }
            double dx = xh[0] - pt[0], dy = xh[1] - pt[1], dz = xh[2] - pt[2];
            double fx = c->k * dx + c->b * (vh[0] - pt[3]), fy = c->k * dy + c->b * (vh[1] - pt[4]);
            double fz = c->k * dz + c->b * (vh[2] - pt[5]);
            double norm = sqrt(fx * fx + fy * fy + fz * fz);
            int sat = norm > c->max_force;
            if (sat) { double r = c->max_force / norm; fx = fx * r; fy = fy * r; fz = fz * r; }
            power = fx * vh[0] + fy * vh[1] + fz * vh[2];
            spring = 0.5 * c->k * (dx * dx + dy * dy + dz * dz);
            force[0] = fx; force[1] = fy; force[2] = fz;
            if (rot) {
                turn(pt + 6, rh, th);
                double tx = c->kr * th[0] + c->br * (wh[0] - pt[15]), ty = c->kr * th[1] + c->br * (wh[1] - pt[16]);
                double tz = c->kr * th[2] + c->br * (wh[2] - pt[17]);
                double tn = sqrt(tx * tx + ty * ty + tz * tz);
                if (tn > c->max_torque) { double r = c->max_torque / tn; tx = tx * r; ty = ty * r; tz = tz * r; sat = 1; }
                power = power + (tx * wh[0] + ty * wh[1] + tz * wh[2]);
                spring = spring + 0.5 * c->kr * (th[0] * th[0] + th[1] * th[1] + th[2] * th[2]);
                force[3] = tx; force[4] = ty; force[5] = tz;
                memcpy(prev_r, rh, sizeof prev_r);
                have_prev_r = 1;
            }
            c->saturated += sat;
            flag = 0; bad_run = 0;
            memcpy(prev_x, xh, sizeof prev_x);
            have_prev_x = 1;
        } else {
            for (i = 0; i < 6; ++i) force[i] = 0.0;
            have_prev_r = 0; have_prev_x = 0;
            if (st == 2) { c->missing += 1; flag = 2; } else { c->refused += 1; flag = 1; }
            bad_run += 1;
        }
        memcpy(prev_force, force, sizeof prev_force);
        if (c->dev_kind == 1) {
            double shown[6];
            for (i = 0; i < 6; ++i) shown[i] = -force[i];
            udp_write(c, t, shown);
        }
        /* the log row: q, u before the step; published once its timing is in */
        double *row = NULL;
        if (c->rows) {
            long head = c->head;
            while (head - __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE) >= c->row_cap) {
                c->log_waits += 1;
                sched_yield();
            }
            row = c->rows + (head % c->row_cap) * W;
            row[0] = t;
            for (i = 0; i < 3; ++i) {
                row[1 + i] = st == 0 ? xh[i] : nan;
                row[4 + i] = st == 0 ? vh[i] : nan;
                row[13 + i] = force[i];
            }
            for (i = 0; i < 6; ++i) row[7 + i] = pt[i];
            row[16] = power; row[17] = c->port_energy; row[18] = spring; row[19] = (double)flag;
            row[20] = c->mode_now ? *c->mode_now : 0.0;
            row[21] = 0.0; row[22] = 0.0;
            long a = 23;
            if (rot) {
                for (i = 0; i < 3; ++i) row[23 + i] = force[3 + i];
                for (i = 0; i < 9; ++i) row[26 + i] = st == 0 ? rh[i] : nan;
                for (i = 0; i < 3; ++i) row[35 + i] = st == 0 ? wh[i] : nan;
                for (i = 0; i < 12; ++i) row[38 + i] = pt[6 + i];
                a = 50;
            }
            for (i = 0; i < nq; ++i) row[a + i] = qs[i];
            for (i = 0; i < nu; ++i) row[a + nq + i] = u[i];
        }
        if (bad_run >= c->timeout_periods && flag == 2) {
            c->status = 2;
            c->status_t = t - (bad_run - 1) * c->period;
            timing(c, k, woke, late, row);
            if (row) __atomic_store_n(&c->head, c->head + 1, __ATOMIC_RELEASE);
            break;
        }
        /* the dynamics: one step of the period, or (multi-rate) every k-th period with the mean force */
        long done = 0, n = c->substeps;
        if (c->sw_fn) {  /* a switching plant's period (kane.realtime.c_switching_text) */
            done = ((sw_t)c->sw_fn)(c->sw, force, nf, c->idx, c->period, n);
        } else if (c->every > 1) {
            if (m == 0) {
                ((f_t)c->deriv_fn)(x[0], q, u, w, c->step_pc, c->deriv_out);
                for (i = 0; i < nq; ++i) c->qdot[i] = c->deriv_out[i];
            }
            for (i = 0; i < nf; ++i) sum[i] = sum[i] + force[i];
            m += 1;
            if (m == c->every) {
                for (i = 0; i < nf; ++i) { w[c->idx[i]] = sum[i] / c->every; sum[i] = 0.0; }
                m = 0;
                done = ((step_t)c->step_fn)(n, (c->every * c->period) / n, x, c->step_pc);
            } else {
                done = n;
            }
        } else {
            for (i = 0; i < nf; ++i) w[c->idx[i]] = force[i];
            done = ((step_t)c->step_fn)(n, c->period / n, x, c->step_pc);
        }
        if (done != n) {
            c->status = done < 0 ? 4 - done : 3;
            c->status_t = x[0];
            timing(c, k, woke, late, row);
            if (row) __atomic_store_n(&c->head, c->head + 1, __ATOMIC_RELEASE);
            break;
        }
        timing(c, k, woke, late, row);
        if (row) __atomic_store_n(&c->head, c->head + 1, __ATOMIC_RELEASE);
    }
    c->m_left = m;
    __atomic_store_n(&c->running, 0, __ATOMIC_RELEASE);
}

static void *thread_main(void *arg) {
    kane_period_run((kane_period *)arg);
    return NULL;
}

int kane_period_start(kane_period *c) {
    pthread_t th;
    __atomic_store_n(&c->running, 1, __ATOMIC_RELEASE);
    int rc = pthread_create(&th, NULL, thread_main, c);
    if (rc != 0) { __atomic_store_n(&c->running, 0, __ATOMIC_RELEASE); return rc; }
    memcpy(&c->thread, &th, sizeof th < sizeof c->thread ? sizeof th : sizeof c->thread);
    return 0;
}

int kane_period_join(kane_period *c) {
    pthread_t th;
    memcpy(&th, &c->thread, sizeof th < sizeof c->thread ? sizeof th : sizeof c->thread);
    return pthread_join(th, NULL);
}
"""
