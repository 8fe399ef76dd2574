"""The fuzzers' shared pool (bench/_fuzz.py): every outcome counted once, a worker past its limit killed as a
hang and one that dies as a crash (each replaced in the same slot), failing files kept, the CPU-time limit
telling a sleeping task from a spinning one, and the common options."""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import _fuzz  # noqa: E402

FAILURES = ("raw", "hang", "crash", "extra")


def _checker(slot):
    def check(kind, _):
        if kind == "hang":
            time.sleep(60)
        elif kind == "spin":
            while True:
                pass
        elif kind == "crash":
            os._exit(3)
        elif kind == "sleep":
            time.sleep(1.5)
        elif kind == "raw":
            return "raw", f"slot {slot}"
        return "ok", ""
    return check


def _tasks(kinds):
    return [_fuzz.Task(f"f{i}_{k}.txt", (k, i), text=f"file {i}: {k}") for i, k in enumerate(kinds)]


def test_hang_crash_and_raw_are_counted_and_kept_and_the_workers_replaced(tmp_path):
    kinds = ["ok", "hang", "ok", "crash", "raw", "ok", "ok", "raw", "ok"]
    keep = tmp_path / "kept"
    seen = []

    def after(task):
        seen.append(task.name)
        return ("extra", "after") if task.args[1] == 0 else None

    r = _fuzz.run_pool(_tasks(kinds), _checker, 2, _fuzz.Limit(1.0), keep, FAILURES, after=after)
    assert dict(r.counts) == {"ok": 5, "hang": 1, "crash": 1, "raw": 2, "extra": 1}
    assert r.files == 10 and r.failures() == 5  # the extra outcome counts as one more file
    assert sorted(seen) == sorted(t.name for t in _tasks(kinds))
    assert r.examples["hang"] == [("f1_hang.txt", "over 1 s")]
    assert r.examples["crash"] == [("f3_crash.txt", "worker died (exit 3)")]
    assert {d for _, d in r.examples["raw"]} <= {"slot 0", "slot 1"}  # replacements keep the slots 0 and 1
    kept = {p.name: p.read_text() for p in keep.iterdir()}
    assert kept == {"f0_ok.txt": "file 0: ok", "f1_hang.txt": "file 1: hang", "f3_crash.txt": "file 3: crash",
                    "f4_raw.txt": "file 4: raw", "f7_raw.txt": "file 7: raw"}
    assert r.rate > 0


def test_the_cpu_limit_counts_cpu_time_not_sleep():
    r = _fuzz.run_pool(_tasks(["sleep", "spin", "ok"]), _checker, 1, _fuzz.Limit(0.5, cpu=True, wall_factor=20.0),
                       None, FAILURES)
    assert dict(r.counts) == {"ok": 2, "hang": 1}
    assert r.examples == {"hang": [("f1_spin.txt", "more than 0.5 s of CPU time (or 10 s)")]}


def test_bytes_and_paths_are_kept_as_they_are(tmp_path):
    src = tmp_path / "case.h5"
    src.write_bytes(b"\x89HDF\x00")
    tasks = [_fuzz.Task("a.urdf", ("raw", 0), text=b"\xff\xfe<robot"), _fuzz.Task("case.h5", ("raw", 1), path=src)]
    r = _fuzz.run_pool(tasks, _checker, 2, _fuzz.Limit(10.0), tmp_path / "kept", FAILURES)
    assert r.counts["raw"] == 2
    assert (tmp_path / "kept" / "a.urdf").read_bytes() == b"\xff\xfe<robot"
    assert (tmp_path / "kept" / "case.h5").read_bytes() == b"\x89HDF\x00"


def test_common_arguments():
    ap = _fuzz.common_arguments(argparse.ArgumentParser(), limit_s=20.0)
    args = ap.parse_args(["--files", "7", "--keep", "out"])
    assert (args.files, args.seed, args.workers, args.limit, args.keep) == (7, 1, 2, 20.0, Path("out"))
    assert not hasattr(_fuzz.common_arguments(argparse.ArgumentParser(), 10.0, keep=False).parse_args([]), "keep")


def test_outcome_of_an_exception():
    from kane.errors import KaneError

    def raised(exc):
        try:
            raise exc
        except BaseException as caught:  # noqa: BLE001
            return caught

    named = raised(KaneError("model a.toml: field 'mass' must be positive"))
    assert _fuzz.outcome_of(named, "load", "a.toml") == ("KaneError", "load: KaneError: " + str(named))
    assert _fuzz.outcome_of(named, "load", "b.toml")[0] == "unnamed"
    assert _fuzz.outcome_of(named, "evaluate", None)[0] == "KaneError"  # a stage of the Python API names no file
    outcome, detail = _fuzz.outcome_of(raised(ValueError("bad")), "derive", "a.toml")
    assert outcome == "raw" and detail.startswith("derive: ValueError at ") and detail.endswith(": bad")
