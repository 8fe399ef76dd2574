"""The haptic period in C (issue 32, item 1): the library of :mod:`.c_period_text` built and loaded through the C
backend's verified cache (:func:`kane.codegen.c_backend.load_library`: kane loads only a library it built and
sealed), and :class:`PeriodContext`, the C loop's state (its ``kane_period`` struct and the buffers it points to)
for one run: the compiled step of the plant, the coupler's compiled point function, the device's sample ring and
the log's row ring.

The GIL: cffi releases it around every call into C (ABI and API modes alike), so ``kane_period_run`` called from
Python runs with no GIL held; ``kane_period_start`` goes further and runs the loop in a thread created in C by
``pthread_create``, a thread that never holds the GIL. The rings are single-producer / single-consumer with their
counters read and written by ``__atomic`` acquire / release operations (``kane_load``, ``kane_store`` for the
Python side), so Python fills the device ring ahead and drains the log ring while the C thread runs, without a lock.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

from ..codegen.c_backend import CFunction, load_library
from ..errors import KaneError
from .c_period_text import DEVICE_WIDTH, PERIOD_CDEF, PERIOD_SOURCE, ROW_POINT, ROW_POSE
from .devices import Replay, check_sample, check_samples
from .log import SAMPLE_MISSING, SAMPLE_REFUSED, SAMPLE_USED
from .stats import JITTER_EDGES_S

__all__ = ["period_library", "PeriodContext", "STATUS"]

#: kane_period.status: what ended the C loop
STATUS = {0: "completed", 1: "stopped", 2: "device stopped answering", 3: "failed", 4: "running",
          5: "guard", 6: "impulse", 7: "switches"}  # 5-7: a switching plant's period (kane.realtime.c_switching)

_lib_lock = threading.Lock()
_loaded: dict = {}


def model_free_library(name: str, source: str, cdef: str):
    """(ffi, lib) of a model-independent C text (the period's, the switching period's), built once per compiler
    and cached (CCompileError when no compiler works)."""
    with _lib_lock:
        if name not in _loaded:
            ident = hashlib.sha256((source + "\0" + cdef).encode()).digest()
            lib, _ = load_library(name.encode() + b"\0" + ident, lambda: source, cdef)
            from ..codegen.c_backend import _cffi

            _loaded[name] = (_cffi(cdef), lib)
        return _loaded[name]


def period_library():
    """(ffi, lib) of the C period, built once per compiler and cached (CCompileError when no compiler works)."""
    return model_free_library("kane.realtime.c_period", PERIOD_SOURCE, PERIOD_CDEF)


def _address(fn_ffi, cdata) -> int:
    """The address of a cdata pointer (function or array) of another FFI, as an integer."""
    return int(fn_ffi.cast("uintptr_t", cdata))


class PeriodContext:
    """The C loop's struct and buffers for one run of ``n_periods`` (-1: until stopped) at ``period`` T [s] from
    ``t0`` [s]: ``stepper`` (:class:`kane.codegen.c_step.Stepper`, advanced in place), ``every`` k (multi-rate:
    the dynamics every k periods with the mean force), ``substeps`` per step, the ``coupler``
    (:class:`kane.realtime.VirtualCoupler` on the C backend), the coupler's input ``index`` in the step's inputs,
    ``dev_cap`` slots of device ring, ``row_cap`` rows of log ring (0: no log), ``stat_cap`` periods of compute
    and lateness kept for percentiles; ``switching`` (a :class:`kane.realtime.c_switching.SwitchContext`, with
    ``stepper`` None): the switching plant's period steps instead. Raises KaneError when a piece is not compiled
    (the caller takes the Python path)."""

    def __init__(self, *, stepper, coupler, index, t0, period, n_periods, substeps, every, virtual, spin,
                 timeout_periods, priority, dev_cap, row_cap, stat_cap, max_force, switching=None):
        ffi, lib = period_library()
        fn, ufull = coupler._fn, coupler._u_full
        if not isinstance(fn, CFunction) or (coupler._full and not isinstance(ufull, CFunction)):
            raise KaneError("C period: the coupler's point is not compiled to C")
        self.ffi, self.lib = ffi, lib
        c = self.c = ffi.new("kane_period *")
        rot = bool(coupler.rotational)
        nq, nu = fn.sizes["nq"], fn.sizes["nu"]
        x, pc = stepper.buffers if switching is None else (switching.state, np.zeros(1))
        self._keep = [x, pc, switching]
        c.n_periods, c.substeps, c.every, c.nq, c.nu, c.rot = n_periods, substeps, every, nq, nu, int(rot)
        c.virtual_clock, c.priority, c.timeout_periods = int(virtual), priority, timeout_periods
        for i, j in enumerate(index):
            c.idx[i] = int(j)
        c.t0, c.period, c.spin = t0, period, spin
        c.k, c.b, c.kr, c.br = coupler._k, coupler._b, coupler._kr, coupler._br
        c.max_force, c.max_torque = max_force, coupler.max_torque
        if switching is None:
            sfn = stepper.fn
            c.step_fn = ffi.cast("void *", _address(sfn.ffi, sfn.lib.kane_step))
            c.deriv_fn = ffi.cast("void *", _address(sfn.ffi, sfn.lib.kane_f))
        else:
            c.sw_fn, c.sw, c.mode_now = (ffi.cast(kind, a) for kind, a in zip(("void *", "void *", "double *"),
                                                                               switching.addresses()))
        c.point_fn = ffi.cast("void *", _address(fn.ffi, fn.lib.kane_f))
        c.x, c.step_pc = self._ptr(x), self._ptr(pc)
        p = np.ascontiguousarray(coupler._p, dtype=float)
        c.point_pc = ffi.cast("double *", _address(fn.ffi, self._hold(fn.constants(p))))
        c.has_ufull = int(coupler._full)
        if coupler._full:
            c.ufull_fn = ffi.cast("void *", _address(ufull.ffi, ufull.lib.kane_f))
            c.ufull_pc = ffi.cast("double *", _address(ufull.ffi, self._hold(ufull.constants(p))))
            c.ubuf = self._ptr(np.zeros(ufull.sizes["nout"] + 1))
        self.point_w = np.append(np.asarray(coupler._w, dtype=float), 0.0)
        c.point_w = self._ptr(self.point_w)
        c.pout = self._ptr(np.zeros(18 if rot else 6))
        c.qx, c.qdot, c.deriv_out = (self._ptr(np.zeros(n + 1)) for n in (nq, nq, 0 if switching else sfn.sizes["nout"]))
        self.device = np.zeros((max(1, dev_cap), DEVICE_WIDTH))
        c.dev, c.dev_cap = self._ptr(self.device), max(1, dev_cap)
        self.row_width = (ROW_POSE if rot else ROW_POINT) + nq + nu
        self.rows = np.zeros((max(1, row_cap), self.row_width))
        c.rows = self._ptr(self.rows) if row_cap else ffi.NULL
        c.row_width, c.row_cap = self.row_width, max(1, row_cap)
        self.compute, self.late = np.zeros(max(1, stat_cap)), np.zeros(max(1, stat_cap))
        c.compute, c.late, c.stat_cap = self._ptr(self.compute), self._ptr(self.late), max(1, stat_cap)
        self.edges = np.array(JITTER_EDGES_S, dtype=float)
        c.edges, c.n_edges = self._ptr(self.edges), len(self.edges)
        self.late_hist = np.zeros(len(self.edges) - 1, dtype=np.int64)
        self.compute_hist = np.zeros(len(self.edges) - 1, dtype=np.int64)
        c.late_hist = ffi.cast("long *", self._ptr(self.late_hist))
        c.compute_hist = ffi.cast("long *", self._ptr(self.compute_hist))
        c.status = 4
        self.produced = 0  # device slots filled (Python's copy of c.dev_produced)

    def _ptr(self, a: np.ndarray):
        self._keep.append(a)
        return self.ffi.cast("double *", self.ffi.from_buffer(a))

    def _hold(self, cdata):
        self._keep.append(cdata)
        return cdata

    # ---- the device ring (Python produces) -------------------------------------------------------------------
    def fill(self, device, rot: bool, t0: float, period: float, until: int) -> int:
        """Fill the device ring's slots up to period ``until`` (exclusive, and at most one ring ahead of the C
        loop) with ``device.read(t)`` at t = t0 + k T, each checked as the Python period checks it (status used,
        refused or missing), and publish them; returns the slots filled now. A :class:`Replay` (its own ``read``)
        is read and checked as one block (:meth:`Replay.read_block`, :func:`check_samples`: the same slots)."""
        c, ring = self.c, self.device
        done = self.lib.kane_load(self.ffi.addressof(c, "periods"))
        until = min(until, done + ring.shape[0])
        k0 = self.produced
        block = isinstance(device, Replay) and type(device).read is Replay.read
        if block and until > k0:
            self._fill_block(device, rot, t0, period, k0, until)
        for k in range(k0, k0 if block else until):
            t = t0 + k * period
            try:
                sample = device.read(t)
            except Exception:  # a device that fails to answer is a missing sample, as in the Python period
                sample = None
            slot = ring[k % ring.shape[0]]
            slot[:] = np.nan
            if sample is None:
                slot[0] = SAMPLE_MISSING
                continue
            why = check_sample(sample, device.workspace, rot)
            slot[0] = SAMPLE_USED if why is None else SAMPLE_REFUSED
            if why is None:
                slot[1] = float(sample.t)
                slot[2:5], slot[5:8] = sample.position, sample.velocity
                if rot:
                    slot[8:17] = np.asarray(sample.orientation, dtype=float).reshape(9)
                    slot[17:20] = sample.angular_velocity
        if until > k0:
            self.produced = until
            self.lib.kane_store(self.ffi.addressof(c, "dev_produced"), until)
        return max(0, until - k0)

    def _fill_block(self, device, rot: bool, t0: float, period: float, k0: int, until: int) -> None:
        """Slots k0..until - 1 of the ring from one :meth:`Replay.read_block` (t = t0 + k T as ``fill`` computes
        it, k converted to float exactly), checked by :func:`check_samples`."""
        ring = self.device
        k = np.arange(k0, until)
        got = device.read_block(t0 + k.astype(float) * period)
        ok = check_samples(got, device.workspace, rot)
        slots = np.full((k.shape[0], ring.shape[1]), np.nan)
        slots[:, 0] = np.where(got.present, np.where(ok, SAMPLE_USED, SAMPLE_REFUSED), SAMPLE_MISSING)
        slots[ok, 1] = got.t[ok]
        slots[ok, 2:5], slots[ok, 5:8] = got.position[ok], got.velocity[ok]
        if rot and ok.any():  # (a Replay without a pose has none: every sample refused)
            slots[ok, 8:17] = got.orientation[ok].reshape(-1, 9)
            slots[ok, 17:20] = got.angular_velocity[ok]
        ring[k % ring.shape[0]] = slots

    # ---- the log ring (Python consumes) ----------------------------------------------------------------------
    def drain(self, sink) -> int:
        """Hand every published row not yet taken to ``sink(rows)`` (a view (R, width), in order, possibly in two
        pieces where the ring wraps), then release their slots; returns the rows taken."""
        c, ffi, lib = self.c, self.ffi, self.lib
        head = lib.kane_load(ffi.addressof(c, "head"))
        tail = c.tail
        cap = self.rows.shape[0]
        start = tail
        while tail < head:
            i0 = tail % cap
            i1 = min(cap, i0 + head - tail)
            sink(self.rows[i0:i1])
            tail += i1 - i0
        if tail > start:
            lib.kane_store(ffi.addressof(c, "tail"), tail)
        return tail - start

    def stop(self) -> None:
        """Ask the C loop to stop at its next period."""
        self.lib.kane_store(self.ffi.addressof(self.c, "stop"), 1)

    def running(self) -> bool:
        return bool(self.lib.kane_load(self.ffi.addressof(self.c, "running")))
