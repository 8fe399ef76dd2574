"""The C text of ``kane export-c MODEL --servo`` (issue 32, item 3): the templates of servo.c and the Makefile of the
standalone servo program, for :class:`string.Template` (``$name`` placeholders; C has no ``$``), filled by
:func:`kane.realtime.servo_export.export_servo` with generated identifiers and numbers only. The period itself is
:data:`kane.realtime.c_period_text.PERIOD_SOURCE`, written beside it as period.c with period.h; servo.c holds the
glue: the model's RK4 step and the coupler's point behind the period's function pointers, the UDP device of
:mod:`kane.realtime.udp` in C, the log and the command line.
"""

from __future__ import annotations

__all__ = ["SERVO_SOURCE", "SERVO_MAKEFILE", "PERIOD_HEADER"]

PERIOD_HEADER = """/* the C period of kane.realtime (kane.realtime.c_period_text), its struct and entry points */
#ifndef KANE_PERIOD_H
#define KANE_PERIOD_H
$cdef
#endif
"""

SERVO_SOURCE = r"""/* $name: the standalone haptic servo program of kane (kane export-c --servo), generated text.
 * One period: the device's newest UDP state, the virtual coupler's force (saturated), one RK4 step of the model,
 * the force sent back to the device, a log row. Build: make; run: ./servo --help. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include "model.h"
#include "period.h"

/* the settings of the model's [realtime] table (kane's defaults where it has none) */
#define SERVO_RATE $rate /* [Hz] */
#define SERVO_EVERY $every /* the dynamics every k periods */
#define SERVO_SUBSTEPS $substeps
#define SERVO_DURATION $duration /* [s] */
#define SERVO_PORT $port
#define SERVO_POSE $pose /* 1: a full pose coupled (protocol version 2) */
#define SERVO_TIMEOUT_PERIODS $timeout_periods
#define SERVO_HOLD $hold /* [s] the newest sample stands in for missing packets this long */
static const double servo_coupled[3] = {$point}; /* [m] the coupled point, in the coupled body's axes */
static const double servo_gains[4] = {$gains}; /* K [N/m], B [N s/m], K_r [N m/rad], B_r [N m s/rad] */
static const double servo_max_force = $max_force, servo_max_torque = $max_torque; /* [N], [N m] */
static const double servo_lower[3] = {$lower}, servo_upper[3] = {$upper}; /* the workspace box [m] */
static const double servo_max_speed = $max_speed, servo_max_angular_speed = $max_angular_speed;
static const long servo_idx[6] = {$idx}; /* the coupler's inputs in w */
static const double servo_point_p[$n_point_p] = {$point_p}; /* the parameters of the point's program */
static const double servo_edges[$n_edges] = {$edges}; /* histogram bins [s] (kane.realtime.stats) */
static const char servo_columns[] = "$columns";

/* the datagrams of kane.realtime.udp (little-endian) */
#define STATE_SIZE $state_size
#define REPLY_SIZE $reply_size
#define VERSION $version
#define OFF_SEQ $off_seq
#define OFF_POS $off_pos
#define OFF_QUAT $off_quat
#define OFF_W $off_w
#define OFF_T $off_t
#define OFF_F $off_f
static const char state_magic[4] = {$state_magic}, reply_magic[4] = {$reply_magic};
#define ROW_WIDTH ($row_base + MODEL_NQ + MODEL_NU)
#define NX (1 + MODEL_NQ + MODEL_NU + MODEL_NW)
#define RING 256

/* the coupler's body point (and pose) at (t, q, u): x, v [, R row-major, w], ground axes */
static void servo_point(double t, void *qv, void *uv, void *wv, void *pv, void *outv) {
    const double *q = (const double *)qv, *u = (const double *)uv, *w = (const double *)wv;
    const double *p = (const double *)pv;
    double *out = (double *)outv;
    (void)t; (void)q; (void)u; (void)w; (void)p;
$point_body
}

/* kane_step of the C backend over model.c's right-hand side: n RK4 steps of dt in place, x = [t, q, u, w];
   returns n, or the step whose result was not finite */
static long servo_step(long n, double dt, void *xv, void *pcv) {
    double *xs = (double *)xv, *t = xs, *q = xs + 1, *u = xs + 1 + MODEL_NQ;
    const double *w = xs + 1 + MODEL_NQ + MODEL_NU;
    const model_t *m = (const model_t *)pcv;
    double k1[MODEL_NQ + MODEL_NU], k2[MODEL_NQ + MODEL_NU], k3[MODEL_NQ + MODEL_NU], k4[MODEL_NQ + MODEL_NU];
    double x[MODEL_NQ + MODEL_NU], y[MODEL_NQ + MODEL_NU];
    long s;
    int i, ok;
    for (s = 0; s < n; ++s) {
        model_rhs(m, *t, q, u, w, k1, k1 + MODEL_NQ);
        for (i = 0; i < MODEL_NQ; ++i) x[i] = q[i] + 0.5 * dt * k1[i];
        for (i = 0; i < MODEL_NU; ++i) x[MODEL_NQ + i] = u[i] + 0.5 * dt * k1[MODEL_NQ + i];
        model_rhs(m, *t + 0.5 * dt, x, x + MODEL_NQ, w, k2, k2 + MODEL_NQ);
        for (i = 0; i < MODEL_NQ + MODEL_NU; ++i) y[i] = (i < MODEL_NQ ? q[i] : u[i - MODEL_NQ]) + 0.5 * dt * k2[i];
        model_rhs(m, *t + 0.5 * dt, y, y + MODEL_NQ, w, k3, k3 + MODEL_NQ);
        for (i = 0; i < MODEL_NQ + MODEL_NU; ++i) x[i] = (i < MODEL_NQ ? q[i] : u[i - MODEL_NQ]) + dt * k3[i];
        model_rhs(m, *t + dt, x, x + MODEL_NQ, w, k4, k4 + MODEL_NQ);
        ok = 1;
        for (i = 0; i < MODEL_NQ + MODEL_NU; ++i) {
            y[i] = (i < MODEL_NQ ? q[i] : u[i - MODEL_NQ]) + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            ok &= isfinite(y[i]) != 0;
        }
        if (!ok) return s;
        for (i = 0; i < MODEL_NQ; ++i) q[i] = y[i];
        for (i = 0; i < MODEL_NU; ++i) u[i] = y[MODEL_NQ + i];
        *t += dt;
    }
    return n;
}

/* q' then u' at (t, q, u, w) (the slow-rate scheme's extrapolation) */
static void servo_deriv(double t, void *q, void *u, void *w, void *pc, void *out) {
    double *o = (double *)out;
    model_rhs((const model_t *)pc, t, (const double *)q, (const double *)u, (const double *)w, o, o + MODEL_NQ);
}

static uint64_t get64(const unsigned char *b) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
}

static double getd(const unsigned char *b) {
    uint64_t v = get64(b);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

static void put64(unsigned char *b, uint64_t v) {
    int i;
    for (i = 0; i < 8; ++i) { b[i] = (unsigned char)(v & 0xff); v >>= 8; }
}

static void putd(unsigned char *b, double d) {
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    put64(b, v);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the device: kane.realtime.UdpDevice's pairing, sequence numbers and hold, in C */
typedef struct {
    int fd, paired, have_seq, have_sample;
    struct sockaddr_in peer;
    uint64_t last_seq;
    double sample[20], fresh_at;
    long received, used, lost, stale, malformed, oversized, foreign, replies;
} servo_device;

/* kane.realtime.check_sample of slot s (t, x, v [, R, w] filled): 0 used, 1 refused */
static long check(double *s) {
    int i, j, k;
    double speed = 0.0, gram = 0.0, det, rate = 0.0;
    for (i = 1; i < 8; ++i) if (!isfinite(s[i])) return 1;
    for (i = 0; i < 3; ++i) if (!(servo_lower[i] <= s[2 + i] && s[2 + i] <= servo_upper[i])) return 1;
    for (i = 0; i < 3; ++i) speed += s[5 + i] * s[5 + i];
    if (sqrt(speed) > servo_max_speed) return 1;
    if (!SERVO_POSE) return 0;
    for (i = 8; i < 20; ++i) if (!isfinite(s[i])) return 1;
    for (i = 0; i < 3; ++i) for (j = 0; j < 3; ++j) {
        double g = 0.0;
        for (k = 0; k < 3; ++k) g += s[8 + 3 * k + i] * s[8 + 3 * k + j];
        g = fabs(g - (i == j));
        if (g > gram) gram = g;
    }
    det = s[8] * (s[12] * s[16] - s[13] * s[15]) - s[9] * (s[11] * s[16] - s[13] * s[14])
          + s[10] * (s[11] * s[15] - s[12] * s[14]);
    if (gram > 1e-6 || det < 0) return 1;
    for (i = 0; i < 3; ++i) rate += s[17 + i] * s[17 + i];
    return sqrt(rate) > servo_max_angular_speed;
}

/* one datagram of the paired device: 1 when it is a fresh state (its sample in d->sample), else 0 */
static int take(servo_device *d, const unsigned char *b, long n, const struct sockaddr_in *from) {
    uint64_t seq, ahead;
    double *s = d->sample;
    if (d->paired && (from->sin_addr.s_addr != d->peer.sin_addr.s_addr || from->sin_port != d->peer.sin_port)) {
        d->foreign += 1;
        return 0;
    }
    d->received += 1;
    if (n > STATE_SIZE) { d->oversized += 1; return 0; }
    if (n < STATE_SIZE || memcmp(b, state_magic, 4) != 0 || (b[4] | (b[5] << 8)) != VERSION) {
        d->malformed += 1;
        return 0;
    }
    seq = get64(b + OFF_SEQ);
    if (d->have_seq) {
        ahead = seq - d->last_seq;
        if (ahead == 0 || ahead >= ((uint64_t)1 << 63)) { d->stale += 1; return 0; }
        d->lost += (long)(ahead - 1);
    }
    d->have_seq = 1;
    d->last_seq = seq;
    if (!d->paired) { d->peer = *from; d->paired = 1; }
    s[1] = 0.0;
    for (int i = 0; i < 6; ++i) s[2 + i] = getd(b + OFF_POS + 8 * i);
    if (SERVO_POSE) { /* the unit quaternion (w, x, y, z) as kane.realtime.udp.quaternion_matrix */
        double qw = getd(b + OFF_QUAT), qx = getd(b + OFF_QUAT + 8), qy = getd(b + OFF_QUAT + 16);
        double qz = getd(b + OFF_QUAT + 24);
        double ww = qw * qw, xx = qx * qx, yy = qy * qy, zz = qz * qz;
        double R[9] = {ww + xx - yy - zz, 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy),
                       2 * (qx * qy + qw * qz), ww - xx + yy - zz, 2 * (qy * qz - qw * qx),
                       2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), ww - xx - yy + zz};
        memcpy(s + 8, R, sizeof R);
        for (int i = 0; i < 3; ++i) s[17 + i] = getd(b + OFF_W + 8 * i);
    }
    d->used += 1;
    d->have_sample = 1;
    d->fresh_at = now_s();
    return 1;
}

/* read what waits on the socket (at most 512 datagrams; with timeout_ms > 0, wait that long for the first): 1 when
   a fresh state came, 0 when none did, -1 when nothing came within timeout_ms */
static int drain_socket(servo_device *d, int timeout_ms) {
    unsigned char b[STATE_SIZE + 1];
    struct sockaddr_in from;
    int fresh = 0, i;
    struct pollfd pfd;
    pfd.fd = d->fd; pfd.events = POLLIN; pfd.revents = 0;
    if (timeout_ms > 0 && poll(&pfd, 1, timeout_ms) <= 0) return -1;
    for (i = 0; i < 512; ++i) {
        socklen_t len = sizeof from;
        ssize_t n = recvfrom(d->fd, b, sizeof b, 0, (struct sockaddr *)&from, &len);
        if (n < 0) { if (errno == EAGAIN || errno == EWOULDBLOCK) break; continue; }
        fresh |= take(d, b, (long)n, &from);
    }
    return fresh;
}

/* a force packet (with a pose: a wrench packet) answering sequence number seq */
static void reply(servo_device *d, uint64_t seq, double t, const double *force) {
    unsigned char b[REPLY_SIZE];
    int i;
    if (!d->paired) return;
    memset(b, 0, sizeof b);
    memcpy(b, reply_magic, 4);
    b[4] = (unsigned char)(VERSION & 0xff); b[5] = (unsigned char)(VERSION >> 8);
    put64(b + OFF_SEQ, seq);
    putd(b + OFF_T, t);
    for (i = 0; i < 3 + 3 * SERVO_POSE; ++i) putd(b + OFF_F + 8 * i, force[i]);
    if (sendto(d->fd, b, sizeof b, 0, (const struct sockaddr *)&d->peer, sizeof d->peer) == (ssize_t)sizeof b)
        d->replies += 1;
}

/* wait up to us microseconds for a datagram (the device thread sleeps between periods rather than spin) */
static void wait_socket(int fd, long us) {
    fd_set set;
    struct timeval tv;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    tv.tv_sec = 0;
    tv.tv_usec = us;
    select(fd + 1, &set, NULL, NULL, &tv);
}

static void usage(FILE *f) {
    fprintf(f, "usage: servo [--port N] [--host ADDR] [--duration S] [--log PATH] [--priority N] [--replay]"
               " [--wait S]\n"
               "  --port N      UDP port to listen on (default %d)\n"
               "  --host ADDR   IPv4 address to listen on (default 127.0.0.1)\n"
               "  --duration S  run time [s] (default %g; 0: until stopped by the device)\n"
               "  --log PATH    CSV log, one row per period (default servo.csv; - for none)\n"
               "  --priority N  SCHED_FIFO priority of the period's thread (default 80; 0: normal)\n"
               "  --replay      lockstep: one period per state packet received, no clock (for tests)\n"
               "  --wait S      wait up to S seconds for the device's first state packet (with --replay: for\n"
               "                each; the run stops when none came) (default 5)\n",
            SERVO_PORT, SERVO_DURATION);
}

static int number(const char *text, double *out) {
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return errno == 0 && end != text && *end == '\0' && isfinite(*out);
}

int main(int argc, char **argv) {
    static double x[NX + 1], rows[RING * ROW_WIDTH], dev[RING * 20], compute[1], late[1];
    static double pout[18], qx[MODEL_NQ + 1], qdot[MODEL_NQ + 1], deriv_out[MODEL_NQ + MODEL_NU + 1];
    static double point_w[MODEL_NW + 1], edges[$n_edges];
    static long late_hist[$n_edges], compute_hist[$n_edges];
    static uint64_t slot_seq[RING];
    double duration = SERVO_DURATION, wait_s = 5.0, v, zero[6] = {0, 0, 0, 0, 0, 0};
    const char *log_path = "servo.csv", *host = "127.0.0.1";
    long port = SERVO_PORT, priority = 80, k = 0, i, taken = 0;
    int lockstep = 0, a, status;
    const long tick_us = (long)(0.05e6 / SERVO_RATE) > 0 ? (long)(0.05e6 / SERVO_RATE) : 1;  /* T / 20 */
    model_t m;
    kane_period c;
    servo_device d;
    struct sockaddr_in addr;
    FILE *log = NULL;
    for (a = 1; a < argc; ++a) {
        const char *o = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { usage(stdout); return 0; }
        if (!strcmp(o, "--replay")) { lockstep = 1; continue; }
        if (!val) { fprintf(stderr, "servo: %s needs a value\n", o); usage(stderr); return 2; }
        ++a;
        if (!strcmp(o, "--log")) log_path = val;
        else if (!strcmp(o, "--host")) host = val;
        else if (!strcmp(o, "--port") && number(val, &v) && v >= 0 && v <= 65535 && v == floor(v)) port = (long)v;
        else if (!strcmp(o, "--duration") && number(val, &v) && v >= 0) duration = v;
        else if (!strcmp(o, "--wait") && number(val, &v) && v > 0) wait_s = v;
        else if (!strcmp(o, "--priority") && number(val, &v) && v >= 0 && v <= 99 && v == floor(v)) priority = (long)v;
        else { fprintf(stderr, "servo: bad option or value: %s %s\n", o, val); usage(stderr); return 2; }
    }
    memset(&d, 0, sizeof d);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "servo: --host %s: not an IPv4 address\n", host);
        return 2;
    }
    d.fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (d.fd < 0 || bind(d.fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr, "servo: cannot listen on udp %s:%ld: %s\n", host, port, strerror(errno));
        return 1;
    }
    fcntl(d.fd, F_SETFL, fcntl(d.fd, F_GETFL) | O_NONBLOCK);
    {   /* the port bound (--port 0: any free one) */
        socklen_t len = sizeof addr;
        if (getsockname(d.fd, (struct sockaddr *)&addr, &len) == 0) port = (long)ntohs(addr.sin_port);
    }
    if (strcmp(log_path, "-") != 0) {
        log = fopen(log_path, "w");
        if (!log) { fprintf(stderr, "servo: cannot write the log %s: %s\n", log_path, strerror(errno)); return 1; }
        fprintf(log, "%s\n", servo_columns);
    }
    if (priority > 0 && !lockstep && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        fprintf(stderr, "servo: mlockall refused (%s): memory may be paged out during the run\n", strerror(errno));
    model_init(&m, 0);
    x[0] = 0.0;
    for (i = 0; i < MODEL_NQ; ++i) x[1 + i] = model_q0[i];
    for (i = 0; i < MODEL_NU; ++i) x[1 + MODEL_NQ + i] = model_u0[i];
    for (i = 0; i < MODEL_NW; ++i) x[1 + MODEL_NQ + MODEL_NU + i] = model_default_inputs[i];
    for (i = 0; i < $n_edges; ++i) edges[i] = servo_edges[i];
    memset(&c, 0, sizeof c);
    c.n_periods = duration > 0 ? (long)floor(duration * SERVO_RATE + 0.5) : -1;
    c.substeps = SERVO_SUBSTEPS; c.every = SERVO_EVERY; c.nq = MODEL_NQ; c.nu = MODEL_NU; c.rot = SERVO_POSE;
    c.virtual_clock = lockstep; c.priority = lockstep ? 0 : priority; c.timeout_periods = SERVO_TIMEOUT_PERIODS;
    for (i = 0; i < 6; ++i) c.idx[i] = servo_idx[i];
    c.t0 = 0.0; c.period = 1.0 / SERVO_RATE;
    c.spin = 1e-3 < 0.3 / SERVO_RATE ? 1e-3 : 0.3 / SERVO_RATE; /* [s] spun before each period, slept before that */
    c.k = servo_gains[0]; c.b = servo_gains[1]; c.kr = servo_gains[2]; c.br = servo_gains[3];
    c.max_force = servo_max_force; c.max_torque = servo_max_torque;
    c.step_fn = (void *)servo_step; c.point_fn = (void *)servo_point; c.deriv_fn = (void *)servo_deriv;
    c.x = x; c.step_pc = (double *)(void *)&m; c.point_pc = (double *)servo_point_p; c.point_w = point_w;
    c.pout = pout; c.qx = qx; c.qdot = qdot; c.deriv_out = deriv_out;
    c.dev = dev; c.dev_cap = RING; c.rows = rows; c.row_width = ROW_WIDTH; c.row_cap = RING;
    c.compute = compute; c.late = late; c.stat_cap = 1;
    c.edges = edges; c.n_edges = $n_edges; c.late_hist = late_hist; c.compute_hist = compute_hist;
    c.status = 4;
    fprintf(stderr, "servo: %s on udp %s:%ld at %g Hz%s\n", lockstep ? "lockstep" : "listening", host, port,
            (double)SERVO_RATE, lockstep ? " (one period per state packet)" : "");
    fprintf(stderr, "servo: coupled point (%g, %g, %g) m of the body, K = %g N/m, B = %g N s/m, K_r = %g N m/rad, "
            "B_r = %g N m s/rad, max force %g N, dynamics every %d period(s), %d substep(s)\n", servo_coupled[0],
            servo_coupled[1], servo_coupled[2], servo_gains[0], servo_gains[1], servo_gains[2], servo_gains[3],
            servo_max_force, SERVO_EVERY, SERVO_SUBSTEPS);
    if (!lockstep) { /* as UdpDevice.open: the clock starts with the device's first valid state */
        double end = now_s() + wait_s;
        int r = 0;
        while (r <= 0 && now_s() < end) r = drain_socket(&d, 1 + (int)((end - now_s()) * 1000));
        if (r <= 0) {
            fprintf(stderr, "servo: no valid state packet on udp %s:%ld within %g s (is the device bridge "
                            "running?)\n", host, port, wait_s);
            return 1;
        }
    }
    if (kane_period_start(&c) != 0) { fprintf(stderr, "servo: cannot start the period's thread\n"); return 1; }
    if (c.priority > 1) { /* this thread fills the device's slots between periods: just below the period's */
        struct sched_param sp;
        sp.sched_priority = (int)c.priority - 1;
        pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    }
    /* the device's slots filled one period ahead, the rows taken as they come: the force sent, the row logged */
    for (;;) {
        int running = kane_load(&c.running) != 0;
        long done = kane_load(&c.periods), head = kane_load(&c.head);
        while (taken < head) {
            const double *row = rows + (taken % RING) * ROW_WIDTH;
            double f[6];
            for (i = 0; i < 3; ++i) { f[i] = -row[13 + i]; f[3 + i] = SERVO_POSE ? -row[23 + i] : 0.0; }
            reply(&d, slot_seq[taken % RING], row[0], f);
            if (log) {
                for (i = 0; i < ROW_WIDTH; ++i) fprintf(log, i ? ",%.17g" : "%.17g", row[i]);
                fputc('\n', log);
            }
            ++taken;
            kane_store(&c.tail, taken);
        }
        if (!running) break;
        if (k == done && taken == k) { /* fill slot k, the next period's, once period k - 1's row is answered */
            double *s = dev + (k % RING) * 20;
            int fresh = drain_socket(&d, 0) > 0;
            while (lockstep && !fresh) {  /* the period waits for a fresh state packet */
                int r = drain_socket(&d, (int)(wait_s * 1000));
                if (r < 0) break;
                fresh = r;
            }
            if (lockstep && !fresh) { kane_store(&c.stop, 1); continue; }
            for (i = 0; i < 20; ++i) s[i] = NAN;
            if (fresh || (d.have_sample && now_s() - d.fresh_at <= SERVO_HOLD)) {
                memcpy(s + 1, d.sample + 1, 19 * sizeof *s);
                s[1] = c.t0 + k * c.period;
                s[0] = (double)check(s);
            } else {
                s[0] = 2.0;
            }
            slot_seq[k % RING] = d.last_seq;
            ++k;
            kane_store(&c.dev_produced, k);
        } else if (!lockstep) {
            if (drain_socket(&d, 0) <= 0) wait_socket(d.fd, tick_us);
        } else {
            sched_yield();
        }
    }
    kane_period_join(&c);
    reply(&d, d.last_seq, c.t0 + k * c.period, zero); /* the device displays no force after the run */
    if (log) fclose(log);
    status = (int)c.status;
    printf("status: %s\n", status == 0 ? "completed" : status == 1 ? "stopped" :
           status == 2 ? "device stopped answering" : "failed");
    printf("periods: %ld, missed deadlines: %ld, saturated: %ld, samples refused: %ld, missing: %ld\n", c.periods,
           c.missed, c.saturated, c.refused, c.missing);
    printf("compute max: %.3g us, lateness max: %.3g us; energy into the model through the coupler: %.9g J\n",
           c.compute_max * 1e6, c.late_max * 1e6, c.port_energy);
    printf("udp packets: received %ld, used %ld, lost %ld, stale %ld, malformed %ld, oversized %ld, foreign %ld, "
           "replies %ld\n", d.received, d.used, d.lost, d.stale, d.malformed, d.oversized, d.foreign, d.replies);
    if (c.priority > 0 && c.sched_result != 0)
        printf("SCHED_FIFO priority %ld refused (needs root or CAP_SYS_NICE): the period ran at normal priority\n",
               c.priority);
    close(d.fd);
    return status <= 2 ? 0 : 1;
}
"""

SERVO_MAKEFILE = """# generated by kane (kane export-c --servo): no text of the model's in this file.
# `make` builds ./servo (servo.c, period.c, model.c); ./servo --help lists its options.
CFLAGS ?= -std=c99 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -ffp-contract=off
LDLIBS = -lpthread -lm

servo: servo.c period.c model.c model.h period.h
\t$(CC) $(CFLAGS) -o $@ servo.c period.c model.c $(LDLIBS)

clean:
\trm -f servo

.PHONY: clean
"""
