"""The ProgramBuilder's and sum_products' shortcuts past sympy's constructors give sympy's own canonical
expressions (same class, same arguments in the same order), and z and -z still share one name."""

import random

import sympy as sp

from kane.codegen.program import ProgramBuilder, _negate_sum
from kane.mechanics.kinematics import add, product, sum_products
from kane.model.model import KaneSymbol

SYMS = [KaneSymbol(f"w{k}") for k in range(6)] + list(sp.symbols("a b q1 u1"))
NUMS = [sp.Integer(2), sp.Integer(-1), sp.Rational(-1, 2), sp.Float(0.3), sp.Float(-7.25), sp.Float(1.0)]


def _monomials(rng, n):
    out = []
    for _ in range(n):
        k = rng.randint(0, 3)
        syms = rng.sample(SYMS, k)
        coeff = rng.choice(NUMS + [sp.S.One] * 3)
        out.append(sp.Mul(coeff, *syms) if syms else coeff)
    return out


def test_product_equals_sympys_mul_argument_for_argument():
    rng = random.Random(3)
    xs = _monomials(rng, 150) + [sp.sin(SYMS[0]), SYMS[1] + SYMS[2], SYMS[3] ** 2]
    checked = 0
    for x in xs:
        for y in rng.sample(xs, 12):
            ours, theirs = product(x, y), x * y
            assert type(ours) is type(theirs) and ours == theirs and ours.args == theirs.args, (x, y)
            checked += 1
    assert checked == 12 * len(xs)


def test_add_equals_sympys_add_argument_for_argument():
    rng = random.Random(7)
    pool = _monomials(rng, 40)  # few distinct monomials: like terms collect, some cancel to zero
    for _ in range(300):
        terms = rng.sample(pool, rng.randint(2, 8))
        terms += [-t for t in rng.sample(terms, rng.randint(0, 2))] + [sp.Integer(2) * t for t in terms[:1]]
        if rng.random() < 0.1:
            terms.append(sp.cos(SYMS[4]))  # not a monomial: sympy's Add
        ours, theirs = add(terms), sp.Add(*terms)
        assert type(ours) is type(theirs) and ours == theirs and ours.args == theirs.args, terms


def test_negated_sum_equals_sympys_negation_argument_for_argument():
    rng = random.Random(5)
    for _ in range(300):
        e = sp.Add(*_monomials(rng, rng.randint(2, 6)))
        if not e.is_Add:
            continue
        ours, theirs = _negate_sum(e), -e
        assert type(ours) is type(theirs) and ours.args == theirs.args, e


def test_a_sum_and_its_negation_share_one_name_and_the_sign_stays_outside():
    rng = random.Random(11)
    b = ProgramBuilder({"q": tuple(SYMS)})
    given = []
    for _ in range(200):
        e = sum_products([(x, y) for x, y in zip(_monomials(rng, 4), _monomials(rng, 4))])
        if e.is_Atom or not e.free_symbols:
            continue
        plus, minus = b.assign(e), b.assign(-e)
        given += [(e, plus), (-e, minus)]
        if e.is_Add:  # one of them is the name itself, the other its negative (never two names for z and -z)
            names = [s for s in (plus, minus) if s.is_Symbol]
            assert len(names) == 1 and {plus, minus} == {names[0], -names[0]}, e
    values = {s: 0.1 * (k + 1) for k, s in enumerate(SYMS)}
    for sym, expr in b._assignments:
        values[sym] = float(expr.xreplace(values))
    assert len(b._assignments) > 50 and len(given) > 300
    for e, result in given:  # what assign returned evaluates, through the named definitions, to what it was given
        want = float(e.xreplace(values))
        assert abs(float(result.xreplace(values)) - want) < 1e-12 * (1 + abs(want)), e
