"""Must show: a sweep of the upright rolling disk (examples/rolling_disk.toml) over radius and spin rate finds
the stability boundary omega^2 = g / (3 r) of a thin disk (Saha & Angeles 1991; seed 002) within the grid
spacing. Each run starts upright with a small lean rate; the disk counts as upright when its lean stays below
0.1 rad over 4 s (a stable disk wobbles by about 0.01 rad; below the boundary the lean grows until it falls)."""

from pathlib import Path

import numpy as np

from kane.simulate import Event
from kane.sweep import Grid, Metric, Metrics, Points, RunSettings, Sweep, run_sweep

MODEL = Path(__file__).resolve().parents[2] / "examples" / "rolling_disk.toml"
G = 9.81


def _lean(q):
    """sin(lean): the z component of the disk axis (body y) in ground axes, from the quaternion (n, 4)."""
    return 2 * (q[..., 5] * q[..., 6] + q[..., 3] * q[..., 4])


def _max_lean(traj):
    return float(np.max(np.abs(_lean(traj.q))))


def test_rolling_disk_map_finds_omega2_equals_g_over_3r():
    radii = (0.2, 0.3, 0.45, 0.6)
    spins = Grid("u0.w2", 1.75, 4.75, 13)  # spacing 0.25 rad/s
    fallen = Event("fallen", lambda t, q, u: abs(_lean(q)) - 0.5, direction=1, terminal=True)
    sweep = Sweep(MODEL, (Points(("r", "q0.z"), [(r, r) for r in radii]), Grid("u0.w1", 0.05, 0.05, 1), spins),
                  RunSettings((0.0, 4.0), rtol=1e-6, atol=1e-8, output_dt=0.05, events=(fallen,)),
                  Metrics(final=False, maxima=False, energy_drift=False, functions=(Metric("lean", _max_lean),)))
    result = run_sweep(sweep)
    assert (result.done, result.failed) == (len(radii) * spins.n, 0)
    table = result.table
    upright = table.column("lean") < 0.1
    spacing = (spins.stop - spins.start) / (spins.n - 1)
    for r in radii:
        rows = table.column("r") == r
        w, up = table.column("u0.w2")[rows], upright[rows]
        assert not up[0] and up[-1]  # the grid spans the boundary
        first_up = np.argmax(up)
        assert up[first_up:].all()  # one boundary: upright at every faster spin
        omega_c = np.sqrt(G / (3 * r))
        assert w[first_up - 1] < omega_c <= w[first_up]  # the boundary within one grid spacing
        assert w[first_up] - w[first_up - 1] == spacing
    # the runs that fell have the time of the fall; those that stayed up have none
    assert np.all(np.isnan(table.column("event.fallen")[upright]))
