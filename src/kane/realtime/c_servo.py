"""The standalone servo program (issue 32, item 3; ``kane export-c MODEL --servo``): the C period of
:mod:`.c_period_text` with the model's compiled RK4 step and coupler point, a UDP device (protocol v1) on loopback,
a CSV log and the gains and rate of the model file's ``[realtime]`` table, as C99 files and a Makefile that build
with ``-std=c99 -Wall -Wextra -Werror`` and run without Python (SCHED_FIFO when permitted and asked for).

The files hold numbers and generated identifiers only: no name or text of the model's (the C backend prints every
symbol by a generated name; the model's names go into ``servo_columns.txt``, a data file, never into C).
"""

from __future__ import annotations

import math
import pathlib
from dataclasses import dataclass

import numpy as np

from ..codegen.c_backend import CFunction
from ..errors import ArgumentError, KaneError
from .c_period_text import PERIOD_SOURCE, ROW_POINT, ROW_POSE, _STRUCT
from .coupler import CouplerGains, VirtualCoupler, add_coupler
from .model_table import realtime_settings

__all__ = ["ServoExport", "export_servo"]

_ENTRIES = ("kane_source_hash", "kane_sizes", "kane_prelude", "kane_batch", "kane_step", "kane_f")
_STUB = "long kane_step(long n, double dt, double *x, const double *pc) { return -1; }"

_MAIN = r"""/* the standalone haptic servo of kane (generated): a UDP device on loopback, the coupler, the model's RK4 step,
   a CSV log; usage: servo [PORT [LOG.csv [DURATION_S [PRIORITY [TIMEOUT_S]]]]]: TIMEOUT_S, how long the newest
   state stands in for missing packets and how long without one stops the loop [default: 0.005 s and 0.01 s] */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
""" + _STRUCT + r"""
void kane_period_run(kane_period *c);
int kane_period_start(kane_period *c);
int kane_period_join(kane_period *c);
long kane_load(long *where);
void kane_store(long *where, long value);
void servo_dyn_sizes(long *s);
void servo_dyn_prelude(double *pc);
long servo_dyn_step(long n, double dt, double *x, const double *pc);
void servo_dyn_f(double t, const double *q, const double *u, const double *w, const double *pc, double *out);
void servo_pt_sizes(long *s);
void servo_pt_prelude(double *pc);
void servo_pt_f(double t, const double *q, const double *u, const double *w, const double *pc, double *out);

static const double RATE = @RATE@, K = @K@, B = @B@, MAX_FORCE = @MAX_FORCE@, DURATION = @DURATION@;
static const double WORKSPACE = @WORKSPACE@, MAX_SPEED = @MAX_SPEED@, HOLD = @HOLD@, TIMEOUT = @TIMEOUT@;
static const double KR = @KR@, BR = @BR@, MAX_TORQUE = @MAX_TORQUE@, MAX_ANGULAR = @MAX_ANGULAR@;
static const long SUBSTEPS = @SUBSTEPS@, PORT = @PORT@, NQ = @NQ@, NU = @NU@, ROT = @ROT@;
static const long IDX[6] = {@IDX@};
static const double P[] = {@P@}, Q0[] = {@Q0@}, U0[] = {@U0@}, W0[] = {@W0@};

static void *zeros(long n) {
    void *a = calloc((size_t)(n > 0 ? n : 1), 8);
    if (!a) { fprintf(stderr, "servo: out of memory\n"); exit(2); }
    return a;
}

int main(int argc, char **argv) {
    long port = argc > 1 ? atol(argv[1]) : PORT, ds[6], ps[6], i;
    const char *log_path = argc > 2 ? argv[2] : "servo_log.csv";
    double duration = argc > 3 ? atof(argv[3]) : DURATION;
    long priority = argc > 4 ? atol(argv[4]) : 0;
    double hold = argc > 5 ? atof(argv[5]) : HOLD, timeout = argc > 5 ? atof(argv[5]) : TIMEOUT;
    servo_dyn_sizes(ds);
    servo_pt_sizes(ps);
    static kane_period c;
    memset(&c, 0, sizeof c);
    double *x = zeros(2 + NQ + NU + ds[3]), *pc = zeros(ds[2] + ds[4] + 1), *ppc = zeros(ps[2] + ps[4] + 1);
    for (i = 0; i < NQ; ++i) x[1 + i] = Q0[i];
    for (i = 0; i < NU; ++i) x[1 + NQ + i] = U0[i];
    for (i = 0; i < ds[3]; ++i) x[1 + NQ + NU + i] = W0[i];
    for (i = 0; i < ds[2]; ++i) pc[i] = P[i];
    for (i = 0; i < ps[2]; ++i) ppc[i] = P[i];
    servo_dyn_prelude(pc);
    servo_pt_prelude(ppc);
    double *pw = zeros(ps[3] + 1), *pout = zeros(18);
    for (i = 0; i < ps[3]; ++i) pw[i] = W0[i];
    servo_pt_f(0.0, x + 1, x + 1 + NQ, pw, ppc, pout);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me;
    memset(&me, 0, sizeof me);
    me.sin_family = AF_INET;
    me.sin_port = htons((unsigned short)port);
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) != 0) {
        fprintf(stderr, "servo: cannot listen on udp 127.0.0.1:%ld\n", port);
        return 2;
    }
    FILE *log = fopen(log_path, "w");
    if (!log) { fprintf(stderr, "servo: cannot write %s\n", log_path); return 2; }
    struct pollfd pfd = {fd, POLLIN, 0};
    fprintf(stderr, "servo: waiting up to 10 s for the device's first state packet on udp 127.0.0.1:%ld\n", port);
    if (poll(&pfd, 1, 10000) != 1) { fprintf(stderr, "servo: no state packet within 10 s\n"); return 2; }
    long n = (long)(duration * RATE + 0.5), cap = 65536;
    c.n_periods = n; c.substeps = SUBSTEPS; c.every = 1; c.nq = NQ; c.nu = NU; c.priority = priority;
    c.timeout_periods = (long)ceil(timeout * RATE - 1e-9);
    if (c.timeout_periods < 1) c.timeout_periods = 1;
    for (i = 0; i < 6; ++i) c.idx[i] = IDX[i];
    c.period = 1.0 / RATE; c.spin = 1e-3; c.k = K; c.b = B; c.max_force = MAX_FORCE; c.max_torque = MAX_TORQUE;
    c.rot = ROT; c.kr = KR; c.br = BR; c.udp_pose = ROT;
    c.step_fn = (void *)servo_dyn_step; c.deriv_fn = (void *)servo_dyn_f; c.point_fn = (void *)servo_pt_f;
    c.x = x; c.step_pc = pc; c.point_pc = ppc; c.point_w = pw; c.pout = pout;
    c.qx = zeros(NQ); c.qdot = zeros(NQ); c.deriv_out = zeros(ds[5]);
    c.dev = zeros(20); c.dev_cap = 1; c.row_width = (ROT ? 50 : 23) + NQ + NU;
    c.rows = zeros(cap * c.row_width);
    c.row_cap = cap; c.stat_cap = n > 0 ? n : 1; c.compute = zeros(c.stat_cap); c.late = zeros(c.stat_cap);
    static double edges[15] = {0.0, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 0};
    edges[14] = INFINITY;
    c.edges = edges; c.n_edges = 15; c.late_hist = zeros(14); c.compute_hist = zeros(14);
    c.dev_kind = 1; c.udp_fd = fd; c.udp_hold_ns = (long)(hold * 1e9);
    for (i = 0; i < 3; ++i) { c.ws_lo[i] = pout[i] - WORKSPACE; c.ws_hi[i] = pout[i] + WORKSPACE; }
    c.ws_max_speed = MAX_SPEED; c.ws_max_angular = MAX_ANGULAR;
    fprintf(log, "%s\n", "@COLUMNS@");
    if (kane_period_start(&c) != 0) { fprintf(stderr, "servo: the loop thread did not start\n"); return 2; }
    long tail = 0;
    struct timespec nap = {0, 5000000};
    for (;;) {
        int running = (int)kane_load(&c.running);
        long head = kane_load(&c.head), j;
        for (; tail < head; ++tail) {
            const double *row = c.rows + (tail % cap) * c.row_width;
            for (j = 0; j < c.row_width; ++j) fprintf(log, j ? ",%.17g" : "%.17g", row[j]);
            fputc('\n', log);
            kane_store(&c.tail, tail + 1);
        }
        if (!running) break;
        nanosleep(&nap, NULL);
    }
    kane_period_join(&c);
    fclose(log);
    if (c.udp_paired) {  /* zero force, echoing the newest sequence number */
        unsigned char p[72] = {'K', 'R', 'T', 'F', 1, 0, 0, 0};
        size_t size = ROT ? 72 : 48;
        p[4] = ROT ? 2 : 1;
        unsigned long long seq = c.udp_have_last ? c.udp_last : 0ULL;
        double t = (c.periods > 0 ? c.periods - 1 : 0) * c.period, zero = 0.0;  /* the last period's time */
        struct sockaddr_in to;
        memcpy(p + 8, &seq, 8);
        memcpy(p + 16, &t, 8);
        for (i = 0; i < 6; ++i) memcpy(p + 24 + 8 * i, &zero, 8);
        memset(&to, 0, sizeof to);
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = (in_addr_t)c.udp_ip;
        to.sin_port = htons((unsigned short)c.udp_port);
        sendto(fd, p, size, 0, (struct sockaddr *)&to, sizeof to);
    }
    close(fd);
    printf("periods %ld missed %ld saturated %ld refused %ld missing %ld status %ld sched %ld\n", c.periods, c.missed,
           c.saturated, c.refused, c.missing, c.status, c.sched_result);
    return 0;
}
"""

_MAKEFILE = """CC ?= cc
CFLAGS ?= -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 -ffp-contract=off -pthread
servo: servo_main.c servo_period.c servo_dynamics.c servo_point.c
\t$(CC) $(CFLAGS) -o servo servo_main.c servo_period.c servo_dynamics.c servo_point.c -lm
clean:
\trm -f servo
"""


@dataclass(frozen=True)
class ServoExport:
    """What :func:`export_servo` wrote: the ``directory``, the C ``files`` and the Makefile, ``columns`` of the CSV
    log (its header, also in ``servo_columns.txt``), the ``rate`` [Hz], ``port`` and the coupler's ``gains``."""

    directory: pathlib.Path
    files: tuple
    columns: tuple
    rate: float
    port: int
    gains: CouplerGains


def _renamed(source: str, prefix: str) -> str:
    """A C backend library's source with its exported entry points renamed ``<prefix>_...`` (two in one program)."""
    lines = [f"#define {name} {prefix}_{name[len('kane_'):]}" for name in _ENTRIES]
    return "\n".join(lines) + "\n" + source.replace("@KEY@", prefix)


def _numbers(values) -> str:
    out = []
    for v in np.asarray(values, dtype=float).reshape(-1):
        if not math.isfinite(v):
            raise ArgumentError(f"export-c --servo: a value of the model is {v!r}; expected finite numbers")
        out.append(repr(float(v)))
    return ", ".join(out) or "0.0"


def export_servo(loaded, directory, *, body: str | None = None, point=None) -> ServoExport:
    """Write the servo program of ``loaded`` (a :class:`kane.io.model_file.LoadedModel`) into ``directory``: the
    coupled ``body`` and ``point`` (default: its ``[realtime]`` table's), the rate, stiffness, damping (default
    K T), max_force, substeps, udp_port, workspace, duration of that table (or kane realtime's defaults)."""
    table = realtime_settings(loaded)
    body = body or table.body
    if body is None:
        raise ArgumentError("export-c --servo: give --couple BODY:X,Y,Z, or body (and point) in the model file's "
                            "[realtime] table")
    if loaded.tables.get("switching") or loaded.tables.get("contacts"):
        raise ArgumentError("export-c --servo: switched constraints and rolling contacts are not exported; the "
                            "servo program steps a plain model")
    point = point if point is not None else (table.point or (0.0, 0.0, 0.0))
    pose = table.rotational_stiffness is not None  # a full pose coupled: protocol v2, a torque on the body
    port = add_coupler(loaded.system, body, point, rotational=pose)
    dyn = loaded.derive().compile()
    if dyn.backend != "c" or dyn.u_dependent_names:
        raise KaneError("export-c --servo: needs the C backend and a model without dependent speeds")

    def pick(name, default):
        value = getattr(table, name)
        return default if value is None else value

    rate, stiffness = float(pick("rate", 1000.0)), float(pick("stiffness", 1000.0))
    k_r = float(pick("rotational_stiffness", 0.0))
    gains = CouplerGains(stiffness, float(pick("damping", stiffness / rate)), k_r,
                         float(pick("rotational_damping", k_r / rate)))
    max_force, max_torque = float(pick("max_force", 20.0)), float(pick("max_torque", math.inf))
    params = dict(loaded.parameters)
    cp = VirtualCoupler(dyn, port, gains, max_force=max_force, params=params, max_torque=max_torque)
    if not isinstance(cp._fn, CFunction):
        raise KaneError("export-c --servo: the coupler's point is not compiled to C")
    q0 = np.array([loaded.q0.get(n, 0.0) for n in dyn.q_names], dtype=float)
    u0 = np.array([loaded.u0.get(n, 0.0) for n in dyn.u_names], dtype=float)
    stepper = dyn.stepper(0.0, q0, u0, params, dyn.model.input_values())
    p_values = dyn.model.parameter_values(params)
    columns = (["t"] + [f"{g}_{a}" for g in ("hand_position", "hand_velocity", "point_position", "point_velocity",
                                             "force") for a in "xyz"]
               + ["power", "port_energy", "spring_energy", "sample_status", "mode", "compute_time", "lateness"]
               + ([f"torque_{a}" for a in "xyz"] + [f"hand_orientation_{i}" for i in range(9)]
                  + [f"hand_angular_velocity_{a}" for a in "xyz"] + [f"body_orientation_{i}" for i in range(9)]
                  + [f"body_angular_velocity_{a}" for a in "xyz"] if pose else [])
               + [f"q{i}" for i in range(dyn.n_q)] + [f"u{i}" for i in range(dyn.n_u)])
    assert len(columns) == (ROW_POSE if pose else ROW_POINT) + dyn.n_q + dyn.n_u
    udp_port = int(pick("udp_port", 5005))
    values = {"RATE": repr(rate), "K": repr(gains.stiffness), "B": repr(gains.damping), "MAX_FORCE": repr(max_force),
              "DURATION": repr(float(pick("duration", 10.0))), "WORKSPACE": repr(float(pick("workspace", 2.0))),
              "MAX_SPEED": "10.0", "HOLD": "0.005", "TIMEOUT": "0.01", "SUBSTEPS": str(int(pick("substeps", 1))),
              "PORT": str(udp_port), "NQ": str(dyn.n_q), "NU": str(dyn.n_u),
              "IDX": ", ".join(str(int(i)) for i in (list(cp.input_index) + [0, 0, 0])[:6]),
              "KR": repr(gains.rotational_stiffness), "BR": repr(gains.rotational_damping),
              "MAX_TORQUE": "INFINITY" if math.isinf(max_torque) else repr(max_torque), "ROT": str(int(pose)),
              "MAX_ANGULAR": "50.0", "P": _numbers(p_values), "Q0": _numbers(q0),
              "U0": _numbers(u0), "W0": _numbers(dyn.model.input_values()), "COLUMNS": ",".join(columns)}
    main = _MAIN
    for key, value in values.items():
        main = main.replace(f"@{key}@", value)
    point_source = cp._fn.source.replace(_STUB, "long kane_step(long n, double dt, double *x, const double *pc) {\n"
                                                "    (void)n; (void)dt; (void)x; (void)pc;\n    return -1;\n}")
    texts = {"servo_main.c": main, "servo_period.c": PERIOD_SOURCE.replace("@KEY@", "servo"),
             "servo_dynamics.c": _renamed(stepper.fn.source, "servo_dyn"),
             "servo_point.c": _renamed(point_source, "servo_pt"), "Makefile": _MAKEFILE,
             "servo_columns.txt": "\n".join(["t [s] then the log's columns; q and u in this order:",
                                             *dyn.q_names, *dyn.u_names]) + "\n"}
    out = pathlib.Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (out / name).write_text(text)
    except OSError as exc:
        raise KaneError(f"export-c --servo: cannot write into {out}: {exc}") from None
    return ServoExport(out, tuple(out / n for n in texts), tuple(columns), rate, udp_port, gains)
