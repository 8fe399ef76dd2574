"""Simulation results: the ``Trajectory`` record, its HDF5 file format, and a crash-safe chunked writer.

File layout (HDF5 in the 1.8 file format, readable by plain ``h5py.File(path, "r")`` and every HDF5 tool):

* attributes: ``format`` = "kane.trajectory", ``version``, ``status``, ``description``, ``method``, and JSON
  strings ``q_names``, ``u_names``, ``residual_names``, ``params``, ``stats``;
* datasets ``t`` (N,) [s], ``q`` (N, n_q), ``u`` (N, n_u), optional ``energy`` (N,) [J],
  ``residuals/<name>`` (N,);
* ``events_jsonl`` and ``modes_jsonl``: uint8 byte streams of JSON lines (one event record, one mode start each);
* ``n_committed`` (3,) int64: samples, event bytes and mode bytes known to be on disk, updated last in each
  flush (readers of a crashed file trust nothing beyond it; a flush cut short is written again at the same
  offsets, so an interrupted flush never duplicates or loses a sample). Files of version 1 have shape (1,).

A :class:`TrajectoryWriter` writes to ``path + '.partial'`` and renames it to ``path`` (os.replace) on close;
one writer per path (:class:`kane.io.output_path.OutputLock`: a second run refuses at start), and an older
complete ``path`` is renamed to ``path + '.previous'`` when a run starts (removed when it completes), so a run
killed with SIGKILL leaves its partial file as the only one of that name to read.
The partial file is closed between flushes (each flush opens it, appends, and closes it), so a run killed with
SIGKILL leaves a consistent file holding every sample of its last flush. The datasets grow ahead of the samples
(a reserve of at least a quarter, allocated at once and filled with NaN, cut off on close), so most flushes
write data alone and a kill during one leaves the HDF5 structure intact. :func:`load_trajectory` reads such a
file (status "incomplete", ``n_committed`` samples), and prefers it to an older complete file of the same name.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .h5_read import MAX_READ_BYTES, HDF5LayoutError, dataset, format_of, name_list, printable, read_rows, text_attr, \
    unreadable_as_layout_error
from .output_path import OutputLock, TrajectoryFileError, check_output_path
from .trajectory_file import PARTIAL_SUFFIX, h5open, jsonl_records, params_of, pick_file, stats_fields

__all__ = ["Stats", "EventRecord", "Trajectory", "TrajectoryWriter", "load_trajectory", "PARTIAL_SUFFIX",
           "PREVIOUS_SUFFIX", "TrajectoryFileError", "check_output_path"]

PREVIOUS_SUFFIX = ".previous"
_FORMAT = "kane.trajectory"
_VERSION = 2
_LIBVER = ("v108", "v108")  # superblock version 2: no "open for write" flag, so a killed writer's file opens plainly


@dataclass(frozen=True)
class Stats:
    """Work and time of a run: evaluations of f, Jacobians, LU factorizations, steps (attempted, accepted,
    rejected; rejected is None where the method does not report it), wall time [s] spent stepping, method name,
    and the loop that stepped it: ``loop`` "compiled" or "python" ("" in files written before it was recorded),
    ``loop_reason`` why not the compiled loop (for "compiled": how it ran when not in whole stretches; "" else)."""

    n_fev: int = 0
    n_steps: int = 0
    n_accepted: int = 0
    n_rejected: int | None = 0
    wall_time_s: float = 0.0
    method: str = ""
    n_jev: int = 0
    n_lu: int = 0
    loop: str = ""
    loop_reason: str = ""

    @property
    def loop_text(self) -> str:
        """"compiled loop", "compiled loop: <how>", "python loop: <why>" or "" (not recorded)."""
        if not self.loop:
            return ""
        return f"{self.loop} loop" + (f": {self.loop_reason}" if self.loop_reason else "")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Stats:
        """Build from a mapping, ignoring unknown keys."""
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass(frozen=True)
class EventRecord:
    """Something that happened at time ``t`` [s]: ``name`` (the event), ``kind`` ("crossing", "terminal", ...),
    and a JSON-serializable ``data`` dict."""

    t: float
    name: str
    kind: str
    data: dict = field(default_factory=dict)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _matrix(a: Any, n: int, names: Sequence[str]) -> np.ndarray:
    a = np.array(a, dtype=float)
    if a.ndim == 2 and a.shape[0] == n:
        return a
    width = len(names) if names else (a.size // n if n else 0)
    return a.reshape(n, width)


@dataclass(frozen=True)
class Trajectory:
    """Sampled run: t (N,) [s], q (N, n_q), u (N, n_u), energy (N,) [J] or None, residuals name -> (N,).

    ``events`` lists EventRecords, ``modes`` (t_start, t_end, mode_name) segments, ``stats`` a Stats, ``status``
    is "completed", "incomplete" (read from a partial file: a run killed, or still going), "interrupted: <how>"
    or "failed: <reason>". ``source`` is the file it was read from ("" when not read from a file). Arrays are
    read-only.
    """

    t: np.ndarray
    q: np.ndarray
    u: np.ndarray
    energy: np.ndarray | None = None
    residuals: dict[str, np.ndarray] = field(default_factory=dict)
    events: list[EventRecord] = field(default_factory=list)
    modes: list[tuple[float, float, str]] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    q_names: tuple[str, ...] = ()
    u_names: tuple[str, ...] = ()
    description: str = ""
    params: dict[str, float] = field(default_factory=dict)
    status: str = "completed"
    source: str = ""

    def __post_init__(self) -> None:
        t = _readonly(np.array(self.t, dtype=float).reshape(-1))
        n = t.shape[0]
        q = _readonly(_matrix(self.q, n, self.q_names))
        u = _readonly(_matrix(self.u, n, self.u_names))
        q_names = tuple(self.q_names) or tuple(f"q{i}" for i in range(q.shape[1]))
        u_names = tuple(self.u_names) or tuple(f"u{i}" for i in range(u.shape[1]))
        if len(q_names) != q.shape[1] or len(u_names) != u.shape[1]:
            raise ValueError(f"Trajectory: {len(q_names)} q_names for q of shape {q.shape}, "
                             f"{len(u_names)} u_names for u of shape {u.shape}")
        energy = None if self.energy is None else _readonly(np.array(self.energy, dtype=float).reshape(n))
        residuals = {str(k): _readonly(np.array(v, dtype=float).reshape(n)) for k, v in self.residuals.items()}
        for name, value in (("t", t), ("q", q), ("u", u), ("energy", energy), ("residuals", residuals),
                            ("events", list(self.events)), ("q_names", q_names), ("u_names", u_names),
                            ("modes", [(float(a), float(b), str(m)) for a, b, m in self.modes]),
                            ("params", {str(k): float(v) for k, v in self.params.items()})):
            object.__setattr__(self, name, value)

    @property
    def n_samples(self) -> int:
        """Number of samples N."""
        return self.t.shape[0]

    @property
    def x(self) -> np.ndarray:
        """States concat(q, u), shape (N, n_q + n_u)."""
        return np.hstack([self.q, self.u])

    def __getitem__(self, name: str) -> np.ndarray:
        """The (N,) series of a coordinate, speed or residual by name, or "energy"."""
        if name in self.q_names:
            return self.q[:, self.q_names.index(name)]
        if name in self.u_names:
            return self.u[:, self.u_names.index(name)]
        if name in self.residuals:
            return self.residuals[name]
        if name == "energy" and self.energy is not None:
            return self.energy
        raise KeyError(f"no series named {name!r}; q: {self.q_names}, u: {self.u_names}, "
                       f"residuals: {tuple(self.residuals)}")

    def unfinished_note(self, requested: str | os.PathLike | None = None) -> str | None:
        """None for a completed run; else a sentence naming the file read (``source``, and that it is newer than
        the ``requested`` path when it is not that path), that the run did not complete and how far it got."""
        if self.status == "completed":
            return None
        reached = f"t = {self.t[-1]:g} s, {self.n_samples} samples" if self.n_samples else "no samples"
        read = self.source or "the run"
        if requested is not None and self.source != str(requested) and Path(requested).exists():
            read += f" (newer than {requested})"
        if self.status == "incomplete":
            return (f"{read} is incomplete: its run was killed or is still going; it got to {reached} (every "
                    f"sample flushed to the file)")
        return f"{read} is not a completed run ({self.status}); it got to {reached}"

    def save(self, path: str | os.PathLike) -> Path:
        """Write to HDF5 at ``path`` (atomically, through a .partial file); returns the path."""
        writer = TrajectoryWriter(path, flush_every=max(self.n_samples, 1), flush_seconds=math.inf)
        writer.open(q_names=self.q_names, u_names=self.u_names, residual_names=tuple(self.residuals),
                    has_energy=self.energy is not None, description=self.description, params=self.params,
                    method=self.stats.method)
        for t_start, _, mode in self.modes:
            writer.start_mode(t_start, mode)
        for ev in self.events:
            writer.add_event(ev)
        writer.append_block(self.t, self.q, self.u, self.energy, self.residuals)
        return writer.close(self.status, self.stats)


def _series(group: h5py.Group, name: str, row: tuple[int, ...], chunk: int, dtype: str = "f8") -> None:
    """A growable dataset (0, *row) whose chunks are allocated when it grows (not when first written) and filled
    with NaN (0 for bytes): a flush that fits in the reserve changes no HDF5 metadata, only data."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    group.create_dataset(name, shape=(0, *row), maxshape=(None, *row), dtype=dtype, dcpl=dcpl,
                         chunks=(chunk, *(max(w, 1) for w in row)), fillvalue=np.nan if dtype == "f8" else 0)


def _reserve(ds: h5py.Dataset, length: int) -> None:
    """Grow ``ds`` (axis 0) to hold ``length`` rows, by at least a quarter and four chunks at a time."""
    size = ds.shape[0]
    if length > size:
        ds.resize(max(length, size + max(size // 4, 4 * ds.chunks[0])), axis=0)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot store {type(obj).__name__} in a trajectory file")


class TrajectoryWriter:
    """Writes samples to ``path + '.partial'`` in chunks, then renames it to ``path`` on ``close()``.

    Samples are buffered in memory and written every ``flush_every`` samples or when ``flush_seconds`` [s] have
    passed since the last flush, whichever comes first. Each flush opens the file, grows the datasets, records
    ``n_committed`` and closes it, so between flushes the file is closed and consistent: after a crash or a
    SIGKILL every sample up to the last flush opens with plain ``h5py.File(path, "r")`` and with
    :func:`load_trajectory`. Call ``open(...)`` with the layout first (the Simulator does this).
    """

    def __init__(self, path: str | os.PathLike, *, flush_every: int = 1000, flush_seconds: float = 1.0):
        if flush_every < 1:
            raise ValueError(f"flush_every must be >= 1 sample, got {flush_every!r}")
        self.path = Path(path)
        self.partial_path = Path(str(self.path) + PARTIAL_SUFFIX)
        self.previous_path = Path(str(self.path) + PREVIOUS_SUFFIX)
        self.flush_every = int(flush_every)
        self.flush_seconds = float(flush_seconds)
        self.n_written = 0
        self.n_flushed = 0
        self.closed = False
        self._opened = False
        self._rows: list[tuple] = []
        self._blocks: list[tuple] = []  # (t (m,), q (m, n_q), u (m, n_u), energy (m,) or None, residuals (m, r))
        self._events = bytearray()
        self._modes = bytearray()
        self._last_flush = time.monotonic()
        self._committed = (0, 0, 0)
        self._h5options: dict = {"libver": _LIBVER}

    @property
    def is_open(self) -> bool:
        """True between ``open()`` and ``close()``."""
        return self._opened and not self.closed

    def open(self, *, q_names: Sequence[str], u_names: Sequence[str], residual_names: Sequence[str] = (),
             has_energy: bool = False, description: str = "", params: Mapping[str, float] | None = None,
             method: str = "") -> None:
        """Create the partial file with its datasets and metadata (then closed until the first flush); raises
        :class:`TrajectoryFileError` when the path cannot be written."""
        if self._opened or self.closed:
            raise RuntimeError(f"TrajectoryWriter for {self.path} is already open or closed")
        self.q_names, self.u_names = tuple(q_names), tuple(u_names)
        self.residual_names = tuple(residual_names)
        for name in self.residual_names:
            if not name or "/" in name or name == ".":
                raise ValueError(f"residual name {name!r} cannot name an HDF5 dataset (no '/', not empty)")
        self.has_energy = bool(has_energy)
        check_output_path(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrajectoryFileError(f"cannot create the directory of output file {self.path}: "
                                      f"{exc.strerror or exc}") from exc
        self._lock = OutputLock.acquire(self.path)
        try:
            with h5open(self.partial_path, "w", self._h5options) as f:
                self._create_layout(f, description, params, method)
            if self.path.is_file():  # an earlier run's: kept aside until this one completes, never read for it
                os.replace(self.path, self.previous_path)
        except BaseException:
            self._lock.release()
            raise
        self._opened = True
        self._last_flush = time.monotonic()

    def _create_layout(self, f: h5py.File, description: str, params: Mapping[str, float] | None,
                       method: str) -> None:
        f.attrs.update({
            "format": _FORMAT, "version": _VERSION, "status": "incomplete", "description": str(description),
            "method": str(method), "q_names": json.dumps(list(self.q_names)),
            "u_names": json.dumps(list(self.u_names)), "residual_names": json.dumps(list(self.residual_names)),
            "params": json.dumps({str(k): float(v) for k, v in (params or {}).items()}),
        })
        chunk = min(self.flush_every, 4096)
        _series(f, "t", (), chunk)
        for name, width in (("q", len(self.q_names)), ("u", len(self.u_names))):
            _series(f, name, (width,), chunk)
        if self.has_energy:
            _series(f, "energy", (), chunk)
        group = f.create_group("residuals")
        for name in self.residual_names:
            _series(group, name, (), chunk)
        for name in ("events_jsonl", "modes_jsonl"):
            _series(f, name, (), 4096, dtype="u1")
        f.create_dataset("n_committed", data=np.zeros(3, dtype=np.int64))

    def append(self, t: float, q: np.ndarray, u: np.ndarray, energy: float | None = None,
               residuals: Sequence[float] = ()) -> None:
        """Buffer one sample (t [s], q (n_q,), u (n_u,), energy [J], residual values in ``residual_names`` order)."""
        self._rows.append((t, q, u, energy, tuple(residuals)))
        self.n_written += 1
        if len(self._rows) >= self.flush_every or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def append_block(self, t: np.ndarray, q: np.ndarray, u: np.ndarray, energy: np.ndarray | None = None,
                     residuals: Mapping[str, np.ndarray] | None = None) -> None:
        """Buffer many samples at once: t (N,), q (N, n_q), u (N, n_u), energy (N,), residuals name -> (N,);
        written as :meth:`append`'s rows are (every ``flush_every`` samples or ``flush_seconds``)."""
        if self._rows:  # the samples buffered one by one go first
            self.flush()
        t = np.array(t, dtype=float).reshape(-1)
        m = t.shape[0]
        res = np.array([np.asarray((residuals or {})[name], dtype=float).reshape(m) for name in self.residual_names],
                       dtype=float).reshape(len(self.residual_names), m).T
        e = None if not self.has_energy else (np.full(m, np.nan) if energy is None else
                                               np.array(energy, dtype=float).reshape(m))
        self._blocks.append((t, np.array(q, dtype=float).reshape(m, len(self.q_names)),
                             np.array(u, dtype=float).reshape(m, len(self.u_names)), e, res))
        self.n_written += m
        if self.n_written - self.n_flushed >= self.flush_every or \
                time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def add_event(self, record: EventRecord) -> None:
        """Buffer an event record (written at the next flush)."""
        self._events += (json.dumps(asdict(record), default=_json_default) + "\n").encode()

    def start_mode(self, t: float, mode: str) -> None:
        """Buffer the start of a mode at t [s] (a mode lasts until the next one starts or the run ends)."""
        self._modes += (json.dumps({"t": float(t), "mode": str(mode)}) + "\n").encode()

    def _require_open(self) -> None:
        if not self.is_open:
            raise RuntimeError(f"TrajectoryWriter for {self.path} is not open")

    def _commit(self, f: h5py.File, t, q, u, energy, residuals) -> tuple[int, int, int]:
        """Write samples and the buffered records after the committed ones, then the new committed counts;
        returns them. Nothing in this object changes, so a flush cut short is simply done again."""
        n, n_events, n_modes = self._committed
        m = t.shape[0]
        series = [(f["t"], t), (f["q"], q.reshape(m, len(self.q_names))),
                  (f["u"], u.reshape(m, len(self.u_names)))]
        if self.has_energy:
            series.append((f["energy"], np.asarray(energy, dtype=float).reshape(m)))
        series += [(f["residuals"][name], r) for name, r in zip(self.residual_names, residuals)]
        for ds, data in series:
            _reserve(ds, n + m)
            ds[n:n + m] = data
        counts = [n + m]
        for name, buf, base in (("events_jsonl", self._events, n_events), ("modes_jsonl", self._modes, n_modes)):
            _reserve(f[name], base + len(buf))
            f[name][base:base + len(buf)] = np.frombuffer(bytes(buf), dtype=np.uint8)
            counts.append(base + len(buf))
        f.flush()
        f["n_committed"][:] = counts
        return tuple(counts)

    def _trim(self, f: h5py.File) -> None:
        """Cut every dataset to its committed length (the reserve beyond it goes)."""
        n, n_events, n_modes = self._committed
        names = ["t", "q", "u"] + (["energy"] if self.has_energy else [])
        for ds, length in [(f[k], n) for k in names] + [(f["residuals"][k], n) for k in self.residual_names] + \
                [(f["events_jsonl"], n_events), (f["modes_jsonl"], n_modes)]:
            ds.resize(length, axis=0)

    def flush(self, attrs: Mapping[str, str] | None = None) -> None:
        """Write the buffered samples and records (and the file attributes ``attrs``), then close the file."""
        self._require_open()
        rows, k = self._rows, len(self._rows)
        parts = self._blocks + [(  # blocks are buffered only while no row is: they come first
            np.array([r[0] for r in rows], dtype=float),
            np.array([r[1] for r in rows], dtype=float).reshape(k, len(self.q_names)),
            np.array([r[2] for r in rows], dtype=float).reshape(k, len(self.u_names)),
            np.array([np.nan if r[3] is None else r[3] for r in rows], dtype=float) if self.has_energy else None,
            np.array([r[4] for r in rows], dtype=float).reshape(k, len(self.residual_names)))]
        t, q, u, res = (np.concatenate([part[i] for part in parts]) for i in (0, 1, 2, 4))
        energy = np.concatenate([part[3] for part in parts]) if self.has_energy else None
        with h5open(self.partial_path, "r+", self._h5options) as f:
            committed = self._commit(f, t, q, u, energy, list(res.T))
            f.attrs.update(dict(attrs or {}))
        self._committed = committed
        self._blocks.clear()
        del self._rows[:k]
        self._events.clear()
        self._modes.clear()
        self.n_flushed = self.n_written - len(self._rows)
        self._last_flush = time.monotonic()

    def close(self, status: str = "completed", stats: Stats | None = None) -> Path:
        """Flush, record ``status`` and ``stats``, cut the datasets to their length and rename the partial file
        to ``path``; returns ``path``."""
        self.flush({"status": str(status), "stats": json.dumps(asdict(stats or Stats()), default=_json_default)})
        with h5open(self.partial_path, "r+", self._h5options) as f:
            self._trim(f)
        os.replace(self.partial_path, self.path)
        self.previous_path.unlink(missing_ok=True)
        self.closed = True
        self._lock.release()
        return self.path

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.is_open:
            self.close("completed" if exc is None else f"failed: {type(exc).__name__}: {exc}")


def load_trajectory(path: str | os.PathLike, *, max_bytes: int = MAX_READ_BYTES) -> Trajectory:
    """Read a trajectory file (or assembly frames). If ``path + '.partial'`` exists and is newer than ``path`` (or
    ``path`` does not exist) it is read instead: a run that is still going or was killed, every sample up to its
    last flush, with status "incomplete"; ``Trajectory.source`` names the file read. The layout is checked before
    anything is read, and no dataset is read beyond ``max_bytes`` [bytes]. Raises :class:`TrajectoryFileError`
    for a missing file, a file that is not HDF5 or not a kane trajectory, and
    :class:`~kane.io.h5_read.HDF5LayoutError` (a KaneError) naming the file and the dataset or attribute at
    fault for any other layout."""
    p = pick_file(path)
    if p.is_dir() or not h5py.is_hdf5(p):
        raise TrajectoryFileError(f"{p} is not an HDF5 file (kane reads the .h5 trajectory files written by "
                                  f"kane simulate)")
    with h5open(p, "r") as f, unreadable_as_layout_error(p):
        if format_of(f) != _FORMAT:
            raise TrajectoryFileError(f"{p} is an HDF5 file but not a kane trajectory (attribute 'format' is "
                                      f"{printable(repr(format_of(f)))}, expected {_FORMAT!r})")
        return _read(f, p, max_bytes)


def _read(f: h5py.File, p: Path, max_bytes: int) -> Trajectory:
    a = f.attrs
    q_names, u_names = name_list(a, "q_names", p), name_list(a, "u_names", p)
    residual_names = name_list(a, "residual_names", p, default=[])
    if residual_names and not isinstance(f.get("residuals", getlink=True), h5py.HardLink):
        raise HDF5LayoutError(p, "residuals", "missing or a link (expected a group of datasets)")
    for name in residual_names:
        if not name or "/" in name or name == ".":
            raise HDF5LayoutError(p, "attribute residual_names", f"{printable(repr(name))} cannot name a dataset")
    series = {"t": dataset(f, "t", p, ndim=1), "q": dataset(f, "q", p, ndim=2, width=len(q_names)),
              "u": dataset(f, "u", p, ndim=2, width=len(u_names)),
              **{f"residuals/{k}": dataset(f, f"residuals/{k}", p, ndim=1) for k in residual_names}}
    energy = dataset(f, "energy", p, ndim=1, required=False)
    if energy is not None:
        series["energy"] = energy
    committed_ds = dataset(f, "n_committed", p, ndim=1, kinds="iu", required=False)
    committed = np.zeros(0, dtype=np.int64) if committed_ds is None else \
        read_rows(committed_ds, 3, p, dtype=np.int64)
    lengths = [ds.shape[0] for ds in series.values()] + ([int(committed[0])] if committed.size else [])
    n = max(0, min(lengths))
    n_bytes = [max(0, int(committed[k])) if committed.size == 3 else None for k in (1, 2)]
    data = {name: read_rows(ds, n, p, max_bytes=max_bytes) for name, ds in series.items()}
    event_fields = {"t": (int, float), "name": str, "kind": str, "data": dict}
    events = [EventRecord(float(e["t"]), e["name"], e["kind"], e.get("data", {}))
              for e in jsonl_records(f, "events_jsonl", n_bytes[0], p, event_fields)]
    starts = jsonl_records(f, "modes_jsonl", n_bytes[1], p, {"t": (int, float), "mode": str})
    t = data["t"]
    t_last = float(t[-1]) if n else math.nan
    modes = [(float(s["t"]), float(starts[k + 1]["t"]) if k + 1 < len(starts) else t_last, s["mode"])
             for k, s in enumerate(starts)]
    status = "incomplete" if p.name.endswith(PARTIAL_SUFFIX) else text_attr(a, "status", p, "?")
    return Trajectory(t=t, q=data["q"], u=data["u"], energy=data.get("energy"), events=events, modes=modes,
                      residuals={k: data[f"residuals/{k}"] for k in residual_names},
                      stats=Stats(**stats_fields(f, p, Stats.__dataclass_fields__)),
                      q_names=q_names, u_names=u_names, description=text_attr(a, "description", p, ""),
                      params=params_of(f, p), status=status, source=str(p))
