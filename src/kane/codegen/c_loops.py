"""The simulation loops in C (issue 12, item 3): a :class:`CLoop` drives RK4, semi-implicit Euler or DOPRI5 (the
source, in :mod:`.c_loops_text`, follows :mod:`kane.simulate.fixed_step` and :mod:`kane.simulate.dopri5`
operation by operation) over the right-hand side of a :class:`CFunction` compiled with ``rk4=True`` (outputs q'
then u'), sampling on a grid with the energy and watching compiled event functions, all in C.

The loops are one small library, compiled once and cached like every other (:mod:`.c_cache`); they call the
model's libraries through their ``kane_f`` entry points, so a new model compiles only its own equations.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..errors import KaneError
from .c_backend import CFunction, _cffi, load_library
from .c_loops_text import SOURCE

__all__ = ["CLoop", "LoopStatus", "LOOP_METHODS"]

_SOURCE = SOURCE
_CDEF = """
typedef void (*kane_fn)(double t, const double *q, const double *u, const double *w, const double *pc,
                        double *out);
typedef struct {
    long nq, nu, nev, method;
    kane_fn f, fe, fg;
    const double *w, *pc, *pce, *pcg;
    double t, t_bound;
    double *x, *x_old;
    double t_old;
    double rtol, max_step, min_step, h, err_old, dt, t_start, first_step;
    const double *atol;
    long rejected_last, k;
    double *K, *Kd;
    double *f0, *f1;
    long f0_valid, f1_valid;
    long n_fev, n_acc, n_rej;
    long sample_every_step, grid_k, sampling_open, ns, cap;
    double out_dt, grid_t0;
    double *samples;
    double *g, *g1, *work;
    long fail;
    double fail_t, fail_h, fail_floor;
    long step_limit;
} kane_sim;
const char *kane_source_hash(void);
int kane_sim_start(kane_sim *s);
void kane_sim_dense(kane_sim *s, double t, double *out);
int kane_sim_advance(kane_sim *s, double t_end, int one_step);
"""
#: the methods of the loops, by the value of kane.options.Method
LOOP_METHODS = {"dopri5": 0, "rk4": 1, "semi_implicit_euler": 2}


class LoopStatus:
    """What ``CLoop.advance`` returns: why C gave control back."""

    END, FULL, STEP, FAILED = 0, 1, 2, 3


def _library():
    key = hashlib.sha256(_SOURCE.encode()).digest()
    return load_library(b"kane-loops\0" + key, lambda: _SOURCE, _CDEF)[0]


def _pointer(ffi, fn: CFunction):
    return ffi.cast("kane_fn", int(fn.ffi.cast("uintptr_t", fn.lib.kane_f)))


class CLoop:
    """The state of one compiled run: ``rhs`` (CFunction with ``rk4=True``), ``energy`` (CFunction of outputs
    kinetic, potential, or None), ``events`` (CFunction of one vector output g (n_ev,), or None) with their
    parameter vectors; ``method`` a name of LOOP_METHODS; ``t`` [s], ``x`` (n,) = concat(q, u); ``inputs`` (n_w,)
    held constant. Adaptive options (``rtol``, ``atol``, ``max_step``, ``min_step``, ``first_step`` [s]) or the
    fixed step ``dt`` [s]; samples every ``output_dt`` [s] from ``grid_t0`` (every step when None), at most
    ``capacity`` per call of :meth:`advance`. Arrays ``x``, ``x_old``, ``g``, ``samples`` are views of C's state."""

    def __init__(self, rhs: CFunction, params, inputs, *, method: str, t: float, x, t_bound: float,
                 energy: CFunction | None = None, energy_params=None, events: CFunction | None = None,
                 event_params=None, rtol=1e-8, atol=1e-10, dt=None, max_step=np.inf, min_step=0.0,
                 first_step=None, output_dt=None, grid_t0=0.0, capacity=1024):
        if not rhs.rk4:
            raise KaneError("CLoop needs the right-hand side compiled with rk4=True (outputs q' then u')")
        self.lib = _library()
        self.ffi = ffi = _cffi(_CDEF)
        sz = rhs.sizes
        nq, nu = sz["nq"], sz["nu"]
        n = nq + nu
        nev = 0 if events is None else events.sizes["nout"]
        self.n, self.n_q = n, nq
        keep = self._keep = []

        def buf(a):
            a = np.ascontiguousarray(a, dtype=np.float64)
            keep.append(a)
            return a, ffi.cast("double *", ffi.from_buffer(a))

        def consts(fn, p):  # this loop's own copy of the parameters and the prelude's constants
            return buf(fn.parameter_state(np.ascontiguousarray(p, dtype=np.float64))[2].copy())[1]

        s = self.s = ffi.new("kane_sim *")
        s.nq, s.nu, s.nev, s.method = nq, nu, nev, LOOP_METHODS[method]
        s.f, s.pc = _pointer(ffi, rhs), consts(rhs, params)
        self.inputs, s.w = buf(np.concatenate([np.asarray(inputs, dtype=float).reshape(-1), [0.0]]))
        if energy is not None:
            s.fe, s.pce = _pointer(ffi, energy), consts(energy, energy_params)
        if events is not None:
            s.fg, s.pcg = _pointer(ffi, events), consts(events, event_params)
        self.x, s.x = buf(np.array(x, dtype=float))
        self.x_old, s.x_old = buf(np.zeros(n))
        self.atol, s.atol = buf(np.broadcast_to(np.asarray(atol, dtype=float), (n,)))
        self.K, s.K = buf(np.zeros((7, n)))
        self.Kd, s.Kd = buf(np.zeros((7, n)))
        self.f0, s.f0 = buf(np.zeros(n))
        self.f1, s.f1 = buf(np.zeros(n))
        self.g, s.g = buf(np.zeros(max(nev, 1)))
        _, s.g1 = buf(np.zeros(max(nev, 1)))
        _, s.work = buf(np.zeros(4 * n + 8))
        self.capacity = int(capacity)
        self.samples, s.samples = buf(np.zeros((self.capacity, n + 2)))
        s.cap = self.capacity
        s.t, s.t_bound = float(t), float(t_bound)
        s.rtol, s.max_step, s.min_step = float(rtol), float(max_step), float(min_step)
        s.first_step = float(first_step) if first_step else 0.0
        s.dt = float(dt) if dt is not None else 0.0
        s.sample_every_step = output_dt is None
        s.out_dt = float(output_dt) if output_dt is not None else 0.0
        s.grid_t0, s.grid_k = float(grid_t0), 1
        s.step_limit = -1
        self._scratch = np.zeros(n)
        self._scratch_p = ffi.cast("double *", ffi.from_buffer(self._scratch))
        self.started = self.lib.kane_sim_start(s) == 0

    def restart(self, t: float, x) -> None:
        """Continue from (t [s], x (n,)) (after a projection, an event, an impulse); DOPRI5 keeps its step size.
        ``started`` says whether DOPRI5 found a first step (else ``s.fail`` is 4)."""
        s = self.s
        if s.method == 0:
            s.first_step = s.h
        s.t = float(t)
        self.x[:] = x
        self.started = self.lib.kane_sim_start(s) == 0

    def advance(self, t_end: float, one_step: bool = False) -> int:
        """Run in C towards ``t_end`` [s]; returns a LoopStatus. Samples taken lie in ``samples[:taken]``; call
        :meth:`clear_samples` after storing them."""
        return self.lib.kane_sim_advance(self.s, float(t_end), bool(one_step))

    @property
    def taken(self) -> int:
        return int(self.s.ns)

    def clear_samples(self) -> None:
        self.s.ns = 0

    def dense(self, t: float) -> np.ndarray:
        """x(t) (n,) on the last step's dense output (evaluating f at its ends when the Hermite form needs it)."""
        self.lib.kane_sim_dense(self.s, float(t), self._scratch_p)
        return self._scratch.copy()
