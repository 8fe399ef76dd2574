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
from .log import LOG_FORMAT, POSE_FIELDS
from .stats import DeadlineStats, DeadlineSummary

__all__ = ["LogEvent", "PlantSteps", "RealtimeRecord", "is_realtime_log", "read_log_columns", "load_realtime_log"]

_COLUMNS = ("t", "hand_position", "hand_velocity", "point_position", "point_velocity", "force", "power",
            "port_energy", "spring_energy", "energy", "q", "u", "compute_time", "lateness", "sample_status", "mode")


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
            return f.attrs.get("format") == LOG_FORMAT
    except OSError:
        return False


def read_log_columns(path, names, *, role: str = "realtime log") -> tuple[dict, dict]:
    """(attributes, {name: the committed rows}) of the datasets ``names`` of the real-time log ``path``. A file that
    is not such a log, lacks one of them or holds no row raises ArgumentError naming ``role`` and the file."""
    where = f"{role} {str(path)!r}"
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ArgumentError(f"{where}: not a readable HDF5 file ({exc})") from None
    with f:
        fmt = f.attrs.get("format")
        if fmt != LOG_FORMAT:
            raise ArgumentError(f"{where}: not a log of kane realtime (format attribute {fmt!r}, expected "
                                f"{LOG_FORMAT!r}); give a file written by kane realtime -o")
        missing = [k for k in ("n_committed", *names) if k not in f]
        if missing:
            raise ArgumentError(f"{where}: no dataset {', '.join(missing)}")
        n = int(f["n_committed"][0])
        if n < 1:
            raise ArgumentError(f"{where}: no period was recorded (status {f.attrs.get('status', '?')!r})")
        attrs = dict(f.attrs, datasets=tuple(f))
        columns = {name: f[name][:n] for name in names}
        if "events" in f:
            g = f["events"]
            attrs["events"] = [LogEvent(float(t), k, c, json.loads(d)) for t, k, c, d in
                               zip(g["t"][:], g["kind"].asstr()[:], g["constraint"].asstr()[:], g["data"].asstr()[:])]
        if "dynamics" in f:
            g = f["dynamics"]
            attrs["steps"] = PlantSteps(g["t"][:], g["q"][:], g["u"][:], g["energy"][:])
    return attrs, columns


def _json(attrs, key, default):
    text = attrs.get(key)
    return default if text is None else json.loads(text)


def load_realtime_log(path) -> RealtimeRecord:
    """The log ``path`` written by :class:`kane.realtime.RealtimeLoop` (or ``kane realtime -o``), or its partial
    file (``.partial``) left by a run that was killed, read back as a :class:`RealtimeRecord`."""
    attrs, c = read_log_columns(path, _COLUMNS)
    if "torque" in attrs["datasets"]:  # a full pose coupled
        c.update(read_log_columns(path, POSE_FIELDS)[1])
        for name in ("hand_orientation", "body_orientation"):
            c[name] = c[name].reshape(-1, 3, 3)
    status = str(attrs.get("status", "?"))
    stats = _json(attrs, "stats", {})
    finished = status != "running"
    if finished and stats:
        deadlines = DeadlineSummary(**{**stats, "jitter_counts": tuple(stats["jitter_counts"])})
    else:  # not closed: the summary of the rows, the period from their times
        steps = np.diff(c["t"])
        period = float(np.median(steps)) if steps.size else float("nan")
        deadlines = DeadlineStats.from_rows(period, c["lateness"], c["compute_time"]).summary()
        status = "unfinished: the run did not close its log (a partial file)"
    modes = tuple(_json(attrs, "modes", []))
    n_modes = int(c["mode"].max()) + 1
    if len(modes) < n_modes:  # a partial file: the names are written at the close
        modes = modes + tuple(f"mode {k}" for k in range(len(modes), n_modes))
    return RealtimeRecord(Path(path), status, finished, tuple(_json(attrs, "q_names", [])),
                          tuple(_json(attrs, "u_names", [])), modes, tuple(attrs.get("events", ())), deadlines,
                          _json(attrs, "counts", {}), attrs.get("steps"), **{k: np.asarray(v) for k, v in c.items()})
