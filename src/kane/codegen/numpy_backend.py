"""Numpy backend: turn a :class:`Program` into Python functions, for one state or a batch of states.

The generated source is straight-line code printed from the program's own expressions by a direct printer
(:class:`PyCode`; sympy's code printers only for rare functions), compiled once with ``compile``; nothing from a
user's text is evaluated. The scalar variant uses ``math`` on floats (fast for one state); the batch variant uses
numpy ufuncs on arrays with a leading batch axis. Complex arguments (the complex step) run the same code in
complex arithmetic (``cmath``, numpy's complex ufuncs) and give complex outputs.
``linear_solve`` appends an unrolled LDL^T factorization of a symmetric positive-definite output (a mass matrix)
that skips its structural zeros, so u' = M^-1 f is solved in the generated code, never by a symbolic inverse.
"""

from __future__ import annotations

import cmath
import functools
import itertools
import math
import types

import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from ..errors import SingularStateError
from ..model.model import KaneSymbol
from .program import Program

__all__ = ["CompiledFunction", "compile_program", "print_assignments", "solve_lines", "GROUPS", "ScalarPrinter",
           "PyCode", "namespace"]

GROUPS = ("t", "q", "u", "params", "inputs")

_counter = itertools.count()


class CompiledFunction:
    """A generated function ``fn(t, q, u, params, inputs) -> tuple of arrays`` with its source.

    Quantities that depend on parameters only are computed by a separate prelude, cached for the last
    parameter vector seen, so that a change of parameters never re-derives and an unchanged one costs nothing.
    A state where the equations cannot be evaluated (a division by zero, sqrt or log of a negative number, an
    overflow) raises :class:`kane.errors.SingularStateError` naming the quantity, for one state and for a batch
    alike (a batch row whose own arguments are NaN or inf is returned as it comes out, as one state would be).
    """

    def __init__(self, main, prelude, source, outputs, batch, program=None, scalar=None, full=None):
        self.main, self.prelude, self.source = main, prelude, source
        self.outputs, self.batch = tuple(outputs), batch
        self._last = (None, None)  # (parameter key, constants): replaced whole, so threads never mix two
        self._program, self._scalar, self._full = program, scalar, full or program
        self._complex = None

    def constants(self, params):
        if self.batch:
            return self.prelude(params)
        key = params.tobytes() if hasattr(params, "tobytes") else tuple(params)
        last = self._last
        if key != last[0]:
            last = self._last = (key, self.prelude(params))
        return last[1]

    def complex_call(self, t, q, u, params, inputs):
        """The same function in complex arithmetic (cmath or numpy's complex ufuncs, complex outputs): for the
        complex step, d f/d x = Im f(x + i h) / h. :meth:`__call__` turns to it for complex arguments."""
        if self._complex is None:
            ns = namespace(self.batch, complex_=True)
            self._complex = tuple(types.FunctionType(f.__code__, ns) for f in (self.main, self.prelude))
        main, prelude = self._complex
        return main(t, q, u, prelude(params), inputs)

    def __call__(self, t, q, u, params, inputs):
        if self.batch:
            if any(np.iscomplexobj(x) for x in (t, q, u, params, inputs)):
                return self.complex_call(t, q, u, params, inputs)
            return self._call_batch(t, q, u, params, inputs)
        try:
            return self.main(t, q, u, self.constants(params), inputs)
        except TypeError:  # math's functions and float arrays refuse complex numbers: the complex step
            if not any(np.iscomplexobj(x) for x in (t, q, u, params, inputs)):
                raise
            return self.complex_call(t, q, u, params, inputs)
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            quantity = self._quantity(exc)
            if quantity is None:
                raise
            raise SingularStateError(f"the equations cannot be evaluated at t = {float(t):.9g}, q = "
                                     f"{np.array2string(np.asarray(q, dtype=float), precision=6)}: "
                                     f"{type(exc).__name__} ({exc}) in {quantity}", quantity=quantity) from None

    def _call_batch(self, t, q, u, params, inputs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = self.main(t, q, u, self.constants(params), inputs)
        B = q.shape[0] if np.ndim(q) == 2 else np.shape(u)[0]
        bad = np.zeros(B, dtype=bool)
        for o in out:
            bad |= ~np.isfinite(np.reshape(o, (B, -1))).all(axis=1)
        if not bad.any():
            return out
        args = ((t, 1), (q, 2), (u, 2), (params, 2), (inputs, 2))  # (argument, its number of axes when batched)
        for x, nd in args:
            bad &= _finite_rows(x, B, nd)
        if not bad.any() or self._scalar is None:
            return out
        i = int(np.argmax(bad))
        t_i, q_i, u_i, p_i, w_i = (_row(x, B, nd, i) for x, nd in args)
        try:
            self._scalar()(float(t_i), q_i, u_i, p_i, w_i)
        except SingularStateError as exc:
            raise SingularStateError(f"state {i} of a batch of {B} (and {int(bad.sum()) - 1} more): {exc}",
                                     quantity=exc.quantity, state=i) from None
        return out

    def _quantity(self, exc) -> str | None:
        """The quantity whose line of the generated code raised ``exc``, in the model's names (None if the error
        was not raised by the generated arithmetic)."""
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        if not tb.tb_frame.f_code.co_filename.startswith("<kane generated") or self._program is None:
            return None
        target = self.source.splitlines()[tb.tb_lineno - 1].split("=")[0].strip()
        prog = self._program
        if target.startswith("z_"):
            symbol, expr = prog.assignments[int(target[2:])]
            pivots = list(self._full.outputs.get("dependent_pivots", ()))
            divisor = expr.base if expr.is_Pow and expr.exp == -1 else None
            k = next((i for i, p in enumerate(pivots) if divisor is not None and p in (divisor, -divisor)), None)
            if k is not None:  # 1/pivot of the elimination that solves for the dependent speeds (either sign)
                dependent = [str(s) for s, _ in self._full.assignments if not isinstance(s, KaneSymbol)]
                return (f"pivot {k} ({divisor}) of the constraint block of the dependent "
                        f"speeds {', '.join(dependent)}: they cannot be solved for at this configuration; derive "
                        "with other dependent speeds (dependent=[...]) or let kane.switching.OnlineDynamics "
                        "re-select them during the run")
            defs, full = dict(prog.assignments), expr
            for _ in range(8):  # spelled out in the model's own symbols while it stays short
                wider = full.xreplace(defs)
                if wider == full or sp.count_ops(wider) > 40:
                    break
                full = wider
            return f"the intermediate {symbol} = {expr}" + (f" = {full}" if full != expr else "")
        if target.startswith(("iD", "D")):
            j = int(target.lstrip("iD"))
            speeds = prog.inputs.get("u", ())
            name = f" (speed {speeds[j]})" if j < len(speeds) else ""
            return (f"pivot {j}{name} of the LDL^T factorization of the mass matrix: M is singular or not positive "
                    "definite at this state")
        if target.startswith("out_"):
            return f"the output {self.outputs[int(target[4:].split('[')[0])]}"  # out_k: the k-th output
        return f"the generated line {target!r}"


def _batched(x, B, nd) -> bool:
    return np.ndim(x) == nd and np.shape(x)[0] == B


def _finite_rows(x, B, nd) -> np.ndarray:
    """(B,) bool: the argument's row of each state is finite (a shared argument counts for every state)."""
    a = np.asarray(x, dtype=float)
    if _batched(a, B, nd):
        return np.isfinite(a.reshape(B, -1)).all(axis=1)
    return np.full(B, bool(np.isfinite(a).all()))


def _row(x, B, nd, i):
    a = np.asarray(x, dtype=float)
    return a[i] if _batched(a, B, nd) else a


class _Squares:
    """Squares as products and reciprocals as divisions (cheaper than pow), for both printers."""

    def _print_Pow(self, expr, rational=False):
        b, e = expr.args
        if e == 2:
            return f"(({self._print(b)})*({self._print(b)}))"
        if e == -1:
            return f"(1.0/({self._print(b)}))"
        return super()._print_Pow(expr, rational)


class ScalarPrinter(_Squares, PythonCodePrinter):
    def _print_Pow(self, expr, rational=False):
        if expr.exp == sp.Rational(1, 2):
            return f"math.sqrt({self._print(expr.base)})"
        return super()._print_Pow(expr, rational)

    def _print_sign(self, expr):
        a = self._print(expr.args[0])
        return f"(({a}) > 0) - (({a}) < 0)"


class _BatchPrinter(_Squares, NumPyPrinter):
    pass


_ADD, _MUL, _NEG, _POW, _ATOM = range(1, 6)  # Python's binding strengths: + -, * /, unary -, **, names and calls

_FUNCS = {sp.sin: "sin", sp.cos: "cos", sp.tan: "tan", sp.asin: "asin", sp.acos: "acos", sp.atan: "atan",
          sp.atan2: "atan2", sp.sinh: "sinh", sp.cosh: "cosh", sp.tanh: "tanh", sp.exp: "exp", sp.log: "log",
          sp.Abs: "_abs", sp.sign: "_sign"}


class PyCode:
    """A direct printer of a Program's expressions as Python source: one recursive pass over sums, products,
    powers and the elementary functions (tens of times faster than sympy's printers), each operation in the
    expression's own order, squares as products and reciprocals as divisions. Symbols are printed by their names
    in ``names`` (symbol -> str), functions by bare names that the namespace the code runs in binds (math
    or numpy, real or complex: :func:`namespace`); anything else by ``fallback`` (a sympy code printer). After
    each call ``used`` holds the symbols the expression reads."""

    def __init__(self, names: dict, fallback):
        self.names, self.fallback, self.used = names, fallback, set()

    def __call__(self, expr) -> str:
        self.used = set()
        return self._p(expr)[0]

    def _wrap(self, expr, least: int) -> str:
        text, prec = self._p(expr)
        return text if prec >= least else f"({text})"

    def _p(self, e):
        """(source, binding strength) of ``e``."""
        if e.is_Symbol:
            self.used.add(e)
            return self.names[e], _ATOM
        if e.is_Number or e.is_NumberSymbol:
            if not e.is_finite:
                return self._other(e)
            v = int(e) if e.is_Integer else e.p / e.q if e.is_Rational else float(e)
            return repr(v), (_NEG if v < 0 else _ATOM)
        if e.is_Add:  # a nested sum is parenthesized: it keeps its own association
            parts = [self._wrap(a, _MUL) for a in e.args]
            return parts[0] + "".join(f" - {t[1:]}" if t[0] == "-" else f" + {t}" for t in parts[1:]), _ADD
        if e.is_Mul:
            return self._mul(e.args)
        if e.is_Pow:
            return self._pow(*e.args)
        name = _FUNCS.get(e.func)
        if name is None:
            return self._other(e)
        return f"{name}({', '.join(self._p(a)[0] for a in e.args)})", _ATOM

    def _other(self, e):
        free = e.free_symbols
        self.used |= free
        return f"({self.fallback.doprint(e.xreplace({x: sp.Symbol(self.names[x]) for x in free}))})", _ATOM

    def _mul(self, args):
        negative, num, den = False, [], []
        for a in args:
            if a is sp.S.NegativeOne:
                negative = not negative
            elif a.is_Pow and a.exp.is_Number and a.exp < 0:
                den.append(self._p(a.base) if a.exp == -1 else self._pow(a.base, -a.exp))
            else:  # a nested product (strength _MUL) is parenthesized: it keeps its own association
                num.append(self._p(a))
        parts = [t if p >= _NEG else f"({t})" for t, p in num] or ["1.0"]
        text = "*".join(parts) + "".join(f"/{t}" if p >= _NEG else f"/({t})" for t, p in den)
        prec = num[0][1] if len(num) == 1 and not den else _MUL
        if not negative:
            return text, prec
        if prec >= _POW or prec == _MUL:  # -a*b is (-a)*b: the same number as -(a*b), sign changes being exact
            return "-" + text, min(prec, _NEG)
        return f"-({text})", _NEG

    def _pow(self, base, exp):
        if exp == 2:
            b = self._wrap(base, _NEG)
            return f"{b}*{b}", _MUL
        if exp == sp.S.Half:
            return f"sqrt({self._p(base)[0]})", _ATOM
        if exp.is_Number and exp < 0:
            inner, prec = self._pow(base, -exp) if exp != -1 else self._p(base)
            return (f"1.0/{inner}" if prec >= _NEG else f"1.0/({inner})"), _MUL
        return f"{self._wrap(base, _ATOM)}**{self._wrap(exp, _NEG)}", _POW


def _complex_atan2(y, x):
    """atan2 for the complex step: the real atan2 plus i times its first-order change (exact for an imaginary
    part of the size of a complex step)."""
    xr, yr = np.real(x), np.real(y)
    return np.arctan2(yr, xr) + 1j * (xr * np.imag(y) - yr * np.imag(x)) / (xr * xr + yr * yr)


def namespace(batch: bool, complex_: bool = False) -> dict:
    """The globals that generated code runs in: the functions :class:`PyCode` names, from math (one state) or
    numpy (a batch), in their complex forms for complex arguments (``abs`` and ``sign`` continued analytically
    from the real axis, as the complex step needs), and ``_F``, the type of the output arrays."""
    if batch:
        fns = {n: getattr(np, n) for n in ("sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "log", "sqrt")}
        fns |= {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "_abs": np.abs,
                "_sign": np.sign}
    else:
        lib = cmath if complex_ else math
        fns = {n: getattr(lib, n) for n in ("sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "log", "sqrt",
                                            "asin", "acos", "atan")}
        fns |= {"atan2": math.atan2, "_abs": abs, "_sign": lambda x: (x > 0) - (x < 0)}
    if complex_:
        fns |= {"atan2": _complex_atan2, "_abs": lambda x: np.where(np.real(x) >= 0, x, -x),
                "_sign": lambda x: np.sign(np.real(x))}
    return fns | {"math": math, "np": np, "numpy": np, "_F": complex if complex_ else float}


def _ldlt_lines(n, zero, mname, fname, indent):
    """Unrolled LDL^T of the symmetric n x n matrix named by ``mname(i, j)`` (structural zeros given by
    ``zero(i, j)``) and solve with right-hand side ``fname(i)``; the solution is left in x0 ... x{n-1}."""
    lines = []
    nz = {(i, j): not zero(i, j) for i in range(n) for j in range(n)}
    L = {}
    for j in range(n):
        terms = [f"L{j}_{k}*L{j}_{k}*D{k}" for k in range(j) if L.get((j, k))]
        lines.append(f"D{j} = {mname(j, j)}" + "".join(f" - {t}" for t in terms))
        lines.append(f"iD{j} = 1.0/D{j}")
        for i in range(j + 1, n):
            terms = [f"L{i}_{k}*L{j}_{k}*D{k}" for k in range(j) if L.get((i, k)) and L.get((j, k))]
            if not nz[(i, j)] and not terms:
                continue
            L[(i, j)] = True
            head = mname(i, j) if nz[(i, j)] else "0.0"
            lines.append(f"L{i}_{j} = ({head}" + "".join(f" - {t}" for t in terms) + f")*iD{j}")
    for i in range(n):
        terms = [f"L{i}_{k}*y{k}" for k in range(i) if L.get((i, k))]
        lines.append(f"y{i} = {fname(i)}" + "".join(f" - {t}" for t in terms))
    for i in reversed(range(n)):
        terms = [f"L{k}_{i}*x{k}" for k in range(i + 1, n) if L.get((k, i))]
        lines.append(f"x{i} = y{i}*iD{i}" + "".join(f" - {t}" for t in terms))
    return [indent + line for line in lines]


def solve_lines(M, f, show) -> list[str]:
    """The lines (``name = expression``, no indentation) that name the lower triangle of the symmetric matrix M
    (n, n) and the vector f (n,) as m{i}_{j} and f{i} (each printed by ``show``), factor M = L D L^T unrolled with
    its structural zeros skipped, and solve M x = f: x is left in x0 ... x{n-1}. Every backend prints these."""
    n = M.shape[0]
    lines = [f"m{i}_{j} = {show(M[i, j])}" for i in range(n) for j in range(i + 1) if M[i, j] != 0]
    lines += [f"f{i} = {show(f[i])}" for i in range(n)]
    return lines + _ldlt_lines(n, lambda i, j: M[max(i, j), min(i, j)] == 0,
                               lambda i, j: f"m{max(i, j)}_{min(i, j)}", lambda i: f"f{i}", "")


def print_assignments(prog: Program, printer, rename: dict):
    """Name every assignment ``z_k`` (recorded in ``rename``: as a string for a :class:`PyCode` ``printer``, which
    prints through it, as a sympy Symbol for a sympy code printer) and print it; returns the lines of quantities
    of parameters only (computed once per parameter set), the state-dependent lines, the names of the former and
    the state-dependent (symbol, symbols read) pairs."""
    constant = set(prog.inputs.get("params", ()))
    direct = isinstance(printer, PyCode)
    pre, body, const_names, state = [], [], [], []
    for k, (s, e) in enumerate(prog.assignments):
        rename[s] = f"z_{k}" if direct else sp.Symbol(f"z_{k}")
        if direct:
            text = printer(e)
            free = printer.used
        else:
            text, free = printer.doprint(e.xreplace(rename)), e.free_symbols
        line = f"    z_{k} = {text}"
        if free <= constant:
            constant.add(s)
            pre.append(line)
            const_names.append(f"z_{k}")
        else:
            body.append(line)
            state.append((s, free))
    return pre, body, const_names, state


def _with_deletions(body, state, kept, rename):
    """Insert ``del`` statements after the last use of every state-dependent intermediate (``kept``: the symbols
    the outputs read)."""
    last = {}
    for k, (_, free) in enumerate(state):
        for x in free:
            last[x] = k
    defined = {s for s, _ in state}
    dead = {}
    for x, k in last.items():
        if x in defined and x not in kept:
            dead.setdefault(k, []).append(str(rename[x]))
    out = []
    for k, line in enumerate(body):
        out.append(line)
        if k in dead:
            out.append(f"    del {', '.join(sorted(dead[k]))}")
    return out


def compile_program(program: Program, outputs, *, batch: bool = False, linear_solve=None) -> CompiledFunction:
    """Generate and compile a function evaluating ``outputs`` of ``program``.

    Call as ``fn(t, q, u, params, inputs)``; for ``batch=True`` q, u (and t, params, inputs if they vary) carry a
    leading batch axis of length B and every output gains it too. ``linear_solve=(M, f, name)`` adds an output
    ``name`` = M^-1 f computed by an unrolled LDL^T factorization in the generated code.
    """
    outputs = tuple(outputs)
    needed = [o for o in outputs if o in program.outputs]
    if linear_solve is not None:
        needed += [linear_solve[0], linear_solve[1]]
    prog = program.select(dict.fromkeys(needed))
    rename = {}  # symbol -> its name in the generated code
    printer = PyCode(rename, _BatchPrinter() if batch else ScalarPrinter())
    head, pre = [], []
    for g in GROUPS:
        syms = prog.inputs.get(g, ())
        names = [f"{g}_{k}" for k in range(len(syms))]
        rename.update(zip(syms, names))
        if not syms:
            continue
        if g == "t":
            head.append("    t_0 = t")
            continue
        def unpack(src):
            if batch:  # rows of the transposed batch are contiguous, so every operation streams
                return [f"    {', '.join(names)}, = np.ascontiguousarray(np.moveaxis({src}, -1, 0)) "
                        f"if np.ndim({src}) > 1 else {src}"]
            # Python floats: their arithmetic is several times faster than numpy scalars'
            return [f"    {', '.join(names)}, = {src}.tolist() if hasattr({src}, 'tolist') else {src}"]
        if g == "params":
            pre += unpack("params")
            head += unpack("consts[-1]")
        else:
            head += unpack(g)
    const_lines, body, const_names, state = print_assignments(prog, printer, rename)
    pre += const_lines
    if const_names:
        head.append(f"    {', '.join(const_names)}, = consts[:-1]")
    shape_lead = "B, " if batch else ""
    tail, ret, kept = [], [], set()

    def show(e):
        text = printer(e)
        kept.update(printer.used)
        return text
    for name in outputs:
        if name not in prog.outputs:
            continue
        m = prog.outputs[name]
        var = f"out_{len(ret)}"  # generated: an output's name is never printed into code
        shape = m.shape[:1] if name in prog.vectors else m.shape
        tail.append(f"    {var} = np.zeros(({shape_lead}{', '.join(map(str, shape))},), dtype=_F)")
        for index in itertools.product(*map(range, shape)):
            e = m[index if len(index) > 1 else index[0]]
            if e != 0:
                tail.append(f"    {var}[{'..., ' if batch else ''}{', '.join(map(str, index))}] = {show(e)}")
        ret.append(var)
    if linear_solve is not None:
        Mname, fname, xname = linear_solve
        M, f = prog.outputs[Mname], prog.outputs[fname]
        n = M.shape[0]
        tail += ["    " + ln for ln in solve_lines(M, f, show)]
        var = f"out_{len(ret)}"
        if batch:
            tail.append(f"    {var} = np.empty((B, {n}), dtype=_F)")
            tail += [f"    {var}[:, {i}] = x{i}" for i in range(n)]
        else:
            tail.append(f"    {var} = np.array([{', '.join(f'x{i}' for i in range(n))}])")
        ret.append(var)
    if batch:  # free each batch-sized intermediate after its last use, so the working set stays in cache
        body = _with_deletions(body, state, kept, rename)
        head.insert(0, "    B = q.shape[0] if q.ndim == 2 else u.shape[0]")
    lines = head + body + tail
    name = f"_kane_generated_{next(_counter)}"
    src = (f"def {name}_prelude(params):\n" + "\n".join(pre or ["    pass"])
           + f"\n    return ({''.join(c + ', ' for c in const_names)}params,)\n\n"
           + f"def {name}(t, q, u, consts, inputs):\n" + "\n".join(lines) + f"\n    return ({', '.join(ret)},)\n")
    namespace_ = namespace(batch)
    code = compile(src, f"<kane generated {name}>", "exec")
    exec(code, namespace_)  # noqa: S102 - executes source generated from the program IR, never user text
    out_names = tuple(o for o in outputs if o in prog.outputs) + ((linear_solve[2],) if linear_solve else ())
    scalar = (lambda: compile_program(program, outputs, linear_solve=linear_solve)) if batch else None
    return CompiledFunction(namespace_[name], namespace_[f"{name}_prelude"], src, out_names, batch, prog,
                            functools.cache(scalar) if scalar else None, program)
