"""Hostile sweep files (issue 27): missing datasets, wrong dtypes and shapes, huge claimed sizes, NaN and
overflowing attributes, bad rows, a truncated file and escape sequences: each is a KaneError naming the file and
the dataset or attribute at fault, for a resume (``run_sweep`` into the file), ``kane info`` and ``kane plot``;
never a raw KeyError, MemoryError or OverflowError, and no escape sequence reaches the terminal."""

import shutil
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import KaneError
from kane.sweep import Grid, RunSettings, Sweep, describe, load_sweep, load_sweep_trajectory, run_sweep

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sweep"))
from _pendulum import pendulum  # noqa: E402


def _sweep():
    return Sweep(pendulum(), (Grid("m", 1.0, 2.0, 2),), RunSettings((0.0, 0.05), output_dt=0.01))


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.h5"
    run_sweep(_sweep(), path, trajectories=True)
    return path


def _set(name, value):
    def change(f):
        f.attrs[name] = value
    return change


def _drop(name):
    def change(f):
        del f[name]
    return change


def _replace(name, data):
    def change(f):
        del f[name]
        f.create_dataset(name, data=data)
    return change


def _huge(f):  # 3e9 rows claimed: resizable datasets grown without data (the file stays small)
    for name in ("key", "status", "message", "params", "metrics", "warnings"):
        f[name].resize(3_000_000_000, axis=0)
    f.attrs["n_committed"] = 3_000_000_000


def _set_row(name, value):
    def change(f):
        f[name][0] = value
    return change


CASES = {
    "missing key": (_drop("key"), "dataset 'key' is missing"),
    "missing metrics": (_drop("metrics"), "dataset 'metrics' is missing"),
    "missing warnings": (_drop("warnings"), "dataset 'warnings' is missing"),
    "params as integers": (_replace("params", np.ones((2, 1), dtype=np.int64)), "dataset 'params' has dtype int64"),
    "params as text": (_replace("params", np.array([[b"x"], [b"y"]])), "dataset 'params' has dtype"),
    "status as floats": (_replace("status", np.zeros(2)), "dataset 'status' has dtype float64; expected text"),
    "metrics too narrow": (_replace("metrics", np.zeros((2, 1))), "dataset 'metrics' has shape (2, 1)"),
    "key as a group": (lambda f: (f.__delitem__("key"), f.create_group("key")), "dataset 'key' is missing"),
    "rows claimed past the data": (_set("n_committed", 10), "dataset 'key' has shape (2,); expected (10) or more"),
    "3e9 rows claimed": (_huge, "n_committed = 3000000000 claims"),
    "n_committed NaN": (_set("n_committed", np.nan), "attribute 'n_committed' = nan: expected a whole number"),
    "n_committed inf": (_set("n_committed", np.inf), "attribute 'n_committed' = inf: expected a whole number"),
    "n_committed 1e300": (_set("n_committed", 1e300), "claims"),
    "n_committed negative": (_set("n_committed", -1), "attribute 'n_committed' = -1"),
    "n_committed text": (_set("n_committed", "2"), "attribute 'n_committed' = '2'"),
    "version inf": (_set("version", np.inf), "attribute 'version' = inf"),
    "version 99": (_set("version", 99), "attribute 'version' = 99: this kane reads versions 1 and 2"),
    "param_names not JSON": (_set("param_names", "m, g"), "attribute 'param_names' is not a JSON list of names"),
    "param_names of numbers": (_set("param_names", "[1]"), "attribute 'param_names' is not a JSON list of names"),
    "metric_names missing": (lambda f: f.attrs.__delitem__("metric_names"), "attribute 'metric_names' is missing"),
    "axes not pairs": (_set("axes", '[["grid"]]'), "attribute 'axes' is not a JSON list of [kind, names] pairs"),
    "a key not hex": (_set_row("key", b"../../etc/passwd"), "dataset 'key' row 0: '../../etc/passwd' is not"),
    "a status unknown": (_set_row("status", "owned"), "dataset 'status' row 0: 'owned'; expected 'done'"),
    "warnings not JSON": (_set_row("warnings", "{"), "dataset 'warnings' row 0: expected a JSON object"),
    "warnings negative": (_set_row("warnings", '{"X": -5}'), "dataset 'warnings' row 0"),
}


def _hostile(good, tmp_path, change):
    path = tmp_path / "hostile.h5"
    shutil.copy(good, path)
    with h5py.File(path, "r+") as f:
        change(f)
    return path


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_file_is_named_on_resume_info_and_plot(good, tmp_path, case):
    change, message = CASES[case]
    path = _hostile(good, tmp_path, change)
    with pytest.raises(KaneError) as resume:
        run_sweep(_sweep(), path)  # a resume reads the file first
    assert str(path) in str(resume.value) and message in str(resume.value)
    for command in (["info", str(path)], ["plot", str(path), "-o", str(tmp_path / "p.png")]):
        out = CliRunner().invoke(main, command)
        assert out.exit_code == 2, out.output
        assert "Traceback" not in out.output and message in " ".join(out.output.split())
        assert str(path) in out.output.replace("\n", "")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_a_truncated_file_is_named(good, tmp_path, cut):
    path = tmp_path / "cut.h5"
    data = good.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(KaneError, match="sweep file .*cut.h5: cannot be read as HDF5"):
        run_sweep(_sweep(), path)
    for command in (["info", str(path)], ["plot", str(path)]):
        out = CliRunner().invoke(main, command)
        assert out.exit_code == 2 and "Traceback" not in out.output and "cut.h5" in out.output


def test_hostile_trajectories_are_named_with_their_dataset(good, tmp_path):
    key = load_sweep(good).keys[0]

    def narrow_q(f):
        del f[f"trajectories/{key}/q"]
        f[f"trajectories/{key}"].create_dataset("q", data=np.zeros((6, 3)))

    def huge_t(f):
        del f[f"trajectories/{key}/t"]
        f[f"trajectories/{key}"].create_dataset("t", shape=(3_000_000_000,), maxshape=(None,), chunks=(1024,),
                                               dtype="f8")

    for change, message in ((narrow_q, f"dataset 'trajectories/{key}/q' has shape (6, 3)"),
                            (huge_t, f"dataset 'trajectories/{key}/t' (3000000000 samples) claims"),
                            (_drop(f"trajectories/{key}/u"), f"dataset 'trajectories/{key}/u' is missing"),
                            (lambda f: f["trajectories"].attrs.__setitem__("q_names", "{"),
                             "attribute 'q_names' is not a JSON list of names")):
        path = _hostile(good, tmp_path, change)
        with pytest.raises(KaneError) as err:
            load_sweep_trajectory(path, key)
        assert str(path) in str(err.value) and message in str(err.value)
        if change is not huge_t:  # a resume copies the committed trajectories through the same reader
            with pytest.raises(KaneError, match=message.replace("(", r"\(").replace(")", r"\)")):
                run_sweep(_sweep(), path)


def test_escape_sequences_in_a_file_never_reach_the_terminal(good, tmp_path):
    def evil(f):
        f.attrs["model"] = "\x1b[2J\x1b]8;;http://evil.example\x07click\x1b]8;;\x07"
        f.attrs["axes"] = '[["grid", ["m\\u001b[31m"]]]'
        f["message"][0] = "boom\x1b[31m red"
        f["status"][0] = "failed"

    path = _hostile(good, tmp_path, evil)
    text = describe(path)
    assert "\x1b" not in text and "\x07" not in text
    assert "model: \\x1b[2J\\x1b]8;;http://evil.example\\x07click" in text
    assert "1 x boom\\x1b[31m red" in text and "axes: grid m\\x1b[31m" in text
    out = CliRunner().invoke(main, ["info", str(path)])
    assert out.exit_code == 0 and "\x1b" not in out.output and "\x07" not in out.output
    assert "points 2 (1 done, 1 failed)" in " ".join(out.output.replace("│", " ").split())  # the table's row
    # a resume into a file of other columns names them, escaped
    renamed = _hostile(good, tmp_path, _set("param_names", '["m\\u001b]0;owned\\u0007"]'))
    with pytest.raises(KaneError) as err:
        run_sweep(_sweep(), renamed)
    assert "holds another sweep's columns (parameters m\\x1b]0;owned\\x07;" in str(err.value)
    assert "\x1b" not in str(err.value) and "\x07" not in str(err.value)


def test_a_hostile_zarr_store_is_named_like_an_hdf5_file(tmp_path):
    import zarr

    store = tmp_path / "s.zarr"
    run_sweep(_sweep(), store)
    for change, message in ((lambda root: root.attrs.__setitem__("n_committed", float("nan")),
                             "attribute 'n_committed' = nan: expected a whole number"),
                            (lambda root: root.attrs.__setitem__("n_committed", 3_000_000_000),
                             "n_committed = 3000000000 claims"),
                            (lambda root: (root.attrs.__setitem__("n_committed", 2), root.__delitem__("key")),
                             "dataset 'key' is missing")):
        change(zarr.open_group(str(store), mode="r+"))
        with pytest.raises(KaneError) as err:
            run_sweep(_sweep(), store)
        assert str(store) in str(err.value) and message in str(err.value)
        out = CliRunner().invoke(main, ["plot", str(store), "-o", str(tmp_path / "p.png")])
        assert out.exit_code == 2 and "Traceback" not in out.output


_VALUES = (np.nan, np.inf, -np.inf, -1, 0, 2**62, 1e300, "", "x", "[]", '["m"]', "{", b"\xff\xfe", "\x1b[31m",
           np.zeros(3), np.array([b"a", b"b"]))
_DATASETS = ("key", "status", "message", "params", "metrics", "warnings")
_ATTRIBUTES = ("format", "version", "model", "param_names", "metric_names", "axes", "n_committed")


def _mutation(rng):
    """One random change to an open results file: an attribute set to a hostile value or removed, a dataset
    removed, replaced by hostile data or resized, a row overwritten."""
    kind = int(rng.integers(5))
    value = _VALUES[int(rng.integers(len(_VALUES)))]
    name = _DATASETS[int(rng.integers(len(_DATASETS)))]
    attribute = _ATTRIBUTES[int(rng.integers(len(_ATTRIBUTES)))]
    size = int(rng.choice([0, 1, 3, 10**6, 3 * 10**9]))

    def change(f):
        if kind == 0:
            f.attrs[attribute] = value
        elif kind == 1 and attribute in f.attrs:
            del f.attrs[attribute]
        elif kind == 2 and name in f:
            del f[name]
            try:
                f.create_dataset(name, data=value if np.ndim(value) else np.array([value] * 2))
            except (TypeError, ValueError, OverflowError):  # h5py cannot store it: the dataset is gone
                pass
        elif kind == 3 and name in f and f[name].maxshape[0] is None:
            f[name].resize(size, axis=0)
        elif kind == 4 and name in f and len(f[name]) and f[name].ndim == 1:
            try:
                f[name][0] = value
            except (TypeError, ValueError, OSError, OverflowError):  # h5py cannot store it: the file stays
                pass
    return change


def test_a_seeded_fuzz_of_the_sweep_reader_gives_a_table_or_a_kane_error(good, tmp_path):
    rng = np.random.default_rng(2027)
    outcomes = {"table": 0, "KaneError": 0}
    for case in range(200):
        path = tmp_path / f"f{case}.h5"
        shutil.copy(good, path)
        with h5py.File(path, "r+") as f:
            for _ in range(int(rng.integers(1, 4))):
                _mutation(rng)(f)
        try:
            table = load_sweep(path)
            describe(path)
            assert len(table) <= 2 and table.params.shape == (len(table), 1)
            outcomes["table"] += 1
        except KaneError as exc:
            assert str(path) in str(exc)
            outcomes["KaneError"] += 1
        path.unlink()
    assert sum(outcomes.values()) == 200 and min(outcomes.values()) > 20, outcomes
