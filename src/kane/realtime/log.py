"""The HDF5 log of a real-time run, safe on interruption like a trajectory file (:mod:`kane.io.trajectory`).

Layout (HDF5 1.8 format, readable with plain ``h5py.File(path, "r")``): attributes ``format`` =
"kane.realtime_log", ``version``, ``status``, JSON ``q_names``, ``u_names``, ``stats`` (the deadline summary) and
``counts`` (refused and missing device samples, saturated periods); per period k (N rows): ``t`` [s],
``hand_position``, ``hand_velocity`` (N, 3) [m, m/s], ``point_position``, ``point_velocity`` (N, 3) of the body
point, ``force`` (N, 3) [N] on the body (the device displays -force), ``power`` [W] (force . hand velocity),
``port_energy`` [J] (the work the device did on the coupler up to the start of period k, force held over each
period), ``spring_energy`` [J] of the coupler, ``energy`` [J] of the virtual system (NaN when unknown), ``q``,
``u``, ``compute_time`` and ``lateness`` [s], ``sample_status`` (int8: 0 used, 1 refused, 2 missing);
``n_committed`` (1,) the rows known to be on disk, written last in each flush.

The writer appends to ``path + '.partial'``, opening and closing it at each flush, and renames it to ``path`` when
closed, so a killed run leaves a readable partial file holding every row of its last flush.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np

from ..io.trajectory import PARTIAL_SUFFIX, check_output_path

__all__ = ["LOG_FORMAT", "RealtimeLog", "SAMPLE_USED", "SAMPLE_REFUSED", "SAMPLE_MISSING"]

LOG_FORMAT = "kane.realtime_log"
_VERSION = 1
_LIBVER = ("v108", "v108")
SAMPLE_USED, SAMPLE_REFUSED, SAMPLE_MISSING = 0, 1, 2
_VECTORS = ("hand_position", "hand_velocity", "point_position", "point_velocity", "force")
_SCALARS = ("t", "power", "port_energy", "spring_energy", "energy", "compute_time", "lateness")


class RealtimeLog:
    """Buffers rows in memory, written to ``path + '.partial'`` by :meth:`flush`; :meth:`close`
    flushes the rest, writes the status and statistics and renames the file to ``path``."""

    def __init__(self, path, q_names, u_names, *, flush_every: int = 250):
        self.path = check_output_path(path)
        self.partial = Path(str(self.path) + PARTIAL_SUFFIX)
        self.nq, self.nu = len(q_names), len(u_names)
        self.flush_every = int(flush_every)
        self.n_committed = 0
        self._rows: list = []
        if self.partial.exists():
            self.partial.unlink()
        with h5py.File(self.partial, "w", libver=_LIBVER) as f:
            f.attrs.update({"format": LOG_FORMAT, "version": _VERSION, "status": "running",
                            "q_names": json.dumps(list(q_names)), "u_names": json.dumps(list(u_names)),
                            "stats": "{}", "counts": "{}"})
            for name in _SCALARS:
                f.create_dataset(name, (0,), maxshape=(None,), chunks=(1024,), dtype="f8")
            for name in _VECTORS:
                f.create_dataset(name, (0, 3), maxshape=(None, 3), chunks=(1024, 3), dtype="f8")
            f.create_dataset("q", (0, self.nq), maxshape=(None, self.nq), chunks=(1024, max(self.nq, 1)), dtype="f8")
            f.create_dataset("u", (0, self.nu), maxshape=(None, self.nu), chunks=(1024, max(self.nu, 1)), dtype="f8")
            f.create_dataset("sample_status", (0,), maxshape=(None,), chunks=(1024,), dtype="i1")
            f.create_dataset("n_committed", data=np.zeros(1, dtype=np.int64))

    def append(self, row: dict) -> None:
        """One period's row: a dict with every dataset's name (vectors (3,), q (n_q,), u (n_u,), scalars); written
        by the next :meth:`flush` (the loop calls it when :attr:`due`)."""
        self._rows.append(row)

    @property
    def due(self) -> bool:
        """Whether ``flush_every`` rows wait to be written."""
        return len(self._rows) >= self.flush_every

    def flush(self) -> None:
        """Append the buffered rows to the partial file; ``n_committed`` is updated last."""
        if not self._rows:
            return
        rows, n0 = self._rows, self.n_committed
        n1 = n0 + len(rows)
        with h5py.File(self.partial, "a", libver=_LIBVER) as f:
            for name in (*_SCALARS, *_VECTORS, "q", "u", "sample_status"):
                d = f[name]
                d.resize(n1, axis=0)
                d[n0:n1] = np.array([r[name] for r in rows])
            f["n_committed"][0] = n1
        self.n_committed = n1
        self._rows = []

    def close(self, status: str, stats: dict, counts: dict) -> Path:
        """Flush, write ``status`` and the JSON ``stats`` and ``counts``, rename to the final path; returns it."""
        self.flush()
        with h5py.File(self.partial, "a", libver=_LIBVER) as f:
            f.attrs.update({"status": status, "stats": json.dumps(stats), "counts": json.dumps(counts)})
        os.replace(self.partial, self.path)
        return self.path
