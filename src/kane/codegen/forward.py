"""Forward-mode differentiation of a straight-line :class:`Program` (Griewank & Walther, *Evaluating
Derivatives*, ch. 3: the tangent propagation ``dz_k = sum_j (d phi_k / d v_j) dv_j`` through every assignment).

The derivative of every intermediate with respect to the chosen inputs is itself a named intermediate, formed
from the partial derivatives of that one assignment (small expressions, since every assignment names only a few
operations) and the derivatives of its arguments. Structural zeros are never formed: each intermediate carries
only the input directions it depends on. The result is a new Program with the original outputs and their
Jacobians, so every backend evaluates exact derivatives at the cost of a few times the original program.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sympy as sp

from .program import Program
from .trace import ONE, ZERO, TraceBuilder, mul

__all__ = ["jacobian_program", "jacobian_name"]


def jacobian_name(output: str, group: str) -> str:
    """The name of the Jacobian of ``output`` with respect to input group ``group``: ``"d{output}_d{group}"``."""
    return f"d{output}_d{group}"


def _partial(expr, x):
    """d expr / d x for one assignment's expression by the rules of sums, products, powers and the elementary
    functions (each assignment names only a few operations, so the result stays small); sympy's ``diff`` only for
    what the rules do not cover. Several times faster than ``sp.diff``, which re-derives the same rules through
    its general dispatch."""
    if expr.is_Atom:
        return ONE if expr == x else ZERO
    if expr.is_Add:
        return _sum(_partial(a, x) for a in expr.args)
    if expr.is_Mul:
        args = expr.args
        terms = []
        for k, a in enumerate(args):
            da = _partial(a, x)
            if da is not ZERO:
                rest = args[:k] + args[k + 1:]
                terms.append(_product(rest + (da,)))
        return _sum(terms)
    if expr.is_Pow:
        base, e = expr.args
        if e.is_Number:
            db = _partial(base, x)
            if db is ZERO:
                return ZERO
            lower = base if e == 2 else sp.Pow(base, e - 1, evaluate=False)
            return _product((e, lower, db))
    rule = _RULES.get(expr.func)
    if rule is not None:
        da = _partial(expr.args[0], x)
        return ZERO if da is ZERO else _product((rule(expr.args[0]), da))
    return sp.diff(expr, x)


def _sum(terms):
    terms = [t for t in terms if t is not ZERO]
    return ZERO if not terms else terms[0] if len(terms) == 1 else sp.Add(*terms)


def _product(factors):
    out = ONE
    for f in factors:
        out = out * f
    return out


_RULES = {sp.sin: sp.cos, sp.cos: lambda a: -sp.sin(a), sp.exp: sp.exp, sp.log: lambda a: 1 / a,
          sp.tan: lambda a: 1 + sp.tan(a) ** 2}


def _variables(program: Program, wrt) -> list[tuple[str, tuple]]:
    groups = [wrt] if isinstance(wrt, str) else list(wrt)
    out = []
    for g in groups:
        if g not in program.inputs:
            raise KeyError(f"no input group {g!r} in the program; groups: {', '.join(program.inputs)}")
        out.append((g, tuple(program.inputs[g])))
    return out


def jacobian_program(program: Program, outputs: Iterable[str], wrt: str | Iterable[str] = ("q", "u")) -> Program:
    """A Program computing ``outputs`` and, for each output and each input group g in ``wrt``, the Jacobian
    named :func:`jacobian_name` ``(output, g)``.

    Shapes: for a vector output (n,) the Jacobian is a matrix (n, n_g); for a matrix output (r, c) it is
    (r * c, n_g), rows in row-major order of the output. The input groups are those of ``program``.
    """
    outputs = list(outputs)
    prog = program.select(outputs)
    variables = _variables(prog, wrt)
    index = {}  # input symbol -> (group number, column)
    for gi, (_, syms) in enumerate(variables):
        for col, s in enumerate(syms):
            index[s] = (gi, col)
    b = TraceBuilder(prog.inputs, prefix="_dz")
    b._const |= prog.constant_symbols()  # derivatives of parameter-only intermediates are hoisted as well
    tangent: dict = {}  # symbol -> {(group number, column): derivative expression}

    def derivative(expr) -> Mapping:
        """Sparse tangent of ``expr``: the partials of expr times the tangents of its symbols, summed."""
        terms: dict = {}  # direction -> products partial * tangent, summed without canonicalization
        for x in sorted(expr.free_symbols, key=sp.default_sort_key):
            seeds = {index[x]: sp.S.One} if x in index else tangent.get(x)
            if not seeds:
                continue
            partial = b.assign(_partial(expr, x))
            if partial is ZERO:
                continue
            for key, dx in seeds.items():
                terms.setdefault(key, []).append(mul(partial, dx))
        out = {}
        for key, ts in terms.items():
            v = b.assign(ts[0] if len(ts) == 1 else sp.Add(*ts, evaluate=False))
            if v is not ZERO:
                out[key] = v
        return out

    for sym, expr in prog.assignments:
        d = derivative(expr)
        if d:
            tangent[sym] = d
    result = {name: prog.outputs[name] for name in outputs}
    vectors = set(prog.vectors)
    for name in outputs:
        entries = list(prog.outputs[name])
        for gi, (group, syms) in enumerate(variables):
            J = sp.zeros(len(entries), len(syms))
            for r, e in enumerate(entries):
                for (g, col), v in derivative(sp.sympify(e)).items():
                    if g == gi:
                        J[r, col] = v
            result[jacobian_name(name, group)] = J
    built = b.build({k: (list(v) if k in vectors else v) for k, v in result.items()},
                    definitions=dict(prog.assignments))
    return built
