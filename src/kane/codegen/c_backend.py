"""C backend: a :class:`Program` printed as C99, compiled by the system C compiler and loaded with cffi (ABI mode).

The generated library (see :mod:`.c_cache` for the compiler, its flags and the on-disk cache) exports

* ``kane_prelude(p, c)``: the quantities of parameters only, computed once per parameter vector into ``c``;
* ``kane_eval(t, q, u, p, c, w, out)``: every output at one state, straight-line code with doubles, written into
  ``out`` (the outputs flattened in row-major order, one after the other); ``linear_solve`` appends M^-1 f by the
  unrolled LDL^T factorization of the numpy backend (structural zeros skipped);
* ``kane_batch(...)``: the same for B states in a loop in C, split over threads when the batch is large;
* ``kane_step(n, dt, t, q, u, p, c, w)``: with ``rk4=True`` (outputs q' then u'), n classical Runge-Kutta steps in
  place, allocating nothing; cffi releases the GIL while it runs;
* ``kane_source_hash()``: the cache key the library was built for, checked when it is loaded.

Every symbol is printed as a generated name (``q[k]``, ``u[k]``, ``p[k]``, ``w[k]``, ``c[k]``, ``z_k``), never by
a user's name: a symbol the printer does not know is an error.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import sympy as sp
from sympy.printing.c import C99CodePrinter

from ..errors import KaneError
from .c_cache import CCompileError, build_library, find_compiler, library_key
from .numpy_backend import _ldlt_lines
from .program import Program

__all__ = ["BACKENDS", "BackendNotice", "CFunction", "CPrinter", "CCompileError", "Stepper", "c_source",
           "compiler_available", "select_backend"]

_CDEF = """
const char *kane_source_hash(void);
void kane_sizes(long *sizes);
void kane_prelude(void *pc);
void kane_eval(void *x, void *pc, void *out);
void kane_batch(long B, void *t, long st, void *q, void *u, long su, void *p, long sp, void *c, void *w, long sw,
                void *out, int nthreads);
long kane_step(long n, double dt, void *x, void *pc);
"""
_ffi = None
_libs: dict = {}
_F64 = np.dtype(np.float64)
_lock = threading.Lock()


def _cffi():
    global _ffi
    if _ffi is None:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        _ffi = ffi
    return _ffi


def compiler_available() -> tuple[bool, str]:
    """(whether a C compiler is found, which one or why not)."""
    cmd, why = find_compiler()
    return cmd is not None, why


BACKENDS = ("c", "numba", "numpy")


class BackendNotice(UserWarning):
    """One line saying which backend was taken instead of the one asked for (or the default), and why."""


def _numba_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def select_backend(backend: str | None = None, *, why: str | None = None) -> tuple[str, str | None]:
    """(the backend to use, a one-line notice or None). ``None`` or "auto" means C when a compiler is found, else
    numba when installed, else numpy; ``why`` (e.g. a compiler's error) forces the fallback from C."""
    if backend not in (None, "auto") + BACKENDS:
        raise KaneError(f"backend {backend!r}; expected one of {', '.join(BACKENDS)} (or None for the default)")
    if backend not in (None, "auto"):
        return backend, None
    if why is None:
        found, which = compiler_available()
        if found:
            return "c", None
        why = which
    fallback = "numba" if _numba_available() else "numpy"
    return fallback, f"kane: using the {fallback} backend instead of C: {why}"


class CPrinter(C99CodePrinter):
    """C99 with generated names only: ``names`` maps every symbol the expressions may contain to its C text."""

    def __init__(self, names: dict):
        super().__init__({"strict": True})
        self.names = names
        self.math_macros = {}

    def doprint(self, expr, assign_to=None):
        try:
            return super().doprint(expr, assign_to)
        except KaneError:
            raise
        except Exception as exc:  # sympy's PrintMethodNotImplementedError and the like
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CCompileError(f"C backend: an expression cannot be written as C ({first})") from None

    def _print_Symbol(self, expr):
        try:
            return self.names[expr]
        except KeyError:
            raise KaneError(f"C backend: the program uses a symbol that is not one of its inputs or assignments "
                            f"({len(self.names)} known)") from None

    _print_Dummy = _print_Symbol

    def _print_NumberSymbol(self, expr):
        return repr(float(expr))

    _print_Pi = _print_Exp1 = _print_EulerGamma = _print_GoldenRatio = _print_Catalan = _print_NumberSymbol

    def _print_Pow(self, expr, rational=False):
        b, e = expr.args
        if e.is_Integer and 1 <= abs(int(e)) <= 8:  # integer powers as products
            prod = "*".join([f"({self._print(b)})"] * abs(int(e)))
            return f"({prod})" if e > 0 else f"(1.0/({prod}))"
        if e == sp.Rational(1, 2):
            return f"sqrt({self._print(b)})"
        if e == sp.Rational(-1, 2):
            return f"(1.0/sqrt({self._print(b)}))"
        return f"pow({self._print(b)}, {self._print(sp.Float(e) if e.is_Number else e)})"


def _c_lines(lines, prefix="    const double "):
    """The numpy backend's unrolled LDL^T lines (``name = expr``) as C declarations."""
    return [f"{prefix}{ln.strip()};" for ln in lines]


def c_source(program: Program, outputs, linear_solve=None, rk4=False):
    """(C source with a ``@KEY@`` placeholder, sizes dict, output layout [(name, offset, shape)]) of ``outputs``."""
    outputs = [o for o in outputs if o in program.outputs]
    needed = list(outputs) + ([linear_solve[0], linear_solve[1]] if linear_solve else [])
    prog = program.select(dict.fromkeys(needed))
    groups = {g: tuple(prog.inputs.get(g, ())) for g in ("t", "q", "u", "params", "inputs")}
    names = {}
    for g, arr in (("q", "q"), ("u", "u"), ("params", "p"), ("inputs", "w")):
        names.update({s: f"{arr}[{k}]" for k, s in enumerate(groups[g])})
    names.update({s: "t" for s in groups["t"]})
    printer = CPrinter(names)
    const = set(groups["params"])
    pre, body, nconst = [], [], 0
    for k, (s, e) in enumerate(prog.assignments):
        text = printer.doprint(e)
        if e.free_symbols <= const:
            const.add(s)
            names[s] = f"c[{nconst}]"
            pre.append(f"    c[{nconst}] = {text};")
            nconst += 1
        else:
            names[s] = f"z_{k}"
            body.append(f"    const double z_{k} = {text};")
    layout, off, outs = [], 0, []
    for name in outputs:
        m = prog.outputs[name]
        for idx, e in enumerate(m):
            outs.append(f"    out[{off + idx}] = {printer.doprint(e) if e != 0 else '0.0'};")
        layout.append((name, off, prog.shape(name)))
        off += len(m)
    if linear_solve is not None:
        M, f = prog.outputs[linear_solve[0]], prog.outputs[linear_solve[1]]
        n = M.shape[0]
        for i in range(n):
            for j in range(i + 1):
                if M[i, j] != 0:
                    outs.append(f"    const double m{i}_{j} = {printer.doprint(M[i, j])};")
            outs.append(f"    const double f{i} = {printer.doprint(f[i])};")
        outs += _c_lines(_ldlt_lines(n, lambda i, j: M[max(i, j), min(i, j)] == 0,
                                     lambda i, j: f"m{max(i, j)}_{min(i, j)}", lambda i: f"f{i}", ""))
        outs += [f"    out[{off + i}] = x{i};" for i in range(n)]
        layout.append((linear_solve[2], off, (n,)))
        off += n
    sizes = {"nq": len(groups["q"]), "nu": len(groups["u"]), "np": len(groups["params"]),
             "nw": len(groups["inputs"]), "nc": nconst, "nout": off}
    if rk4 and (off != sizes["nq"] + sizes["nu"] or [n for n, _, _ in layout][:1] != ["qdot"]):
        raise KaneError("C backend: rk4 needs the outputs q' (n_q) then u' (n_u)")
    src = _TEMPLATE.format(**sizes, pre="\n".join(pre), body="\n".join(body + outs),
                           step=_STEP if rk4 else "long kane_step(long n, double dt, double *x, const double *pc) { return -1; }")
    return src, sizes, layout


_TEMPLATE = r"""/* generated by kane from a straight-line Program: doubles, IEEE semantics */
#include <math.h>
#include <pthread.h>
#define NQ {nq}
#define NU {nu}
#define NP {np}
#define NW {nw}
#define NC {nc}
#define NOUT {nout}

const char *kane_source_hash(void) {{ return "@KEY@"; }}

void kane_sizes(long *s) {{ s[0] = NQ; s[1] = NU; s[2] = NP; s[3] = NW; s[4] = NC; s[5] = NOUT; }}

/* pc: the parameters (NP) then the constants (NC) that the prelude computes from them */
void kane_prelude(double *pc) {{
    const double *restrict p = pc;
    double *restrict c = pc + NP;
    (void)p; (void)c;
{pre}
}}

#ifdef __GNUC__
__attribute__((noinline))
#endif
static void kane_kernel(double t, const double *restrict q, const double *restrict u, const double *restrict p,
                        const double *restrict c, const double *restrict w, double *restrict out) {{
    (void)t; (void)q; (void)u; (void)p; (void)c; (void)w;
{body}
}}

/* x: t, q (NQ), u (NU), inputs (NW) of one state */
void kane_eval(const double *x, const double *pc, double *out) {{
    kane_kernel(x[0], x + 1, x + 1 + NQ, pc, pc + NP, x + 1 + NQ + NU, out);
}}

typedef struct {{
    long b0, b1, st, su, sp, sw;
    const double *t, *q, *u, *p, *c, *w;
    double *out;
}} kane_job;

static void *kane_run(void *arg) {{
    const kane_job *j = (const kane_job *)arg;
    double cl[NP + NC + 1];
    for (long b = j->b0; b < j->b1; ++b) {{
        const double *c = j->c;
        if (j->sp) {{
            for (int i = 0; i < NP; ++i) cl[i] = j->p[b * j->sp + i];
            kane_prelude(cl);
            c = cl + NP;
        }}
        kane_kernel(j->t[b * j->st], j->q + b * NQ, j->u + b * j->su, j->p + b * j->sp, c, j->w + b * j->sw,
                  j->out + b * NOUT);
    }}
    return 0;
}}

void kane_batch(long B, const double *t, long st, const double *q, const double *u, long su, const double *p,
                long sp, const double *c, const double *w, long sw, double *out, int nthreads) {{
    kane_job jobs[64];
    pthread_t tid[64];
    int started[64];
    if (nthreads < 1) nthreads = 1;
    if (nthreads > 64) nthreads = 64;
    if (nthreads > B) nthreads = B > 0 ? (int)B : 1;
    for (int k = 0; k < nthreads; ++k) {{
        kane_job jb = {{B * k / nthreads, B * (k + 1) / nthreads, st, su, sp, sw, t, q, u, p, c, w, out}};
        jobs[k] = jb;
        started[k] = k > 0 && pthread_create(&tid[k], 0, kane_run, &jobs[k]) == 0;
    }}
    kane_run(&jobs[0]);
    for (int k = 1; k < nthreads; ++k) {{
        if (started[k]) pthread_join(tid[k], 0);
        else kane_run(&jobs[k]);
    }}
}}

{step}
"""

_STEP = r"""/* n classical RK4 steps of q' = qdot, u' = udot in place; returns n, or the index of a step whose result was
   not finite (t, q, u then hold the state before it). */
long kane_step(long n, double dt, double *xs, const double *pc) {
    double *t = xs, *q = xs + 1, *u = xs + 1 + NQ;
    const double *w = xs + 1 + NQ + NU, *p = pc, *c = pc + NP;
    double k1[NOUT + 1], k2[NOUT + 1], k3[NOUT + 1], k4[NOUT + 1], x[NQ + NU + 1], y[NQ + NU + 1];
    for (long s = 0; s < n; ++s) {
        int i;
        kane_kernel(*t, q, u, p, c, w, k1);
        for (i = 0; i < NQ; ++i) x[i] = q[i] + 0.5 * dt * k1[i];
        for (i = 0; i < NU; ++i) x[NQ + i] = u[i] + 0.5 * dt * k1[NQ + i];
        kane_kernel(*t + 0.5 * dt, x, x + NQ, p, c, w, k2);
        for (i = 0; i < NQ + NU; ++i) y[i] = (i < NQ ? q[i] : u[i - NQ]) + 0.5 * dt * k2[i];
        kane_kernel(*t + 0.5 * dt, y, y + NQ, p, c, w, k3);
        for (i = 0; i < NQ + NU; ++i) x[i] = (i < NQ ? q[i] : u[i - NQ]) + dt * k3[i];
        kane_kernel(*t + dt, x, x + NQ, p, c, w, k4);
        int ok = 1;
        for (i = 0; i < NQ + NU; ++i) {
            y[i] = (i < NQ ? q[i] : u[i - NQ]) + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            ok &= isfinite(y[i]) != 0;
        }
        if (!ok) return s;
        for (i = 0; i < NQ; ++i) q[i] = y[i];
        for (i = 0; i < NU; ++i) u[i] = y[NQ + i];
        *t += dt;
    }
    return n;
}
"""


def _load(source: str):
    """(the loaded library of ``source``, whether the compiler ran), memoized in this process by cache key."""
    cmd, why = find_compiler()
    if cmd is None:
        raise CCompileError(f"C backend: {why}")
    key = library_key(source, cmd)
    with _lock:
        lib = _libs.get(key)
        if lib is not None:
            return lib, False
        ffi = _cffi()
        for attempt in range(2):
            path, built = build_library(lambda k: source.replace("@KEY@", k), key, cmd)
            try:
                lib = ffi.dlopen(str(path))
                if ffi.string(lib.kane_source_hash()).decode() == key:
                    break
            except (OSError, AttributeError):
                pass
            lib = None
            if built or attempt:
                raise CCompileError(f"C backend: the library {path} does not load or is not the one built")
            path.unlink(missing_ok=True)  # a valid checksum but the wrong library: build again
        _libs[key] = lib
        return lib, built


class CFunction:
    """A Program's outputs compiled to C: ``fn(t, q, u, params, inputs) -> tuple of arrays`` as the numpy backend's
    functions. A 1-D q is one state; a 2-D q (B, n_q) is a batch (u, inputs, t and params broadcast along it),
    evaluated in one call into C, split over ``threads`` (default: the cores, when the batch is large).

    Arguments are converted once (float64, contiguous) and the output array is the only allocation of a call; the
    constants of a parameter vector are computed by the C prelude when the vector changes.
    """

    def __init__(self, program: Program, outputs, *, linear_solve=None, rk4=False, threads=None):
        src, sizes, layout = c_source(program, outputs, linear_solve, rk4)
        self.source, self.sizes, self.layout = src, sizes, tuple(layout)
        self.outputs = tuple(n for n, _, _ in layout)
        self.lib, self.built = _load(src)
        self.ffi = ffi = _cffi()
        self.threads = threads or os.cpu_count() or 1
        nq, nu, nw = sizes["nq"], sizes["nu"], sizes["nw"]
        self._nout = sizes["nout"]
        self._pc = np.zeros(sizes["np"] + sizes["nc"] + 1)  # parameters, then the prelude's constants
        self._pc_ptr = ffi.cast("double *", ffi.from_buffer(self._pc))
        self._x = ffi.new("double[]", 2 + nq + nu + nw)  # t, q, u, inputs of one state
        self._xq, self._xu, self._xw = ffi.addressof(self._x, 1), ffi.addressof(self._x, 1 + nq), \
            ffi.addressof(self._x, 1 + nq + nu)
        self._bytes = (8 * nq, 8 * nu, 8 * sizes["np"], 8 * nw)
        self._key = None
        self._single = len(layout) == 1 and len(layout[0][2]) == 1
        self._views = tuple((a, a + int(np.prod(sh)), sh) for _, a, sh in layout)

    def constants(self, params):
        """Load a parameter vector (n_p,) and compute its constants by the C prelude, when it changed."""
        key = params.tobytes()
        if key != self._key:
            if len(key) != self._bytes[2]:
                raise KaneError(f"expected {self.sizes['np']} parameters, got {len(key) // 8}")
            self._pc[:len(params)] = params
            self.lib.kane_prelude(self._pc_ptr)
            self._key = key
        return self._pc_ptr

    def __call__(self, t, q, u, params, inputs):
        if (q.__class__ is np.ndarray and q.dtype is _F64 and q.ndim == 1 and u.__class__ is np.ndarray
                and u.dtype is _F64 and u.ndim == 1 and params.__class__ is np.ndarray and params.ndim == 1
                and np.ndim(inputs) == 1 and q.flags.c_contiguous and u.flags.c_contiguous):
            nbq, nbu, nbp, nbw = self._bytes
            if q.nbytes != nbq or u.nbytes != nbu:
                raise KaneError(f"expected q with {nbq // 8} and u with {nbu // 8} entries, got shapes "
                                f"{q.shape} and {u.shape}")
            ffi = self.ffi
            x = self._x
            x[0] = t
            ffi.memmove(self._xq, q, nbq)
            ffi.memmove(self._xu, u, nbu)
            if nbw:
                w = np.ascontiguousarray(inputs, dtype=np.float64)
                if w.nbytes != nbw:
                    raise KaneError(f"expected {nbw // 8} inputs, got shape {w.shape}")
                ffi.memmove(self._xw, w, nbw)
            pc = self.constants(params if params.dtype is _F64 else params.astype(np.float64))
            out = np.empty(self._nout)
            self.lib.kane_eval(x, pc, ffi.from_buffer(out))
            if self._single:
                return (out,)
            return tuple(out[a:b].reshape(sh) for a, b, sh in self._views)
        s = self.sizes
        q, u, p, w = (self._arr(x, s[k], k) for x, k in ((q, "nq"), (u, "nu"), (params, "np"), (inputs, "nw")))
        if q.ndim == 1 and u.ndim == 1 and p.ndim == 1 and w.ndim == 1:
            return self(t, q, u, p, w)
        return self._batch(t, q, u, p, w)

    @staticmethod
    def _arr(x, n, what):
        a = np.ascontiguousarray(x, dtype=np.float64)
        if a.ndim == 0 or a.ndim > 2 or (a.shape[-1] != n and not (n == 0 and a.size == 0)):
            raise KaneError(f"expected {what[1:]} with {n} entries (last axis), got shape {a.shape}")
        return a.reshape(a.shape[:-1] + (n,))

    def _batch(self, t, q, u, p, w):
        ffi, s = self.ffi, self.sizes
        B = max(x.shape[0] for x in (q, u, p, w) if x.ndim == 2)
        if q.ndim == 1:
            q = np.broadcast_to(q, (B, s["nq"]))
        q = np.ascontiguousarray(q)

        def rows(x, n):  # (array, stride): a 1-D argument is shared by every state (stride 0)
            if x.ndim == 1:
                return x, 0
            if x.shape[0] != B:
                raise KaneError(f"batch arguments of different lengths: {x.shape[0]} and {B}")
            return x, n
        u, su = rows(u, s["nu"])
        p, sp_ = rows(p, s["np"])
        w, sw = rows(w, s["nw"])
        tt = np.asarray(t, dtype=np.float64)
        tt, st = (np.ascontiguousarray(np.broadcast_to(tt, (B,))), 1) if tt.ndim else (tt.reshape(1), 0)
        c = self.constants(p) + s["np"] if not sp_ else self._pc_ptr
        out = np.empty((B, self._nout))
        threads = max(1, min(self.threads, B // 2048))
        fb = ffi.from_buffer
        self.lib.kane_batch(B, fb(tt), st, fb(q), fb(u), su, fb(p), sp_, c, fb(w), sw, fb(out), threads)
        return tuple(out[:, a:a + int(np.prod(sh))].reshape((B,) + sh) for _, a, sh in self.layout)

    def stepper(self, t, q, u, params, inputs=None) -> "Stepper":
        """A :class:`Stepper` at (t, q, u) with these parameters (needs ``rk4=True``)."""
        if not self.source.count("kane_step(long n, double dt, double *xs"):
            raise KaneError("C backend: this function was compiled without rk4=True; it has no step()")
        return Stepper(self, t, q, u, params, inputs)


class Stepper:
    """Fixed-step RK4 of q' = qdot, u' = udot in C for the real-time loop: ``step(n, dt, inputs)`` advances n steps
    in place, allocating nothing, with the GIL released while it runs. ``t``, ``q`` (n_q,), ``u`` (n_u,) and
    ``inputs`` (n_w,) are views of the state it advances (write into them to reset it)."""

    def __init__(self, fn: CFunction, t, q, u, params, inputs=None):
        s, ffi = fn.sizes, fn.ffi
        nq, nu, nw = s["nq"], s["nu"], s["nw"]
        self.fn = fn
        self._x = np.zeros(2 + nq + nu + nw)
        self._pc = np.zeros(s["np"] + s["nc"] + 1)
        self._xp, self._pcp = ffi.from_buffer(self._x), ffi.from_buffer(self._pc)
        self.q, self.u, self.inputs = self._x[1:1 + nq], self._x[1 + nq:1 + nq + nu], self._x[1 + nq + nu:-1]
        self.q[:], self.u[:], self._x[0] = q, u, t
        if inputs is not None:
            self.inputs[:] = inputs
        fn.constants(np.ascontiguousarray(params, dtype=np.float64))
        self._pc[:] = fn._pc  # this stepper's own copy: other calls of fn may load other parameters

    @property
    def t(self) -> float:
        return float(self._x[0])

    def step(self, n: int, dt: float, inputs=None) -> float:
        """Advance n RK4 steps of dt [s] (with ``inputs`` (n_w,) held for them, if given); returns the time. A step
        whose result is not finite stops the run with a KaneError, the state left at the last good step."""
        if inputs is not None:
            self.inputs[:] = inputs
        done = self.fn.lib.kane_step(n, dt, self._xp, self._pcp)
        if done != n:
            raise KaneError(f"step: the state is not finite after the step from t = {self._x[0]:.9g} "
                            f"(step {done + 1} of {n}, dt = {dt:g}); q, u hold the last finite state")
        return self._x[0]
