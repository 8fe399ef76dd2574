"""The HDF5 log of a real-time run, safe on interruption like a trajectory file (:mod:`kane.io.trajectory`).

Layout (HDF5 1.8 format, readable with plain ``h5py.File(path, "r")``): attributes ``format`` =
"kane.realtime_log", ``version``, ``status``, JSON ``q_names``, ``u_names``, ``stats`` (the deadline summary) and
``counts`` (refused and missing device samples, saturated periods); per period k (N rows): ``t`` [s],
``hand_position``, ``hand_velocity`` (N, 3) [m, m/s], ``point_position``, ``point_velocity`` (N, 3) of the body
point, ``force`` (N, 3) [N] on the body (the device displays -force), ``power`` [W] (force . hand velocity),
``port_energy`` [J] (the work the device did on the coupler up to the start of period k, force held over each
period), ``spring_energy`` [J] of the coupler, ``energy`` [J] of the virtual system (NaN when unknown), ``q``,
``u``, ``compute_time`` and ``lateness`` [s], ``sample_status`` (int8: 0 used, 1 refused, 2 missing), ``mode``
(int16: the mode at the period's start, an index into the JSON list attribute ``modes``, e.g. ["free",
"caster_stick"]; ["single"] for a system without switching); the group ``events`` (written at the close) of the
mode changes inside the periods, one row each: ``t`` [s], ``kind`` ("lock", "unlock", "impact", "stick", "slip"...),
``constraint`` (its name) and ``data`` (JSON: impulses, change of kinetic energy, new mode), strings as UTF-8
(``f["events/kind"].asstr()[:]``);
``n_committed`` (1,) the rows known to be on disk, written last in each flush (the datasets of a partial
file grow ahead of it, NaN-filled: read the first ``n_committed`` rows).

The loop writes each period's row into a preallocated ring buffer (no allocation, no disk). Every ``flush_every``
rows a block is handed to a writer thread that computes the block's energies in one batch call and has it
appended to ``path + '.partial'`` (:mod:`kane.realtime.log_writer`), opening and closing the file at each flush;
with ``process=True`` (the real clock) the HDF5 work runs in a separate writer process that maps the ring, so no
h5py call holds the loop's GIL. :meth:`RealtimeLog.close` renames the file to ``path``. A killed run leaves a
readable partial file holding every row of its last flush.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import h5py
import numpy as np

from ..errors import KaneError
from ..io.trajectory import PARTIAL_SUFFIX, _json_default, _series, check_output_path
from . import log_writer
from .log_writer import write_block

__all__ = ["LOG_FORMAT", "RealtimeLog", "SAMPLE_USED", "SAMPLE_REFUSED", "SAMPLE_MISSING", "ROW_FIELDS"]

LOG_FORMAT = "kane.realtime_log"
_VERSION = 1
_LIBVER = ("v108", "v108")
SAMPLE_USED, SAMPLE_REFUSED, SAMPLE_MISSING = 0, 1, 2
_VECTORS = ("hand_position", "hand_velocity", "point_position", "point_velocity", "force")
_SCALARS = ("t", "power", "port_energy", "spring_energy", "energy", "compute_time", "lateness")
# the floats of one row given to RealtimeLog.record, in this order (energy is computed by the writer)
ROW_FIELDS = ("t", "hand_position", "hand_velocity", "point_position", "point_velocity", "force", "power",
              "port_energy", "spring_energy", "sample_status", "mode", "compute_time", "lateness")
_WIDTH = {name: 3 if name in _VECTORS else 1 for name in ROW_FIELDS}
_BLOCKS = 8  # the ring holds this many blocks of flush_every rows


class RealtimeLog:
    """The log of one run at ``path``: q (n_q,) and u (n_u,) named ``q_names``, ``u_names``; ``energy(t, Q, U)``
    (batch: (B,), (B, n_q), (B, n_u) -> (B,) [J]) or None (NaN logged). Rows go into a ring buffer
    (:meth:`record`); a writer thread appends each block of ``flush_every`` rows (through a writer process with
    ``process``, on systems with /proc); :meth:`close` writes the rest, the status and statistics and renames the
    file to ``path``."""

    def __init__(self, path, q_names, u_names, *, flush_every: int = 250, energy=None, process: bool = False):
        self.path = check_output_path(path)
        self.partial = Path(str(self.path) + PARTIAL_SUFFIX)
        self.nq, self.nu = len(q_names), len(u_names)
        self.flush_every = block = max(1, int(flush_every))
        self.energy = energy
        self.n_committed = 0
        self.n_rows = 0
        self._cols, a = {}, 0
        for name in ROW_FIELDS:
            self._cols[name] = (a, a + _WIDTH[name])
            a += _WIDTH[name]
        self._cols["q"] = (a, a + self.nq)
        self._cols["u"] = (a + self.nq, a + self.nq + self.nu)
        self._cols["energy"] = (a + self.nq + self.nu, a + self.nq + self.nu + 1)
        self._qa, self._ua, self._ea = a, a + self.nq, a + self.nq + self.nu
        self._ct, self._lt = self._cols["compute_time"][0], self._cols["lateness"][0]
        self._layout = {"shape": [_BLOCKS * block, self._ea + 1], "libver": list(_LIBVER),
                        "columns": {name: [a, b, name in _VECTORS or name in ("q", "u")]
                                    for name, (a, b) in self._cols.items()}}
        self._child = None
        self._ring_fd = None
        if process and os.path.isdir(f"/proc/{os.getpid()}/fd"):
            # the ring in an unlinked file the writer process maps through /proc/PID/fd (nothing left behind)
            fd, name = tempfile.mkstemp(prefix="kane-realtime-", suffix=".ring",
                                        dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
            os.unlink(name)
            os.ftruncate(fd, 8 * _BLOCKS * block * (self._ea + 1))
            self._ring_fd = fd
            self._ring = np.memmap(f"/proc/{os.getpid()}/fd/{fd}", dtype=np.float64, mode="r+",
                                   shape=tuple(self._layout["shape"]))
        else:
            self._ring = np.zeros(tuple(self._layout["shape"]))
        self._queued = 0  # rows handed to the writer
        self._queue: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        if self.partial.exists():
            self.partial.unlink()
        with h5py.File(self.partial, "w", libver=_LIBVER) as f:
            f.attrs.update({"format": LOG_FORMAT, "version": _VERSION, "status": "running",
                            "q_names": json.dumps(list(q_names)), "u_names": json.dumps(list(u_names)),
                            "stats": "{}", "counts": "{}"})
            for name in _SCALARS:
                _series(f, name, (), 1024)
            for name in _VECTORS:
                _series(f, name, (3,), 1024)
            _series(f, "q", (self.nq,), 1024)
            _series(f, "u", (self.nu,), 1024)
            _series(f, "sample_status", (), 1024, "i1")
            _series(f, "mode", (), 1024, "i2")
            f.create_dataset("n_committed", data=np.zeros(1, dtype=np.int64))
        self._writer = threading.Thread(target=self._write_blocks, name="kane-realtime-log", daemon=True)
        self._writer.start()
        if self._ring_fd is not None:
            self._queue.put("start")  # the writer process starts while the loop gets ready, not in a period

    def record(self, values: list, q, u) -> None:
        """One period's row: ``values`` the floats of :data:`ROW_FIELDS` in order (vectors as three floats), ``q``
        (n_q,) and ``u`` (n_u,), copied into the ring buffer; :meth:`set_timing` completes it and hands a full block
        to the writer thread. If the writer lags the ring's length behind, waits for it (no row is ever dropped)."""
        ring = self._ring
        i = self.n_rows % ring.shape[0]
        if self.n_rows - self.n_committed >= ring.shape[0] - self.flush_every:
            self._queue.join()  # the writer fell behind by the whole ring: wait rather than overwrite
        row = ring[i]
        row[:self._qa] = values
        row[self._qa:self._ua] = q
        row[self._ua:self._ea] = u
        self.n_rows += 1

    def set_timing(self, compute: float, lateness: float) -> None:
        """The compute time and lateness [s] of the last recorded row (known only at its period's end)."""
        row = self._ring[(self.n_rows - 1) % self._ring.shape[0]]
        row[self._ct], row[self._lt] = compute, lateness
        if self.n_rows - self._queued >= self.flush_every:  # a complete block: to the writer
            self._queue.put((self._queued, self.n_rows))
            self._queued = self.n_rows

    def _write_blocks(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                if self._error is None:
                    self._start_child() if job == "start" else self._write(*job)
            except BaseException as exc:  # reported by close()
                self._error = exc
            finally:
                self._queue.task_done()

    def _write(self, n0: int, n1: int) -> None:
        ring = self._ring
        if self.energy is not None and n1 > n0:
            idx = np.arange(n0, n1) % ring.shape[0]
            block = ring[idx]
            t, q, u = block[:, 0], block[:, self._qa:self._ua], block[:, self._ua:self._ea]
            ring[idx, self._ea] = self.energy(t, np.ascontiguousarray(q), np.ascontiguousarray(u))
        elif self.energy is None:
            ring[np.arange(n0, n1) % ring.shape[0], self._ea] = np.nan
        if self._ring_fd is None:
            write_block(str(self.partial), self._layout, ring, n0, n1)
        else:
            child = self._child or self._start_child()
            child.stdin.write(f"{n0} {n1}\n")
            child.stdin.flush()
            if child.stdout.readline().strip() != str(n1):
                raise KaneError(f"real-time log {self.partial}: the writer process failed: {child.stderr.read()}")
        self.n_committed = n1

    def _start_child(self):
        pid = os.getpid()
        self._child = child = subprocess.Popen(
            [sys.executable, "-P", log_writer.__file__, f"/proc/{pid}/fd/{self._ring_fd}", str(self.partial),
             json.dumps(self._layout)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        if child.stdout.readline().strip() != "ready":
            raise KaneError(f"real-time log {self.partial}: the writer process did not start: {child.stderr.read()}")
        return child

    def flush(self) -> None:
        """Hand the rows not yet queued to the writer and wait until every row is on disk."""
        if self.n_rows > self._queued:
            self._queue.put((self._queued, self.n_rows))
            self._queued = self.n_rows
        self._queue.join()
        if self._error is not None:
            raise self._error

    def close(self, status: str, stats: dict, counts: dict, modes=("single",), events=()) -> Path:
        """Flush, write ``status``, the JSON ``stats`` and ``counts``, the ``modes`` names (the ``mode`` column's
        indices) and the ``events`` (kane.io.trajectory EventRecord: t [s], name of the constraint, kind, data),
        rename to the final path; returns it."""
        try:
            self.flush()
        finally:
            self._queue.put(None)
            self._writer.join()
            if self._child is not None:
                self._child.stdin.close()
                self._child.wait()
                self._child.stdout.close()
                self._child.stderr.close()
            if self._ring_fd is not None:
                del self._ring
                os.close(self._ring_fd)
        with h5py.File(self.partial, "a", libver=_LIBVER) as f:
            for name in (*_SCALARS, *_VECTORS, "q", "u", "sample_status", "mode"):
                f[name].resize(self.n_committed, axis=0)  # the reserve beyond the rows goes
            f.attrs.update({"status": status, "stats": json.dumps(stats), "counts": json.dumps(counts),
                            "modes": json.dumps(list(modes))})
            _write_events(f.create_group("events"), list(events))
        os.replace(self.partial, self.path)
        return self.path


def _write_events(group, events: list) -> None:
    """The mode changes as datasets of ``group``: t (N,) [s], kind, constraint and JSON data (N,) UTF-8 strings."""
    text = h5py.string_dtype("utf-8")
    group.create_dataset("t", data=np.array([float(e.t) for e in events], dtype=float))
    for name, values in (("kind", [e.kind for e in events]), ("constraint", [e.name for e in events]),
                         ("data", [json.dumps(e.data, default=_json_default) for e in events])):
        group.create_dataset(name, data=np.array(values, dtype=object), dtype=text, shape=(len(values),))
