"""The HDF5 file of a sweep: one table of runs (key, status, message, parameters, metrics), appended as runs end.

Layout (HDF5 1.8 format, readable by plain h5py): attributes ``format`` = "kane.sweep", ``version``, ``model``,
JSON ``param_names`` and ``metric_names``, and ``n_committed`` (rows known to be on disk, written last in each
append); datasets ``key`` (N,) ASCII content hashes, ``status`` (N,) "done" | "failed", ``message`` (N,) the
error of a failed run, ``params`` (N, n_params) and ``metrics`` (N, n_metrics) float64.

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
from ..io.trajectory import check_output_path

__all__ = ["SweepFileError", "SweepTable", "SweepFile", "load_sweep"]

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
                          self.params[rows], self.metrics[rows])


def _series(f: h5py.File, name: str, width: int | None, dtype) -> None:
    shape, maxshape = ((0,), (None,)) if width is None else ((0, width), (None, width))
    chunks = (256,) if width is None else (256, max(width, 1))
    f.create_dataset(name, shape=shape, maxshape=maxshape, dtype=dtype, chunks=chunks)


class SweepFile:
    """A sweep file at ``path`` for the columns ``param_names`` and ``metric_names``, created when missing;
    an existing file must hold the same columns (else :class:`SweepFileError` naming both)."""

    def __init__(self, path, model: str, param_names, metric_names):
        self.path = Path(check_output_path(path))
        self.param_names, self.metric_names = tuple(param_names), tuple(metric_names)
        if not self.path.exists():
            with h5py.File(self.path, "w", libver=_LIBVER) as f:
                f.attrs.update(format=_FORMAT, version=_VERSION, model=model, n_committed=0,
                               param_names=json.dumps(self.param_names), metric_names=json.dumps(self.metric_names))
                _series(f, "key", None, "S64")
                _series(f, "status", None, _STR)
                _series(f, "message", None, _STR)
                _series(f, "params", len(self.param_names), "f8")
                _series(f, "metrics", len(self.metric_names), "f8")
            return
        table = load_sweep(self.path)
        if (table.param_names, table.metric_names) != (self.param_names, self.metric_names):
            raise SweepFileError(
                f"sweep file {self.path} holds another sweep's columns (parameters {', '.join(table.param_names)}; "
                f"metrics {', '.join(table.metric_names)}), not ({', '.join(self.param_names)}; "
                f"{', '.join(self.metric_names)}); give another output file")

    def keys(self) -> set[str]:
        """The keys of the runs in the file."""
        return set(load_sweep(self.path).keys)

    def append(self, rows) -> None:
        """Append ``rows``: (key, status, message, params (n_params,), metrics (n_metrics,)) tuples."""
        rows = list(rows)
        if not rows:
            return
        with h5py.File(self.path, "r+") as f:
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


def load_sweep(path) -> SweepTable:
    """Read the runs of a sweep file (those committed); :class:`SweepFileError` in plain words otherwise."""
    p = Path(path)
    try:
        f = h5py.File(p, "r")
    except (OSError, ValueError) as exc:
        raise SweepFileError(f"sweep file {p}: cannot be read as HDF5 ({exc})") from None
    with f:
        if f.attrs.get("format") != _FORMAT:
            raise SweepFileError(f"sweep file {p}: not a kane sweep file (format {f.attrs.get('format')!r})")
        n = int(f.attrs["n_committed"])
        return SweepTable(tuple(json.loads(f.attrs["param_names"])), tuple(json.loads(f.attrs["metric_names"])),
                          tuple(k.decode("ascii") for k in f["key"][:n]),
                          tuple(s.decode() if isinstance(s, bytes) else s for s in f["status"][:n]),
                          tuple(s.decode() if isinstance(s, bytes) else s for s in f["message"][:n]),
                          np.array(f["params"][:n]), np.array(f["metrics"][:n]))
