"""Forward-mode differentiation of a straight-line :class:`Program` (Griewank & Walther, *Evaluating
Derivatives*, ch. 3: the tangent propagation ``dz_k = sum_j (d phi_k / d v_j) dv_j`` through every assignment).

The derivative of every intermediate with respect to the chosen inputs is itself a named intermediate, formed
from the partial derivatives of that one assignment (small expressions, since every assignment names only a few
operations) and the derivatives of its arguments. Structural zeros are never formed: each intermediate carries
only the input directions it depends on. Sums and products are built directly from their terms and factors
(numbers folded, no canonical reordering): sympy's constructors cost more than everything else here. The result
is a new Program with the original outputs and their Jacobians, so every backend evaluates exact derivatives at
the cost of a few times the original program.
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sp

from ..model.model import KaneSymbol
from .program import Program
from .trace import MINUS_ONE, ONE, ZERO

__all__ = ["jacobian_program", "jacobian_name"]


def jacobian_name(output: str, group: str) -> str:
    """The name of the Jacobian of ``output`` with respect to input group ``group``: ``"d{output}_d{group}"``."""
    return f"d{output}_d{group}"


def _partial(expr, x):
    """d expr / d x for one assignment's expression by the rules of sums, products, powers and the elementary
    functions (each assignment names only a few operations, so the result stays small), formed without sympy's
    canonicalization (numbers folded, exact zeros and ones dropped); sympy's ``diff`` only for what the rules do
    not cover. Many times faster than ``sp.diff``, which re-derives the same rules through its general dispatch."""
    if expr.is_Atom:
        return ONE if expr == x else ZERO
    if expr.is_Add:
        return _sum([_partial(a, x) for a in expr.args])
    if expr.is_Mul:
        args = expr.args
        terms = []
        for k, a in enumerate(args):
            da = _partial(a, x)
            if da is not ZERO:
                terms.append(_product(args[:k] + args[k + 1:] + (da,)))
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
    return ZERO if not terms else terms[0] if len(terms) == 1 else sp.Add._from_args(terms, True)


def _product(factors):
    """The product of ``factors`` as one flat Mul, its numbers folded into a leading coefficient."""
    coeff, rest = ONE, []
    for f in factors:
        if f.is_Number:
            coeff = f if coeff is ONE else coeff * f
        elif f.is_Mul:
            for g in f.args:
                if g.is_Number:
                    coeff = g if coeff is ONE else coeff * g
                else:
                    rest.append(g)
        else:
            rest.append(f)
    if coeff is ZERO or not rest:
        return coeff
    if coeff is not ONE:
        rest.insert(0, coeff)
    return rest[0] if len(rest) == 1 else sp.Mul._from_args(rest, True)


_RULES = {sp.sin: sp.cos, sp.cos: lambda a: -sp.sin(a), sp.exp: sp.exp, sp.log: lambda a: 1 / a,
          sp.tan: lambda a: 1 + sp.tan(a) ** 2}


def _symbols(expr) -> list:
    """The symbols of ``expr`` in order of first appearance (deterministic, and cheaper than free_symbols)."""
    if expr.is_Symbol:
        return [expr]
    out, stack = {}, [expr]
    while stack:
        e = stack.pop()
        if e.is_Symbol:
            out[e] = None
        elif not e.is_Atom:
            stack.extend(reversed(e.args))
    return list(out)


class _Tangents:
    """Names the derivative quantities as assignments ``_dz{k}`` following the original program's order, shares
    repeated ones and records which depend on parameters only (for the prelude of the backends)."""

    def __init__(self, constant: set):
        self.assignments: list = []
        self.cache: dict = {}
        self.const = constant

    def name(self, expr, free):
        """``expr`` itself if a number or a symbol (or a negated one), else the symbol naming it; ``free``: the
        symbols of ``expr``."""
        if expr.is_Atom:
            return expr
        if expr.is_Mul and expr.args[0] is MINUS_ONE:
            rest = expr.args[1] if len(expr.args) == 2 else sp.Mul._from_args(expr.args[1:], True)
            return -self.name(rest, free)
        sym = self.cache.get(expr)
        if sym is None:
            sym = KaneSymbol(f"_dz{len(self.cache)}")
            self.cache[expr] = sym
            self.assignments.append((sym, expr))
            if free <= self.const:
                self.const.add(sym)
        return sym


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
    constant = set(prog.inputs.get("params", ())) | prog.constant_symbols()
    b = _Tangents(constant)
    tangent: dict = {}  # symbol -> {(group number, column): derivative expression}

    def derivative(expr) -> dict:
        """Sparse tangent of ``expr``: the partials of expr times the tangents of its symbols, summed."""
        terms: dict = {}  # direction -> products partial * tangent, summed without canonicalization
        for x in _symbols(expr):
            seeds = {index[x]: ONE} if x in index else tangent.get(x)
            if not seeds:
                continue
            partial = _partial(expr, x)
            partial = b.name(partial, set(_symbols(partial)))
            if partial is ZERO:
                continue
            for key, dx in seeds.items():
                terms.setdefault(key, []).append(_product((partial, dx)))
        out = {}
        for key, ts in terms.items():
            if len(ts) == 1:
                v = ts[0]
                v = b.name(v, set(_symbols(v)))
            else:
                v = b.name(sp.Add._from_args(ts, True), {s for t in ts for s in _symbols(t)})
            if v is not ZERO:
                out[key] = v
        return out

    order = []
    for sym, expr in prog.assignments:
        order.append((sym, expr))
        d = derivative(expr)
        if d:
            tangent[sym] = d
        order += b.assignments
        b.assignments = []
    outs = {name: prog.outputs[name] for name in outputs}
    for name in outputs:
        entries = list(prog.outputs[name])
        J = [sp.zeros(len(entries), len(syms)) for _, syms in variables]
        for r, e in enumerate(entries):
            for (g, col), v in derivative(sp.sympify(e)).items():
                J[g][r, col] = v
        for (group, _), Jg in zip(variables, J):
            outs[jacobian_name(name, group)] = sp.ImmutableMatrix(Jg)
    order += b.assignments
    return Program(prog.inputs, tuple(order), outs, frozenset(n for n in outputs if n in prog.vectors))
