"""C backend benchmark (issue 12): Kane's u' compiled as C against Pinocchio's ABA, and compile times.

On the 7-link chain of models.py (pendulum_chain_kane(7), rebuilt in Pinocchio by bench_aba.pinocchio_chain), in
one process: one u' from Python (``Dynamics.udot`` with backend="c", and the bare compiled function) against
``pin.aba``; a batch of 100,000 states (one call into C, split over the cores) against ``pin.abaInParallel`` per
state. Compile times: cold (an empty cache: printing the C, the compiler, loading) and from the cache in a second
process (printing, hashing, checksum, loading), for 7 and 30 links. Targets: one u' no slower than pin.aba; the
batch at most 0.3x abaInParallel per state; 7 links under 2 s cold and 50 ms cached, 30 links under 10 s cold.
Run: ``python bench/bench_c.py [--links 7 30]`` (needs pin and a C compiler).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kane  # noqa: E402

from models import pendulum_chain_kane  # noqa: E402

__all__ = ["run", "compile_times"]

_CHILD = """
import sys, time
sys.path.insert(0, {here!r})
import numpy as np, kane
from models import pendulum_chain_kane
eqs = kane.derive(pendulum_chain_kane({n}))
t0 = time.perf_counter()
dyn = eqs.compile(backend="c")
dyn.udot(0.0, np.zeros({n}), np.zeros({n}))
print(time.perf_counter() - t0)
"""


def _best(fn, number, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def compile_times(n: int) -> tuple[float, float]:
    """(cold, cached) seconds from derived equations to a first u', each in a fresh process."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, KANE_CACHE_DIR=cache)
        runs = [float(subprocess.run([sys.executable, "-c", _CHILD.format(here=str(HERE), n=n)], env=env, check=True,
                                     capture_output=True, text=True).stdout.split()[-1]) for _ in range(2)]
    return runs[0], runs[1]


def run(n: int = 7, batch: int = 100_000, links=(7, 30)) -> dict:
    try:
        import pinocchio as pin
    except ImportError:
        print("pinocchio (pip install pin) is not installed: nothing to compare with")
        return {}
    from bench_aba import pinocchio_chain

    eqs = kane.derive(pendulum_chain_kane(n))
    dyn = eqs.compile(backend="c")
    params = dict(zip(dyn.parameter_names, eqs.model.parameter_defaults))
    pmodel = pinocchio_chain(n, params)
    pdata = pmodel.createData()
    rng = np.random.default_rng(0)
    q, u, tau = rng.normal(size=n), rng.normal(size=n), np.zeros(n)
    assert np.allclose(dyn.udot(0.0, q, u), pin.aba(pmodel, pdata, q, u, tau), rtol=1e-10, atol=1e-10)
    fn = dyn._fn("udot", [], False, solve=True)
    p, w = dyn._default_params, dyn._default_inputs
    out = {}
    reps = 20_000
    for _ in range(2):  # interleaved, the best of each: the machine may be shared
        out["pin_us"] = min(out.get("pin_us", 1e9), _best(lambda: pin.aba(pmodel, pdata, q, u, tau), reps) * 1e6)
        out["udot_us"] = min(out.get("udot_us", 1e9), _best(lambda: dyn.udot(0.0, q, u), reps) * 1e6)
        out["kernel_us"] = min(out.get("kernel_us", 1e9), _best(lambda: fn(0.0, q, u, p, w), reps) * 1e6)
    print(f"{n}-link chain, one u' from Python (Kane's equations in C; {eqs.count_ops()['M+f'].total} operations "
          "for M and f)")
    print(f"  pin.aba                   {out['pin_us']:8.3f} us")
    print(f"  kane Dynamics.udot (C)    {out['udot_us']:8.3f} us   ratio {out['udot_us'] / out['pin_us']:5.2f}x"
          "   (target: at most 1x)")
    print(f"  kane compiled function    {out['kernel_us']:8.3f} us   ratio {out['kernel_us'] / out['pin_us']:5.2f}x")

    Q, U = rng.normal(size=(batch, n)), rng.normal(size=(batch, n))
    ref = dyn.udot(0.0, Q, U)
    out["batch_us"] = _best(lambda: dyn.udot(0.0, Q, U), 1, 5) / batch * 1e6
    threads = os.cpu_count() or 1
    pool = pin.ModelPool(pmodel, threads)
    Qp, Up, Tp = (np.asfortranarray(x.T) for x in (Q, U, np.zeros((batch, n))))
    A = np.asfortranarray(np.zeros((n, batch)))
    pin.abaInParallel(threads, pool, Qp, Up, Tp, A)
    assert np.allclose(A.T, ref, rtol=1e-9, atol=1e-9)
    out["pin_batch_us"] = _best(lambda: pin.abaInParallel(threads, pool, Qp, Up, Tp, A), 1, 5) / batch * 1e6
    out["batch_us"] = min(out["batch_us"], _best(lambda: dyn.udot(0.0, Q, U), 1, 5) / batch * 1e6)
    print(f"batch of {batch} states, per state ({threads} threads each):")
    print(f"  pin.abaInParallel         {out['pin_batch_us']:8.4f} us")
    print(f"  kane udot batch (C)       {out['batch_us']:8.4f} us   ratio "
          f"{out['batch_us'] / out['pin_batch_us']:5.2f}x   (target: at most 0.3x)")

    for k in links:
        cold, cached = compile_times(k)
        out[f"cold_{k}_s"], out[f"cached_{k}_s"] = cold, cached
        print(f"compile u' of the {k}-link chain: cold {cold:6.2f} s, from the cache {cached * 1e3:7.1f} ms")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, nargs="*", default=[7, 30])
    run(links=tuple(ap.parse_args().links))
