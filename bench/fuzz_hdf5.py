"""Fuzzer of kane's HDF5 readers: hostile mutations of valid trajectory, assembly frames, real-time log and sweep
files, each read by the library (:func:`kane.viz.file_info.describe_file`, which routes to the trajectory, log and
sweep readers) and by ``kane info`` (every file) and ``kane plot`` (every ``plot_every``-th), in worker processes
under a per-file limit of CPU time.

The mutations: datasets deleted, their dtype changed (text, compound, complex, half floats), their shape changed
(rank, width, length), huge claimed sizes (chunked empty datasets of 3e9 rows and more, ``maxshape`` None;
``n_committed`` past them), groups, soft and external links and external storage in place of datasets,
attributes of the wrong type (numbers, arrays, bytes, bad or deeply nested JSON, JSON of the wrong shape),
control characters and Rich markup in attributes and names, JSON-lines records of the wrong shape, and files cut
short or with bytes flipped. Every file must end as "ok" or as a :class:`kane.KaneError` naming the file (and the
CLI in exit status 0 or 2); anything else is counted: a raw exception, a hang (the worker is killed past the
limit), a crash (the worker died), an execution (a marker file that a script named in the file would create),
an unnamed KaneError, a traceback or an exit status other than 0 and 2 from the CLI, and escape sequences or
control characters in what the CLI printed.

    python bench/fuzz_hdf5.py --files 5000 --seed 1 --workers 2 --limit 20 --keep out/fuzz_hdf5

prints the counts, the rate [files/s] and the first examples of each failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import _fuzz
import h5py
import numpy as np

__all__ = ["FuzzResult", "make_corpus", "mutate", "check_file", "fuzz", "main", "HOSTILE_TEXT", "FAILURES"]

FAILURES = ("raw", "hang", "crash", "execution", "unnamed", "traceback", "exit", "escape")
HOSTILE_TEXT = ["\x1b[2J\x1b[31mred", "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
                "[link=http://evil.example]x[/link]", "[bold red]MARK[/]", "\u202egnp.exe", "a\rb\x08c\x07", "\x9b31m", ":thumbs_up:", "line\nbreak", "",
                "x" * 5000, "\u2028sep", "[/]", "\\[escaped]"]
_CONTROL = {*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)} - {10}
_HUGE = (3_000_000_000, 2 ** 40, 10 ** 12)


def _trajectory(path: Path, frames: bool = False) -> None:
    from kane.io.trajectory import EventRecord, Stats, Trajectory

    n = 40
    t = np.linspace(0.0, 2.0, n)
    names = ("constraint_residual", "distance", "iterations") if frames else ("constraint",)
    Trajectory(t=t, q=np.column_stack([np.sin(t), np.cos(t)]), u=np.column_stack([np.cos(t), -np.sin(t)]),
               energy=None if frames else 0.5 + 0 * t, residuals={k: 1e-12 * t for k in names},
               events=[EventRecord(0.5, "hit", "crossing", {"x": 1.0})], modes=[(0.0, 2.0, "free")],
               stats=Stats(n_fev=100, n_steps=50, n_accepted=48, n_rejected=2, wall_time_s=0.01, method="dopri5"),
               q_names=("x", "y"), u_names=("vx", "vy"), description="pendulum (pendulum.py)",
               params={"m": 1.0, "g": 9.81}).save(path)


def _realtime_log(path: Path) -> None:
    from kane import realtime as rt
    from kane.io.trajectory import EventRecord
    from kane.realtime.stats import DeadlineStats

    log = rt.RealtimeLog(path, ["a", "b"], ["c"], flush_every=16)
    stats = DeadlineStats(1e-3, capacity=40)
    for k in range(40):
        x, f = (1e-3 * k, 2e-3 * k, 0.0), (float(k), 0.0, 0.5)
        log.record([k * 1e-3, *x, 0.0, 0.0, 0.0, *x, 0.0, 0.0, 0.0, *f, 0.1 * k, 0.01 * k, 0.0, 0, k >= 20, 0.0,
                    0.0], np.array([k, k * k], dtype=float), np.array([-k], dtype=float))
        log.set_timing(2e-5, 1e-6)
        stats.add(1e-6, 2e-5)
        log.housekeeping()
    log.close("completed", stats.summary().as_dict(), {"refused": 0, "missing": 0, "saturated": 1},
              modes=["free", "caster"], events=[EventRecord(0.0205, "caster", "lock", {"impulse": [1.5]})])


def _sweep(path: Path) -> None:
    from kane.sweep.store import SweepFile

    sf = SweepFile(path, "pendulum", ["m", "g"], ["max_x", "energy_drift"], (("grid", ["m", "g"]),))
    t = np.linspace(0, 1, 5)
    sf.append([(f"{i:064x}", "done" if i % 4 else "failed", "" if i % 4 else "diverged", [1.0 + i % 3, 9.0 + i // 3],
                [0.1 * i, 1e-6 * i], (t, np.outer(t, [1, 2]), np.outer(t, [3]), t) if i == 1 else None)
               for i in range(9)], q_names=("x", "y"), u_names=("v",))


def make_corpus(directory: Path) -> dict[str, Path]:
    """The valid files the mutations start from: a run, assembly frames, a real-time log and a sweep."""
    directory.mkdir(parents=True, exist_ok=True)
    out = {k: directory / f"{k}.h5" for k in ("trajectory", "frames", "realtime", "sweep")}
    _trajectory(out["trajectory"])
    _trajectory(out["frames"], frames=True)
    _realtime_log(out["realtime"])
    _sweep(out["sweep"])
    return out


def _objects(f: h5py.File) -> tuple[list[str], list[str]]:
    datasets, groups = [], ["/"]
    f.visititems(lambda name, obj: (datasets if isinstance(obj, h5py.Dataset) else groups).append(name))
    return datasets, groups


def _hostile_attr(rng: random.Random, key: str):
    text = rng.choice(HOSTILE_TEXT)
    names = [rng.choice(HOSTILE_TEXT) for _ in range(rng.randint(1, 3))]
    choices = [5, -1, 3.5, float("nan"), np.arange(rng.randint(0, 4)), b"\xff\xfe bytes", np.bool_(True), text,
               json.dumps(text), json.dumps(names), json.dumps({n: 1.0 for n in names}), json.dumps({"a": "b"}),
               json.dumps([1, 2, 3]), "[" * 50_000 + "]" * 50_000, "{not json", "null", "1e999", "9" * 5000,
               json.dumps({"n_fev": "x", "method": 3}), json.dumps({"period": "x", "jitter_counts": 5}),
               json.dumps({n: "1" for n in names}), np.array(["a", "b"], dtype="S1"), h5py.Empty("f8"),
               np.array([json.dumps(names)]), json.dumps(names * 20_000)]
    if key == "format":
        choices += ["kane.trajectory", "kane.realtime_log", "kane.sweep", np.array(["kane.trajectory"] * 2)]
    return rng.choice(choices)


def _replace(f: h5py.File, name: str, rng: random.Random, how: str, other: Path) -> None:
    ds = f[name]
    shape, row = ds.shape, (ds.shape[1:] if ds.shape else ())
    del f[name]
    if how == "dtype":
        n = shape[0] if shape else 1
        kind = rng.choice(["S8", "complex", "compound", "f2", "i1", "bool", "str", "u8"])
        if kind == "compound":
            f.create_dataset(name, shape=(n,), dtype=[("a", "f8"), ("b", "i4")])
        elif kind == "str":
            f.create_dataset(name, data=np.array([rng.choice(HOSTILE_TEXT)] * n, dtype=object),
                             dtype=h5py.string_dtype())
        else:
            f.create_dataset(name, shape=(n, *row), dtype={"complex": "c16"}.get(kind, kind))
    elif how == "shape":
        n = rng.choice([0, 1, 3, 39, 41, 1000])
        f.create_dataset(name, shape=rng.choice([(), (n,), (n, 1), (n, 7), (n, 2, 2), (n, *row, 1)]), dtype="f8")
    elif how == "huge":
        big = rng.choice(_HUGE)
        f.create_dataset(name, shape=(big, *row), maxshape=(None, *row), chunks=(1024, *(max(w, 1) for w in row)),
                         dtype=rng.choice(["f8", "u1", "i2"]))
    elif how == "group":
        f.create_group(name)
    elif how == "soft":
        f[name] = h5py.SoftLink(rng.choice(["/nowhere", "/t", f"/{name}"]))
    elif how == "external":
        f[name] = h5py.ExternalLink(rng.choice([str(other), "/etc/passwd", "missing.h5"]), rng.choice(["/t", "/"]))
    elif how == "external_storage":
        raw = other.parent / f"{other.stem}.raw"
        raw.write_bytes(os.urandom(64))
        f.create_dataset(name, shape=(8,), dtype="f8", external=[(str(raw), 0, 64)])


def mutate(src: Path, dst: Path, rng: random.Random, marker: Path) -> list[str]:
    """Copy ``src`` to ``dst`` and apply one to three hostile mutations; returns their names."""
    shutil.copyfile(src, dst)
    done = []
    cut = None
    for _ in range(rng.randint(1, 3)):
        how = rng.choice(["delete", "dtype", "shape", "huge", "huge", "committed", "attr", "attr", "text", "jsonl",
                          "group", "soft", "external", "external_storage", "truncate", "flip", "format", "script"])
        if how in ("truncate", "flip"):
            cut = how
            done.append(how)
            continue
        try:
            with h5py.File(dst, "r+") as f:
                datasets, groups = _objects(f)
                if how == "committed" and isinstance(f.get("n_committed"), h5py.Dataset) and \
                        f["n_committed"].size <= 3:
                    f["n_committed"][...] = rng.choice([-1, 2 ** 62, _HUGE[0], 41, 0])
                elif how in ("attr", "text", "format", "script"):
                    obj = f[rng.choice(groups)]
                    key = {"format": "format", "script": "description"}.get(how) or rng.choice(
                        list(obj.attrs) + ["status", "q_names", "params", "description"]
                        if len(obj.attrs) else ["status"])
                    value = (f"model ({marker.with_suffix('.py')})" if how == "script" else
                             rng.choice(HOSTILE_TEXT) if how == "text" else _hostile_attr(rng, key))
                    obj.attrs[key] = value
                elif how == "jsonl" and isinstance(f.get("events_jsonl"), h5py.Dataset):
                    lines = [{"t": "x"}, {"t": 1, "name": 3}, [1, 2], "[" * 5000, {"t": 0.1, "mode": None},
                             {"t": 1.0, "name": rng.choice(HOSTILE_TEXT), "kind": "k", "data": {}},
                             {"t": 0.0, "mode": rng.choice(HOSTILE_TEXT)}]
                    text = "\n".join(json.dumps(x) if not isinstance(x, str) else x for x in rng.sample(lines, 3))
                    name = rng.choice(["events_jsonl", "modes_jsonl"])
                    del f[name]
                    f.create_dataset(name, data=np.frombuffer(text.encode() + b"\n", dtype=np.uint8))
                    if isinstance(f.get("n_committed"), h5py.Dataset) and f["n_committed"].shape == (3,):
                        f["n_committed"][1:] = len(text) + 1
                elif datasets:
                    name = rng.choice(datasets)
                    if how == "delete":
                        del f[name]
                    else:
                        _replace(f, name, rng, how, src)
            done.append(how)
        except (OSError, ValueError, TypeError, KeyError, RuntimeError, MemoryError) as exc:  # one h5py cannot make
            done.append(f"{how}(skipped: {type(exc).__name__})")
    if cut == "truncate":
        size = dst.stat().st_size
        os.truncate(dst, rng.randint(0, max(size - 1, 0)))
    elif cut == "flip":
        data = bytearray(dst.read_bytes())
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        dst.write_bytes(bytes(data))
    return done


def _printed_controls(text: str) -> str | None:
    bad = sorted({f"U+{ord(c):04X}" for c in text if ord(c) in _CONTROL})
    return ", ".join(bad) if bad else None


def check_file(path: str, plot: bool, marker: str) -> tuple[str, str]:
    """The outcome of reading ``path`` with the library and the CLI: ("ok" | "KaneError" | a failure, detail)."""
    from click.testing import CliRunner

    from kane.cli import main as cli
    from kane.errors import KaneError
    from kane.viz.file_info import describe_file

    name = Path(path).name
    outcome = ("ok", "")
    try:
        describe_file(path)
    except KaneError as exc:
        outcome = ("KaneError", str(exc)[:200]) if name in str(exc) else ("unnamed", f"{exc}"[:300])
    except Exception as exc:  # noqa: BLE001  (what the fuzzer counts)
        return "raw", f"describe_file: {type(exc).__name__}: {exc}"[:300]
    commands = [["info", path]] + ([["plot", path, "-o", str(Path(path).with_suffix(".png"))]] if plot else [])
    for args in commands:
        result = CliRunner().invoke(cli, args)
        text = result.output
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            return "raw", f"kane {args[0]}: {type(result.exception).__name__}: {result.exception}"[:300]
        if "Traceback" in text:
            return "traceback", f"kane {args[0]}: {text[-300:]}"
        if result.exit_code not in (0, 2):
            return "exit", f"kane {args[0]}: exit {result.exit_code}: {text[-200:]}"
        if (bad := _printed_controls(text)) is not None:
            return "escape", f"kane {args[0]} printed {bad}: {text[:200]!r}"
    if Path(marker).exists():
        return "execution", f"{marker} was created"
    return outcome


@dataclass
class FuzzResult(_fuzz.FuzzResult):
    """``files`` checked, ``counts`` per outcome, the first ``examples`` of each failure, ``wall_s`` (also
    ``seconds``) of wall time, ``mutations`` counted by kind."""

    mutations: collections.Counter = field(default_factory=collections.Counter)

    @property
    def seconds(self) -> float:
        return self.wall_s


def fuzz(n: int, seed: int = 1, workers: int = 2, limit_s: float = 20.0, plot_every: int = 25,
         keep: Path | None = None, wall_factor: float = 10.0) -> FuzzResult:
    """Mutate ``n`` files (seeded) and check each in ``workers`` forked processes: a file that takes its worker
    more than ``limit_s`` [s] of CPU time (or ``wall_factor`` times that of wall time, on a loaded machine) is a
    hang."""
    import kane.cli  # noqa: F401  (imported once here, before the workers fork)

    rng = random.Random(seed)
    result = FuzzResult()
    with tempfile.TemporaryDirectory(prefix="kane-fuzz-hdf5-") as tmp:
        tmp = Path(tmp)
        corpus = make_corpus(tmp / "corpus")
        marker = tmp / "EXECUTED"
        marker.with_suffix(".py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")

        def tasks():  # each made when a worker is free, in order: the same files for a seed
            for k in range(n):
                kind = rng.choice(list(corpus))
                case = tmp / f"case{k:05d}_{kind}.h5"
                result.mutations.update(m.split("(")[0] for m in mutate(corpus[kind], case, rng, marker))
                yield _fuzz.Task(case.name, (str(case), k % plot_every == 0), path=case)

        def checker(slot):
            import matplotlib

            matplotlib.use("Agg")
            return lambda path, plot: check_file(path, plot, str(marker))

        def remove(task):
            task.path.unlink(missing_ok=True)

        limit = _fuzz.Limit(limit_s, cpu=True, wall_factor=wall_factor)
        return _fuzz.run_pool(tasks(), checker, workers, limit, keep, FAILURES, after=remove, result=result)


def main(argv=None) -> FuzzResult:
    ap = _fuzz.common_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), limit_s=20.0)
    ap.add_argument("--plot-every", type=int, default=25, help="also run kane plot on every k-th file")
    args = ap.parse_args(argv)
    res = fuzz(args.files, args.seed, args.workers, args.limit, args.plot_every, args.keep)
    print(f"{res.files} files in {res.seconds:.1f} s ({res.rate:.1f} files/s), seed {args.seed}")
    for k in ("ok", "KaneError", *FAILURES):
        print(f"  {k:10s} {res.counts.get(k, 0)}")
    print("mutations: " + ", ".join(f"{k} {v}" for k, v in sorted(res.mutations.items())))
    for k, items in res.examples.items():
        print(f"{k}:")
        for name, detail in items[:5]:
            print(f"  {name}: {detail}")
    return res


if __name__ == "__main__":
    main()
