"""The results file of a sweep (HDF5 here, Zarr in :mod:`.store_zarr`, the same layout): one table of runs (key,
status, message, parameters, metrics), appended as runs end.

Layout (HDF5 1.8 format, readable by plain h5py): attributes ``format`` = "kane.sweep", ``version``, ``model``,
JSON ``param_names``, ``metric_names`` and ``axes`` ([kind, names] pairs, kind "grid", "random" or "points"),
``n_committed`` (rows known to be on disk, written last in each append); datasets ``key`` (N,) ASCII content
hashes, ``status`` (N,) "done" | "failed", ``message`` (N,) the error of a failed run, ``params``
(N, n_params) and ``metrics`` (N, n_metrics) float64. When trajectories are kept, the group ``trajectories``
(attributes JSON ``q_names``, ``u_names``) holds one group per completed run, named by its key, with ``t`` (n,)
[s], ``q`` (n, n_q), ``u`` (n, n_u) and ``energy`` (n,) [J] (when known), written in the same append as the
run's row.

The file is opened, appended and closed for each batch of finished runs, so a sweep killed at any moment leaves
a consistent file with every run it reported; rows past ``n_committed`` (an append cut short) are overwritten by
the next append. A run's key (a content hash of model, parameters and run settings) is its identity: a rerun
skips the keys already in the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from ..errors import KaneError
from ..io.trajectory import Trajectory, check_output_path

__all__ = ["SweepFileError", "SweepTable", "SweepFile", "header", "check_columns", "read_table", "write_trajectory",
           "read_trajectory", "read_hdf5", "read_hdf5_trajectory"]

_FORMAT = "kane.sweep"
_VERSION = 1
_LIBVER = ("v108", "v108")
_STR = h5py.string_dtype("utf-8")


class SweepFileError(KaneError, OSError):
    """A sweep file cannot be read or appended: not HDF5, not a kane sweep, or holding other columns."""


@dataclass(frozen=True)
class SweepTable:
    """The runs of a sweep: ``keys`` (N,) content hashes, ``status`` (N,) "done" | "failed", ``messages`` (N,),
    ``params`` (N, len(param_names)) and ``metrics`` (N, len(metric_names)) float arrays."""

    param_names: tuple[str, ...]
    metric_names: tuple[str, ...]
    keys: tuple[str, ...]
    status: tuple[str, ...]
    messages: tuple[str, ...]
    params: np.ndarray
    metrics: np.ndarray
    axes: tuple = ()  # the sweep's axes: (kind "grid" | "random" | "points", names) pairs; () when unknown

    def __len__(self) -> int:
        return len(self.keys)

    def column(self, name: str) -> np.ndarray:
        """A parameter or metric column (N,) by name."""
        if name in self.param_names:
            return self.params[:, self.param_names.index(name)]
        if name in self.metric_names:
            return self.metrics[:, self.metric_names.index(name)]
        raise KeyError(f"no column {name!r}; columns: {', '.join(self.param_names + self.metric_names)}")

    def sorted_by(self, order) -> SweepTable:
        """The rows in the order of ``order`` (a sequence of keys, each in the table)."""
        index = {k: i for i, k in enumerate(self.keys)}
        rows = np.array([index[k] for k in order], dtype=int)
        return SweepTable(self.param_names, self.metric_names, tuple(self.keys[i] for i in rows),
                          tuple(self.status[i] for i in rows), tuple(self.messages[i] for i in rows),
                          self.params[rows], self.metrics[rows], self.axes)


def header(model: str, param_names, metric_names, axes) -> dict:
    """The attributes of a new results file (HDF5 or Zarr): format, version, model, columns and axes."""
    return dict(format=_FORMAT, version=_VERSION, model=model, n_committed=0, param_names=json.dumps(list(param_names)),
                metric_names=json.dumps(list(metric_names)), axes=json.dumps([[k, list(n)] for k, n in axes]))


def check_columns(table: SweepTable, path, param_names, metric_names) -> None:
    """SweepFileError naming both sets when the file at ``path`` holds other columns than asked."""
    if (table.param_names, table.metric_names) != (tuple(param_names), tuple(metric_names)):
        raise SweepFileError(
            f"sweep file {path} holds another sweep's columns (parameters {', '.join(table.param_names)}; "
            f"metrics {', '.join(table.metric_names)}), not ({', '.join(param_names)}; "
            f"{', '.join(metric_names)}); give another output file")


def _text(values) -> tuple[str, ...]:
    return tuple(v.decode() if isinstance(v, bytes) else str(v) for v in values)


def read_table(root, path) -> SweepTable:
    """The committed runs of an open results file ``root`` (an h5py File or a zarr Group) read from ``path``."""
    if root.attrs.get("format") != _FORMAT:
        raise SweepFileError(f"sweep file {path}: not a kane sweep file (format {root.attrs.get('format')!r})")
    n = int(root.attrs["n_committed"])
    return SweepTable(tuple(json.loads(root.attrs["param_names"])), tuple(json.loads(root.attrs["metric_names"])),
                      _text(root["key"][:n]), _text(root["status"][:n]), _text(root["message"][:n]),
                      np.array(root["params"][:n]), np.array(root["metrics"][:n]),
                      tuple((k, tuple(v)) for k, v in json.loads(root.attrs.get("axes", "[]"))))


def write_trajectory(root, key: str, traj, q_names, u_names, create) -> None:
    """Write the trajectory (t, q, u, energy or None) of run ``key`` under ``trajectories/KEY`` of ``root``,
    replacing one left by an append cut short; ``create(group, name, array)`` makes a dataset."""
    group = root.require_group("trajectories")
    if "q_names" not in group.attrs:
        group.attrs.update(q_names=json.dumps(list(q_names)), u_names=json.dumps(list(u_names)))
    if key in group:  # left by an append cut short: its row was never committed
        del group[key]
    g = group.create_group(key)
    for name, value in zip(("t", "q", "u", "energy"), traj):
        if value is not None:
            create(g, name, np.asarray(value, dtype=float))


def read_trajectory(root, table: SweepTable, key: str, path) -> Trajectory:
    """The trajectory of run ``key`` in the open results file ``root`` (its runs ``table``)."""
    group = root["trajectories"] if "trajectories" in root else None
    if key not in table.keys or group is None or key not in group:
        raise SweepFileError(f"sweep file {path}: no trajectory of run {key!r} (kept only for completed runs "
                             f"of a sweep run with trajectories)")
    g = group[key]
    i = table.keys.index(key)
    return Trajectory(t=g["t"][:], q=g["q"][:], u=g["u"][:], energy=g["energy"][:] if "energy" in g else None,
                      q_names=tuple(json.loads(group.attrs["q_names"])),
                      u_names=tuple(json.loads(group.attrs["u_names"])), source=str(path),
                      params={n: float(v) for n, v in zip(table.param_names, table.params[i]) if "." not in n})


def _series(f: h5py.File, name: str, width: int | None, dtype) -> None:
    shape, maxshape = ((0,), (None,)) if width is None else ((0, width), (None, width))
    chunks = (256,) if width is None else (256, max(width, 1))
    f.create_dataset(name, shape=shape, maxshape=maxshape, dtype=dtype, chunks=chunks)


def _h5_create(group, name, data) -> None:
    group.create_dataset(name, data=data)


class SweepFile:
    """The HDF5 results file at ``path`` for the columns ``param_names`` and ``metric_names``, created when
    missing; an existing file must hold the same columns (else :class:`SweepFileError` naming both)."""

    def __init__(self, path, model: str, param_names, metric_names, axes=()):
        self.path = Path(check_output_path(path))
        self.param_names, self.metric_names = tuple(param_names), tuple(metric_names)
        if not self.path.exists():
            with h5py.File(self.path, "w", libver=_LIBVER) as f:
                f.attrs.update(header(model, self.param_names, self.metric_names, axes))
                _series(f, "key", None, "S64")
                _series(f, "status", None, _STR)
                _series(f, "message", None, _STR)
                _series(f, "params", len(self.param_names), "f8")
                _series(f, "metrics", len(self.metric_names), "f8")
            return
        check_columns(read_hdf5(self.path), self.path, self.param_names, self.metric_names)

    def keys(self) -> set[str]:
        """The keys of the runs in the file."""
        return set(read_hdf5(self.path).keys)

    def append(self, rows, q_names=(), u_names=()) -> None:
        """Append ``rows``: (key, status, message, params (n_params,), metrics (n_metrics,)) tuples, each with an
        optional sixth item, its trajectory (t (n,), q (n, n_q), u (n, n_u), energy (n,) or None) or None; the
        trajectories' coordinates and speeds are called ``q_names`` and ``u_names``."""
        rows = list(rows)
        if not rows:
            return
        with h5py.File(self.path, "r+") as f:
            for r in rows:
                if len(r) > 5 and r[5] is not None:
                    write_trajectory(f, r[0], r[5], q_names, u_names, _h5_create)
            n = int(f.attrs["n_committed"])
            m = n + len(rows)
            for name in ("key", "status", "message", "params", "metrics"):
                f[name].resize(m, axis=0)
            f["key"][n:m] = np.array([r[0].encode("ascii") for r in rows], dtype="S64")
            f["status"][n:m] = [r[1] for r in rows]
            f["message"][n:m] = [r[2] for r in rows]
            f["params"][n:m] = np.array([r[3] for r in rows], dtype=float).reshape(len(rows), -1)
            f["metrics"][n:m] = np.array([r[4] for r in rows], dtype=float).reshape(len(rows), -1)
            f.flush()
            f.attrs["n_committed"] = m


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
