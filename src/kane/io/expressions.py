"""Safe parsing of the expression strings found in model files (force laws, speeds, constraints).

Model files are data, never code. An expression such as ``"-k*(q1 - q0) - c*u1"`` is turned into a syntax
tree by :func:`ast.parse` (which parses and never evaluates) and that tree is walked against an explicit
whitelist: real number literals, names looked up in a caller-supplied mapping (plus the constants ``pi`` and
``e``), unary ``+``/``-``, binary ``+ - * / **``, parentheses, and calls of the functions in
:data:`FUNCTION_NAMES` named directly. Everything else raises :class:`ExpressionError`, whose message names the
file, the field, the column and what was expected. Sizes are bounded (text length, nesting depth, exponents,
exact numbers, arguments that sympy would simplify) so that a hostile file cannot keep sympy busy for hours.

Names are compared as written. Python's parser folds identifiers to their NFKC form, so that a fullwidth "ｍ"
would silently be read as the parameter "m" and a math-bold "𝐬𝐢𝐧" as the function sin: every name whose
written characters are not the ones the parser reads is refused, naming the character
(:func:`folding_problem`). Names that NFKC leaves as they are (Greek "θ", accented letters) are read as usual.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import math
import unicodedata
from collections.abc import Mapping

import sympy

from kane.errors import ModelError
from kane.model.model import float_value

__all__ = ["ExpressionError", "FUNCTION_NAMES", "folding_problem", "parse_expression", "parse_number"]

MAX_LENGTH = 10_000
MAX_DEPTH = 100
MAX_EXPONENT = 64
MAX_NUMBER_BITS = 1100
MAX_ROOT_WORK = 1024
MAX_EVALUATED_CALLS = 64  # calls of symbolic arguments simplified by sympy; later ones are kept as written

# name -> (sympy callable, fewest arguments, most arguments or None for no limit)
_FUNCTIONS = {
    "sin": (sympy.sin, 1, 1), "cos": (sympy.cos, 1, 1), "tan": (sympy.tan, 1, 1),
    "asin": (sympy.asin, 1, 1), "acos": (sympy.acos, 1, 1), "atan": (sympy.atan, 1, 1),
    "atan2": (sympy.atan2, 2, 2), "sinh": (sympy.sinh, 1, 1), "cosh": (sympy.cosh, 1, 1),
    "tanh": (sympy.tanh, 1, 1), "exp": (sympy.exp, 1, 1), "log": (sympy.log, 1, 1),
    "sqrt": (sympy.sqrt, 1, 1), "abs": (sympy.Abs, 1, 1), "sign": (sympy.sign, 1, 1),
    "min": (sympy.Min, 2, None), "max": (sympy.Max, 2, None), "Heaviside": (sympy.Heaviside, 1, 2),
}
FUNCTION_NAMES = frozenset(_FUNCTIONS)
# sympy simplifies calls by assumption queries whose cost grows fast with the arguments (Max of 32 symbols
# takes a second); calls whose arguments have more tree nodes than this stay unevaluated.
_EVALUATE_NODES = {"min": 8, "max": 8}
_EVALUATE_NODES_DEFAULT = 64
_CONSTANTS = {"pi": sympy.pi, "e": sympy.E}
_NOT_FINITE = frozenset({sympy.zoo, sympy.nan, sympy.oo, -sympy.oo, sympy.I})
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.FloorDiv: "//",
              ast.Mod: "%", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
              ast.BitAnd: "&", ast.BitXor: "^"}
_ALLOWED = "allowed functions: " + ", ".join(sorted(_FUNCTIONS, key=str.lower))
_EXPECTED = f"expected real numbers, names, + - * / **, parentheses and calls such as sin(x); {_ALLOWED}"
_ROOT_MESSAGE = ("this exact power or root of a large number is too costly to evaluate; write the number in "
                 "decimal form, such as 1.5e12 or 2.0**0.5")
_USE_INSTEAD = "use sign(), Heaviside(), min() or max()"
_FORBIDDEN = {
    ast.Attribute: "attribute access with '.' is not allowed", ast.Subscript: "indexing with [] is not allowed",
    ast.Lambda: "lambda is not allowed", ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed", ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.Compare: f"comparisons are not allowed; {_USE_INSTEAD}",
    ast.BoolOp: f"'and' and 'or' are not allowed; {_USE_INSTEAD}",
    ast.IfExp: f"conditional expressions (a if c else b) are not allowed; {_USE_INSTEAD}",
    ast.Tuple: "tuples are not allowed (an expression is a single value)", ast.List: "lists are not allowed",
    ast.Set: "sets are not allowed", ast.Dict: "dicts are not allowed", ast.JoinedStr: "f-strings are not allowed",
    ast.NamedExpr: "assignment with ':=' is not allowed",
}


class ExpressionError(ModelError):
    """An expression string is not an allowed expression.

    Attributes: ``source`` (the file or other origin), ``where`` (the field inside it), ``text`` (the
    expression as parsed, without surrounding blanks), ``line`` and ``column`` (1-based position of the
    offending part in ``text``, or None where unknown) and ``detail`` (what is wrong, what was expected).
    """

    def __init__(self, detail: str, *, text: object = "", source: str = "<expression>", where: str = "",
                 line: int | None = None, column: int | None = None, fragment: str = "") -> None:
        self.detail, self.text, self.source, self.where = detail, text, source, where
        self.line, self.column = line, column
        place = source + (f", {where}" if where else "")
        shown = text if not isinstance(text, str) or len(text) <= 120 else text[:117] + "..."
        position = ""
        if column is not None:
            position = f", column {column}" if line in (None, 1) else f", line {line}, column {column}"
            position += f" ({fragment!r})" if fragment else ""
        super().__init__(f"{place}: expression {shown!r}{position}: {detail}.")


class _Parser:
    """Walks one syntax tree against the whitelist, building the sympy expression bottom-up."""

    def __init__(self, text: str, symbols: Mapping[str, sympy.Basic], source: str, where: str) -> None:
        self.text, self.symbols, self.source, self.where = text, symbols, source, where
        self.lines = text.split("\n")
        self.calls = 0

    def error(self, detail: str, node: ast.AST | None = None, line: int | None = None,
              byte_col: int | None = None) -> ExpressionError:
        """An ExpressionError located at ``node``, or at (line, UTF-8 byte column) as ast counts them."""
        fragment = ""
        if node is not None:
            line, byte_col = node.lineno, node.col_offset
            fragment = ast.get_source_segment(self.text, node) or ""
            fragment = fragment if len(fragment) <= 40 else fragment[:37] + "..."
        column = None
        if line is not None and byte_col is not None and 1 <= line <= len(self.lines):
            column = len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
        return ExpressionError(detail, text=self.text, source=self.source, where=self.where,
                               line=line, column=column, fragment=fragment)

    def check_names_as_written(self, tree: ast.AST) -> None:
        """Refuse a name whose written characters differ from the identifier the parser read (NFKC folding)."""
        raw = [line.encode("utf-8") for line in self.lines]
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.lineno == node.end_lineno:
                written = raw[node.lineno - 1][node.col_offset:node.end_col_offset].decode("utf-8", "replace")
                if written != node.id:
                    raise self.error(f"the name {written!r} is not read as written: "
                                     f"{folding_problem(written) or 'it changes when parsed'}", node)

    def operator_error(self, detail: str, node: ast.BinOp) -> ExpressionError:
        """An error located at the operator of ``node`` (found between its operands), else at the node."""
        left, right = node.left, node.right
        if left.end_lineno == right.lineno:
            raw = self.lines[right.lineno - 1].encode("utf-8")
            found = raw.find(_OPERATORS[type(node.op)].encode(), left.end_col_offset, right.col_offset)
            if found >= 0:
                return self.error(detail, line=right.lineno, byte_col=found)
        return self.error(detail, node)

    def build(self, node: ast.AST, depth: int) -> sympy.Expr:
        """The sympy value of ``node``, checked to be finite, real and of bounded size."""
        if depth > MAX_DEPTH:
            raise self.error(f"the expression is nested too deeply (more than {MAX_DEPTH} levels)", node)
        value = self.build_node(node, depth)
        if value in _NOT_FINITE or (value.is_Add or value.is_Mul) and any(a in _NOT_FINITE for a in value.args):
            raise self.error("the value is infinite, undefined or not real (a division by zero, log(0), the "
                             "root of a negative number?); expected a finite real expression", node)
        if _magnitude_bits(_coefficient(value)) > MAX_NUMBER_BITS:
            raise self.error(f"a number is too large (more than {MAX_NUMBER_BITS} bits)", node)
        return value

    def build_node(self, node: ast.AST, depth: int) -> sympy.Expr:
        """Dispatch on the node type; anything not whitelisted raises ExpressionError."""
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.build(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.UnaryOp):
            token = "not" if isinstance(node.op, ast.Not) else "~"
            raise self.error(f"operator '{token}' is not allowed; {_EXPECTED}", node)
        if isinstance(node, ast.BinOp):
            return self.binary(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        detail = _FORBIDDEN.get(type(node), f"{type(node).__name__} is not allowed")
        raise self.error(f"{detail}; {_EXPECTED}", node)

    def constant(self, node: ast.Constant) -> sympy.Expr:
        """A real number literal (exact for integers); strings, bytes, booleans, None, complex are refused."""
        value = node.value
        if type(value) is int:
            return sympy.Integer(value)
        if type(value) is float:
            if not math.isfinite(value):
                raise self.error("the number is out of the range of a double", node)
            return sympy.Float(value)
        kind = {str: "a string", bytes: "bytes", bool: "a boolean", complex: "a complex number"}
        raise self.error(f"{kind.get(type(value), repr(value))} is not allowed; {_EXPECTED}", node)

    def name(self, node: ast.Name) -> sympy.Expr:
        """A symbol from the mapping, or one of the constants pi and e (the mapping takes precedence)."""
        name = node.id
        if name.startswith("_"):
            raise self.error(f"names beginning with '_' are not allowed (got '{name}')", node)
        if name in self.symbols:
            return _as_sympy(name, self.symbols[name])
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in _FUNCTIONS:
            raise self.error(f"'{name}' is a function; call it as {name}(...)", node)
        known = [n for n in self.symbols if not n.startswith("_")]
        close = difflib.get_close_matches(name, known + list(_CONSTANTS), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        listed = ", ".join(known[:30]) + (f" and {len(known) - 30} more" if len(known) > 30 else "")
        listed = (listed + ", " if listed else "") + "and the constants pi, e"
        raise self.error(f"unknown name '{name}'{hint}; known names: {listed}", node)

    def binary(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        """Sums and products are flattened (long chains are not nesting); powers are guarded."""
        if isinstance(node.op, ast.Pow):
            base, exponent = self.build(node.left, depth + 1), self.build(node.right, depth + 1)
            return self.checked_power(base, exponent, node, node.right)
        if not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            raise self.operator_error(f"operator '{_OPERATORS[type(node.op)]}' is not allowed; {_EXPECTED}", node)
        kinds = (ast.Add, ast.Sub) if isinstance(node.op, (ast.Add, ast.Sub)) else (ast.Mult, ast.Div)
        chain = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, kinds):
            chain.append(node)
            node = node.left
        items = [self.build(node, depth + 1)]
        for link in reversed(chain):
            item = self.build(link.right, depth + 1)
            if isinstance(link.op, ast.Sub):
                item = -item
            elif isinstance(link.op, ast.Div):
                if item.is_zero:
                    raise self.operator_error("division by zero", link)
                item = self.checked_power(item, sympy.S.NegativeOne, link)
            items.append(item)
        if kinds[0] is ast.Add:
            return sympy.Add(*items)
        if sum(_root_work(item, sympy.S.One) for item in items) > MAX_ROOT_WORK:
            raise self.error(_ROOT_MESSAGE, chain[0])
        return sympy.Mul(*items)

    def checked_power(self, base: sympy.Expr, exponent: sympy.Expr, node: ast.AST,
                      exponent_node: ast.AST | None = None) -> sympy.Expr:
        """base**exponent, refusing numeric exponents, powers and exact roots that sympy would labour on."""
        if exponent.is_Number:
            if abs(exponent) > MAX_EXPONENT:
                raise self.error(f"the exponent is too large; expected at most {MAX_EXPONENT} in magnitude",
                                 exponent_node or node)
            if base.is_zero and exponent.is_negative:
                raise self.error("division by zero (zero to a negative power)", node)
            if base.is_Number and base.is_negative and not exponent.is_Integer:
                raise self.error("a negative number to a fractional power is not real", node)
            if _magnitude_bits(_coefficient(base)) * abs(exponent) > MAX_NUMBER_BITS:
                raise self.error(f"the power is too large (more than {MAX_NUMBER_BITS} bits)", node)
            if exponent.is_Rational and _root_work(base, exponent) > MAX_ROOT_WORK:
                raise self.error(_ROOT_MESSAGE, node)
        return sympy.Pow(base, exponent)

    def call(self, node: ast.Call, depth: int) -> sympy.Expr:
        """A call of a whitelisted function named directly, with positional arguments only."""
        if not isinstance(node.func, ast.Name):
            detail = f"only functions named directly may be called, such as sin(x); {_ALLOWED}"
            raise self.error(detail, node.func)
        name = node.func.id
        if name not in _FUNCTIONS:
            known = name in self.symbols or name in _CONSTANTS
            raise self.error(f"'{name}' is not {'a' if known else 'an allowed'} function; {_ALLOWED}", node.func)
        if node.keywords:
            raise self.error(f"keyword arguments are not allowed in {name}(...)", node.keywords[0])
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.error(f"starred arguments are not allowed in {name}(...)", arg)
        function, fewest, most = _FUNCTIONS[name]
        if len(node.args) < fewest or (most is not None and len(node.args) > most):
            wanted = f"{fewest} or more" if most is None else f"{fewest} or {most}" if most > fewest else f"{fewest}"
            plural = "" if wanted == "1" else "s"
            raise self.error(f"{name}() takes {wanted} argument{plural}, got {len(node.args)}", node)
        args = [self.build(arg, depth + 1) for arg in node.args]
        if name == "sqrt":
            return self.checked_power(args[0], sympy.S.Half, node)
        if all(a.is_Number for a in args):
            return function(*args, evaluate=True)
        self.calls += 1  # each symbolic simplification costs about a millisecond: a budget per expression
        limit = _EVALUATE_NODES.get(name, _EVALUATE_NODES_DEFAULT)
        return function(*args, evaluate=self.calls <= MAX_EVALUATED_CALLS and _is_small(args, limit))


def folding_problem(name: str) -> str | None:
    """What is wrong with ``name`` as written: the first character at which Unicode compatibility folding (NFKC,
    as Python's parser applies to identifiers) changes it, and the name it becomes; None when NFKC leaves it as
    it is."""
    if name.isascii() or unicodedata.normalize("NFKC", name) == name:
        return None
    folded = unicodedata.normalize("NFKC", name)
    at = next(i for i in range(1, len(name) + 1) if unicodedata.normalize("NFKC", name[:i]) != name[:i]) - 1
    bad = name[at]
    return (f"the character {bad!r} (U+{ord(bad):04X} {unicodedata.name(bad, 'unnamed')}) is folded by Python's "
            f"parser (NFKC), so {name!r} would stand for {folded!r}; names are compared as written: use "
            f"{folded!r} if that is meant, or other characters")


def _is_small(args: list[sympy.Expr], limit: int) -> bool:
    """Whether the arguments have at most ``limit`` tree nodes in all (counting stops past the limit)."""
    nodes = (node for arg in args for node in sympy.preorder_traversal(arg))
    return sum(1 for _ in itertools.islice(nodes, limit + 1)) <= limit


def _magnitude_bits(number: sympy.Expr | None) -> int:
    """Bits of an exact rational's numerator or denominator, or of a float's binary exponent (0 for None)."""
    if number is None:
        return 0
    if number.is_Rational:
        return max(abs(number.p).bit_length(), abs(number.q).bit_length())
    _, mantissa, exponent, bit_count = number._mpf_
    return abs(exponent + bit_count) if mantissa else 0


def _coefficient(expr: sympy.Expr) -> sympy.Expr | None:
    """The number itself, or the leading number sympy keeps in a sum or product, else None."""
    if expr.is_Number:
        return expr
    return expr.args[0] if (expr.is_Add or expr.is_Mul) and expr.args[0].is_Number else None


def _root_work(base: sympy.Expr, exponent: sympy.Rational) -> int:
    """Bits of the exact numbers sympy would factor to form base**exponent, times the exponent's terms.

    sympy takes exact roots by factoring (sqrt(8) -> 2*sqrt(2)), also when it merges roots with a common
    exponent in a product; for numbers of a few hundred bits that takes minutes.
    """
    total = 0
    for factor in base.args if base.is_Mul else (base,):
        inner, power = (factor.base, factor.exp) if factor.is_Pow else (factor, sympy.S.One)
        effective = power * exponent
        if inner.is_Rational and effective.is_Rational and not effective.is_Integer:
            total += _magnitude_bits(inner) * max(abs(effective.p), effective.q)
    return total


def _as_sympy(name: str, value: object) -> sympy.Expr:
    """A mapping value as a sympy expression; only sympy expressions and real Python numbers are accepted."""
    if isinstance(value, sympy.Expr):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return sympy.Integer(value)
    if isinstance(value, float):
        return sympy.Float(value)
    raise TypeError(f"symbols[{name!r}] must be a sympy expression or a real number, not {type(value).__name__}")


def parse_expression(text: str | int | float, symbols: Mapping[str, sympy.Basic], *,
                     source: str = "<expression>", where: str = "") -> sympy.Expr:
    """Parse ``text`` into a sympy expression by whitelist, never running it as code.

    ``symbols`` maps the names the expression may use to sympy expressions (they shadow the constants ``pi``
    and ``e``). ``source`` (usually the file name) and ``where`` (the field, such as
    "table [[loads]] #2, key 'force'") go into error messages. A real Python number is returned as a sympy
    number. Raises :class:`ExpressionError` for anything outside the whitelist or beyond the size limits.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return sympy.Integer(text)
    if isinstance(text, float) and math.isfinite(text):
        return sympy.Float(text)
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression string or a finite real number, got {text!r}",
                              text=text, source=source, where=where)
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is too long ({len(text)} characters; at most {MAX_LENGTH})",
                              text=text, source=source, where=where)
    stripped = text.strip()
    if not stripped:
        raise ExpressionError("the expression is empty; expected a number or a formula", text=text,
                              source=source, where=where)
    parser = _Parser(stripped, symbols, source, where)
    try:
        tree = ast.parse(stripped, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error: {exc.msg}; {_EXPECTED}", text=stripped, source=source,
                              where=where, line=exc.lineno, column=exc.offset) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise parser.error(f"the expression cannot be parsed ({type(exc).__name__}): it is nested too "
                           "deeply, too long or contains forbidden characters") from None
    if not stripped.isascii():
        parser.check_names_as_written(tree)
    expr = parser.build(tree.body, 1)
    if expr.has(*_NOT_FINITE):
        raise parser.error("the value is infinite, undefined or not real; expected a finite real expression")
    return expr


def parse_number(value: str | int | float, symbols: Mapping[str, sympy.Basic] | None = None, *,
                 source: str = "<expression>", where: str = "") -> float:
    """A plain real number from a number or a constant expression such as "2*pi" or "9.81/2".

    Names in ``symbols`` may be used only where they stand for numbers; a value left with free symbols, or
    one that is not a finite real number, raises :class:`ExpressionError`.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ExpressionError(f"expected a real number or a constant expression string, got "
                              f"{type(value).__name__}", text=value, source=source, where=where)
    expr = parse_expression(value, symbols or {}, source=source, where=where)
    free = sorted(str(s) for s in expr.free_symbols)
    if free:
        raise ExpressionError(f"expected a plain number, but the value depends on {', '.join(free)}",
                              text=value, source=source, where=where)
    try:
        return float_value(expr, {})
    except (OverflowError, RecursionError):
        detail = "expected a finite real number; the value is beyond the range of a double (about 1.8e308)"
    except (TypeError, ValueError, ZeroDivisionError):
        detail = "expected a plain real number, but the value cannot be evaluated to one"
    raise ExpressionError(detail, text=value, source=source, where=where) from None
