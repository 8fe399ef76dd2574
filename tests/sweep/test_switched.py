"""Sweeps of a model file with [[switching]] tables (kane.sweep.switched): every point runs under the rules at
its own parameters, in process and on Dask, against the hand derivation of a pushed block that sticks and slips."""

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import ArgumentError
from kane.io.model_file import parse_model
from kane.simulate import Event
from kane.sweep import Backend, Execution, Grid, Metrics, RunSettings, Sweep, prepare, run_sweep

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _switching_files import SLIDER  # noqa: E402

RUN = RunSettings((0.0, 7.0), rtol=1e-10, atol=1e-12, output_dt=0.05)


def _sweep(text=SLIDER, run=RUN):
    return Sweep(parse_model(text, "slider.toml"), (Grid("mus", 0.25, 0.35, 3), Grid("u0.v", 1.5, 2.0, 2)), run,
                 Metrics(maxima=False, energy_drift=False))


def test_each_point_sticks_and_slips_at_its_own_friction_in_process_and_on_dask(tmp_path):
    """Pushed by c t from v0 (1.5 or 2 m/s), the block slides to rest under mu_k m g, sticks, and slips again when
    c t = mu_s m g, at t2 = mu_s m g / c: then v(T) = c (T^2 - t2^2) / (2 m) - mu_k g (T - t2) (hand derivation,
    whatever v0), so the final speed follows each point's mu_s."""
    local = run_sweep(_sweep(), tmp_path / "local.h5")
    assert (local.done, local.failed) == (6, 0)
    table = local.table
    m, g, c, mu_k, T = 2.0, 9.81, 1.0, 0.25, 7.0
    t2 = table.column("mus") * m * g / c
    np.testing.assert_allclose(table.column("final.u.v"), c * (T ** 2 - t2 ** 2) / (2 * m) - mu_k * g * (T - t2),
                               rtol=1e-8)
    dask = run_sweep(_sweep(), tmp_path / "dask.h5", Execution(Backend.DASK, workers=1, threads_per_worker=1))
    assert dask.table.keys == table.keys and np.array_equal(dask.table.metrics, table.metrics)


def test_the_rules_are_part_of_the_key_and_run_events_and_the_batch_are_refused():
    keys = {t.key for t in prepare(_sweep()).tasks}
    other = {t.key for t in prepare(_sweep(SLIDER.replace("mu_k = 0.25", "mu_k = 0.2"))).tasks}
    assert len(keys) == 6 and not keys & other
    with pytest.raises(ArgumentError, match="run events are not taken by a switching run"):
        prepare(_sweep(run=RunSettings((0.0, 1.0), events=(Event("x", lambda t, q, u: q[0]),))))
    with pytest.raises(ArgumentError, match="the batch backend runs one set of equations; a model with "
                                            r"\[\[switching\]\] rules"):
        run_sweep(_sweep(), execution=Execution(Backend.BATCH))


def test_kane_sweep_runs_the_switching_model_file(tmp_path):
    model = tmp_path / "slider.toml"
    model.write_text(SLIDER)
    res = CliRunner().invoke(main, ["sweep", str(model), "--grid", "mus=0.25:0.35:3", "--t-end", "7", "--in-process",
                                    "-o", str(tmp_path / "s.h5")])
    assert res.exit_code == 0 and "runs: 3 done, 0 skipped, 0 failed" in res.output, res.output
