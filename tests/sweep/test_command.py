"""``kane sweep``: grids and random draws from the command line, the closing line's counts, errors named."""

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from kane.cli import main
from kane.sweep import load_sweep, load_sweep_trajectory

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "rolling_disk.toml")


def test_kane_sweep_counts_done_and_skipped_runs_and_draws_with_the_seed(tmp_path):
    out = str(tmp_path / "s.h5")
    args = ["sweep", MODEL, "--random", "m~uniform(1, 2)", "-n", "2", "--seed", "3", "--t-end", "0.2",
            "--in-process", "-o", out]
    first = CliRunner().invoke(main, [*args, "--grid", "u0.w2=2:5:2"])
    assert first.exit_code == 0, first.output
    assert first.output.strip().splitlines()[-1] == "runs: 4 done, 0 skipped, 0 failed"
    second = CliRunner().invoke(main, [*args, "--grid", "u0.w2=2:5:4"])  # 2 and 5 again, 3 and 4 new
    assert second.output.strip().splitlines()[-1] == "runs: 4 done, 4 skipped, 0 failed"
    table = load_sweep(out)
    assert len(table) == 8 and len(set(table.keys)) == 8
    assert sorted(set(table.column("m"))) == sorted(np.random.default_rng(3).uniform(1, 2, 2))
    assert sorted(set(table.column("u0.w2"))) == [2.0, 3.0, 4.0, 5.0]


def test_kane_sweep_names_bad_options(tmp_path):
    out = str(tmp_path / "s.h5")
    bad = CliRunner().invoke(main, ["sweep", MODEL, "--grid", "r=0.2:x:3", "-o", out])
    assert bad.exit_code == 2 and "--grid r STOP: expected a number, got 'x'" in bad.output
    bad = CliRunner().invoke(main, ["sweep", MODEL, "--random", "radius~uniform(1,2)", "--in-process", "-o", out])
    assert bad.exit_code == 2 and "no parameter, q0.NAME or u0.NAME called 'radius'" in bad.output
    assert "parameters: m, r, g" in bad.output


def test_kane_sweep_points_from_csv_with_trajectories(tmp_path):
    out, csv = str(tmp_path / "s.h5"), tmp_path / "p.csv"
    csv.write_text("r,q0.z,u0.w2\n0.3,0.3,8\n0.5,0.5,6\n")
    run = CliRunner().invoke(main, ["sweep", MODEL, "--points", str(csv), "--t-end", "0.1", "--in-process",
                                    "--trajectories", "-o", out])
    assert run.exit_code == 0, run.output
    assert run.output.strip().splitlines()[-1] == "runs: 2 done, 0 skipped, 0 failed"
    table = load_sweep(out)
    assert np.array_equal(table.params, [[0.3, 0.3, 8.0], [0.5, 0.5, 6.0]])
    for i, key in enumerate(table.keys):
        traj = load_sweep_trajectory(out, key)
        assert traj.t[-1] == 0.1 and traj.q[0, 2] == table.column("q0.z")[i] and traj.u[0, 1] == table.params[i, 2]
        assert traj.q[-1, 2] == table.column("final.q.z")[i]
    csv.write_text("r,q0.z\n0.3,zero\n")
    bad = CliRunner().invoke(main, ["sweep", MODEL, "--points", str(csv), "--in-process", "-o", out])
    assert bad.exit_code == 2 and "p.csv line 2 column q0.z: expected a number, got 'zero'" in bad.output
