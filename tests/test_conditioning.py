"""Seed 001's conditioning study (Cloutier 1995, §5.2): CRBM's accelerations lose accuracy in proportion to
cond(H) while ABM's stay at round-off and smooth (Figs. 5.3-5.5), and DOPRI5 needs more evaluations with CRBM once
cond(H) passes about 1e11 (Fig. 5.6)."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.studies.conditioning import (
    _dynamics,
    configuration_sweep,
    integration_study,
    planar_chain,
    reference_accelerations,
)

EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def dyn():
    return _dynamics()


@pytest.fixture(scope="module")
def sweep(dyn):
    return configuration_sweep((1.0, 1e2, 1e3, 1e4, 1e5), n_theta=73, dynamics=dyn)


def test_reference_is_the_same_chain(dyn):
    """The 50-digit closed form and kane's model of the chain agree on a well-conditioned chain, moving."""
    abm, crbm = dyn
    p = {"l1": 1.3, "m1": 0.7, "l2": 2.1, "m2": 1.9, "w": 0.4, "g": 9.8}
    q, u = np.array([0.4, -1.1]), np.array([0.8, -2.5])
    ref, H, cond = reference_accelerations(q, u, p)
    assert np.allclose(abm.udot(0.0, q, u, params=p), ref, rtol=1e-13, atol=1e-13)
    assert np.allclose(crbm.udot(0.0, q, u, params=p), ref, rtol=1e-13, atol=1e-13)
    assert np.allclose(crbm.mass_matrix(0.0, q, params=p), H, rtol=1e-14, atol=1e-14)
    assert cond == pytest.approx(np.linalg.cond(H), rel=1e-10)
    assert planar_chain().compile().n_u == 2


def test_condition_number_grows_with_the_distal_link(sweep):
    """cond(H) ~ l2^2, largest at the singular configurations theta2 = 0, pi (Fig. 5.3)."""
    c = sweep.cond.max(1)
    assert np.all(np.diff(np.log10(c)) > 1.5)
    assert 1e4 < c[1] < 1e5 and 1e10 < c[-1] < 1e11  # l2 = 1e2 -> 1e4 (as in the thesis), l2 = 1e5 -> 5e10
    k = sweep.cond[-1]
    assert np.argmax(k) in (0, len(k) - 1, len(k) // 2)


def test_crbm_error_follows_cond_while_abm_stays_at_round_off(sweep):
    """Figs. 5.3-5.4: CRBM's relative error is of order cond(H) x eps and grows with it (slope about 1 on log-log
    axes); ABM's stays within a few eps for every link size."""
    crbm = np.median(sweep.err_crbm.max(-1), axis=1)
    abm = sweep.err_abm.max((1, 2))
    cond = np.median(sweep.cond, axis=1)
    assert np.all(np.diff(crbm) > 0)
    slope = np.polyfit(np.log10(cond[1:]), np.log10(crbm[1:]), 1)[0]
    assert 0.8 < slope < 1.2
    assert np.all(sweep.err_crbm.max(-1) < 100 * sweep.cond * EPS)
    assert sweep.err_crbm[-1].max() > 1e-7  # l2 = 1e5: visible in the 6th digit (Fig. 5.5)
    assert np.all(abm < 10 * EPS)
    assert abm[-1] < 1e-3 * sweep.err_crbm[-1].max()


def test_abm_is_smooth_crbm_is_not(sweep):
    """Fig. 5.5 (l2 = m2 = 1e5): ABM's joint-1 acceleration over theta2 has the reference's second differences;
    CRBM's is scattered."""
    ref, abm, crbm = (a[-1, :, 0] for a in (sweep.udot_ref, sweep.udot_abm, sweep.udot_crbm))
    scale = np.abs(ref).max()
    rough = {name: np.abs(np.diff(a - ref, 2)).max() / scale for name, a in (("abm", abm), ("crbm", crbm))}
    assert rough["abm"] < 1e-14
    assert rough["crbm"] > 1e-7


def test_evaluations_rise_with_crbm_past_cond_1e11(dyn):
    """Fig. 5.6: below cond(H) ~ 1e11 both need the same work; at cond ~ 1.6e12 CRBM's noise (~1e-4) is above
    the tolerance and DOPRI5 needs far more evaluations with it (the thesis: 2.69 times at cond ~ 1e12), while
    ABM's count does not change."""
    runs = integration_study((1e-7, 1e-9), t_end=10.0, rtol=1e-6, atol=1e-6, dynamics=dyn)
    low, high = runs
    assert 1e10 < low.cond_max < 1e11 and 1e12 < high.cond_max < 1e13
    assert low.r_crbm < 1.05
    assert high.r_crbm > 1.5
    assert abs(high.n_abm - low.n_abm) < 0.05 * low.n_abm
    assert high.crbm_error_max > 1e-6 > low.crbm_error_max / 10


def test_a_run_past_its_evaluations_is_counted_as_failed(dyn):
    """The cap on right-hand-side evaluations stops kane.run: at ratio 0.5 DOPRI5 needs 944 evaluations over 10 s
    (6 per step: more than 100, fewer than 2000), so 100 allowed is a failure (None, no samples: NaN)."""
    failed, = integration_study((0.5,), t_end=10.0, rtol=1e-6, atol=1e-6, max_evaluations=100, dynamics=dyn)
    assert failed.n_abm is None and failed.n_crbm is None and np.isnan(failed.cond_max)
    done, = integration_study((0.5,), t_end=10.0, rtol=1e-6, atol=1e-6, max_evaluations=2000, dynamics=dyn)
    assert 100 < done.n_abm == done.n_crbm < 2000 and done.cond_max == pytest.approx(43.27, rel=1e-3)


def test_cli_writes_tables_and_plots(tmp_path):
    res = CliRunner().invoke(main, ["study", "conditioning", "--quick", "--out", str(tmp_path / "study")])
    assert res.exit_code == 0, res.output
    out = tmp_path / "study"
    names = {p.name for p in out.iterdir()}
    assert {"sweep.csv", "integration.csv", "fig5_3_configuration.png", "fig5_4_link_length.png",
            "fig5_5_accelerations.png", "fig5_6_evaluations.png"} <= names
    rows = list(csv.DictReader((out / "integration.csv").open()))
    assert [r["l1_over_L"] for r in rows] == ["0.1", "1e-07", "1e-09"]
    assert float(rows[-1]["r_crbm"]) > 1.5
    sweep_rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert len(sweep_rows) == 8 * 37 and float(sweep_rows[0]["cond_H"]) > 1
    assert "Fig. 5.6" in res.output and "n CRBM / n ABM" in res.output
