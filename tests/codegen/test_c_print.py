"""The C printer's powers (issue 26, item 11): integer powers -3..8, +-1/2 and non-integer powers, alone and inside
products, compiled and evaluated, against sympy's evalf at 30 digits."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from kane.codegen import ProgramBuilder
from kane.codegen import c_backend
from kane.codegen.c_backend import CFunction

pytestmark = pytest.mark.skipif(not c_backend.compiler_available()[0], reason="no C compiler on this machine")

EXPONENTS = [*range(-3, 9), sp.Rational(1, 2), sp.Rational(-1, 2), sp.Rational(3, 2), sp.Float(2.7)]


def test_powers_compiled_equal_sympy_evalf(monkeypatch, tmp_path):
    monkeypatch.setenv("KANE_CACHE_DIR", str(tmp_path))
    t, x, v, a = sp.symbols("t x v a")
    b = ProgramBuilder({"t": (t,), "q": (x,), "u": (v,), "params": (a,), "inputs": ()})
    exprs = [x ** e for e in EXPONENTS]  # alone: the printer's Pow
    exprs += [a * x ** e for e in EXPONENTS]  # in a product: a negative power goes to the denominator
    exprs += [(x + v) ** e for e in EXPONENTS if e != 0]  # a base that is a sum
    exprs += [x ** a, x ** (a - 1), x ** -a]  # a symbol's power
    fn = CFunction(b.build({"y": exprs}), ["y"])
    rng = np.random.default_rng(11)
    for xv, vv, av in zip(rng.uniform(0.2, 3.0, 8), rng.uniform(0.1, 2.0, 8), rng.uniform(0.5, 2.5, 8)):
        got = fn(0.0, np.array([xv]), np.array([vv]), np.array([av]), np.zeros(0))[0]
        at = {x: sp.Float(xv, 30), v: sp.Float(vv, 30), a: sp.Float(av, 30)}
        ref = np.array([float(e.evalf(30, subs=at)) for e in exprs])
        rel = np.abs(got - ref) / np.abs(ref)
        assert np.all(rel < 1e-14), [(str(e), r) for e, r in zip(exprs, rel) if not r < 1e-14]
