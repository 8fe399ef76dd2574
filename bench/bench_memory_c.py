"""Memory and speed of large models through the C backend (issue 12): the n-link spherical-joint chain (3n DOF).

For each n, in a fresh process (so the peak resident set size is this model's): deriving Kane's equations and
compiling u' with the C backend (peak RSS, seconds, one u'), and the recursive ABA traced into a Program through
the same backend (``kane.dynamics(system, "aba", backend="c")``). The table says from which size the recursive
formulation is cheaper per u'; the choice is one argument, ``kane.dynamics(system, formulation, backend="c")``
("kane", "aba", "crba", or "auto": by size, see :mod:`kane.symbolic.formulation`), and the last column says
what "auto" takes. ``--before`` adds Kane's equations with the LDL^T solve unrolled at every size (the printing of
the C backend before the looped solve of large mass matrices, ``c_print.LOOP_SOLVE_ABOVE``) in the same run.
Target (issue 12): 100 links derived and compiled under 2 GB.
Run: ``python bench/bench_memory_c.py [--links 5 10 20 40 100] [--timeout 600] [--before]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

__all__ = ["measure", "run"]

_CHILD = """
import json, resource, sys, time, timeit
sys.path.insert(0, {here!r})
import numpy as np, kane
from kane.codegen import c_print
from models import spherical_chain_kane
n, which = {n}, {which!r}
system = spherical_chain_kane(n)
rng = np.random.default_rng(0)
if which == "unrolled":
    c_print.LOOP_SOLVE_ABOVE = 10 ** 9
t0 = time.perf_counter()
if which in ("kane", "unrolled"):
    eqs = kane.derive(system)
    t1 = time.perf_counter()
    dyn = eqs.compile(backend="c")
else:
    t1 = time.perf_counter()
    dyn = kane.dynamics(system, "aba", backend="c")
q = rng.normal(size=(n, 4)); q /= np.linalg.norm(q, axis=1, keepdims=True); q = q.reshape(-1)
u = rng.normal(size=3 * n)
ud = dyn.udot(0.0, q, u)
t2 = time.perf_counter()
us = min(timeit.repeat(lambda: dyn.udot(0.0, q, u), number=200, repeat=5)) / 200 * 1e6
peak = lambda who: resource.getrusage(who).ru_maxrss / 1024
print(json.dumps(dict(derive_s=t1 - t0, compile_s=t2 - t1, udot_us=us, peak_mb=peak(resource.RUSAGE_SELF),
                      cc_peak_mb=peak(resource.RUSAGE_CHILDREN), check=float(np.abs(ud).sum()))))
"""


def measure(n: int, which: str, timeout: float) -> dict | None:
    """Figures of one formulation ("kane", "unrolled": Kane's with the solve unrolled, or "aba") of the n-link
    chain in a fresh process; None past timeout."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, KANE_CACHE_DIR=cache)
        try:
            res = subprocess.run([sys.executable, "-c", _CHILD.format(here=str(HERE), n=n, which=which)], env=env,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
    if res.returncode != 0:
        raise RuntimeError(f"{which} n={n}: {res.stderr[-800:]}")
    return json.loads(res.stdout.splitlines()[-1])


def _kane_cells(k, timeout) -> str:
    return (f"{k['derive_s']:14.2f} {k['compile_s']:9.2f} {k['peak_mb']:5.0f} + {k['cc_peak_mb']:4.0f} "
            f"{k['udot_us']:8.2f}" if k else f"{'over ' + str(int(timeout)) + ' s':>47}")


def run(links=(5, 10, 20, 40), timeout: float = 600.0, before: bool = False) -> dict:
    from kane.symbolic.formulation import choose_formulation
    from models import spherical_chain_kane

    out = {}
    print("peak MB: Python's resident set, then the C compiler's (each process apart)")
    head = f"{'Kane: derive s':>14} {'compile s':>9} {'peak MB':>12} {'udot us':>8}"
    print(f"{'links':>5} {'DOF':>4} | {head} | " + (f"{'(before: solve unrolled)':>47} | " if before else "")
          + f"{'ABA in C: trace+compile s':>25} {'peak MB':>12} {'udot us':>8} | faster | auto")
    for n in links:
        k, a = measure(n, "kane", timeout), measure(n, "aba", timeout)
        out[n] = {"kane": k, "aba": a}
        cells = _kane_cells(k, timeout) + " | "
        if before:
            out[n]["unrolled"] = measure(n, "unrolled", timeout)
            cells += _kane_cells(out[n]["unrolled"], timeout) + " | "
        as_ = (f"{a['compile_s']:25.2f} {a['peak_mb']:5.0f} + {a['cc_peak_mb']:4.0f} {a['udot_us']:8.2f}" if a
               else f"{'timeout':>47}")
        best = "-" if not (k and a) else ("Kane" if k["udot_us"] < a["udot_us"] else "ABA")
        auto = choose_formulation(spherical_chain_kane(n)).formulation.value
        print(f"{n:5d} {3 * n:4d} | {cells}{as_} | {best:>6} | {auto}", flush=True)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, nargs="*", default=[5, 10, 20, 40])
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--before", action="store_true", help="also Kane's equations with the solve unrolled")
    args = ap.parse_args()
    run(tuple(args.links), args.timeout, args.before)
