"""The results of a sweep in a Zarr store (a directory ``NAME.zarr``), for when the user asks: the layout of the
HDF5 file (:mod:`.store`: the same attributes, arrays and ``trajectories`` groups; keys, statuses and messages as
strings), appended and committed the same way (``n_committed`` written last), so it resumes alike.

Zarr is an optional dependency (``pip install zarr``); without it a Zarr path raises SweepFileError saying so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .table import (VERSION, SweepFileError, SweepTable, check_columns, header, read_table, read_trajectory,
                    warnings_text, write_trajectory)

__all__ = ["ZarrSweepFile", "read_zarr", "read_zarr_trajectory"]

_CHUNK = 256


def _zarr():
    try:
        import zarr
    except ImportError:
        raise SweepFileError("Zarr results need the zarr package (pip install zarr); or give an .h5 output file") \
            from None
    return zarr


def _open(path: Path, mode: str):
    zarr = _zarr()
    if not path.is_dir():
        raise SweepFileError(f"sweep store {path}: not a Zarr directory")
    try:
        return zarr.open_group(str(path), mode=mode)
    except (OSError, ValueError, KeyError) as exc:
        raise SweepFileError(f"sweep store {path}: cannot be read as Zarr ({type(exc).__name__}: {exc})") from None


def _create(group, name, data) -> None:
    group.create_array(name, data=data)


class ZarrSweepFile:
    """The Zarr results store at ``path`` (a directory) for the columns ``param_names`` and ``metric_names``,
    created when missing; an existing store must hold the same columns (else SweepFileError naming both)."""

    def __init__(self, path, model: str, param_names, metric_names, axes=()):
        self.path = Path(path).expanduser()
        self.param_names, self.metric_names = tuple(param_names), tuple(metric_names)
        if self.path.exists() and not self.path.is_dir():
            raise SweepFileError(f"sweep store {self.path}: a file is in the way of the Zarr directory; give another "
                                 f"output path")
        if self.path.exists() and any(self.path.iterdir()):
            check_columns(read_zarr(self.path), self.path, self.param_names, self.metric_names)
            return
        root = _zarr().open_group(str(self.path), mode="w")
        for name, width, dtype in (("key", None, str), ("status", None, str), ("message", None, str),
                                   ("warnings", None, str),
                                   ("params", len(self.param_names), "f8"), ("metrics", len(self.metric_names), "f8")):
            shape, chunks = ((0,), (_CHUNK,)) if width is None else ((0, width), (_CHUNK, max(width, 1)))
            root.create_array(name, shape=shape, chunks=chunks, dtype=dtype)
        root.attrs.update(header(model, self.param_names, self.metric_names, axes))

    def keys(self) -> set[str]:
        """The keys of the runs in the store."""
        return set(read_zarr(self.path).keys)

    def append(self, rows, q_names=(), u_names=()) -> None:
        """Append ``rows`` as :meth:`kane.sweep.store.SweepFile.append` does."""
        rows = list(rows)
        if not rows:
            return
        root = _open(self.path, "r+")
        for r in rows:
            if len(r) > 5 and r[5] is not None:
                write_trajectory(root, r[0], r[5], q_names, u_names, _create)
        n = int(root.attrs["n_committed"])
        m = n + len(rows)
        if "warnings" not in root:  # a version 1 store: the warnings of its runs are unknown
            root.create_array("warnings", data=np.array(["{}"] * n, dtype=object), chunks=(_CHUNK,))
            root.attrs["version"] = VERSION
        for name, values in (("key", np.array([r[0] for r in rows], dtype=object)),
                             ("warnings", np.array(warnings_text(rows), dtype=object)),
                             ("status", np.array([r[1] for r in rows], dtype=object)),
                             ("message", np.array([r[2] for r in rows], dtype=object)),
                             ("params", np.array([r[3] for r in rows], dtype=float).reshape(len(rows), -1)),
                             ("metrics", np.array([r[4] for r in rows], dtype=float).reshape(len(rows), -1))):
            array = root[name]
            array.resize((m, *array.shape[1:]))
            array[n:m] = values
        root.attrs["n_committed"] = m


def read_zarr(path) -> SweepTable:
    """The committed runs of a Zarr results store."""
    return read_table(_open(Path(path), "r"), path)


def read_zarr_trajectory(path, key: str):
    """The trajectory (a kane.Trajectory) of run ``key`` in a Zarr results store."""
    root = _open(Path(path), "r")
    return read_trajectory(root, read_table(root, path), key, path)
