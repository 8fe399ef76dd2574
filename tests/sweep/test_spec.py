"""The sweep description: points from grids, seeded draws and lists; bad input named."""

import sys
from pathlib import Path

import numpy as np
import pytest

from kane.errors import ArgumentError
from kane.sweep import Draws, Grid, Metric, Metrics, Points, RunSettings, Sweep, Uniform, prepare

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pendulum import pendulum  # noqa: E402


def test_points_are_the_product_of_the_axes_and_draws_follow_the_seed():
    draws = Draws((Uniform("g", 5.0, 10.0),), n=3, seed=7)
    sweep = Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2), draws, Points(("q0.th", "u0.w"), [(0.1, 0.0), (0.2, 1.0)])))
    points = sweep.points()
    assert len(points) == 2 * 3 * 2
    expected_g = np.random.default_rng(7).uniform(5.0, 10.0, 3)
    assert [p["g"] for p in points[:6:2]] == list(expected_g)
    assert [p["m"] for p in points] == [1.0] * 6 + [2.0] * 6
    assert [(p["q0.th"], p["u0.w"]) for p in points[:2]] == [(0.1, 0.0), (0.2, 1.0)]


def test_keys_depend_on_parameters_and_run_settings_only():
    a = prepare(Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2),), RunSettings((0.0, 1.0))))
    b = prepare(Sweep(pendulum(), (Points(("m",), [(2.0,), (1.0,)]),), RunSettings((0.0, 1.0))))
    c = prepare(Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2),), RunSettings((0.0, 1.0), rtol=1e-9)))
    assert [t.key for t in a.tasks] == [t.key for t in b.tasks][::-1]  # same points, another order
    assert not {t.key for t in a.tasks} & {t.key for t in c.tasks}


def test_unknown_names_list_the_models_parameters_coordinates_and_speeds():
    with pytest.raises(ArgumentError, match=r"'mass'.*parameters: m, g; coordinates: th; independent speeds: w"):
        prepare(Sweep(pendulum(), (Grid("mass", 1.0, 2.0, 2),)))
    with pytest.raises(ArgumentError, match=r"'u0\.th'"):
        prepare(Sweep(pendulum(), (Grid("u0.th", 1.0, 2.0, 2),)))


@pytest.mark.parametrize("make, message", [
    (lambda: Grid("m", 1.0, 1.0, 3), r"grid m: the range 1.0:1.0 is empty"),
    (lambda: Grid("m", "a", 2.0, 3), r"grid m: start: expected a number, got 'a'"),
    (lambda: Grid("m", 0.0, float("nan"), 3), r"grid m: stop: expected a finite number"),
    (lambda: Grid("m", 0.0, 1.0, 0), r"grid m: n: expected a whole number of at least 1"),
    (lambda: Uniform("k", 2.0, 1.0), r"random k~uniform\(2.0, 1.0\): the range is empty"),
    (lambda: Draws((Uniform("k", 0, 1),), n=0), r"random draws: n"),
    (lambda: Points(("m", "g"), [(1.0,)]), r"points row 0: expected 2 values \(m, g\), got 1"),
    (lambda: Points(("m",), []), r"points m: the list of rows is empty"),
    (lambda: RunSettings((1.0, 1.0)), r"run t_span = \(1.0, 1.0\): the interval is empty"),
    (lambda: RunSettings((0.0, 1.0), rtol=-1), r"run rtol: expected a positive number"),
    (lambda: Metrics(functions=(Metric("a", len), Metric("a", len))), r"a name is given twice"),
    (lambda: Sweep(pendulum(), (Grid("m", 0, 1, 2), Grid("m", 1, 2, 2))), r"'m' is swept twice"),
])
def test_bad_options_are_named(make, message):
    with pytest.raises(ArgumentError, match=message):
        make()


def test_the_point_count_is_checked_against_its_limit_before_anything_is_allocated():
    # 10^3 x 10^6 = 10^9 points (8 GB for the grid values alone): refused from the axes' sizes, in Python ints
    axes = (Grid("m", 1.0, 2.0, 1000), Grid("g", 1.0, 10.0, 10**6))
    with pytest.raises(ArgumentError, match=r"1000 \(m\) x 1000000 \(g\) = 1,000,000,000 points: more than the "
                                            r"limit of 1,000,000 points; .*Sweep\(max_points=N\) "
                                            r"\(kane sweep --max-points N\)"):
        Sweep(pendulum(), axes)
    # the product is exact in Python integers (2e14 is past what a float32 count or a C int holds)
    big = (Grid("m", 1.0, 2.0, 10**7), Draws((Uniform("g", 1, 2),), n=10**7), Points(("q0.th",), [(0.1,), (0.2,)]))
    with pytest.raises(ArgumentError, match=r"= 200,000,000,000,000 points"):
        Sweep(pendulum(), big)
    assert Sweep(pendulum(), axes, max_points=10**9).count == 10**9  # raised: accepted (nothing run here)
    with pytest.raises(ArgumentError, match=r"sweep max_points: expected a whole number of at least 1"):
        Sweep(pendulum(), axes, max_points=0)


def test_kane_sweep_names_the_point_limit_and_the_option_that_raises_it(tmp_path):
    from click.testing import CliRunner

    from kane.cli import main

    model = str(Path(__file__).resolve().parents[2] / "examples" / "rolling_disk.toml")
    run = CliRunner().invoke(main, ["sweep", model, "--grid", "r=0.2:0.6:1000", "--grid", "u0.w2=1:9:1000000",
                                    "--in-process", "-o", str(tmp_path / "s.h5")])
    assert run.exit_code == 2 and "Traceback" not in run.output and "MemoryError" not in run.output
    assert "= 1,000,000,000 points: more than the limit of 1,000,000 points" in run.output
    assert "--max-points N" in run.output and not (tmp_path / "s.h5").exists()
    small = CliRunner().invoke(main, ["sweep", model, "--grid", "r=0.2:0.6:3", "--max-points", "2", "--in-process",
                                      "-o", str(tmp_path / "s.h5")])
    assert small.exit_code == 2 and "3 (r) = 3 points: more than the limit of 2 points" in small.output
