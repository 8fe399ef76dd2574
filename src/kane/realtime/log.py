"""The HDF5 log of a real-time run, safe on interruption like a trajectory file (:mod:`kane.io.trajectory`).

Layout (HDF5 1.8 format, readable with plain ``h5py.File(path, "r")``): attributes ``format`` = "kane.realtime_log",
``version``, ``status``, JSON ``q_names``, ``u_names``, ``stats`` (the deadline summary) and ``counts`` (refused and
missing device samples, saturated periods); per period k (N rows): ``t`` [s], ``hand_position``, ``hand_velocity``
(N, 3) [m, m/s], ``point_position``, ``point_velocity`` (N, 3) of the body point, ``force`` (N, 3) [N] on the body
(the device displays -force), ``power`` [W] (force . hand velocity), ``port_energy`` [J] (the work the device did on
the coupler up to the start of period k, force held over each period), ``spring_energy`` [J] of the coupler,
``energy`` [J] of the virtual system (NaN when unknown), ``q``, ``u``, ``compute_time`` and ``lateness`` [s],
``sample_status`` (int8: 0 used, 1 refused, 2 missing), ``mode`` (int16: the mode at the period's start, an index
into the JSON list attribute ``modes``, e.g. ["free", "caster_stick"]; ["single"] for a system without switching);
with a full pose coupled (``pose=True``) also ``torque`` (N, 3) [N m] on the body, ``hand_orientation`` and
``body_orientation`` (N, 9) (their axes to ground, row by row), ``hand_angular_velocity`` and
``body_angular_velocity`` (N, 3) [rad/s]; the group ``events`` (written at the close) of the mode changes inside the
periods, one row each: ``t`` [s], ``kind`` ("lock", "unlock", "impact", "stick", "slip"...), ``constraint`` (its
name) and ``data`` (JSON: impulses, change of kinetic energy, new mode), strings as UTF-8
(``f["events/kind"].asstr()[:]``); with the dynamics stepped every k periods (``dynamics_every``), the group
``dynamics`` (written at the close) of the plant's own states at its steps, from the start: ``t`` (M,) [s], ``q``
(M, n_q), ``u`` (M, n_u) and ``energy`` (M,) [J] (the rows' q and u are what the coupler saw, extrapolated);
``n_committed`` (1,) the rows known to be on disk, written last in each flush (the datasets of a partial file grow
ahead of it, NaN-filled: read the first ``n_committed`` rows).

The loop writes each period's row into a preallocated ring buffer (no allocation, no disk). Everything else runs in
the loop's own thread, in the free time after a period's work (:meth:`RealtimeLog.housekeeping`, given the time by
which to return): the energies of the rows in batches sized to the time left, and every ``flush_every`` rows a
block handed to the writer. With ``process=True`` (the real clock) the writer is a separate process that maps the
ring and appends each block to ``path + '.partial'`` (:mod:`kane.realtime.log_writer`), so no h5py call and no
other Python thread ever takes the loop's GIL (a thread that wakes costs the loop a GIL hand-over of 100 us and
more); otherwise blocks are appended in the loop's thread. The writer runs in its own session, so a terminal's
Ctrl-C stops the loop, not the writer; a writer that ends early anyway hands its rows back, and the loop's thread
appends them (its status says so). :meth:`RealtimeLog.close` renames the file to ``path``. A killed run leaves a
readable partial file holding every row of its last flush.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from ..errors import KaneError
from ..io.output_path import OutputLock
from ..io.trajectory import PARTIAL_SUFFIX, _json_default, _series, check_output_path
from . import log_writer
from .log_writer import write_block

__all__ = ["LOG_FORMAT", "RealtimeLog", "SAMPLE_USED", "SAMPLE_REFUSED", "SAMPLE_MISSING", "ROW_FIELDS",
           "POSE_FIELDS"]

LOG_FORMAT = "kane.realtime_log"
_VERSION = 1
_LIBVER = ("v108", "v108")
SAMPLE_USED, SAMPLE_REFUSED, SAMPLE_MISSING = 0, 1, 2
_VECTORS = ("hand_position", "hand_velocity", "point_position", "point_velocity", "force")
_SCALARS = ("t", "power", "port_energy", "spring_energy", "energy", "compute_time", "lateness")
# the floats of one row given to RealtimeLog.record, in this order (energy is computed by the writer)
ROW_FIELDS = ("t", "hand_position", "hand_velocity", "point_position", "point_velocity", "force", "power",
              "port_energy", "spring_energy", "sample_status", "mode", "compute_time", "lateness")
# with a full pose coupled, these follow (torque [N m] on the body; orientations row by row, their axes to ground)
POSE_FIELDS = ("torque", "hand_orientation", "hand_angular_velocity", "body_orientation", "body_angular_velocity")
_WIDTH = {**{name: 3 if name in _VECTORS else 1 for name in ROW_FIELDS},
          **{name: 9 if name.endswith("orientation") else 3 for name in POSE_FIELDS}}
_BLOCKS = 8  # the ring holds this many blocks of flush_every rows


class RealtimeLog:
    """The log of one run at ``path``: q (n_q,) and u (n_u,) named ``q_names``, ``u_names``; ``energy(t, Q, U)``
    (batch: (B,), (B, n_q), (B, n_u) -> (B,) [J]) or None (NaN logged). Rows go into a ring buffer
    (:meth:`record`, :meth:`set_timing`); :meth:`housekeeping` computes their energies and hands each block of
    ``flush_every`` rows to the writer (a writer process with ``process``, on systems with /proc); :meth:`close`
    writes the rest, the status and statistics and renames the file to ``path``."""

    def __init__(self, path, q_names, u_names, *, flush_every: int = 250, energy=None, process: bool = False,
                 pose: bool = False):
        self.path = check_output_path(path)
        self._lock = OutputLock.acquire(self.path)  # one writer per path: a second run refuses here, naming this one
        self.partial = Path(str(self.path) + PARTIAL_SUFFIX)
        self.nq, self.nu = len(q_names), len(u_names)
        self.flush_every = block = max(1, int(flush_every))
        self.energy = energy
        self.n_rows = 0  # rows recorded
        self.n_energy = 0  # rows whose energy is in the ring
        self.n_sent = 0  # rows handed to the writer
        self.n_committed = 0  # rows known to be on disk
        self._cols, a = {}, 0
        self._extra = POSE_FIELDS if pose else ()  # the row's floats after ROW_FIELDS (a full pose coupled)
        for name in ROW_FIELDS + self._extra:
            self._cols[name] = (a, a + _WIDTH[name])
            a += _WIDTH[name]
        self._cols["q"] = (a, a + self.nq)
        self._cols["u"] = (a + self.nq, a + self.nq + self.nu)
        self._cols["energy"] = (a + self.nq + self.nu, a + self.nq + self.nu + 1)
        self._qa, self._ua, self._ea = a, a + self.nq, a + self.nq + self.nu
        self._ct, self._lt = self._cols["compute_time"][0], self._cols["lateness"][0]
        self._layout = {"shape": [_BLOCKS * block, self._ea + 1], "libver": list(_LIBVER),
                        "columns": {name: [a, b, name in _VECTORS or name in ("q", "u") or name in self._extra]
                                    for name, (a, b) in self._cols.items()}}
        self._cost = (None, None)  # [s] of an energy call: its overhead, and per row (warm_up)
        self._error: BaseException | None = None
        self._child, self._acks = None, b""
        self.writer_failure: str | None = None  # the last words of a writer process that ended early
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
            self._ring[:] = 0.0  # every page touched now, not at a period's first row in it
        else:
            self._ring = np.zeros(tuple(self._layout["shape"]))
        try:
            self._create_file(q_names, u_names)
        except BaseException:
            self._lock.release()
            raise

    def _create_file(self, q_names, u_names) -> None:
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
            for name in self._extra:
                _series(f, name, (_WIDTH[name],), 1024)
            _series(f, "q", (self.nq,), 1024)
            _series(f, "u", (self.nu,), 1024)
            _series(f, "sample_status", (), 1024, "i1")
            _series(f, "mode", (), 1024, "i2")
            f.create_dataset("n_committed", data=np.zeros(1, dtype=np.int64))
        if self._ring_fd is not None:
            self._start_child()  # ready before the loop's first period: its start-up (imports) competes for CPU

    def record(self, values: list, q, u) -> None:
        """One period's row: ``values`` the floats of :data:`ROW_FIELDS` in order (vectors as three floats; then
        those of :data:`POSE_FIELDS` with a full pose coupled), ``q``
        (n_q,) and ``u`` (n_u,), copied into the ring buffer; :meth:`set_timing` completes it. If the writer lags
        the ring's length behind, waits for it (no row is ever dropped)."""
        ring = self._ring
        if self.n_rows - self.n_committed >= ring.shape[0] - self.flush_every and self._error is None:
            self._write_until(self.n_rows)  # housekeeping fell behind by the whole ring: catch up now
        row = ring[self.n_rows % ring.shape[0]]
        row[:self._qa] = values
        row[self._qa:self._ua] = q
        row[self._ua:self._ea] = u
        if self.energy is None:
            row[self._ea] = np.nan
        self.n_rows += 1

    def record_block(self, values, q, u) -> None:
        """R rows of :meth:`record` at once: ``values`` (R, floats of :data:`ROW_FIELDS` and :data:`POSE_FIELDS`,
        timings included), ``q`` (R, n_q), ``u`` (R, n_u), written into the ring by slices; the ring holds what R
        calls of :meth:`record` leave there, and waits for the writer at the same rows (no row is ever dropped)."""
        ring, size, flush = self._ring, self._ring.shape[0], self.flush_every
        n, j = len(values), 0
        while j < n:
            if self.n_rows - self.n_committed >= size - flush and self._error is None:
                self._write_until(self.n_rows)  # housekeeping fell behind by the whole ring: catch up now
            i0 = self.n_rows % size
            m = min(n - j, size - i0)
            if self._error is None:  # up to the row at which record would wait again
                m = min(m, size - flush - (self.n_rows - self.n_committed))
            ring[i0:i0 + m, :self._qa] = values[j:j + m]
            ring[i0:i0 + m, self._qa:self._ua] = q[j:j + m]
            ring[i0:i0 + m, self._ua:self._ea] = u[j:j + m]
            if self.energy is None:
                ring[i0:i0 + m, self._ea] = np.nan
            self.n_rows += m
            j += m

    def rehearse(self, values: list, q, u) -> None:
        """Write a row as :meth:`record` and :meth:`set_timing` would, into the ring's slot of the next row, without
        recording it (the next :meth:`record` overwrites it): the loop's thread runs this path once before its
        first period, so that the first period does not pay for its first use (pages, caches)."""
        row = self._ring[self.n_rows % self._ring.shape[0]]
        row[:self._qa] = values
        row[self._qa:self._ua] = q
        row[self._ua:self._ea] = u
        row[self._ct], row[self._lt] = 0.0, 0.0

    def set_timing(self, compute: float, lateness: float) -> None:
        """The compute time and lateness [s] of the last recorded row (known only at its period's end)."""
        row = self._ring[(self.n_rows - 1) % self._ring.shape[0]]
        row[self._ct], row[self._lt] = compute, lateness

    def housekeeping(self, until: float | None = None) -> None:
        """The log's work between periods: with ``until`` (a ``time.perf_counter`` time [s]) the energies of as
        many complete rows as fit before it, and any complete block of ``flush_every`` rows handed to the writer;
        with None, only when a block is complete, its energies in one batch and the block written. A failure is
        kept and raised by :meth:`close`."""
        if self._error is not None:
            return
        try:
            if self._child is not None:
                self._read_acks(wait=False)
            if until is None:
                if self.n_rows - self.n_sent >= self.flush_every:
                    self._energies(self.n_rows)
                    self._send(self.n_rows)
                return
            if self.energy is None:
                self.n_energy = self.n_rows
            elif self.n_energy < self.n_rows:
                o, r = self._cost  # a call's cost [s] (warm_up): its overhead o and r per row, o taken 1.5 times
                left = until - time.perf_counter()
                if o is None:  # not measured: one row at a time
                    fit = 1 if left > 0 else 0
                else:
                    fit = int((left - 1.5 * o) / max(r, 1e-9))
                if fit >= 1:
                    self._energies(min(self.n_rows, self.n_energy + fit))
            if self.n_energy - self.n_sent >= self.flush_every:
                self._send(self.n_energy)
        except BaseException as exc:  # reported by close()
            self._error = exc

    def warm_up(self, t: float, q, u, repeat: int = 3) -> None:
        """Evaluate the energy at (t [s], q (n_q,), u (n_u,)) in batches of 1 and 256 rows, ``repeat`` times, to
        measure the cost of a call (its overhead and per row) before the first period: :meth:`housekeeping` sizes
        its batches to the time left by it."""
        if self.energy is None:
            return
        times = {1: [], 256: []}
        for _ in range(repeat):
            for rows in times:
                args = (np.full(rows, float(t)), np.tile(np.asarray(q, dtype=float), (rows, 1)),
                        np.tile(np.asarray(u, dtype=float), (rows, 1)))
                start = time.perf_counter()
                self.energy(*args)
                times[rows].append(time.perf_counter() - start)
        one, many = min(times[1]), min(times[256])
        self._cost = (one, max(many - one, 0.0) / 255)

    def _energies(self, n1: int) -> None:
        """The energies of rows n_energy..n1 - 1 into the ring (one batch per stretch up to the ring's end)."""
        if self.energy is None:
            self.n_energy = max(self.n_energy, n1)
            return
        ring, size = self._ring, self._ring.shape[0]
        while self.n_energy < n1:
            i0 = self.n_energy % size
            i1 = min(size, i0 + n1 - self.n_energy)
            block = ring[i0:i1]
            ring[i0:i1, self._ea] = self.energy(block[:, 0], block[:, self._qa:self._ua], block[:, self._ua:self._ea])
            self.n_energy += i1 - i0

    def _send(self, n1: int) -> None:
        """Rows n_sent..n1 - 1 (their energies known) to the writer process, or appended here."""
        if n1 <= self.n_sent:
            return
        if self._child is None:
            write_block(str(self.partial), self._layout, self._ring, self.n_sent, n1)
            self.n_committed = n1
        else:
            os.write(self._child.stdin.fileno(), f"{self.n_sent} {n1}\n".encode())
        self.n_sent = n1

    def _read_acks(self, wait: bool) -> None:
        """The rows the writer process has committed (the last number it printed); with ``wait``, until every
        row sent is. A writer that ended (killed, or failed) hands the rows it had not committed back to this
        process (:meth:`_writer_failed`)."""
        fd = self._child.stdout.fileno()
        while not (wait and self.n_committed >= self.n_sent):
            if not select.select([fd], [], [], None if wait else 0)[0]:
                return
            data = os.read(fd, 4096)
            if not data:
                self._writer_failed()
                return
            self._acks += data
            *done, self._acks = self._acks.split(b"\n")
            if done:
                self.n_committed = int(done[-1])
            if not wait:
                return

    def _writer_failed(self) -> None:
        """The writer process ended before its input did: its last words are kept (``writer_failure``, added to
        the file's status by :meth:`close`) and the rows it had not committed are sent again, to be appended in
        this process from now on (the ring still holds them), so no recorded row is lost."""
        child, self._child = self._child, None
        child.stdin.close()
        code = child.wait()
        words = child.stderr.read().decode(errors="replace").strip().splitlines()
        child.stdout.close()
        child.stderr.close()
        self.writer_failure = (f"the log's writer process ended early ({words[-1] if words else f'exit status {code}'}"
                               f"); rows from {self.n_committed} on were written by the loop's process")
        self.n_sent = self.n_committed

    def _write_until(self, n1: int) -> None:
        """Energies, hand-over and commit of every row before ``n1``, waiting for the writer."""
        try:
            self._energies(n1)
            self._send(n1)
            if self._child is not None:
                self._read_acks(wait=True)
                self._send(n1)  # nothing, unless the writer failed: then its rows are appended here
        except BaseException as exc:
            self._error = exc

    def _start_child(self):
        pid = os.getpid()
        self._child = child = subprocess.Popen(
            [sys.executable, "-P", log_writer.__file__, f"/proc/{pid}/fd/{self._ring_fd}", str(self.partial),
             json.dumps(self._layout)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            bufsize=0, start_new_session=True)  # out of the terminal's process group: Ctrl-C stops the loop only
        if child.stdout.readline().strip() != b"ready":
            raise KaneError(f"real-time log {self.partial}: the writer process did not start: "
                            f"{child.stderr.read().decode(errors='replace')}")
        return child

    @property
    def writer_pid(self) -> int | None:
        """The writer process's id while it runs; None when blocks are appended in this process."""
        return self._child.pid if self._child is not None and self._child.poll() is None else None

    def flush(self) -> None:
        """Every row recorded on disk (energies computed, handed to the writer, committed)."""
        if self._error is None:
            self._write_until(self.n_rows)
        if self._error is not None:
            raise self._error

    def close(self, status: str, stats: dict, counts: dict, modes=("single",), events=(), steps=None) -> Path:
        """Flush, write ``status``, the JSON ``stats`` and ``counts``, the ``modes`` names (the ``mode`` column's
        indices) and the ``events`` (kane.io.trajectory EventRecord: t [s], name of the constraint, kind, data),
        rename to the final path; returns it."""
        try:
            self.flush()
        finally:
            if self._child is not None:
                self._child.stdin.close()
                self._child.wait()
                self._child.stdout.close()
                self._child.stderr.close()
            if self._ring_fd is not None:
                del self._ring
                os.close(self._ring_fd)
        with h5py.File(self.partial, "a", libver=_LIBVER) as f:
            for name in (*_SCALARS, *_VECTORS, *self._extra, "q", "u", "sample_status", "mode"):
                f[name].resize(self.n_committed, axis=0)  # the reserve beyond the rows goes
            if self.writer_failure is not None:
                status = f"{status}; {self.writer_failure}"
            f.attrs.update({"status": status, "stats": json.dumps(stats), "counts": json.dumps(counts),
                            "modes": json.dumps(list(modes))})
            _write_events(f.create_group("events"), list(events))
            if steps:
                self._write_steps(f.create_group("dynamics"), steps)
        os.replace(self.partial, self.path)
        self._lock.release()
        return self.path


    def _write_steps(self, group, steps) -> None:
        """The plant's own states (t [s], q (n_q,), u (n_u,)) at its steps, with their energies, into ``group``."""
        t = np.array([s[0] for s in steps], dtype=float)
        q = np.array([s[1] for s in steps], dtype=float).reshape(len(steps), self.nq)
        u = np.array([s[2] for s in steps], dtype=float).reshape(len(steps), self.nu)
        energy = np.full(len(steps), np.nan) if self.energy is None else np.asarray(self.energy(t, q, u), dtype=float)
        for name, data in (("t", t), ("q", q), ("u", u), ("energy", energy)):
            group.create_dataset(name, data=data)


def _write_events(group, events: list) -> None:
    """The mode changes as datasets of ``group``: t (N,) [s], kind, constraint and JSON data (N,) UTF-8 strings."""
    text = h5py.string_dtype("utf-8")
    group.create_dataset("t", data=np.array([float(e.t) for e in events], dtype=float))
    for name, values in (("kind", [e.kind for e in events]), ("constraint", [e.name for e in events]),
                         ("data", [json.dumps(e.data, default=_json_default) for e in events])):
        group.create_dataset(name, data=np.array(values, dtype=object), dtype=text, shape=(len(values),))
