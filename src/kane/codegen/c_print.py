"""Printing a :class:`Program` as C99 for the C backend (see :mod:`.c_backend`): generated names only, the
parameter-only prelude, the straight-line kernel, the unrolled LDL^T solve, the batch loop over threads, the RK4
step of the real-time loop and ``kane_f`` (one right-hand side evaluation, called by the compiled simulation
loops of :mod:`.c_loops`)."""

from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter

from ..errors import KaneError
from .c_cache import CCompileError
from .numpy_backend import solve_lines
from .program import Program

__all__ = ["CPrinter", "c_source", "selected_program", "output_layout"]


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


def selected_program(program: Program, outputs, linear_solve):
    outputs = [o for o in outputs if o in program.outputs]
    needed = list(outputs) + ([linear_solve[0], linear_solve[1]] if linear_solve else [])
    return program.select(dict.fromkeys(needed)), outputs


def output_layout(prog: Program, outputs, linear_solve):
    layout, off = [], 0
    for name in outputs:
        layout.append((name, off, prog.shape(name)))
        off += len(prog.outputs[name])
    if linear_solve is not None:
        layout.append((linear_solve[2], off, (prog.outputs[linear_solve[0]].shape[0],)))
    return layout


def c_source(program: Program, outputs, linear_solve=None, rk4=False):
    """(C source with a ``@KEY@`` placeholder, sizes dict, output layout [(name, offset, shape)]) of ``outputs``."""
    prog, outputs = selected_program(program, outputs, linear_solve)
    groups = {g: tuple(prog.inputs.get(g, ())) for g in ("t", "q", "u", "params", "inputs")}
    names = {}
    for g, arr in (("q", "q"), ("u", "u"), ("params", "p"), ("inputs", "w")):
        names.update({s: f"{arr}[{k}]" for k, s in enumerate(groups[g])})
    names.update({s: "t" for s in groups["t"]})
    printer = CPrinter(names)
    const = set(groups["params"])
    constant = []
    for s, e in prog.assignments:
        constant.append(e.free_symbols <= const)
        if constant[-1]:
            const.add(s)
    split = len(constant) - sum(constant) > SPLIT_ABOVE  # long kernels: in parts, the z's in an array
    pre, body, nconst, nz = [], [], 0, 0
    for k, ((s, e), is_const) in enumerate(zip(prog.assignments, constant)):
        text = printer.doprint(e)
        if is_const:
            names[s] = f"c[{nconst}]"
            pre.append(f"    c[{nconst}] = {text};")
            nconst += 1
        elif split:
            names[s] = f"Z[{nz}]"
            body.append(f"    Z[{nz}] = {text};")
            nz += 1
        else:
            names[s] = f"z_{k}"
            body.append(f"    const double z_{k} = {text};")
    parts, n_solve = "", prog.outputs[linear_solve[0]].shape[0] if linear_solve is not None else 0
    if n_solve > LOOP_SOLVE_ABOVE:  # M's lower triangle by rows, then f: in the z's array (and its parts) if split
        M, f = prog.outputs[linear_solve[0]], prog.outputs[linear_solve[1]]
        entries = [M[i, j] for i in range(n_solve) for j in range(i + 1)] + list(f)
        arr, base = ("Z", nz) if split else ("A", 0)
        fill = [f"    {arr}[{base + k}] = {printer.doprint(e) if e != 0 else '0.0'};" for k, e in enumerate(entries)]
        if split:
            body += fill
            nz += len(entries)
        else:
            body += [f"    double A[{len(entries)}];"] + fill
    if split:  # the compiler's register allocation grows faster than the length of a function
        chunks = [body[i:i + SPLIT_PART] for i in range(0, len(body), SPLIT_PART)]
        parts = "".join(_PART.format(k=k, body="\n".join(c)) for k, c in enumerate(chunks))
        body = [f"    double Z[{nz}];  /* on the stack: {8 * nz} bytes */"]
        body += [f"    kane_part{k}(t, q, u, p, c, w, Z);" for k in range(len(chunks))]
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
        if n > LOOP_SOLVE_ABOVE:  # unrolled, the factorization is n^3 / 6 lines: the compiler's time and memory
            at = f"Z + {nz - len(entries)}" if split else "A"
            outs += [f"    double Lj[{n}];", f"    kane_ldlt({n}, {at}, {at} + {len(entries) - n}, out + {off}, Lj);"]
            parts = _LDLT + parts
        else:
            outs += _c_lines(solve_lines(M, f, printer.doprint))
            outs += [f"    out[{off + i}] = x{i};" for i in range(n)]
        layout.append((linear_solve[2], off, (n,)))
        off += n
    sizes = {"nq": len(groups["q"]), "nu": len(groups["u"]), "np": len(groups["params"]),
             "nw": len(groups["inputs"]), "nc": nconst, "nout": off}
    if rk4 and (off != sizes["nq"] + sizes["nu"] or [n for n, _, _ in layout][:1] != ["qdot"]):
        raise KaneError("C backend: rk4 needs the outputs q' (n_q) then u' (n_u)")
    src = _TEMPLATE.format(**sizes, pre="\n".join(pre), body="\n".join(body + outs), parts=parts,
                           step=_STEP if rk4 else _NO_STEP)
    return src, sizes, layout


#: kernels with more assignments than this are printed in parts of SPLIT_PART assignments
SPLIT_ABOVE, SPLIT_PART = 1500, 300
#: a linear solve of more unknowns than this is a loop over M's packed lower triangle (code of size n^2, not n^3)
LOOP_SOLVE_ABOVE = 24

_LDLT = """/* M x = f by M = L D L^T in place, right-looking: a (n (n + 1) / 2) holds M's lower triangle by rows and
   receives L below the diagonal (unit diagonal implied) and D on it; l (n) is workspace. Every entry receives the same
   operations in the same order as in the unrolled solve, and the updates of one step are independent (they
   pipeline and vectorize, where the sums of a left-looking loop would wait on each other). */
static void kane_ldlt(int n, double *restrict a, const double *restrict f, double *restrict x, double *restrict l) {
    for (int j = 0; j < n; ++j) {
        const double d = a[j * (j + 1) / 2 + j], id = 1.0 / d;
        for (int i = j + 1; i < n; ++i) l[i] = a[i * (i + 1) / 2 + j] = a[i * (i + 1) / 2 + j] * id;
        for (int i = j + 1; i < n; ++i) {
            double *restrict ri = a + i * (i + 1) / 2;
            const double lij = l[i];
            for (int c = j + 1; c <= i; ++c) ri[c] = ri[c] - lij * l[c] * d;
        }
    }
    for (int i = 0; i < n; ++i) {
        const double *ri = a + i * (i + 1) / 2;
        double s = f[i];
        for (int k = 0; k < i; ++k) s = s - ri[k] * x[k];
        x[i] = s;
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = x[i] * (1.0 / a[i * (i + 1) / 2 + i]);
        for (int k = i + 1; k < n; ++k) s = s - a[k * (k + 1) / 2 + i] * x[k];
        x[i] = s;
    }
}

"""

_PART = """static void kane_part{k}(double t, const double *restrict q, const double *restrict u,
                          const double *restrict p, const double *restrict c, const double *restrict w,
                          double *restrict Z) {{
    (void)t; (void)q; (void)u; (void)p; (void)c; (void)w;
{body}
}}

"""

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

{parts}
#ifdef __GNUC__
__attribute__((noinline))
#endif
static void kane_kernel(double t, const double *restrict q, const double *restrict u, const double *restrict p,
                        const double *restrict c, const double *restrict w, double *restrict out) {{
    (void)t; (void)q; (void)u; (void)p; (void)c; (void)w;
{body}
}}

void kane_f(double t, const double *q, const double *u, const double *w, const double *pc, double *out) {{
    kane_kernel(t, q, u, pc, pc + NP, w, out);
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

_NO_STEP = "long kane_step(long n, double dt, double *x, const double *pc) { return -1; }"
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
