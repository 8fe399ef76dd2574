"""Tracing numeric algorithms into straight-line Programs: scalar helpers that form products and sums without
sympy's canonicalization (exact zeros and ones folded), and a :class:`ProgramBuilder` tuned for tracing.

An algorithm written once over sympy scalars names every quantity it forms through the builder, so running it
once *traces* it into a :class:`kane.codegen.Program` in the algorithm's own operation order (nothing is
re-associated: each intermediate is a named variable).
"""

from __future__ import annotations

import sympy as sp

from .program import ProgramBuilder

__all__ = ["TraceBuilder", "ZERO", "ONE", "MINUS_ONE", "mul", "traced_dot", "traced_power", "imul"]


ZERO = sp.S.Zero


ONE, MINUS_ONE = sp.S.One, sp.S.NegativeOne


def mul(x, y):
    """x y, formed without sympy's canonicalization unless both are numbers (exact zeros and ones folded)."""
    if x is ZERO or y is ZERO:
        return ZERO
    if x is ONE:
        return y
    if y is ONE:
        return x
    if x.is_Number and y.is_Number:
        return x * y
    return sp.Mul(x, y, evaluate=False)


def traced_dot(a, b):
    """Sum of products of two sequences of expressions of any length, exact zeros skipped, formed without
    canonicalization (an unevaluated Add: the traced order); sympy's canonical 3-vector product is
    :func:`kane.mechanics.kinematics.dot3`."""
    terms = [mul(x, y) for x, y in zip(a, b) if x is not ZERO and y is not ZERO]
    if len(terms) < 2:
        return terms[0] if terms else ZERO
    return sp.Add(*terms, evaluate=False)


def traced_power(m, f):
    """Scalar product of a motion and a force 6-vector (power), traced as :func:`traced_dot` forms it."""
    return traced_dot(m, f)


class TraceBuilder(ProgramBuilder):
    """A :class:`ProgramBuilder` tuned for tracing numeric algorithms: a sum is named as it stands (no search for
    a negated twin), and the parameter-only parts of an expression are only looked for when it has parameters."""

    def assign(self, expr):
        expr = sp.sympify(expr)
        if expr.is_Atom:
            return expr
        if expr.is_Mul:
            coeff, rest = expr.as_coeff_Mul()
            if coeff.is_Number and float(coeff) == -1.0:
                return -self.assign(rest) if not rest.is_Atom else -rest
        cached = self._cache.get(expr)
        if cached is not None:
            return cached
        free = expr.free_symbols
        if not free <= self._const and free & self._const:
            expr = self._hoist(expr)
            if expr.is_Atom:
                return expr
        return self._name(expr)


def imul(b: ProgramBuilder, I, s) -> list:
    """I s (6,) for a spatial inertia I (6 x 6 nested lists) and a motion vector s (6,), each entry named."""
    return [b.assign(traced_dot(I[r], s)) for r in range(6)]
