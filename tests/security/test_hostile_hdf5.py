"""Hostile HDF5 files (issue 27, item 6): every reader of kane's HDF5 files checks the layout before reading.

Valid files of each kind (a run, assembly frames, a real-time log, a sweep) are written by kane itself
(bench/fuzz_hdf5.py's corpus) and damaged one way each; the readers and ``kane info`` must refuse each with a
KaneError naming the file and the dataset or attribute. A dataset that claims 3e9 rows is refused before anything
is allocated (tracemalloc's peak); escape sequences and Rich markup in a file's attributes are printed as text;
the seeded fuzzer's 100 files (5000 with bench/fuzz_hdf5.py) end in no raw exception, hang, execution or escape.
"""

import json
import sys
import tracemalloc
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import KaneError
from kane.io.h5_read import HDF5LayoutError, printable
from kane.io.trajectory import load_trajectory
from kane.realtime.log_reader import load_realtime_log
from kane.viz.file_info import describe_file

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import fuzz_hdf5  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return fuzz_hdf5.make_corpus(tmp_path_factory.mktemp("corpus"))


def _replace(name, **kwargs):
    def edit(f):
        del f[name]
        f.create_dataset(name, **kwargs)
    return edit


def _attr(name, value):
    def edit(f):
        f.attrs[name] = value
    return edit


def _link(name, link):
    def edit(f):
        del f[name]
        f[name] = link
    return edit


def _events_jsonl(text):
    def edit(f):
        del f["events_jsonl"]
        f.create_dataset("events_jsonl", data=np.frombuffer(text.encode(), dtype=np.uint8))
        f["n_committed"][1] = len(text)
    return edit


def _events_data(f):
    del f["events/data"]
    f["events"].create_dataset("data", data=np.array(["[1, 2]"], dtype=object), dtype=h5py.string_dtype())


# (base file, edit, the dataset or attribute the error must name)
CASES = {
    "t missing": ("trajectory", lambda f: f.__delitem__("t"), "t: missing"),
    "q missing": ("trajectory", lambda f: f.__delitem__("q"), "q: missing"),
    "q as text": ("trajectory", _replace("q", data=np.array([b"a", b"b"] * 40).reshape(40, 2)), "q: dtype"),
    "q compound": ("trajectory", _replace("q", shape=(40,), dtype=[("a", "f8"), ("b", "f8")]), "q: dtype"),
    "q too wide": ("trajectory", _replace("q", shape=(40, 3), dtype="f8"), "q: shape (40, 3)"),
    "t of rank 2": ("trajectory", _replace("t", shape=(40, 1), dtype="f8"), "t: shape (40, 1)"),
    "t a group": ("trajectory", lambda f: (f.__delitem__("t"), f.create_group("t")), "t: is a Group"),
    "t a soft link": ("trajectory", _link("t", h5py.SoftLink("/u")), "t: is a SoftLink"),
    "t an external link": ("trajectory", _link("t", h5py.ExternalLink("/etc/passwd", "/")), "t: is a ExternalLink"),
    "residual missing": ("trajectory", lambda f: f.__delitem__("residuals/constraint"),
                         "residuals/constraint: missing"),
    "q_names not JSON": ("trajectory", _attr("q_names", "[x, y"), "attribute q_names: not JSON"),
    "q_names a number": ("trajectory", _attr("q_names", 7), "attribute q_names: a int"),
    "q_names an array": ("trajectory", _attr("q_names", np.arange(3)), "attribute q_names: a ndarray"),
    "params not numbers": ("trajectory", _attr("params", json.dumps({"m": "heavy"})), "attribute params"),
    "stats of text": ("trajectory", _attr("stats", json.dumps({"n_fev": "many"})), "attribute stats: field n_fev"),
    "deep JSON": ("trajectory", _attr("u_names", "[" * 100_000 + "]" * 100_000), "attribute u_names: not JSON"),
    "event of the wrong shape": ("trajectory", _events_jsonl('{"t": "soon", "name": 1}\n'), "events_jsonl: line 1"),
    "frames residual as text": ("frames", _replace("residuals/distance", data=np.array([b"far"] * 40)),
                                "residuals/distance: dtype"),
    "frames distance missing": ("frames", lambda f: f.__delitem__("residuals/distance"),
                                "residuals/distance: missing"),
    "log force too narrow": ("realtime", _replace("force", shape=(40, 2), dtype="f8"), "force: shape (40, 2)"),
    "log q as text": ("realtime", _replace("q", data=np.array([[b"a", b"b"]] * 40)), "q: dtype"),
    "log t short": ("realtime", _replace("t", shape=(5,), dtype="f8"), "t: 5 rows, fewer than the 40 committed"),
    "log mode out of range": ("realtime", _replace("mode", data=np.full(40, 10**9, dtype=np.int64)), "mode: values"),
    "log stats not a summary": ("realtime", _attr("stats", json.dumps({"period": "fast"})), "attribute stats"),
    "log modes not a list": ("realtime", _attr("modes", json.dumps({"a": 1})), "attribute modes"),
    "log events data": ("realtime", _events_data, "events/data: row 0"),
    "log external storage": ("realtime", _replace("power", shape=(8,), dtype="f8", external=[("/etc/hostname", 0, 64)]),
                             "power: stores its data in other files"),
}


def _damaged(corpus, tmp_path, case):
    base, edit, _ = CASES[case]
    path = tmp_path / f"{base}_damaged.h5"
    path.write_bytes(corpus[base].read_bytes())
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_hostile_layout_gets_a_kane_error_naming_the_file_and_the_dataset(corpus, tmp_path, case):
    path = _damaged(corpus, tmp_path, case)
    reader = load_realtime_log if CASES[case][0] == "realtime" else load_trajectory
    with pytest.raises(KaneError) as err:
        reader(path)
    assert str(path) in str(err.value) and CASES[case][2] in str(err.value), str(err.value)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert result.output.startswith("error: ") and CASES[case][2] in " ".join(result.output.split())


def test_the_valid_files_read_back(corpus):
    """The corpus the damage starts from is read whole: the cases above fail by their damage alone."""
    traj = load_trajectory(corpus["trajectory"])
    np.testing.assert_allclose(traj.q[:, 0], np.sin(np.linspace(0, 2, 40)), rtol=0, atol=1e-15)
    assert traj.params == {"m": 1.0, "g": 9.81} and traj.events[0].data == {"x": 1.0}
    assert load_realtime_log(corpus["realtime"]).modes == ("free", "caster")
    rows = dict(describe_file(corpus["sweep"]).rows)
    assert rows["points"] == "9 (6 done, 3 failed)" and rows["parameters (2)"] == "m, g"


def test_a_damaged_sweep_file_is_routed_to_the_sweep_reader_and_named(corpus, tmp_path):
    path = tmp_path / "sweep_damaged.h5"
    path.write_bytes(corpus["sweep"].read_bytes())
    with h5py.File(path, "r+") as f:
        del f["params"]
    with pytest.raises(KaneError) as err:
        describe_file(path)
    assert str(path) in str(err.value)
    for command in (["info", str(path)], ["plot", str(path), "-o", str(tmp_path / "s.png")]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2 and "Traceback" not in result.output and str(path) in result.output


def _huge(path, names, rows=3_000_000_000):
    """Every series of ``names`` claims ``rows`` rows (chunked, nothing stored) and n_committed says so too."""
    with h5py.File(path, "r+") as f:
        for name in names:
            row, dtype = f[name].shape[1:], f[name].dtype
            del f[name]
            f.create_dataset(name, shape=(rows, *row), maxshape=(None, *row), dtype=dtype,
                             chunks=(1024, *(max(w, 1) for w in row)))
        f["n_committed"][0] = rows


@pytest.mark.parametrize("kind", ["trajectory", "realtime"])
def test_a_dataset_claiming_3e9_rows_is_refused_by_name_without_allocating(corpus, tmp_path, kind):
    path = tmp_path / f"{kind}_huge.h5"
    path.write_bytes(corpus[kind].read_bytes())
    with h5py.File(path, "r") as f:
        names = [k for k, v in f.items() if isinstance(v, h5py.Dataset) and v.ndim and v.maxshape[0] is None]
        names += [f"residuals/{k}" for k in f.get("residuals", {})]
    _huge(path, names)
    assert path.stat().st_size < 1 << 20  # the file itself is small: the rows are only claimed
    reader = load_realtime_log if kind == "realtime" else load_trajectory
    tracemalloc.start()
    try:
        with pytest.raises(HDF5LayoutError) as err:
            reader(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 << 20, f"{peak / 2**20:.0f} MiB allocated"  # 3e9 float rows would be 24 GB
    assert err.value.item == "t" and "3000000000 rows" in str(err.value) and "not read" in str(err.value)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 2 and "3000000000 rows" in result.output and "Traceback" not in result.output


def test_escape_sequences_and_rich_markup_in_a_file_are_printed_as_text(corpus, tmp_path):
    osc8 = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    path = tmp_path / "marked.h5"
    path.write_bytes(corpus["trajectory"].read_bytes())
    with h5py.File(path, "r+") as f:
        f.attrs["description"] = f"{osc8} \x1b[2J [link=http://evil.example]model[/link]"
        f.attrs["params"] = json.dumps({"[link=http://evil.example]m[/link]": 1.0, "\x1b[31mg": 9.81})
        f.attrs["q_names"] = json.dumps(["[bold]x[/bold]", "y\u202e"])
    result = CliRunner().invoke(main, ["info", str(path)])
    text = result.output
    assert result.exit_code == 0, text
    assert "\x1b" not in text and "\u202e" not in text  # no escape sequence and no bidi override reaches the terminal
    assert "[link=http://evil.example]m[/link]" in text  # the parameter's name, as written in the file
    assert "[bold]x[/bold], y\\u202e" in text and "\\x1b[31mg" in text
    assert "\\x1b]8;;http://evil.example/\\x1b\\click" in "".join(text.split())


def test_printable_escapes_every_control_character():
    text = "".join(map(chr, range(0x20))) + "\x7f\x85\x9b\u2028\u202e\u2066ok"
    out = printable(text)
    assert out.isprintable() and out.endswith("ok") and out.count("\\") == 32 + 6
    assert printable("plain [link=x] text") == "plain [link=x] text"  # markup is the printer's (rich.markup.escape)


@pytest.fixture(scope="module")
def fuzzed():
    return fuzz_hdf5.fuzz(100, seed=20261127, workers=2, limit_s=30.0, plot_every=25)  # 5000: bench/fuzz_hdf5.py


def test_the_fuzzer_finds_no_raw_exception_hang_execution_or_escape(fuzzed):
    assert fuzzed.files == 100
    assert {k: fuzzed.counts[k] for k in fuzz_hdf5.FAILURES} == dict.fromkeys(fuzz_hdf5.FAILURES, 0), fuzzed.examples
    assert fuzzed.counts["ok"] + fuzzed.counts["KaneError"] == 100
    assert fuzzed.counts["KaneError"] >= 56 and fuzzed.counts["ok"] >= 14  # refused, and not everything at once
    assert {"delete", "dtype", "shape", "huge", "attr", "text", "truncate", "flip", "external"} <= set(fuzzed.mutations)


def test_the_fuzzer_would_see_an_execution_and_an_escape(corpus, tmp_path):
    marker = tmp_path / "EXECUTED"
    marker.write_text("ran")
    assert fuzz_hdf5.check_file(str(corpus["trajectory"]), False, str(marker))[0] == "execution"
    assert fuzz_hdf5._printed_controls("ok \x1b[2J") == "U+001B" and fuzz_hdf5._printed_controls("ok\n") is None
