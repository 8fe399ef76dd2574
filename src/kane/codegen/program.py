"""The straight-line ``Program`` IR shared by symbolic derivation and code generation.

A ``Program`` has named input groups (t, q, u, params, inputs), an ordered list of assignments ``z_k = expr`` and
named outputs (sympy matrices in inputs and assigned symbols). Kane's method emits one through a
:class:`ProgramBuilder`, which names every nontrivial intermediate quantity as it is formed (the z's of Autolev,
seed 000 Eq. 66) so that expressions never swell, shares repeated subexpressions, and differentiates with respect
to time through the assignments (forward mode). Operation counts follow the categories of seed 000 Table 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import sympy as sp
from sympy.core.add import _addsort

from ..model.model import KaneSymbol

__all__ = ["Program", "ProgramBuilder", "OpCount", "count_expr_ops"]


@dataclass(frozen=True)
class OpCount:
    """Operations by category (seed 000 Table 3)."""

    mul_div: int = 0
    add_sub: int = 0
    functions: int = 0

    @property
    def total(self) -> int:
        return self.mul_div + self.add_sub + self.functions

    def __add__(self, other: "OpCount") -> "OpCount":
        return OpCount(self.mul_div + other.mul_div, self.add_sub + other.add_sub, self.functions + other.functions)


def count_expr_ops(expr) -> OpCount:
    """Count multiplications/divisions, additions/subtractions and function calls in one expression tree.

    A sign change costs nothing; x**2 is one multiplication, x**-1 one division, other powers a function call.
    """
    md = ad = fn = 0
    stack = [sp.sympify(expr)]
    while stack:
        e = stack.pop()
        if e.is_Atom:
            continue
        if e.is_Add:
            ad += len(e.args) - 1
        elif e.is_Mul:
            coeff, factors = e.as_coeff_mul()
            n = len(factors) - 1 + (0 if coeff in (1, -1) else 1)
            md += max(n, 0)
            for fct in factors:  # a/b is one division: a reciprocal factor adds nothing beyond the product
                if fct.is_Pow and fct.args[1].is_Number and fct.args[1] < 0:
                    fct = fct.args[0] if fct.args[1] == -1 else fct.args[0] ** -fct.args[1]
                stack.append(fct)
            continue
        elif e.is_Pow:
            b, x = e.args
            if x == -1 or x == 2 or x == -2:
                md += 1 if abs(x) == 1 or x == 2 else 2
            elif x == sp.Rational(1, 2):
                fn += 1
            else:
                fn += 1
            stack.append(b)
            continue
        elif isinstance(e, sp.Function):
            fn += 1
        stack.extend(e.args)
    return OpCount(md, ad, fn)


@dataclass(frozen=True)
class Program:
    """A straight-line program: ``inputs`` (group -> symbols), ``assignments`` ((symbol, expr), ...) in
    evaluation order, ``outputs`` (name -> sympy ImmutableMatrix)."""

    inputs: Mapping[str, tuple]
    assignments: tuple
    outputs: Mapping[str, sp.ImmutableMatrix]
    vectors: frozenset = frozenset()

    def shape(self, name: str) -> tuple:
        """Numeric shape of an output: (n,) for a vector output, (rows, cols) for a matrix output."""
        m = self.outputs[name]
        return (m.shape[0],) if name in self.vectors else m.shape

    def select(self, names) -> "Program":
        """The program restricted to some outputs, with every assignment they do not need removed."""
        names = list(names)
        outs = {n: self.outputs[n] for n in names}
        defs = dict(self.assignments)
        needed = set()
        stack = [s for m in outs.values() for e in m for s in e.free_symbols]
        while stack:
            s = stack.pop()
            if s in needed or s not in defs:
                continue
            needed.add(s)
            stack.extend(defs[s].free_symbols)
        return Program(self.inputs, tuple(a for a in self.assignments if a[0] in needed), outs,
                       frozenset(n for n in names if n in self.vectors))

    def constant_symbols(self) -> set:
        """Assigned symbols that depend on parameters only (computed once per parameter set)."""
        const = set(self.inputs.get("params", ()))
        for sym, expr in self.assignments:
            if expr.free_symbols <= const:
                const.add(sym)
        return const - set(self.inputs.get("params", ()))

    def count_ops(self, names=None, *, constants: bool = False) -> OpCount:
        """Operations to evaluate the given outputs (default all) at one state, with the assignments they need.

        Quantities of parameters only are computed once per parameter set and are not counted, unless
        ``constants=True``, which counts just them.
        """
        prog = self.select(names) if names is not None else self
        const = prog.constant_symbols()
        params = set(prog.inputs.get("params", ()))
        total = OpCount()
        for sym, expr in prog.assignments:
            if (sym in const) == constants:
                total = total + count_expr_ops(expr)
        for m in prog.outputs.values():
            for e in m:
                if (e.free_symbols <= (const | params)) == constants:
                    total = total + count_expr_ops(e)
        return total

    def expression(self, name: str) -> sp.Matrix:
        """An output with every intermediate variable substituted back (readable form; small systems only)."""
        prog = self.select([name])
        subs = {}
        for sym, expr in prog.assignments:
            subs[sym] = expr.xreplace(subs)
        return sp.Matrix(prog.outputs[name]).xreplace(subs)

    def assignment_text(self) -> str:
        return "\n".join(f"{s} = {e}" for s, e in self.assignments)


def _leading_minus(term) -> bool:
    """sympy's ``could_extract_minus_sign`` for one term of a sum (a number, a product whose numeric coefficient
    leads, or an atom or function call, which never has one), without forming ``-term`` as sympy does. Every such
    term changes sides under negation, so a sum with more negative terms than positive ones is named as the
    negative of its negation (as sympy's ``could_extract_minus_sign`` decides); ties: :func:`_first_term_negative`."""
    if term.is_Number:
        return _negative(term)
    if term.is_Mul:
        c = term.args[0]
        return c.is_Number and _negative(c)
    return False


def _negative(number) -> bool:
    """A finite sympy number is negative: by value (asking sympy's ``is_extended_negative`` of a new Float runs
    its whole assumption system)."""
    return float(number) < 0


def _first_term_negative(expr) -> bool:
    """For a sum with as many negative terms as positive ones: whether the term of smallest magnitude (the term
    without its numeric coefficient, ordered by ``Basic.compare``: class and names, never hashes) is negative.
    The magnitudes of a canonical sum are distinct and negation keeps them, so exactly one of ``e`` and ``-e``
    answers True: ``z`` and ``-z`` share one name, in the same way in every process (cheaper than comparing
    sympy's sort keys of ``e`` and ``-e``)."""
    best, negative = None, False
    for term in expr.args:
        if term.is_Number:
            size = sp.S.One
        elif term.is_Mul and term.args[0].is_Number:
            size = term.args[1] if len(term.args) == 2 else sp.Mul._from_args(term.args[1:])
        else:
            size = term
        if best is None or size.compare(best) < 0:
            best, negative = size, _leading_minus(term)
    return negative


def _negate_term(term):
    """-term for one term of a canonical sum, in sympy's canonical form (the numeric coefficient of a product
    negated in place, a coefficient -1 dropped), without Mul's flattening."""
    if term.is_Number:
        return -term
    if term.is_Mul and term.args[0].is_Number:
        c, rest = -term.args[0], term.args[1:]
        if c is not sp.S.One:
            return sp.Mul._from_args((c,) + rest)
        return rest[0] if len(rest) == 1 else sp.Mul._from_args(rest)
    if term.is_Mul:
        return sp.Mul._from_args((sp.S.NegativeOne,) + term.args)
    return sp.Mul._from_args((sp.S.NegativeOne, term))


def _negate_sum(expr):
    """-expr of a canonical sympy Add, equal (args in the same order) to sympy's ``-expr``: the negated terms are
    distinct, so Add's flattening would only sort them (the number first): that is all this does."""
    terms = [_negate_term(t) for t in expr.args]
    number = [t for t in terms if t.is_Number]
    rest = [t for t in terms if not t.is_Number]
    _addsort(rest)
    return sp.Add._from_args(number + rest)


def _fold_numbers(order, outs):
    """Substitute assignments whose value is a plain number (e.g. a dependent speed that is identically zero)
    into everything after them, dropping the assignments that become numbers."""
    subs, kept = {}, []
    for sym, expr in order:
        if subs and not expr.free_symbols.isdisjoint(subs):
            expr = expr.xreplace(subs)
        if expr.is_Number:
            subs[sym] = expr
        else:
            kept.append((sym, expr))
    if subs:
        outs = {k: m.xreplace(subs) for k, m in outs.items()}
    return kept, outs


class ProgramBuilder:
    """Builds a :class:`Program`: ``assign`` names intermediate quantities, ``time_derivative`` differentiates.

    ``rates`` maps each coordinate symbol to its time derivative (an expression). ``time_derivative`` gives the
    velocity-product part of a derivative: speeds are held constant (u' = 0), parameters and inputs too, and
    ``t`` has rate 1; so d/dt(A(q) u + b) yields A' u + b', and d/dt S(q) yields S'.
    """

    def __init__(self, inputs: Mapping[str, tuple], prefix: str = "z"):
        self.inputs = {k: tuple(v) for k, v in inputs.items()}
        self.prefix = prefix
        self._assignments: list = []
        self._defs: dict = {}
        self._cache: dict = {}  # named expression -> its symbol
        self._free: dict = {}  # named symbol -> the free symbols of its definition
        self._assigned: dict = {}  # expression given to assign -> what assign returned (the builder only grows)
        self._dots: dict = {}
        self._const: set = set(self.inputs.get("params", ()))
        self.rates: dict = {}

    def assign(self, expr):
        """Return ``expr`` itself if trivial (a symbol, a number, a negated symbol) or a named intermediate.

        Parameter-only factors and terms inside ``expr`` are named first, so that they can be computed once per
        parameter set (see :meth:`Program.constant_symbols`).
        """
        expr = sp.sympify(expr)
        if expr.is_Atom:
            return expr
        done = self._assigned.get(expr)
        if done is None:
            done = self._assigned[expr] = self._assign(expr)
        return done

    def _assign(self, expr):
        if expr.is_Mul:  # keep a sign outside so that z and -z (and 2 z and -2 z) share one name
            coeff, rest = expr.as_coeff_Mul()
            if coeff.is_Number and _negative(coeff):
                rest = rest if float(coeff) == -1.0 else _negate_term(expr)
                return -self.assign(rest) if not rest.is_Atom else -rest
        elif expr.is_Add:
            negative = sum(1 for term in expr.args if _leading_minus(term))
            if 2 * negative > len(expr.args):
                return -self.assign(_negate_sum(expr))
            if 2 * negative == len(expr.args) and _first_term_negative(expr):
                return -self.assign(_negate_sum(expr))
        if not self._is_const(expr):
            expr = self._hoist(expr)
            if expr.is_Atom:
                return expr
        return self._name(expr)

    def _name(self, expr):
        cached = self._cache.get(expr)
        if cached is not None:
            return cached
        sym = KaneSymbol(f"{self.prefix}{len(self._assignments)}")
        self._assignments.append((sym, expr))
        self._defs[sym] = expr
        self._cache[expr] = sym
        self._free[sym] = free = expr.free_symbols
        if free <= self._const:
            self._const.add(sym)
        return sym

    def _is_const(self, expr) -> bool:
        if expr.is_Symbol:
            return expr in self._const
        return expr.is_Number or expr.free_symbols <= self._const

    def _hoist(self, e):
        """Name the parameter-only parts of ``e`` (a state-dependent expression)."""
        if e.is_Atom:
            return e
        if self._is_const(e):
            return e if e.is_Number else self.assign(e)  # signs kept outside, as for every name
        if e.is_Add:  # rebuilt (re-canonicalized by sympy) only where a part was named
            args = [self._hoist(a) for a in e.args]
            return e if all(x is y for x, y in zip(args, e.args)) else sp.Add(*args)
        if e.is_Mul:
            consts = [f for f in e.args if self._is_const(f)]
            vary = [f for f in e.args if not self._is_const(f)]
            others = [self._hoist(f) for f in vary]
            c = sp.Mul(*consts)
            if c.is_Atom and all(x is y for x, y in zip(others, vary)):
                return e
            if not c.is_Atom:
                coeff, rest = c.as_coeff_Mul()
                c = coeff * (rest if rest.is_Atom else self.assign(rest))
            return sp.Mul(c, *others)
        if e.is_Pow:
            return sp.Pow(self._hoist(e.args[0]), e.args[1])
        if isinstance(e, sp.Function):  # a function call is named once and shared (sin q, cos q, ...)
            return self._name(e.func(*[self._hoist(a) for a in e.args]))
        return e.func(*[self._hoist(a) for a in e.args])

    def assign_matrix(self, m) -> sp.Matrix:
        m = sp.Matrix(m)
        return m.applyfunc(self.assign)

    def definition(self, symbol):
        return self._defs.get(symbol)

    def time_derivative(self, expr):
        """d/dt of ``expr`` at u' = 0, through the intermediate variables (assigned, memoized)."""
        expr = sp.sympify(expr)
        total = sp.S.Zero
        for s in sorted(expr.free_symbols, key=sp.default_sort_key):  # creation order independent of hashing
            ds = self._symbol_rate(s)
            if ds != 0:
                total += expr.diff(s) * ds
        return self.assign(total)

    def _symbol_rate(self, s):
        if s in self._dots:
            return self._dots[s]
        if s in self.rates:
            rate = self.rates[s]
        elif s in self._defs:
            rate = self.time_derivative(self._defs[s])
        elif s in self.inputs.get("t", ()):
            rate = sp.S.One
        else:
            rate = sp.S.Zero
        self._dots[s] = rate
        return rate

    def build(self, outputs: Mapping[str, sp.MatrixBase], *, inputs: Mapping[str, tuple] | None = None,
              definitions: Mapping[sp.Symbol, sp.Expr] | None = None) -> Program:
        """Freeze into a :class:`Program`, ordering assignments so each follows what it uses.

        Outputs given as lists or tuples are vectors, sympy matrices are matrices (even 1 x 1).
        ``inputs`` replaces input groups (e.g. only the independent speeds) and ``definitions`` adds assignments
        for symbols that are inputs of the builder but computed in this program (e.g. dependent speeds).
        """
        vectors = frozenset(k for k, v in outputs.items() if isinstance(v, (list, tuple)))
        outs = {k: sp.ImmutableMatrix(len(v), 1, list(v)) if k in vectors else sp.ImmutableMatrix(v)
                for k, v in outputs.items()}
        order, seen = [], set()
        defs = dict(self._defs)
        extra = dict(definitions or {})
        defs.update(extra)
        roots = list(extra) + [s for s, _ in self._assignments]
        rank = {s: k for k, s in enumerate(roots)}  # the same order in every process, whatever the hash seed
        for sym in roots:
            if sym in seen:
                continue
            stack = [(sym, False)]
            while stack:
                s, ready = stack.pop()
                if ready:
                    if s not in seen:
                        seen.add(s)
                        order.append((s, defs[s]))
                    continue
                if s in seen:
                    continue
                stack.append((s, True))
                free = self._free[s] if s in self._free and s not in extra else defs[s].free_symbols
                deps = [d for d in free if d in defs and d not in seen]
                stack.extend((d, False) for d in sorted(deps, key=rank.__getitem__, reverse=True))
        order, outs = _fold_numbers(order, outs)
        groups = dict(self.inputs)
        groups.update(inputs or {})
        return Program(groups, tuple(order), outs, vectors)
