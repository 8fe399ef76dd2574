"""Names are compared as written (issue 27): Python's parser folds identifiers to NFKC, so a fullwidth "ｍ" would
be read as the parameter "m" and a math-bold "𝐬𝐢𝐧" as sin; both are refused naming the file, the field and the
character, while ASCII names and non-ASCII names that NFKC leaves alone (Greek θ) still work."""

from __future__ import annotations

import unicodedata

import pytest
import sympy

from kane.io.expressions import ExpressionError, parse_expression
from kane.io.model_file import ModelFileError, parse_model

FULLWIDTH_M = "\uff4d"  # ｍ, NFKC -> m
BOLD_SIN = "\U0001d42c\U0001d422\U0001d427"  # 𝐬𝐢𝐧, NFKC -> sin


def test_the_characters_are_the_folding_ones():  # the premise: the parser would read them as m and sin
    assert unicodedata.normalize("NFKC", FULLWIDTH_M) == "m"
    assert unicodedata.normalize("NFKC", BOLD_SIN) == "sin"
    assert unicodedata.normalize("NFKC", "θ") == "θ"


def test_a_fullwidth_m_next_to_m_is_refused_not_read_as_m():
    m, big = sympy.Symbol("m"), sympy.Symbol("M_big")
    with pytest.raises(ExpressionError) as info:
        parse_expression(f"9.81*{FULLWIDTH_M}", {"m": m, FULLWIDTH_M: big}, source="arm.toml",
                         where="table [[loads]] #1, key 'force'")
    text = str(info.value)
    assert "arm.toml" in text and "key 'force'" in text and "column 6" in text
    assert "U+FF4D FULLWIDTH LATIN SMALL LETTER M" in text and "would stand for 'm'" in text


def test_math_bold_sin_is_refused_not_read_as_sin():
    with pytest.raises(ExpressionError, match=r"column 1 .*U\+1D42C MATHEMATICAL BOLD SMALL S.*'sin'"):
        parse_expression(f"{BOLD_SIN}(1)", {}, source="f.toml", where="key 'x'")


def test_ascii_and_greek_names_still_work():
    theta, m = sympy.Symbol("θ"), sympy.Symbol("m")
    expr = parse_expression("2*m*sin(θ) + cos(θ)", {"m": m, "θ": theta})
    assert float(expr.subs({m: 3.0, theta: 0.5})) == pytest.approx(6 * 0.4794255386042030 + 0.8775825618903728,
                                                                   rel=1e-15)


MODEL = """
[parameters]
m = 1.0
{name} = 1000.0
[[bodies]]
name = "B"
mass = "{mass}"
inertia = [1, 1, 1]
[[joints]]
type = "prismatic"
parent = "ground"
child = "B"
axis = "x"
"""


def test_a_model_file_parameter_differing_by_folding_is_refused_with_its_key():
    with pytest.raises(ModelFileError) as info:
        parse_model(MODEL.format(name=f'"{FULLWIDTH_M}"', mass="m"), path="two_m.toml")
    text = str(info.value)
    assert "two_m.toml" in text and "[parameters]" in text and f"key '{FULLWIDTH_M}'" in text and "U+FF4D" in text


def test_a_greek_parameter_name_is_kept_and_used():
    loaded = parse_model(MODEL.format(name="\"θ\"", mass="θ/500"), path="greek.toml")
    body = loaded.system.compile().bodies[0]
    assert float(body.mass.subs(loaded.parameters)) == 2.0  # 1000 / 500: θ, not m (1.0)
