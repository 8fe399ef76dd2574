"""A model file's [inputs] schedules in a sweep: every run is driven at its own parameter values, in process and on
Dask workers (the schedule pickled to them), the schedule is part of each point's key, and the batch backend,
which holds the inputs at their defaults, refuses such a model."""

import pickle

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.io.model_file import parse_model
from kane.sweep import Backend, Execution, Grid, Metrics, RunSettings, Sweep, prepare, run_sweep

PUSHED = """
[model]
name = "pushed"

[parameters]
m = 2.0
F0 = 1.0

[inputs]
F = "F0*t"                      # a push growing as F0 t [N]

[[bodies]]
name = "block"
mass = "m"
particle = true

[[joints]]
name = "rail"
parent = "ground"
child = "block"
type = "prismatic"
axis = "x"
coordinates = ["x"]
speed_names = ["v"]

[[loads]]
type = "force"
body = "block"
vector = ["F", 0, 0]
"""

RUN = RunSettings((0.0, 1.5), rtol=1e-11, atol=1e-13, output_dt=0.05)


def _sweep(text=PUSHED):
    return Sweep(parse_model(text, "pushed.toml"), (Grid("F0", 1.0, 3.0, 3), Grid("m", 1.0, 2.0, 2)), RUN,
                 Metrics(maxima=False, energy_drift=False))


def test_each_run_is_pushed_by_its_own_schedule_in_process_and_on_dask(tmp_path):
    """m x'' = F0 t from rest: x(T) = F0 T^3 / (6 m), v(T) = F0 T^2 / (2 m) (hand derivation), at every point's F0
    and m; the Dask workers, which receive the schedule pickled, give the same numbers bit for bit."""
    local = run_sweep(_sweep(), tmp_path / "local.h5")
    table = local.table
    assert (local.done, local.failed) == (6, 0)
    F0, m, T = table.column("F0"), table.column("m"), 1.5
    np.testing.assert_allclose(table.column("final.q.x"), F0 * T ** 3 / (6 * m), rtol=1e-9)
    np.testing.assert_allclose(table.column("final.u.v"), F0 * T ** 2 / (2 * m), rtol=1e-9)
    dask = run_sweep(_sweep(), tmp_path / "dask.h5", Execution(Backend.DASK, workers=1, threads_per_worker=1))
    assert dask.table.keys == table.keys
    assert np.array_equal(dask.table.metrics, table.metrics)


def test_the_schedule_is_part_of_the_key_and_travels_by_pickle():
    plan, other = prepare(_sweep()), prepare(_sweep(PUSHED.replace('F = "F0*t"', 'F = "F0*t**2"')))
    assert not set(plan_keys := [t.key for t in plan.tasks]) & {t.key for t in other.tasks} and len(plan_keys) == 6
    schedule = pickle.loads(pickle.dumps(plan.schedule))
    dyn = plan.equations.compile("numpy")
    assert schedule.bind(dyn, {"F0": 4.0})(0.5, np.zeros(1), np.zeros(1)) == {"F": 2.0}


def test_the_batch_backend_refuses_a_scheduled_model():
    with pytest.raises(ArgumentError, match="the batch backend holds the inputs at their defaults; this model "
                                            "schedules F: use Backend.IN_PROCESS or Backend.DASK"):
        run_sweep(_sweep(), execution=Execution(Backend.BATCH))
