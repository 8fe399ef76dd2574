"""The machine's own floor for a fixed-rate loop: a C loop (built by the system C compiler, called through cffi
with the GIL released) that does nothing but wait for each period as kane.realtime does (sleep until ``spin``
before the period's start, then spin) and then work for ``work`` seconds, counting the periods whose wake-up
lateness plus work exceed the period. What it misses, no loop on this machine can avoid: the scheduler's and the
hypervisor's interruptions.

The work is a fixed amount of computation (``fixed_work=True``, the default): a chain of floating-point operations
calibrated beforehand to last ``work`` seconds undisturbed, so that an interruption inside it (the 4 ms timer tick
of this VM costs up to about 100 us) lengthens it as it lengthens a real period's work. With ``fixed_work=False``
the loop spins until ``work`` seconds have passed on the clock, which absorbs such interruptions and understates
the floor of any loop that computes."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import cffi

from kane.codegen.c_cache import find_compiler

__all__ = ["floor_run"]

_SOURCE = r"""
#define _GNU_SOURCE
#include <time.h>
#include <sched.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
double burn(long n) { volatile double x = 1.0; for (long i = 0; i < n; ++i) x = x * 1.0000001 + 1e-9; return x; }
long floor_run(double rate, double duration, double spin, double work, long iterations, int priority,
               double *late_max) {
    if (priority > 0) { struct sched_param p; p.sched_priority = priority; sched_setscheduler(0, SCHED_FIFO, &p); }
    double T = 1.0 / rate, t0 = now() + T, worst = 0.0;
    long n = (long)(duration * rate + 0.5), missed = 0;
    for (long k = 0; k < n; ++k) {
        double start = t0 + k * T, wake = start - spin, x;
        if (wake > now()) {
            struct timespec ts; ts.tv_sec = (time_t)wake; ts.tv_nsec = (long)((wake - ts.tv_sec) * 1e9);
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, 0);
        }
        while ((x = now()) < start) {}
        double end = x + work, late = x - start;
        if (iterations > 0) burn(iterations); else while (now() < end) {}
        if (late > worst) worst = late;
        if (now() - start > T) ++missed;
    }
    if (priority > 0) { struct sched_param p; p.sched_priority = 0; sched_setscheduler(0, SCHED_OTHER, &p); }
    *late_max = worst;
    return missed;
}
"""


def floor_run(rate: float, duration: float, spin: float, work: float, priority: int = 0, *,
              fixed_work: bool = True, pin_cpu: bool = False) -> tuple[int, int, float]:
    """(missed periods, periods, maximum wake-up lateness [s]) of the C loop at ``rate`` [Hz] for ``duration`` [s],
    spinning ``spin`` [s] before each period and working ``work`` [s] in it (a fixed computation, or with
    ``fixed_work=False`` a spin on the clock), under SCHED_FIFO ``priority`` if > 0; with ``pin_cpu`` on the CPU
    that kane's C thread takes with LoopOptions(pin_cpu=True) (the last one allowed; two CPUs or more)."""
    cmd, why = find_compiler()
    if cmd is None:
        raise RuntimeError(f"platform floor: {why}")
    ffi = cffi.FFI()
    ffi.cdef("double burn(long); long floor_run(double, double, double, double, long, int, double *);")
    with tempfile.TemporaryDirectory() as tmp:
        src, lib = Path(tmp) / "floor.c", Path(tmp) / "floor.so"
        src.write_text(_SOURCE)
        subprocess.run([*cmd, "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
        c = ffi.dlopen(str(lib))
        late = ffi.new("double *")
        iterations = 0
        if fixed_work:  # the iterations that take ``work`` undisturbed: the fastest of 20 timings of 1e6
            best = min(_timed(c.burn, 1_000_000) for _ in range(20))
            iterations = max(1, int(round(work / best * 1_000_000)))
        allowed = os.sched_getaffinity(0)
        if pin_cpu and len(allowed) >= 2:
            os.sched_setaffinity(0, {max(allowed)})
        try:
            missed = c.floor_run(rate, duration, spin, work, iterations, priority, late)
        finally:
            os.sched_setaffinity(0, allowed)
        return int(missed), int(round(duration * rate)), float(late[0])


def _timed(fn, n: int) -> float:
    start = time.perf_counter()
    fn(n)
    return time.perf_counter() - start
