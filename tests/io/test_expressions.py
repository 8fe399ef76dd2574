"""Tests of the whitelist expression parser for model files (kane.io.expressions)."""

import builtins
import os

import pytest
import sympy

import kane.io
from kane.errors import KaneError, ModelError
from kane.io import FUNCTION_NAMES, ExpressionError, parse_expression, parse_number
from kane.io.expressions import MAX_DEPTH, MAX_LENGTH

a, b, c, k, m, g, x, y, v, t = sympy.symbols("a b c k m g x y v t")
q0, q1, u1, theta, omega, F0, tau = sympy.symbols("q0 q1 u1 theta omega F0 tau")
SYMBOLS = {s.name: s for s in (a, b, c, k, m, g, x, y, v, t, q0, q1, u1, theta, omega, F0, tau)}


def parse(text, symbols=SYMBOLS, **kwargs):
    return parse_expression(text, symbols, **kwargs)


def error_of(text, symbols=SYMBOLS, **kwargs):
    with pytest.raises(ExpressionError) as info:
        parse_expression(text, symbols, **kwargs)
    return info.value


# ---------------------------------------------------------------- accepted expressions, equal to sympy built by hand

@pytest.mark.parametrize("text, expected", [
    ("-k*(q1 - q0) - c*u1", -k * (q1 - q0) - c * u1),
    ("m*g*sin(theta)", m * g * sympy.sin(theta)),
    ("F0*cos(omega*t)", F0 * sympy.cos(omega * t)),
    ("sqrt(x**2 + y**2)", sympy.sqrt(x**2 + y**2)),
    ("2.5e-3", sympy.Float(2.5e-3)),
    ("-(a+b)/2", -(a + b) / 2),
    ("abs(u1)", sympy.Abs(u1)),
    ("sign(v)", sympy.sign(v)),
    ("atan2(y, x)", sympy.atan2(y, x)),
    ("min(a, b)", sympy.Min(a, b)),
    ("max(a, b, c)", sympy.Max(a, b, c)),
    ("max(0, k*x)", sympy.Max(0, k * x)),
    ("Heaviside(x)", sympy.Heaviside(x)),
    ("Heaviside(x, 0)", sympy.Heaviside(x, 0)),
    ("exp(-t/tau)", sympy.exp(-t / tau)),
    ("log(x) + tan(x) + asin(x) + acos(x) + atan(x)",
     sympy.log(x) + sympy.tan(x) + sympy.asin(x) + sympy.acos(x) + sympy.atan(x)),
    ("sinh(x)*cosh(y)/tanh(t)", sympy.sinh(x) * sympy.cosh(y) / sympy.tanh(t)),
    ("2*pi*omega*t", 2 * sympy.pi * omega * t),
    ("e**2", sympy.E**2),
    ("x**-2", x**-2),
    ("x**64", x**64),
    ("x**0.5", x**sympy.Float(0.5)),
    ("+x", x),
    ("--x", x),
    ("a - -b", a + b),
    ("1/3", sympy.Rational(1, 3)),
    ("2**10", sympy.Integer(1024)),
    ("1_000", sympy.Integer(1000)),
    ("(((x)))", x),
    ("a/b/c", a / (b * c)),
    ("a - b - c + x", a - b - c + x),
    ("2**3**2", sympy.Integer(512)),
    ("sin(pi/6)", sympy.Rational(1, 2)),
    ("sqrt(8)", 2 * sympy.sqrt(2)),
    ("  k*x\n", k * x),
    ("(a +\n b)", a + b),
])
def test_parsed_equals_hand_built(text, expected):
    assert parse(text) == expected


def test_floats_are_floats_and_integers_exact():
    assert isinstance(parse("9.81"), sympy.Float)
    assert parse("3") == 3 and isinstance(parse("3"), sympy.Integer)
    assert parse("(a+b)/2").equals((a + b) / 2)


def test_python_numbers_are_accepted():
    assert parse_expression(3, {}) == sympy.Integer(3)
    assert parse_expression(2.5, {}) == sympy.Float(2.5)


def test_symbols_shadow_constants_and_may_be_any_expression():
    eccentricity = sympy.Symbol("e")
    assert parse("e*x", {"e": eccentricity, "x": x}) == eccentricity * x
    q = sympy.Function("q")(t)
    assert parse("k*q", {"k": 2, "q": q}) == 2 * q
    assert parse("k*x", {"k": 1.5, "x": x}) == sympy.Float(1.5) * x


def test_mapping_values_are_never_sympified():
    with pytest.raises(TypeError, match="sympy expression or a real number"):
        parse("k", {"k": "__import__('os')"})


def test_long_flat_sums_are_not_nesting():
    text = " + ".join(f"{i}*x" for i in range(1, 700))
    assert parse(text) == sum(range(1, 700)) * x


def test_large_function_arguments_stay_unevaluated():
    many = {f"s{i}": sympy.Symbol(f"s{i}") for i in range(200)}
    result = parse("max(" + ", ".join(many) + ")", many)
    assert isinstance(result, sympy.Max) and set(result.args) == set(many.values())
    assert parse("max(" + ", ".join(str(i) for i in range(300)) + ")", {}) == 299


def test_public_names():
    assert set(kane.io.__all__) >= {"ExpressionError", "parse_expression", "parse_number", "FUNCTION_NAMES"}
    assert FUNCTION_NAMES == {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
                              "exp", "log", "sqrt", "abs", "sign", "min", "max", "Heaviside"}


# ---------------------------------------------------------------- error messages

def test_unknown_name_message_names_file_field_column_and_known_names():
    err = error_of("-kk*(q1 - q0)", {"k": k, "c": c, "q1": q1, "u1": u1, "t": t, "q0": q0},
                   source="model.toml", where="table [[loads]] #2, key 'force'")
    assert isinstance(err, ModelError) and isinstance(err, KaneError) and isinstance(err, ValueError)
    assert (err.source, err.where, err.column, err.line) == ("model.toml", "table [[loads]] #2, key 'force'", 2, 1)
    text = str(err)
    assert text.startswith("model.toml, table [[loads]] #2, key 'force': expression '-kk*(q1 - q0)', column 2")
    assert "unknown name 'kk'" in text and "did you mean 'k'?" in text
    assert "known names: k, c, q1, u1, t, q0, and the constants pi, e" in text
    assert "\n" not in text


def test_default_source_and_empty_where():
    err = error_of("kk")
    assert str(err).startswith("<expression>: expression 'kk', column 1")
    assert err.where == ""


@pytest.mark.parametrize("text, column, fragment", [
    ("k + )", 5, "unmatched ')'"),
    ("k // 2", 3, "operator '//'"),
    ("q1 %  k", 4, "operator '%'"),
    ("x @ y", 3, "operator '@'"),
    ("x << 2", 3, "operator '<<'"),
    ("x | y", 3, "operator '|'"),
    ("x & y", 3, "operator '&'"),
    ("x ^ y", 3, "operator '^'"),
    ("k*x + 1/0", 8, "division by zero"),
    ("sin(x) + cos(y, x)", 10, "cos() takes 1 argument, got 2"),
    ("sin(x=1)", 5, "keyword arguments"),
    ("sin(*x)", 5, "starred arguments"),
])
def test_errors_point_at_the_offending_column(text, column, fragment):
    err = error_of(text)
    assert err.column == column
    assert fragment in str(err)


def test_columns_count_characters_not_bytes():
    err = error_of("é + kk", {"é": x})
    assert err.column == 5


def test_multiline_text_reports_line_and_column():
    err = error_of("(k +\n  kk)")
    assert (err.line, err.column) == (2, 3)
    assert "line 2, column 3" in str(err) and "\n" not in str(err)


@pytest.mark.parametrize("text, fragment", [
    ("k.real", "attribute access"),
    ("x[0]", "indexing"),
    ("lambda: 1", "lambda"),
    ("[x for x in y]", "comprehensions"),
    ("{x for x in y}", "comprehensions"),
    ("{x: 1 for x in y}", "comprehensions"),
    ("sum(x for x in y)", "not an allowed function"),
    ("(x for x in y)", "comprehensions"),
    ("x < y", "comparisons are not allowed; use sign(), Heaviside(), min() or max()"),
    ("0 < x < 1", "comparisons"),
    ("x == y", "comparisons"),
    ("x and y", "'and' and 'or'"),
    ("x or y", "'and' and 'or'"),
    ("not x", "operator 'not'"),
    ("~x", "operator '~'"),
    ("x if y else k", "conditional expressions"),
    ("x, y", "tuples"),
    ("[x]", "lists"),
    ("{x}", "sets"),
    ("{1: x}", "dicts"),
    ("f'{x}'", "f-strings"),
    ("(x := 1)", "':='"),
    ("'a'", "a string"),
    ("b'a'", "bytes"),
    ("True", "a boolean"),
    ("None", "None is not allowed"),
    ("1j", "a complex number"),
    ("...", "Ellipsis is not allowed"),
    ("_x", "names beginning with '_'"),
    ("__builtins__", "names beginning with '_'"),
    ("foo(x)", "'foo' is not an allowed function"),
    ("k(x)", "'k' is not a function"),
    ("pi(2)", "'pi' is not a function"),
    ("sin", "'sin' is a function; call it as sin(...)"),
    ("f()()", "only functions named directly"),
    ("(k*x)(y)", "only functions named directly"),
    ("sin()", "sin() takes 1 argument, got 0"),
    ("atan2(y)", "atan2() takes 2 arguments, got 1"),
    ("min(a)", "min() takes 2 or more arguments, got 1"),
    ("Heaviside(x, 0, 1)", "Heaviside() takes 1 or 2 arguments, got 3"),
    ("log(x, 10)", "log() takes 1 argument, got 2"),
    ("nan", "unknown name 'nan'"),
    ("x +", "syntax error"),
    ("x = 1", "syntax error"),
    ("x; y", "syntax error"),
    ("k\0", "null bytes"),
    ("", "empty"),
    ("   ", "empty"),
])
def test_forbidden_constructs(text, fragment):
    assert fragment in str(error_of(text))


@pytest.mark.parametrize("text", ["1/0", "x/0", "x/(k - k)", "0**-1", "log(0)", "sqrt(-1)", "sqrt(-4)*x",
                                  "1e400", "(-8.0)**(1/3)"])
def test_non_finite_or_complex_values_are_refused(text):
    assert "ExpressionError" == type(error_of(text)).__name__


@pytest.mark.parametrize("value", [None, [1], {"a": 1}, True, float("nan"), float("inf")])
def test_non_string_input_is_refused(value):
    err = error_of(value, source="m.toml", where="key 'force'")
    assert str(err).startswith("m.toml, key 'force': expression")


# ---------------------------------------------------------------- hostile input: refused, nothing executed

MALICIOUS = [
    "__import__('os').system('touch SENTINEL')",
    "__import__('os')",
    "().__class__.__bases__",
    "().__class__.__bases__[0].__subclasses__()",
    "open('SENTINEL', 'w')",
    "open('SENTINEL', 'w').write('x')",
    "exec(\"open('SENTINEL', 'w')\")",
    "eval(\"open('SENTINEL', 'w')\")",
    "compile('1', 'f', 'eval')",
    "getattr(x, '__class__')",
    "globals()",
    "lambda: open('SENTINEL', 'w')",
    "[x for x in y]",
    "[open('SENTINEL', 'w') for _ in (1,)]",
    "x.real",
    "'a'",
    "9**9**9",
    "(" * 1000 + "x" + ")" * 1000,
    "-" * 5000 + "x",
    "sin(" * 150 + "x" + ")" * 150,
    "x" * (MAX_LENGTH + 1),
    "sympy.sympify('x')",
]


@pytest.mark.parametrize("text", MALICIOUS)
def test_malicious_input_is_refused_and_nothing_runs(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    imported, systems = [], []
    real_import = builtins.__import__

    def recording_import(name, *args, **kwargs):
        imported.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", recording_import)
    monkeypatch.setattr(os, "system", lambda command: systems.append(command))
    with pytest.raises(ExpressionError):
        parse(text, {"x": x, "y": y})
    monkeypatch.undo()
    assert "os" not in imported and "subprocess" not in imported
    assert systems == []
    assert not (tmp_path / "SENTINEL").exists()


# ---------------------------------------------------------------- resource limits

@pytest.mark.parametrize("text, fragment", [
    ("9**9**9", "exponent is too large"),
    ("2**65", "exponent is too large"),
    ("x**100", "exponent is too large"),
    ("x**-65", "exponent is too large"),
    ("x**1e10", "exponent is too large"),
    ("(2**64)**64", "power is too large"),
    ("((10**60)**18)**18", "too large"),
    ("1e308**64", "power is too large"),
    ("exp(exp(exp(700.0)))", "number is too large"),
    ("2**(999999/1000000)", "too costly"),
    ("(2**63 + 2**62 + 1)**(63/64)", "too costly"),
    ("*".join(f"sqrt({2**62 + 2 * i + 1})" for i in range(20)), "too costly"),
    ("sqrt(" + "*".join(["(2**60 + 1)"] * 9) + ")", "too costly"),
])
def test_oversized_numbers_are_refused_before_sympy_evaluates_them(text, fragment):
    assert fragment in str(error_of(text))


def test_moderate_exact_roots_are_allowed():
    assert parse("(2**60 + 1)**(1/2)") == sympy.sqrt(2**60 + 1)
    assert parse("12**(3/4)") == sympy.Integer(12) ** sympy.Rational(3, 4)


def test_text_length_limit():
    text = "+".join(["x"] * (MAX_LENGTH // 2))
    assert len(text) < MAX_LENGTH
    assert "too long" in str(error_of(text + "+x+x"))


def test_nesting_depth_limit():
    assert parse("sin(" * (MAX_DEPTH - 1) + "x" + ")" * (MAX_DEPTH - 1)) is not None
    err = error_of("sin(" * (MAX_DEPTH + 1) + "x" + ")" * (MAX_DEPTH + 1))
    assert "nested too deeply" in str(err)
    assert "nested" in str(error_of("(" * 300 + "x" + ")" * 300))


# ---------------------------------------------------------------- parse_number

@pytest.mark.parametrize("value, expected", [
    ("2*pi", 2 * 3.141592653589793),
    ("9.81/2", 4.905),
    (" 1e-3 ", 1e-3),
    (3, 3.0),
    (2.5, 2.5),
    ("-(1+2)/4", -0.75),
    ("sqrt(2)", 2**0.5),
    ("max(1, 2.5)", 2.5),
    ("Heaviside(0)", 0.5),
])
def test_parse_number(value, expected):
    result = parse_number(value)
    assert isinstance(result, float) and result == pytest.approx(expected, rel=1e-15)


def test_parse_number_with_numeric_symbols():
    assert parse_number("g/2", {"g": sympy.Float(9.81)}) == pytest.approx(4.905)


@pytest.mark.parametrize("value, fragment", [
    ("k*2", "depends on k"),
    ("sin(theta) + x", "depends on theta, x"),
    ("kk", "unknown name 'kk'"),
    ("sqrt(-1)", "not real"),
    ("1e308*10", "finite real number"),
    (True, "got bool"),
    ([1.0], "got list"),
    (None, "got NoneType"),
    (float("nan"), "finite real number"),
])
def test_parse_number_refuses_non_numbers(value, fragment):
    with pytest.raises(ExpressionError) as info:
        parse_number(value, SYMBOLS, source="model.toml", where="body 'arm', key 'mass'")
    assert str(info.value).startswith("model.toml, body 'arm', key 'mass': expression ")
    assert fragment in str(info.value)


# ---------------------------------------------------------------- names as written (NFKC folding)

@pytest.mark.parametrize("written, read, codepoint", [
    ("\uff4d", "m", "U+FF4D"),  # fullwidth m
    ("\ufb01", "fi", "U+FB01"),  # the ligature fi
    ("\u00b5", "\u03bc", "U+00B5"),  # micro sign -> Greek mu
    ("e\u0301", "\u00e9", "U+0301"),  # decomposed e-acute: NFKC composes it
])
def test_a_name_the_parser_would_fold_is_refused_naming_the_character(written, read, codepoint):
    import re
    import unicodedata

    assert unicodedata.normalize("NFKC", written) == read  # what the parser would have read
    with pytest.raises(ExpressionError, match=re.escape(codepoint)) as info:
        parse_expression(f"1 + {written}", {read: sympy.Symbol(read), written: sympy.Symbol(written)},
                         source="m.toml", where="key 'k'")
    assert f"{written!r} would stand for {read!r}" in str(info.value) and "column 5" in str(info.value)
    assert kane.io.expressions.folding_problem(read) is None
