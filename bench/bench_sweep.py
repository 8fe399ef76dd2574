"""Sweep benchmark (issue 17): 1,000 runs of 1 s of the 7-link chain of models.py, in-process and on Dask.

The sweep is derived and keyed once (``prepare``, printed, not in the timings: the same one-time cost for every
backend, which would otherwise hide the scaling). Each run starts from a random q0 (all seven angles uniform in
[-0.5, 0.5] rad, seed 1) and integrates 1 s with DOPRI5 (rtol 1e-8, samples every 0.01 s) in the compiled C
backend. Measured in the same process: the in-process
loop (no file, and with the HDF5 results file), and a LocalCluster of one and of two worker processes (one thread
each), started once and warmed up by a 2-run sweep, so the Dask figures hold the per-run work and the
connection of the client, not the cluster's start.
Printed: seconds per run, the Dask per-run overhead over the in-process loop, and the speed-up from one to two
workers (issue 17 asks for at least 1.7x on a 2-core machine). Also, with fixed-step RK4 (dt = 2 ms, the same
points): the in-process loop against the numpy batch backend (:mod:`kane.sweep.batch`, 1024 points a batch).
Run: ``python bench/bench_sweep.py [runs] [--quick]`` (``--quick``: 200 runs).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from distributed import LocalCluster  # noqa: E402

from kane.sweep import (Backend, Draws, Execution, Metrics, RunSettings, Sweep, Uniform, prepare,  # noqa: E402
                        run_sweep)

from models import pendulum_chain_kane  # noqa: E402

__all__ = ["run", "chain_sweep"]


def chain_sweep(runs: int, seed: int = 1, method: str = "dopri5") -> Sweep:
    """``runs`` random starts of the 7-link chain, 1 s each (RK4: dt = 2 ms)."""
    draws = Draws(tuple(Uniform(f"q0.q{i + 1}", -0.5, 0.5) for i in range(7)), runs, seed)
    run = RunSettings((0.0, 1.0), method, rtol=1e-8, atol=1e-10, output_dt=0.01,
                      dt=0.002 if method == "rk4" else None)
    return Sweep(pendulum_chain_kane(7), (draws,), run, Metrics())


def _timed(sweep, path=None, execution=Execution()) -> float:
    start = time.perf_counter()
    result = run_sweep(sweep, path, execution)
    elapsed = time.perf_counter() - start
    assert result.failed == 0 and result.done == len(result.table)
    return elapsed


def run(runs: int = 1000) -> dict:
    start = time.perf_counter()
    sweep, small = prepare(chain_sweep(runs)), prepare(chain_sweep(2, seed=2))  # derived once, out of the timings
    print(f"  derivation and keys of the sweep (once, not timed below): {time.perf_counter() - start:.2f} s")
    _timed(small)  # compile (or load from the C cache) and warm up
    t_loop = _timed(sweep)
    with tempfile.TemporaryDirectory() as d:
        t_file = _timed(sweep, Path(d) / "s.h5")
    out = {"in-process loop": t_loop / runs, "in-process loop + HDF5": t_file / runs}
    dask = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as c:
            ex = Execution(Backend.DASK, scheduler=c.scheduler_address)
            _timed(small, execution=ex)  # every worker compiles (C cache) and warms up
            dask[workers] = _timed(sweep, execution=ex)
        out[f"dask, {workers} worker(s)"] = dask[workers] / runs
    for k, v in out.items():
        print(f"  {k:45s} {1e3 * v:8.3f} ms/run")
    overhead = dask[1] / runs - t_loop / runs
    print(f"  Dask per-run overhead over the in-process loop (1 worker): {1e3 * overhead:.3f} ms/run "
          f"({dask[1] / t_loop:.2f}x the loop)")
    print(f"  speed-up from one to two workers: {dask[1] / dask[2]:.2f}x (issue 17: at least 1.7x on 2 cores); "
          f"os.cpu_count() = {os.cpu_count()}")
    rk4, rk4_small = prepare(chain_sweep(runs, method="rk4")), prepare(chain_sweep(2, seed=2, method="rk4"))
    _timed(rk4_small)
    _timed(rk4_small, execution=Execution(Backend.BATCH))  # compile the numpy batch functions
    t_rk4_loop = _timed(rk4)
    t_rk4_batch = _timed(rk4, execution=Execution(Backend.BATCH))
    print(f"  RK4: in-process loop {1e3 * t_rk4_loop / runs:.3f} ms/run, numpy batch {1e3 * t_rk4_batch / runs:.3f} "
          f"ms/run ({t_rk4_loop / t_rk4_batch:.2f}x the loop's speed)")
    return {"per_run_s": out, "overhead_s": overhead, "speedup_2_workers": dask[1] / dask[2],
            "rk4_batch_over_loop": t_rk4_loop / t_rk4_batch}


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--quick"]
    run(int(args[0]) if args else 200 if "--quick" in sys.argv else 1000)
