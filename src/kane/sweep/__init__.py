"""Parameter sweeps and Monte Carlo: many runs of one compiled model, in-process or on Dask, into one HDF5 file
(or a Zarr store).

    >>> from kane.sweep import Sweep, Grid, RunSettings, Execution, Backend, run_sweep
    >>> sweep = Sweep("examples/rolling_disk.toml", (Grid("r", 0.2, 0.6, 5), Grid("u0.w2", 2.0, 6.0, 9)),
    ...               RunSettings(t_span=(0.0, 3.0), rtol=1e-6, atol=1e-8))
    >>> result = run_sweep(sweep, "disk.h5", Execution(Backend.DASK, workers=2))
    >>> result.table.column("max.u.w1"), result.done, result.skipped, result.failed

Points (:mod:`kane.sweep.spec`), per-run metrics (:mod:`kane.sweep.metrics`), the resumable results file
(:mod:`kane.sweep.store`, or a Zarr store: :mod:`kane.sweep.store_zarr`) and the execution (:mod:`kane.sweep.execute`).
"""

from .execute import Backend, Execution, Plan, SchedulerError, SweepResult, Task, prepare, run_sweep, run_task
from .metrics import evaluate_metrics, metric_columns
from .spec import MAX_POINTS, Draws, Grid, Metric, Metrics, Normal, Points, RunSettings, Sweep, Uniform
from .describe import describe
from .results import is_sweep_file, load_sweep, load_sweep_trajectory, open_results
from .store import SweepFile, SweepFileError, SweepTable
from .store_zarr import ZarrSweepFile

__all__ = [
    "Sweep", "Grid", "Uniform", "Normal", "Draws", "Points", "RunSettings", "Metric", "Metrics", "Execution",
    "Backend", "Plan", "Task", "SweepResult", "SchedulerError", "prepare", "run_sweep", "run_task",
    "evaluate_metrics", "metric_columns", "SweepFile", "SweepFileError", "SweepTable", "load_sweep",
    "load_sweep_trajectory", "open_results", "is_sweep_file", "ZarrSweepFile", "describe", "MAX_POINTS",
]
