"""The fuzzers' shared machinery: a pool of forked worker processes fed seeded tasks over pipes, each task within
a time limit (a worker past it is killed, counted as a hang and replaced; one that dies is a crash), the outcomes
counted in a :class:`FuzzResult`, failing files kept with ``--keep``, and the common command-line options.

A fuzzer (bench/fuzz_models.py, bench/fuzz_urdf.py, bench/fuzz_hdf5.py) brings only what is its own: how it makes
a hostile input (the :class:`Task` iterable, consumed in order, so a seed gives the same files whatever the
scheduling) and how it judges one (the ``checker`` each worker builds, which returns ``(outcome, detail)``).

    result = run_pool(tasks, checker, workers=2, limit=Limit(10.0), keep=None, failures=("raw", "hang", ...))
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

__all__ = ["FuzzResult", "Task", "Limit", "run_pool", "outcome_of", "common_arguments", "print_summary"]

_CPU_POLL_S = 0.01  # how often the CPU time of the busy workers is read under a CPU-time limit [s]


@dataclass
class FuzzResult:
    """Counts by outcome (``ok``, ``KaneError`` and each failure kind), examples of each failure (file name,
    detail), the number of files, the wall time [s] and the outcomes that are failures (``failure_kinds``)."""

    counts: collections.Counter = field(default_factory=collections.Counter)
    examples: dict = field(default_factory=dict)
    files: int = 0
    wall_s: float = 0.0
    failure_kinds: tuple[str, ...] = ()

    def failures(self) -> int:
        return sum(self.counts[k] for k in self.failure_kinds)

    @property
    def rate(self) -> float:
        """Files per second of wall time (0 before a run)."""
        return self.files / self.wall_s if self.wall_s else 0.0


@dataclass(frozen=True)
class Task:
    """One file to check: its ``name`` (in the examples and under ``--keep``), the ``args`` the worker's checker
    is called with, and what ``--keep`` saves: ``text`` (str or bytes, written) or else the file at ``path``
    (copied)."""

    name: str
    args: tuple
    text: str | bytes | None = None
    path: Path | None = None

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        if isinstance(self.text, str):
            (directory / self.name).write_text(self.text, encoding="utf-8")
        elif self.text is not None:
            (directory / self.name).write_bytes(self.text)
        elif self.path is not None:
            shutil.copyfile(self.path, directory / self.name)


@dataclass(frozen=True)
class Limit:
    """The time one task may take its worker: ``seconds`` of wall time, or with ``cpu`` that many seconds of the
    worker's CPU time (user + system) or ``wall_factor`` times that of wall time, on a loaded machine."""

    seconds: float
    cpu: bool = False
    wall_factor: float = 10.0

    @property
    def wall_s(self) -> float:
        """The wall time [s] past which a task is a hang whatever its CPU time."""
        return self.wall_factor * self.seconds if self.cpu else self.seconds

    def detail(self) -> str:
        """What a hang's example says."""
        if self.cpu:
            return f"more than {self.seconds:g} s of CPU time (or {self.wall_factor * self.seconds:g} s)"
        return f"over {self.seconds:g} s"


def outcome_of(exc: BaseException, stage: str, name: str | None) -> tuple[str, str]:
    """How a checker judges an exception raised at ``stage`` while checking the file ``name`` (None: a stage of
    the Python API, which names no file): ("KaneError" | "unnamed" (a KaneError not naming the file) | "raw" (any
    other exception, with the innermost frame in kane), detail)."""
    import traceback

    from kane.errors import KaneError

    if isinstance(exc, KaneError):
        outcome = "unnamed" if name is not None and name not in str(exc) else "KaneError"
        return outcome, f"{stage}: {type(exc).__name__}: {str(exc)[:300]}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "kane" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return "raw", f"{stage}: {type(exc).__name__} at {where}: {str(exc)[:200]}"


def _cpu_seconds(pid: int) -> float:
    """CPU time [s] (user + system) of process ``pid`` so far (Linux /proc; 0 where it cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _serve(conn, slot: int, checker: Callable) -> None:
    """A worker's loop: build its check for ``slot``, then answer each task's args with its outcome."""
    check = checker(slot)
    while True:
        args = conn.recv()
        if args is None:
            return
        conn.send(check(*args))


class _Worker:
    """One forked worker process (slot ``slot``), its pipe and the task it is on (with when it started)."""

    def __init__(self, ctx, slot: int, checker: Callable):
        self.slot = slot
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, slot, checker), daemon=True)
        self.proc.start()
        self.task: Task | None = None
        self.started, self.cpu0 = 0.0, 0.0

    def give(self, task: Task | None, limit: Limit) -> None:
        self.task, self.started = task, time.perf_counter()
        if task is not None:
            self.cpu0 = _cpu_seconds(self.proc.pid) if limit.cpu else 0.0
            self.conn.send(task.args)

    def over(self, limit: Limit) -> bool:
        elapsed = time.perf_counter() - self.started
        if limit.cpu:
            return _cpu_seconds(self.proc.pid) - self.cpu0 > limit.seconds or elapsed > limit.wall_s
        return elapsed >= limit.wall_s

    def died(self) -> str:
        """What a crash's example says: the exit status (reaped first: it is None until then)."""
        self.proc.join(timeout=5)
        return f"worker died (exit {self.proc.exitcode})"

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


def run_pool(tasks: Iterable[Task], checker: Callable[[int], Callable[..., tuple[str, str]]], workers: int,
             limit: Limit, keep: Path | None, failures: tuple[str, ...],
             after: Callable[[Task], tuple[str, str] | None] | None = None,
             result: FuzzResult | None = None) -> FuzzResult:
    """Check every task on ``workers`` forked processes: ``checker(slot)`` runs once in each worker (a new one
    after a hang or a crash gets the same slot) and returns the function that each task's ``args`` are passed
    to, which returns ``(outcome, detail)``. A task past ``limit`` is a "hang" (its worker killed and replaced), a
    worker that dies is a "crash". Outcomes in ``failures`` are kept as examples and, with ``keep``, the task's
    file is saved there. ``after(task)``, called in this process after each outcome, may return one more outcome
    to count (it is counted as one more file). Fills ``result`` (a new :class:`FuzzResult` if None)."""
    result = FuzzResult(failure_kinds=failures) if result is None else result
    result.failure_kinds = failures
    start = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    tasks = iter(tasks)

    def record(outcome: str, detail: str, task: Task) -> None:
        result.counts[outcome] += 1
        result.files += 1
        if outcome in failures:
            result.examples.setdefault(outcome, []).append((task.name, detail))
            if keep is not None:
                task.save(keep)

    pool = [_Worker(ctx, slot, checker) for slot in range(max(1, workers))]
    try:
        for w in pool:
            w.give(next(tasks, None), limit)
        while any(w.task is not None for w in pool):
            busy = [w for w in pool if w.task is not None]
            timeout = max(0.0, min(w.started for w in busy) + limit.wall_s - time.perf_counter())
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy],
                         timeout=min(timeout, _CPU_POLL_S) if limit.cpu else timeout)
            for i, w in enumerate(pool):
                if w.task is None:
                    continue
                if w.conn in ready and w.conn.poll():
                    try:
                        outcome, detail = w.conn.recv()
                    except EOFError:
                        outcome, detail = "crash", w.died()
                elif w.proc.sentinel in ready or not w.proc.is_alive():
                    outcome, detail = "crash", w.died()
                elif w.over(limit):
                    outcome, detail = "hang", limit.detail()
                else:
                    continue
                task = w.task
                record(outcome, detail, task)
                if after is not None and (extra := after(task)) is not None:
                    record(*extra, task)
                if outcome in ("crash", "hang"):
                    w.stop()
                    pool[i] = w = _Worker(ctx, w.slot, checker)
                w.give(next(tasks, None), limit)
    finally:
        for w in pool:
            if w.proc.is_alive():
                w.conn.send(None)
                w.proc.join(timeout=5)
            w.stop()
    result.wall_s = time.perf_counter() - start
    return result


def common_arguments(parser: argparse.ArgumentParser, limit_s: float, keep: bool = True) -> argparse.ArgumentParser:
    """Add the options every fuzzer takes: --files, --seed, --workers, --limit (default ``limit_s`` [s]) and,
    with ``keep``, --keep."""
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=float, default=limit_s, help="per-file time limit [s]")
    if keep:
        parser.add_argument("--keep", type=Path, help="directory for the failing files")
    return parser


def print_summary(result: FuzzResult, workers: int, examples: int = 15) -> None:
    """Print the files, the wall time, the rate, the count of each outcome and the first ``examples`` of each
    failure."""
    print(f"{result.files} files in {result.wall_s:.1f} s ({result.files / result.wall_s:.2f} files/s, "
          f"{workers} workers)")
    for k in ("ok", "KaneError", *result.failure_kinds):
        print(f"  {k:>10}: {result.counts[k]}")
    for k, items in result.examples.items():
        print(f"-- {k}")
        for name, detail in items[:examples]:
            print(f"   {name}: {detail}")
