"""What ``kane info`` prints and ``kane plot`` draws for any of kane's HDF5 files: a run (or assembly frames), a
real-time log or a sweep's results, told apart by the file's ``format`` attribute.

Each kind goes to its own reader (:func:`kane.io.trajectory.load_trajectory`,
:func:`kane.realtime.log_reader.load_realtime_log`, the sweep package's :func:`kane.sweep.load_sweep`), which check
the file's layout before reading; what the sweep package raises other than a KaneError becomes one naming the file.
The rows are plain text as read from the file: the command escapes them before printing
(:func:`kane.io.h5_read.printable`, then Rich markup).

    >>> info = describe_file("run.h5")
    >>> info.kind, info.rows[0]           # (FileKind.TRAJECTORY, ("file", "run.h5"))
"""

from __future__ import annotations

import contextlib
import enum
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import KaneError
from ..io.h5_probe import probe
from ..io.trajectory import load_trajectory
from ..realtime.log_reader import is_realtime_log, load_realtime_log
from ..sweep import describe, is_sweep_file

__all__ = ["FileKind", "FileInfo", "PlotWritten", "SweepReadError", "file_kind", "describe_file", "plot_file"]


class FileKind(enum.Enum):
    """The kinds of file kane writes: a run (``kane simulate``, ``kane assemble``), a real-time log, a sweep."""

    TRAJECTORY = "trajectory"
    REALTIME_LOG = "realtime log"
    SWEEP = "sweep"


class SweepReadError(KaneError, OSError):
    """The sweep package could not read a sweep file; the message names the file and the failure."""


@dataclass(frozen=True)
class FileInfo:
    """What ``kane info`` prints: the file's ``kind``, (name, value) ``rows``, and ``params`` (name, value) of a
    run (empty otherwise); texts as read from the file (not escaped)."""

    kind: FileKind
    rows: tuple[tuple[str, str], ...]
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PlotWritten:
    """What ``kane plot`` wrote: the image ``path`` and a ``note`` (an unfinished run's; None otherwise)."""

    path: Path
    note: str | None = None


def file_kind(path) -> FileKind:
    """The kind of the file ``path`` by its format attribute; a file of no known kind counts as a run (its reader
    then says what is wrong with it)."""
    try:
        if is_sweep_file(path):
            return FileKind.SWEEP
    except Exception:  # noqa: BLE001  (a file the sweep package cannot even classify is not a sweep)
        pass
    return FileKind.REALTIME_LOG if is_realtime_log(path) else FileKind.TRAJECTORY


@contextlib.contextmanager
def _sweep_reader(path) -> Iterator[None]:
    try:
        yield
    except KaneError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, OverflowError, MemoryError, RecursionError, OSError,
            AttributeError, RuntimeError, UnicodeError) as exc:
        raise SweepReadError(f"sweep file {path}: cannot be read ({type(exc).__name__}: {exc})") from None


def _sweep_rows(path) -> tuple[tuple[str, str], ...]:
    """The sweep package's description (:func:`kane.sweep.describe`: points, done and failed runs with the
    failures' reasons, warnings) as rows: a line "name: value" is a row, an indented line a row of its own under it
    (the rows are printed with newlines escaped, so a row holds one line)."""
    with _sweep_reader(path):
        text = describe(path)
    return tuple(("", line.strip()) if line.startswith(" ") else tuple(line.partition(": ")[::2])
                 for line in text.splitlines())


def _probed(path) -> None:
    """The HDF5 library's reading of ``path`` (and of its ``.partial``) tried first in a child process: a damaged
    file that makes the library hang or crash is refused by name (:func:`kane.io.h5_probe.probe`)."""
    for candidate in (Path(path), Path(f"{path}.partial")):
        probe(candidate)


def describe_file(path) -> FileInfo:
    """The rows ``kane info`` prints for ``path`` (a run read from ``path + '.partial'`` when that is newer)."""
    _probed(path)
    kind = file_kind(path)
    if kind is FileKind.SWEEP:
        return FileInfo(kind, _sweep_rows(path))
    if kind is FileKind.REALTIME_LOG:
        return FileInfo(kind, tuple(load_realtime_log(path).summary_rows()))
    from ..switching.contact_run import contact_series
    from .contact_plot import contact_info_rows, is_contact_series

    traj = load_trajectory(path)
    contact = contact_series(traj)  # a contact run: its pair outputs summarized, not listed as residuals
    st = traj.stats
    span = f"{traj.t[0]:g} to {traj.t[-1]:g} s" if traj.n_samples else "(none)"
    rows = (("file", traj.source), ("model", traj.description or "(unnamed)"),
            ("status", traj.unfinished_note(path) or traj.status),
            ("samples", f"{traj.n_samples}, t = {span}"), ("method", st.method or "?"),
            ("function evaluations", str(st.n_fev)),
            ("steps", f"{st.n_accepted} accepted, {st.n_rejected if st.n_rejected is not None else '?'} rejected"),
            ("wall time", f"{st.wall_time_s:.3f} s"), ("loop", st.loop_text or "(not recorded)"),
            (f"coordinates ({len(traj.q_names)})", ", ".join(traj.q_names)),
            (f"speeds ({len(traj.u_names)})", ", ".join(traj.u_names)),
            ("energy", "recorded" if traj.energy is not None else "not recorded"),
            ("residuals", ", ".join(n for n in traj.residuals if not is_contact_series(n, contact)) or "(none)"),
            ("events", str(len(traj.events))), ("modes", ", ".join(m for _, _, m in traj.modes) or "(none)")) + \
        contact_info_rows(traj)
    params = tuple((k, f"{v:g}" if math.isfinite(v) else str(v)) for k, v in traj.params.items())
    return FileInfo(kind, rows, params)


def plot_file(path, output=None) -> PlotWritten:
    """Plot ``path`` (a run, a real-time log or a sweep) to ``output`` (default: ``path`` with .png)."""
    _probed(path)
    kind = file_kind(path)
    if kind is FileKind.SWEEP:  # metric maps and histograms (kane.viz.sweep_plot)
        from .sweep_plot import plot_sweep
        with _sweep_reader(path):
            return PlotWritten(Path(plot_sweep(path, output).path))
    if kind is FileKind.REALTIME_LOG:  # motion, force, energy and deadlines (kane.viz.realtime_plot)
        from .realtime_plot import plot_realtime_log
        return PlotWritten(Path(plot_realtime_log(path, output).path))
    from .plots import plot_trajectory
    traj = load_trajectory(path)
    out = Path(output) if output else Path(path).with_suffix(".png")
    plot_trajectory(traj, out)
    return PlotWritten(out, traj.unfinished_note(path))
