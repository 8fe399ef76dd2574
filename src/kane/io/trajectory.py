"""Simulation results: the ``Trajectory`` record, its HDF5 file format, and a crash-safe chunked writer.

File layout (HDF5, written with SWMR so that a file is readable at every flush, even after a crash):

* attributes: ``format`` = "kane.trajectory", ``version``, ``status``, ``description``, ``method``, and JSON
  strings ``q_names``, ``u_names``, ``residual_names``, ``params``, ``stats``;
* datasets ``t`` (N,) [s], ``q`` (N, n_q), ``u`` (N, n_u), optional ``energy`` (N,) [J],
  ``residuals/<name>`` (N,);
* ``events_jsonl`` and ``modes_jsonl``: uint8 byte streams of JSON lines (one event record, one mode start each);
* ``n_committed`` (1,): samples known to be on disk, updated after each flush has completed (readers of a
  crashed file trust no sample beyond it).

A :class:`TrajectoryWriter` writes to ``path + '.partial'`` and renames it to ``path`` (os.replace) on close.
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

__all__ = ["Stats", "EventRecord", "Trajectory", "TrajectoryWriter", "load_trajectory", "PARTIAL_SUFFIX"]

PARTIAL_SUFFIX = ".partial"
_FORMAT = "kane.trajectory"
_VERSION = 1


@dataclass(frozen=True)
class Stats:
    """Work and time of a run: evaluations of f, Jacobians, LU factorizations, steps (attempted, accepted,
    rejected; rejected is None where the method does not report it), wall time [s] spent stepping, method name."""

    n_fev: int = 0
    n_steps: int = 0
    n_accepted: int = 0
    n_rejected: int | None = 0
    wall_time_s: float = 0.0
    method: str = ""
    n_jev: int = 0
    n_lu: int = 0

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
    is "completed", "incomplete" (read from a partial file) or "failed: <reason>". Arrays are read-only.
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


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot store {type(obj).__name__} in a trajectory file")


class TrajectoryWriter:
    """Writes samples to ``path + '.partial'`` in chunks, then renames it to ``path`` on ``close()``.

    Samples are buffered in memory and written (datasets grown, file flushed) every ``flush_every`` samples or
    when ``flush_seconds`` [s] have passed since the last flush, whichever comes first. The file is in SWMR
    mode, so after a crash every sample up to the last flush can be read with :func:`load_trajectory`.
    Call ``open(...)`` with the layout first (the Simulator does this).
    """

    def __init__(self, path: str | os.PathLike, *, flush_every: int = 1000, flush_seconds: float = 5.0):
        if flush_every < 1:
            raise ValueError(f"flush_every must be >= 1 sample, got {flush_every!r}")
        self.path = Path(path)
        self.partial_path = Path(str(self.path) + PARTIAL_SUFFIX)
        self.flush_every = int(flush_every)
        self.flush_seconds = float(flush_seconds)
        self.n_written = 0
        self.n_flushed = 0
        self.closed = False
        self._file: h5py.File | None = None
        self._rows: list[tuple] = []
        self._events = bytearray()
        self._modes = bytearray()
        self._last_flush = time.monotonic()

    @property
    def is_open(self) -> bool:
        """True between ``open()`` and ``close()``."""
        return self._file is not None

    def open(self, *, q_names: Sequence[str], u_names: Sequence[str], residual_names: Sequence[str] = (),
             has_energy: bool = False, description: str = "", params: Mapping[str, float] | None = None,
             method: str = "") -> None:
        """Create the partial file with its datasets and metadata and switch it to SWMR mode."""
        if self._file is not None or self.closed:
            raise RuntimeError(f"TrajectoryWriter for {self.path} is already open or closed")
        self.q_names, self.u_names = tuple(q_names), tuple(u_names)
        self.residual_names = tuple(residual_names)
        for name in self.residual_names:
            if not name or "/" in name or name == ".":
                raise ValueError(f"residual name {name!r} cannot name an HDF5 dataset (no '/', not empty)")
        self.has_energy = bool(has_energy)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = h5py.File(self.partial_path, "w", libver="latest")
        f.attrs.update({
            "format": _FORMAT, "version": _VERSION, "status": "incomplete", "description": str(description),
            "method": str(method), "q_names": json.dumps(list(self.q_names)),
            "u_names": json.dumps(list(self.u_names)), "residual_names": json.dumps(list(self.residual_names)),
            "params": json.dumps({str(k): float(v) for k, v in (params or {}).items()}),
        })
        chunk = min(self.flush_every, 4096)
        f.create_dataset("t", shape=(0,), maxshape=(None,), dtype="f8", chunks=(chunk,))
        for name, width in (("q", len(self.q_names)), ("u", len(self.u_names))):
            f.create_dataset(name, shape=(0, width), maxshape=(None, width), dtype="f8",
                             chunks=(chunk, max(width, 1)))
        if self.has_energy:
            f.create_dataset("energy", shape=(0,), maxshape=(None,), dtype="f8", chunks=(chunk,))
        group = f.create_group("residuals")
        for name in self.residual_names:
            group.create_dataset(name, shape=(0,), maxshape=(None,), dtype="f8", chunks=(chunk,))
        for name in ("events_jsonl", "modes_jsonl"):
            f.create_dataset(name, shape=(0,), maxshape=(None,), dtype="u1", chunks=(4096,))
        f.create_dataset("n_committed", data=np.zeros(1, dtype=np.int64))
        f.swmr_mode = True
        self._file = f
        self._last_flush = time.monotonic()

    def append(self, t: float, q: np.ndarray, u: np.ndarray, energy: float | None = None,
               residuals: Sequence[float] = ()) -> None:
        """Buffer one sample (t [s], q (n_q,), u (n_u,), energy [J], residual values in ``residual_names`` order)."""
        self._rows.append((t, q, u, energy, tuple(residuals)))
        self.n_written += 1
        if len(self._rows) >= self.flush_every or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def append_block(self, t: np.ndarray, q: np.ndarray, u: np.ndarray, energy: np.ndarray | None = None,
                     residuals: Mapping[str, np.ndarray] | None = None) -> None:
        """Write many samples at once: t (N,), q (N, n_q), u (N, n_u), energy (N,), residuals name -> (N,)."""
        self.flush()
        t = np.asarray(t, dtype=float)
        res = [np.asarray((residuals or {})[name], dtype=float) for name in self.residual_names]
        self._write(t, np.asarray(q, dtype=float), np.asarray(u, dtype=float), energy, res)
        self.n_written += t.shape[0]
        self.flush()

    def add_event(self, record: EventRecord) -> None:
        """Buffer an event record (written at the next flush)."""
        self._events += (json.dumps(asdict(record), default=_json_default) + "\n").encode()

    def start_mode(self, t: float, mode: str) -> None:
        """Buffer the start of a mode at t [s] (a mode lasts until the next one starts or the run ends)."""
        self._modes += (json.dumps({"t": float(t), "mode": str(mode)}) + "\n").encode()

    def _require_open(self) -> h5py.File:
        if self._file is None:
            raise RuntimeError(f"TrajectoryWriter for {self.path} is not open")
        return self._file

    def _write(self, t, q, u, energy, residuals) -> None:
        f = self._require_open()
        m = t.shape[0]
        if m == 0:
            return
        n = f["t"].shape[0]
        series = [(f["t"], t), (f["q"], q.reshape(m, -1)), (f["u"], u.reshape(m, -1))]
        if self.has_energy:
            series.append((f["energy"], np.asarray(energy, dtype=float).reshape(m)))
        series += [(f["residuals"][name], r) for name, r in zip(self.residual_names, residuals)]
        for ds, data in series:
            ds.resize(n + m, axis=0)
            ds[n:] = data

    def flush(self) -> None:
        """Write the buffered samples and records and flush the file to disk."""
        f = self._require_open()
        if self._rows:
            rows, self._rows = self._rows, []
            t = np.array([r[0] for r in rows], dtype=float)
            q = np.array([r[1] for r in rows], dtype=float).reshape(len(rows), len(self.q_names))
            u = np.array([r[2] for r in rows], dtype=float).reshape(len(rows), len(self.u_names))
            energy = [np.nan if r[3] is None else r[3] for r in rows] if self.has_energy else None
            res = np.array([r[4] for r in rows], dtype=float).reshape(len(rows), len(self.residual_names)).T
            self._write(t, q, u, energy, list(res))
        for name, buf in (("events_jsonl", self._events), ("modes_jsonl", self._modes)):
            if buf:
                ds = f[name]
                n = ds.shape[0]
                ds.resize(n + len(buf), axis=0)
                ds[n:] = np.frombuffer(bytes(buf), dtype=np.uint8)
                buf.clear()
        f.flush()
        f["n_committed"][0] = f["t"].shape[0]
        f.flush()
        self.n_flushed = self.n_written
        self._last_flush = time.monotonic()

    def close(self, status: str = "completed", stats: Stats | None = None) -> Path:
        """Flush, record ``status`` and ``stats``, and rename the partial file to ``path``; returns ``path``."""
        f = self._require_open()
        self.flush()
        f.close()
        self._file = None
        with h5py.File(self.partial_path, "r+", libver="latest") as f2:
            f2.attrs["status"] = str(status)
            f2.attrs["stats"] = json.dumps(asdict(stats or Stats()), default=_json_default)
        os.replace(self.partial_path, self.path)
        self.closed = True
        return self.path

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._file is not None:
            self.close("completed" if exc is None else f"failed: {type(exc).__name__}: {exc}")


def _jsonl(raw: np.ndarray) -> list[dict]:
    out = []
    for line in bytes(raw).split(b"\n"):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def load_trajectory(path: str | os.PathLike) -> Trajectory:
    """Read a trajectory file. If ``path`` does not exist but ``path + '.partial'`` does (a run that is still
    going or was killed), read that: every sample up to its last flush, with status "incomplete"."""
    p = Path(path)
    if not p.exists():
        alt = Path(str(p) + PARTIAL_SUFFIX)
        if not alt.exists():
            raise FileNotFoundError(f"no trajectory file {p} (nor {alt})")
        p = alt
    partial = p.name.endswith(PARTIAL_SUFFIX)
    with h5py.File(p, "r", swmr=True) as f:
        if f.attrs.get("format") != _FORMAT:
            raise ValueError(f"{p} is not a kane trajectory file (attribute 'format' is {f.attrs.get('format')!r})")
        a = f.attrs
        residual_names = json.loads(a["residual_names"])
        lengths = [f["t"].shape[0], f["q"].shape[0], f["u"].shape[0]]
        lengths += [f["residuals"][k].shape[0] for k in residual_names]
        if "energy" in f:
            lengths.append(f["energy"].shape[0])
        if "n_committed" in f:
            lengths.append(int(f["n_committed"][0]))
        n = min(lengths)
        t = f["t"][:n]
        q = f["q"][:n]
        u = f["u"][:n]
        energy = f["energy"][:n] if "energy" in f else None
        residuals = {k: f["residuals"][k][:n] for k in residual_names}
        events = [EventRecord(float(e["t"]), e["name"], e["kind"], e.get("data", {}))
                  for e in _jsonl(f["events_jsonl"][:])]
        starts = _jsonl(f["modes_jsonl"][:])
        stats = Stats.from_dict(json.loads(a["stats"])) if "stats" in a else Stats(method=str(a["method"]))
        status = "incomplete" if partial else str(a["status"])
        t_last = float(t[-1]) if n else math.nan
        modes = [(float(s["t"]), float(starts[k + 1]["t"]) if k + 1 < len(starts) else t_last, s["mode"])
                 for k, s in enumerate(starts)]
        return Trajectory(t=t, q=q, u=u, energy=energy, residuals=residuals, events=events, modes=modes,
                          stats=stats, q_names=tuple(json.loads(a["q_names"])), u_names=tuple(json.loads(a["u_names"])),
                          description=str(a["description"]), params=json.loads(a["params"]), status=status)
