"""Sweep benchmark (issue 17): 1,000 runs of 1 s of the 7-link chain of models.py, in-process and on Dask.

Each run starts from a random q0 (all seven angles uniform in [-0.5, 0.5] rad, seed 1) and integrates 1 s with
DOPRI5 (rtol 1e-8, samples every 0.01 s) in the compiled C backend. Measured in the same process: the in-process
loop (no file, and with the HDF5 results file), and a LocalCluster of one and of two worker processes (one thread
each), started once and warmed up by a 2-run sweep, so the Dask figures hold the per-run work and the
connection of the client, not the cluster's start.
Printed: seconds per run, the Dask per-run overhead over the in-process loop, and the speed-up from one to two
workers (issue 17 asks for at least 1.7x on a 2-core machine). Run: ``python bench/bench_sweep.py [runs]``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from distributed import LocalCluster  # noqa: E402

from kane.sweep import Backend, Draws, Execution, Metrics, RunSettings, Sweep, Uniform, run_sweep  # noqa: E402

from models import pendulum_chain_kane  # noqa: E402

__all__ = ["run", "chain_sweep"]


def chain_sweep(runs: int, seed: int = 1) -> Sweep:
    """``runs`` random starts of the 7-link chain, 1 s each."""
    draws = Draws(tuple(Uniform(f"q0.q{i + 1}", -0.5, 0.5) for i in range(7)), runs, seed)
    return Sweep(pendulum_chain_kane(7), (draws,), RunSettings((0.0, 1.0), rtol=1e-8, atol=1e-10, output_dt=0.01),
                 Metrics())


def _timed(sweep, path=None, execution=Execution()) -> float:
    start = time.perf_counter()
    result = run_sweep(sweep, path, execution)
    elapsed = time.perf_counter() - start
    assert result.failed == 0 and result.done == len(result.table)
    return elapsed


def run(runs: int = 1000) -> dict:
    sweep, small = chain_sweep(runs), chain_sweep(2, seed=2)
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
    return {"per_run_s": out, "overhead_s": overhead, "speedup_2_workers": dask[1] / dask[2]}


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
