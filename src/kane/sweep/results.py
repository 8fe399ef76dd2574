"""The results of a sweep, HDF5 (:mod:`.store`) or Zarr (:mod:`.store_zarr`) by the output's name: a path
ending in ``.zarr`` is a Zarr store, any other an HDF5 file."""

from __future__ import annotations

from pathlib import Path

import h5py

from .store import SweepFile, SweepFileError, SweepTable, read_hdf5, read_hdf5_trajectory
from .store_zarr import ZarrSweepFile, read_zarr, read_zarr_trajectory
from .table import is_format

__all__ = ["is_zarr", "open_results", "load_sweep", "load_sweep_trajectory", "is_sweep_file"]


def is_zarr(path) -> bool:
    """Whether ``path`` names a Zarr store (its name ends in .zarr)."""
    return Path(path).suffix.lower() == ".zarr"


def open_results(path, model: str, param_names, metric_names, axes=()) -> SweepFile | ZarrSweepFile:
    """The results file or store at ``path`` for these columns (created when missing)."""
    cls = ZarrSweepFile if is_zarr(path) else SweepFile
    return cls(path, model, param_names, metric_names, axes)


def load_sweep(path) -> SweepTable:
    """Read the runs of a sweep's results (those committed); SweepFileError in plain words otherwise."""
    return read_zarr(path) if is_zarr(path) else read_hdf5(path)


def load_sweep_trajectory(path, key: str):
    """The trajectory (a :class:`kane.Trajectory`) of the run ``key`` in a sweep's results; SweepFileError when
    none is kept for it (trajectories not asked, a failed run, or another key)."""
    return read_zarr_trajectory(path, key) if is_zarr(path) else read_hdf5_trajectory(path, key)


def is_sweep_file(path) -> bool:
    """Whether ``path`` holds a kane sweep's results (an HDF5 file, or a Zarr store, of format "kane.sweep")."""
    if is_zarr(path):
        try:
            read_zarr(path)
            return True
        except SweepFileError:
            return False
    try:
        with h5py.File(path, "r") as f:
            return is_format(f.attrs.get("format"))
    except (OSError, ValueError):
        return False
