"""Reading a real-time log (:mod:`kane.realtime.log`) back: every committed row with its names, the run's status,
deadline summary, counts, modes and mode changes, as a :class:`RealtimeRecord`; a partial file (a run killed
before it closed its log) too, its deadline summary then computed from the rows.

    >>> rec = load_realtime_log("run.h5")
    >>> rec.deadlines.missed, rec.force.shape          # (N, 3) [N] on the body point
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from ..errors import ArgumentError
from ..io.h5_read import HDF5LayoutError, dataset, format_of, name_list, printable, read_rows, text_attr, \
    unreadable_as_layout_error
from .log import _WIDTH, LOG_FORMAT, POSE_FIELDS
from .stats import DeadlineStats, DeadlineSummary

__all__ = ["LogEvent", "PlantSteps", "RealtimeRecord", "is_realtime_log", "read_log_columns", "load_realtime_log"]

_COLUMNS = ("t", "hand_position", "hand_velocity", "point_position", "point_velocity", "force", "power",
            "port_energy", "spring_energy", "energy", "q", "u", "compute_time", "lateness", "sample_status", "mode")
_SHAPE = {**_WIDTH, "energy": 1}  # row widths of the columns (q and u: by their names)
_INTEGER = ("sample_status", "mode")
_MAX_INDEX = 32767  # the mode column is int16
_MAX_EVENTS = 10_000_000
_TEXT_ATTRS = ("status", "stats", "counts", "modes", "q_names", "u_names")
_SUMMARY = tuple(DeadlineSummary.__dataclass_fields__)


@dataclass(frozen=True)
class LogEvent:
    """A mode change inside a period: ``t`` [s], ``kind`` ("lock", "unlock", "impact", "stick", "slip"...), the
    ``constraint``'s name and its ``data`` (impulses, change of kinetic energy, new mode)."""

    t: float
    kind: str
    constraint: str
    data: dict


@dataclass(frozen=True)
class PlantSteps:
    """The plant's own states at its steps when the dynamics step every k periods (the log's rows hold what the
    coupler saw, extrapolated): ``t`` (M,) [s], ``q`` (M, n_q), ``u`` (M, n_u), ``energy`` (M,) [J] (NaN when
    unknown), from the start."""

    t: np.ndarray
    q: np.ndarray
    u: np.ndarray
    energy: np.ndarray


@dataclass(frozen=True)
class RealtimeRecord:
    """A real-time log read back (N committed rows; shapes (N,) unless noted): ``t`` [s]; the device's
    ``hand_position``, ``hand_velocity`` and the body point's ``point_position``, ``point_velocity`` (N, 3) [m, m/s];
    ``force`` (N, 3) [N] on the body (the device displayed -force); ``power`` [W]; ``port_energy``,
    ``spring_energy`` and the virtual system's ``energy`` [J] (NaN when unknown); ``q`` (N, n_q), ``u`` (N, n_u)
    named ``q_names``, ``u_names``; ``compute_time`` and ``lateness`` [s] per period; ``sample_status`` (0 used,
    1 refused, 2 missing); ``mode``, indices into ``modes``; ``events`` (:class:`LogEvent`); ``status``;
    ``finished`` (False: a partial file, the run did not close its log); ``deadlines``
    (:class:`DeadlineSummary`, from the rows when the log was not closed); ``counts`` (refused, missing,
    saturated, engine...; empty when not closed); ``steps``, the plant's own states at its steps with
    ``dynamics_every`` > 1 (:class:`PlantSteps`; None otherwise or when not closed); ``path``. With a full pose
    coupled: ``torque`` (N, 3) [N m] on the body, ``hand_orientation`` and ``body_orientation`` (N, 3, 3) (their
    axes to ground), ``hand_angular_velocity`` and ``body_angular_velocity`` (N, 3) [rad/s] (None otherwise)."""

    path: Path
    status: str
    finished: bool
    q_names: tuple
    u_names: tuple
    modes: tuple
    events: tuple
    deadlines: DeadlineSummary
    counts: dict
    steps: PlantSteps | None
    t: np.ndarray
    hand_position: np.ndarray
    hand_velocity: np.ndarray
    point_position: np.ndarray
    point_velocity: np.ndarray
    force: np.ndarray
    power: np.ndarray
    port_energy: np.ndarray
    spring_energy: np.ndarray
    energy: np.ndarray
    q: np.ndarray
    u: np.ndarray
    compute_time: np.ndarray
    lateness: np.ndarray
    sample_status: np.ndarray
    mode: np.ndarray
    torque: np.ndarray | None = None
    hand_orientation: np.ndarray | None = None
    hand_angular_velocity: np.ndarray | None = None
    body_orientation: np.ndarray | None = None
    body_angular_velocity: np.ndarray | None = None

    @property
    def period(self) -> float:
        """The loop's period T [s]."""
        return self.deadlines.period

    def summary_rows(self) -> list[tuple[str, str]]:
        """(name, value) rows describing the run (what ``kane info LOG.h5`` prints)."""
        c, n = self.counts, self.t.shape[0]
        rows = [("file", str(self.path)), ("status", self.status),
                ("periods", f"{n}, t = {self.t[0]:g} to {self.t[-1]:g} s, period {self.period * 1e6:g} us"),
                *(line.split(": ", 1) for line in self.deadlines.lines()),
                ("device samples", f"refused {c.get('refused', '?')}, missing {c.get('missing', '?')}"),
                ("saturated periods", str(c.get("saturated", "?"))),
                ("stepped by", f"{c.get('plant', c.get('engine', '?'))}, {c.get('substeps', '?')} substep(s)"),
                (f"coordinates ({len(self.q_names)})", ", ".join(self.q_names)),
                (f"speeds ({len(self.u_names)})", ", ".join(self.u_names)),
                ("energy into the model", f"{self.port_energy[-1]:.6g} J (by the last period's start)"),
                ("modes", ", ".join(self.modes) or "(none)"), ("mode changes", str(len(self.events)))]
        return [(str(k), str(v)) for k, v in rows]

    @property
    def missed(self) -> np.ndarray:
        """(N,) bool: the periods that missed their deadline (lateness + compute time > T)."""
        return self.lateness + self.compute_time > self.period


def is_realtime_log(path) -> bool:
    """Whether ``path`` is an HDF5 file whose format attribute says it is a real-time log (no error otherwise)."""
    try:
        with h5py.File(path, "r") as f:
            return format_of(f) == LOG_FORMAT
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return False


def _width(name: str, f, path) -> int | None:
    """The row width of column ``name`` (None: a scalar column), q and u by their names."""
    if name in ("q", "u"):
        return len(name_list(f.attrs, f"{name}_names", path, default=[]))
    return None if _SHAPE.get(name, 1) == 1 else _SHAPE[name]


def _column(f, name: str, n: int, path) -> np.ndarray:
    width = _width(name, f, path)
    ds = dataset(f, name, path, ndim=1 if width is None else 2, width=width)
    if ds.shape[0] < n:
        raise HDF5LayoutError(path, name, f"{ds.shape[0]} rows, fewer than the {n} committed (n_committed)")
    values = read_rows(ds, n, path, dtype=np.int64 if name in _INTEGER else float)
    if name in _INTEGER and values.size and not (0 <= values.min() and values.max() <= _MAX_INDEX):
        raise HDF5LayoutError(path, name, f"values from {values.min()} to {values.max()} (expected 0 to {_MAX_INDEX})")
    return values


def _texts(g, name: str, n: int, path) -> list[str]:
    ds = dataset(g, name, path, ndim=1, kinds="OSU")
    if ds.shape[0] != n or n > _MAX_EVENTS:
        raise HDF5LayoutError(path, ds.name, f"{ds.shape[0]} rows (expected {n}, at most {_MAX_EVENTS})")
    try:
        return [str(v) for v in ds.asstr(errors="replace")[:]]
    except (OSError, ValueError, TypeError) as exc:
        raise HDF5LayoutError(path, ds.name, f"cannot be read as text ({exc})") from None


def _events(f, path) -> list[LogEvent]:
    g = f["events"]
    t = read_rows(dataset(g, "t", path, ndim=1), _MAX_EVENTS, path)
    kinds, names, data = (_texts(g, k, t.shape[0], path) for k in ("kind", "constraint", "data"))
    out = []
    for k, (tk, kind, name, text) in enumerate(zip(t, kinds, names, data)):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            raise HDF5LayoutError(path, "events/data", f"row {k} is not a JSON object")
        out.append(LogEvent(float(tk), kind, name, value))
    return out


def _steps(f, path) -> PlantSteps:
    g, widths = f["dynamics"], {"q": _width("q", f, path), "u": _width("u", f, path)}
    cols = {k: dataset(g, k, path, ndim=2 if k in widths else 1, width=widths.get(k))
            for k in ("t", "q", "u", "energy")}
    m = min(ds.shape[0] for ds in cols.values())
    return PlantSteps(*(read_rows(cols[k], m, path) for k in ("t", "q", "u", "energy")))


def _group(f, name: str, path) -> bool:
    link = f.get(name, getlink=True)
    if link is not None and not (isinstance(link, h5py.HardLink) and isinstance(f[name], h5py.Group)):
        raise HDF5LayoutError(path, name, "is not a group stored in the file")
    return link is not None


def read_log_columns(path, names, *, role: str = "realtime log") -> tuple[dict, dict]:
    """(attributes, {name: the committed rows}) of the datasets ``names`` of the real-time log ``path``. A file that
    is not such a log, lacks one of them or holds no row raises ArgumentError naming ``role`` and the file; a
    dataset of another layout (dtype, shape, a size beyond the read limit) :class:`HDF5LayoutError` naming it."""
    where = f"{role} {printable(repr(str(path)))}"
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ArgumentError(f"{where}: not a readable HDF5 file ({printable(exc)})") from None
    with f, unreadable_as_layout_error(path):
        fmt = format_of(f)
        if fmt != LOG_FORMAT:
            raise ArgumentError(f"{where}: not a log of kane realtime (format attribute {printable(repr(fmt))}, "
                                f"expected {LOG_FORMAT!r}); give a file written by kane realtime -o")
        missing = [k for k in ("n_committed", *names) if f.get(k, getlink=True) is None]
        if missing:
            raise ArgumentError(f"{where}: no dataset {', '.join(missing)}")
        n = int(read_rows(dataset(f, "n_committed", path, ndim=1, kinds="iu"), 1, path, dtype=np.int64)[:1].sum())
        if n < 1:
            raise ArgumentError(f"{where}: no period was recorded (status "
                                f"{printable(repr(text_attr(f.attrs, 'status', path, '?')))})")
        attrs = {k: text_attr(f.attrs, k, path, "") for k in _TEXT_ATTRS if k in f.attrs}
        attrs["datasets"] = tuple(f)
        columns = {name: _column(f, name, n, path) for name in names}
        if _group(f, "events", path):
            attrs["events"] = _events(f, path)
        if _group(f, "dynamics", path):
            attrs["steps"] = _steps(f, path)
    return attrs, columns


def _json(attrs, key, kind, path):
    text = attrs.get(key)
    try:
        value = kind() if text is None else json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, kind):
        raise HDF5LayoutError(path, f"attribute {key}", f"not a JSON {'list' if kind is list else 'object'}")
    return value


def _deadlines(stats: dict, path) -> DeadlineSummary:
    try:
        values = {k: (int if k in ("periods", "missed") else float)(stats[k]) for k in _SUMMARY if k != "jitter_counts"}
        jitter = tuple(int(c) for c in stats["jitter_counts"])
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise HDF5LayoutError(path, "attribute stats", f"not a deadline summary ({type(exc).__name__}: "
                              f"{printable(exc)}; expected numbers {', '.join(_SUMMARY)})") from None
    return DeadlineSummary(**values, jitter_counts=jitter)


def load_realtime_log(path) -> RealtimeRecord:
    """The log ``path`` written by :class:`kane.realtime.RealtimeLoop` (or ``kane realtime -o``), or its partial
    file (``.partial``) left by a run that was killed, read back as a :class:`RealtimeRecord`; its layout checked
    (:class:`HDF5LayoutError` naming the file and the dataset or attribute)."""
    attrs, c = read_log_columns(path, _COLUMNS)
    if "torque" in attrs["datasets"]:  # a full pose coupled
        c.update(read_log_columns(path, POSE_FIELDS)[1])
        for name in ("hand_orientation", "body_orientation"):
            c[name] = c[name].reshape(-1, 3, 3)
    status = attrs.get("status", "?")
    stats = _json(attrs, "stats", dict, path)
    finished = status != "running"
    if finished and stats:
        deadlines = _deadlines(stats, path)
    else:  # not closed: the summary of the rows, the period from their times
        steps = np.diff(c["t"])
        period = float(np.median(steps)) if steps.size else float("nan")
        deadlines = DeadlineStats.from_rows(period, c["lateness"], c["compute_time"]).summary()
        status = "unfinished: the run did not close its log (a partial file)"
    modes = tuple(str(m) for m in _json(attrs, "modes", list, path))
    n_modes = int(c["mode"].max()) + 1
    if len(modes) < n_modes:  # a partial file: the names are written at the close
        modes = modes + tuple(f"mode {k}" for k in range(len(modes), n_modes))
    names = [tuple(str(v) for v in _json(attrs, f"{k}_names", list, path)) for k in "qu"]
    return RealtimeRecord(Path(path), status, finished, *names, modes, tuple(attrs.get("events", ())), deadlines,
                          _json(attrs, "counts", dict, path), attrs.get("steps"),
                          **{k: np.asarray(v) for k, v in c.items()})
