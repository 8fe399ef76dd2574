"""The results file of a sweep (HDF5 here, Zarr in :mod:`.store_zarr`, the same layout): one table of runs (key,
status, message, parameters, metrics, warnings), appended as runs end.

Layout (HDF5 1.8 format, readable by plain h5py): attributes ``format`` = "kane.sweep", ``version`` (2),
``model``, JSON ``param_names``, ``metric_names`` and ``axes`` ([kind, names] pairs, kind "grid", "random" or
"points"), ``n_committed`` (rows known to be on disk, written last in each append); datasets ``key`` (N,) ASCII
content hashes, ``status`` (N,) "done" | "failed", ``message`` (N,) the error of a failed run, ``params``
(N, n_params) and ``metrics`` (N, n_metrics) float64, ``warnings`` (N,) JSON {warning kind: count} of each run
(version 2; a version 1 file has none). When trajectories are kept, the group ``trajectories`` (attributes JSON
``q_names``, ``u_names``) holds one group per completed run, named by its key, with ``t`` (n,) [s], ``q``
(n, n_q), ``u`` (n, n_u) and ``energy`` (n,) [J] (when known), written in the same append as the run's row.

The file is opened, appended and closed for each batch of finished runs; rows past ``n_committed`` (an append
cut short) do not count. A process killed inside an append can leave HDF5's own bookkeeping torn (the end of the
allocated space behind the data: "len not positive after adjustment for EOA" on the next write) while the
committed rows stay readable, so a resume never writes into an existing file: it reads the committed rows (and
their trajectories) through the validated reader (:mod:`.table`) and writes them into a fresh file, which
replaces the old one atomically (``os.replace``); a new file is written the same way. A run's key (a content
hash of model, parameters and run settings) is its identity: a rerun skips the keys already in the file.
"""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

from ..io.trajectory import Trajectory, check_output_path
from .table import (SweepFileError, SweepTable, check_columns, header, read_table, read_trajectory,
                    warnings_json, warnings_text, write_trajectory)

__all__ = ["SweepFileError", "SweepTable", "SweepFile", "header", "check_columns", "read_table", "write_trajectory",
           "read_trajectory", "read_hdf5", "read_hdf5_trajectory"]

_LIBVER = ("v108", "v108")
_STR = h5py.string_dtype("utf-8")


def _series(f: h5py.File, name: str, width: int | None, dtype) -> None:
    shape, maxshape = ((0,), (None,)) if width is None else ((0, width), (None, width))
    chunks = (256,) if width is None else (256, max(width, 1))
    f.create_dataset(name, shape=shape, maxshape=maxshape, dtype=dtype, chunks=chunks)


def _h5_create(group, name, data) -> None:
    group.create_dataset(name, data=data)


def _write_rows(f: h5py.File, rows, q_names=(), u_names=()) -> None:
    """Append ``rows`` (see :meth:`SweepFile.append`) to the open file ``f`` and commit them (``n_committed``
    written last)."""
    for r in rows:
        if len(r) > 5 and r[5] is not None:
            write_trajectory(f, r[0], r[5], q_names, u_names, _h5_create)
    _write_columns(f, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                   np.array([r[3] for r in rows], dtype=float).reshape(len(rows), -1),
                   np.array([r[4] for r in rows], dtype=float).reshape(len(rows), -1), warnings_text(rows))


def _write_columns(f: h5py.File, keys, status, messages, params, metrics, warnings) -> None:
    """Append the columns of k rows (keys, status, messages, warnings texts (k,); params, metrics (k, width)) to
    the open file ``f`` and commit them: ``n_committed`` is written last, after a flush."""
    n = int(f.attrs["n_committed"])
    m = n + len(keys)
    for name in ("key", "status", "message", "params", "metrics", "warnings"):
        f[name].resize(m, axis=0)
    f["key"][n:m] = np.array([k.encode("ascii") for k in keys], dtype="S64")
    f["status"][n:m] = list(status)
    f["message"][n:m] = list(messages)
    f["params"][n:m] = params
    f["metrics"][n:m] = metrics
    f["warnings"][n:m] = list(warnings)
    f.flush()
    f.attrs["n_committed"] = m


def _replace_atomically(path: Path, write) -> None:
    """Write a fresh HDF5 file with ``write(file)`` next to ``path`` and move it over ``path`` in one step."""
    tmp = path.with_name(f".{path.name}.rewrite")
    tmp.unlink(missing_ok=True)
    try:
        with h5py.File(tmp, "w", libver=_LIBVER) as f:
            write(f)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class SweepFile:
    """The HDF5 results file at ``path`` for the columns ``param_names`` and ``metric_names``, created when
    missing; an existing file must hold the same columns (else :class:`SweepFileError` naming both), and is
    rewritten from its committed rows (see the module's text) so that a file torn by a kill resumes."""

    def __init__(self, path, model: str, param_names, metric_names, axes=()):
        self.path = Path(check_output_path(path))
        self.param_names, self.metric_names = tuple(param_names), tuple(metric_names)
        if not self.path.exists():
            attrs = header(model, self.param_names, self.metric_names, axes)
            _replace_atomically(self.path, lambda f: _fill(f, attrs, len(self.param_names), len(self.metric_names)))
            return
        table = read_hdf5(self.path)
        check_columns(table, self.path, self.param_names, self.metric_names)
        self._rewrite(table)

    def _rewrite(self, table: SweepTable) -> None:
        """Copy the committed rows of the file (and their trajectories) into a fresh file that replaces it."""
        with _h5(self.path) as old:
            attrs = header(table.model, self.param_names, self.metric_names, table.axes)
            kept = [k for k, s in zip(table.keys, table.status) if s == "done"]
            stored = set(old["trajectories"].keys()) if isinstance(old.get("trajectories"), h5py.Group) else set()
            trajectories = {k: read_trajectory(old, table, k, self.path) for k in kept if k in stored}
        q_names, u_names = (t.q_names, t.u_names) if (t := next(iter(trajectories.values()), None)) else ((), ())
        warned = [warnings_json(w) for w in table.warnings] if table.warnings else ["{}"] * len(table)

        def write(f):
            _fill(f, attrs, len(self.param_names), len(self.metric_names))
            for key, traj in trajectories.items():
                write_trajectory(f, key, (traj.t, traj.q, traj.u, traj.energy), q_names, u_names, _h5_create)
            if len(table):
                _write_columns(f, table.keys, table.status, table.messages, table.params, table.metrics, warned)

        _replace_atomically(self.path, write)

    def keys(self) -> set[str]:
        """The keys of the runs in the file."""
        return set(read_hdf5(self.path).keys)

    def append(self, rows, q_names=(), u_names=()) -> None:
        """Append ``rows``: (key, status, message, params (n_params,), metrics (n_metrics,)) tuples, each with an
        optional sixth item, its trajectory (t (n,), q (n, n_q), u (n, n_u), energy (n,) or None) or None, and a
        seventh, {warning kind: count}; the trajectories' coordinates and speeds are called ``q_names`` and
        ``u_names``."""
        rows = list(rows)
        if not rows:
            return
        with h5py.File(self.path, "r+") as f:
            _write_rows(f, rows, q_names, u_names)


def _fill(f: h5py.File, attrs: dict, param_width: int, metric_width: int) -> None:
    """Make the attributes and the empty datasets of a new results file."""
    f.attrs.update(attrs)
    _series(f, "key", None, "S64")
    for name in ("status", "message", "warnings"):
        _series(f, name, None, _STR)
    _series(f, "params", param_width, "f8")
    _series(f, "metrics", metric_width, "f8")


def _h5(path) -> h5py.File:
    try:
        return h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        raise SweepFileError(f"sweep file {path}: cannot be read as HDF5 ({exc})") from None


def read_hdf5(path) -> SweepTable:
    """The runs of an HDF5 results file (those committed); :class:`SweepFileError` in plain words otherwise."""
    with _h5(Path(path)) as f:
        return read_table(f, path)


def read_hdf5_trajectory(path, key: str) -> Trajectory:
    """The trajectory of run ``key`` in an HDF5 results file."""
    with _h5(Path(path)) as f:
        return read_trajectory(f, read_table(f, path), key, path)
