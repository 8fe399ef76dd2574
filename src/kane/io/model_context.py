"""Checking machinery of TOML model files: errors that name the file, table, key and line; typed values.

Used by :mod:`kane.io.model_tables` (the translators of each table) and :mod:`kane.io.model_file` (the loader).
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from dataclasses import dataclass

import sympy as sp

from ..errors import ModelError
from ..model.model import float_value
from ..model.system import GROUND, t
from .expressions import ExpressionError, parse_expression

__all__ = ["ModelFileError", "SimulationSettings", "Ctx", "Loader", "type_name"]


class ModelFileError(ModelError):
    """A model file is invalid. Attributes: ``path``, ``table`` (e.g. ``[[joints]] #2 'caster'``), ``key``,
    ``line`` (1-based, or None where unknown) and ``reason`` (what was expected)."""

    def __init__(self, path, table: str | None, key: str | None, line: int | None, reason: str):
        self.path, self.table, self.key, self.line, self.reason = str(path), table, key, line, reason
        where = ", ".join(p for p in (table, f"key '{key}'" if key else None) if p)
        at = f" (line {line})" if line else ""
        super().__init__(f"model file {self.path}: {where}{at}: {reason}" if where else
                         f"model file {self.path}{at}: {reason}")


@dataclass(frozen=True)
class SimulationSettings:
    """Run settings from ``[simulation]``: times [s], the method's name, tolerances, fixed step ``dt`` [s],
    sampling interval ``output_dt`` [s] (None: every step), ``max_step`` [s] and the dependent speeds."""

    t_start: float = 0.0
    t_end: float = 10.0
    method: str = "dopri5"
    rtol: float = 1e-8
    atol: float = 1e-10
    dt: float | None = None
    output_dt: float | None = 0.01
    max_step: float = math.inf
    dependent: tuple[str, ...] | None = None


def type_name(v) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    return {str: "a string", list: "a list", dict: "a table"}.get(type(v), f"a {type(v).__name__}")


def _line_index(text: str) -> dict:
    """(table, index, key) -> 1-based line of ``key = ...`` for top-level keys of every table in the text."""
    out, table, index, counts = {}, None, None, {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[(\[)?\s*(\"[^\"]*\"|'[^']*'|[A-Za-z_][\w.\-]*)\s*\](?(1)\])\s*(#.*)?$", line)
        if m:
            table = m.group(2).strip("\"'")
            if m.group(1):
                index = counts.get(table, 0)
                counts[table] = index + 1
            else:
                index = None
            out.setdefault((table, index, None), n)
            continue
        k = re.match(r"\s*(\"[^\"]*\"|'[^']*'|[\w\-]+)\s*=", line)
        if k:
            out.setdefault((table, index, k.group(1).strip("\"'")), n)
    return out


class Ctx:
    """One table of the file: checks keys and values, converts them, and raises errors that name it."""

    def __init__(self, loader: Loader, table: str, data: dict, index: int | None = None, label: str = ""):
        self.loader, self.table, self.data, self.index = loader, table, data, index
        name = data.get("name") if isinstance(data.get("name"), str) else label
        self.label = (f"[[{table}]] #{index + 1}" + (f" '{name}'" if name else "")) if index is not None \
            else f"[{table}]"

    def error(self, key, reason) -> ModelFileError:
        lines = self.loader.lines
        line = lines.get((self.table, self.index, key)) or lines.get((self.table, self.index, None)) or (
            lines.get((key, None, None)) if not self.table else None)
        return ModelFileError(self.loader.path, self.label, key, line, reason)

    def check_keys(self, allowed, required=(), what=""):
        for key in self.data:
            if key not in allowed:
                raise self.error(key, f"unknown key{what}; allowed keys: {', '.join(sorted(allowed))}")
        for key in required:
            if key not in self.data:
                raise self.error(key, f"missing required key '{key}'")

    @contextmanager
    def guard(self, key=None):
        """Turn a kane.ModelError raised while building into a ModelFileError naming this table and key."""
        try:
            yield
        except ModelFileError:
            raise
        except ModelError as exc:
            raise self.error(_key_named(str(exc), key, self.data), str(exc)) from None

    def get(self, key, default=None):
        return self.data.get(key, default)

    def ref(self, key, known, what="body", ground=True, default=None) -> str:
        """A name from ``known`` (bodies, or joints), or "ground" where ``ground``."""
        name = self.string(key, default)
        if name is None:
            raise self.error(key, f"missing required key '{key}'")
        if name not in known and not (ground and name == GROUND):
            choices = sorted(known) + ([GROUND] if ground else [])
            raise self.error(key, f"no {what} named {name!r}; expected one of: {', '.join(choices)}")
        return name

    def string(self, key, default=None, choices=None) -> str | None:
        v = self.data.get(key, default)
        if v is None:
            return None
        if not isinstance(v, str):
            raise self.error(key, f"expected a string, got {type_name(v)}")
        if choices is not None and v not in choices:
            raise self.error(key, f"expected one of {', '.join(repr(c) for c in choices)}, got {v!r}")
        return v

    def boolean(self, key, default=False) -> bool:
        v = self.data.get(key, default)
        if not isinstance(v, bool):
            raise self.error(key, f"expected true or false, got {type_name(v)}")
        return v

    def names(self, key, n=None) -> tuple[str, ...] | None:
        v = self.data.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.error(key, f"expected a list of names (strings), got {type_name(v)}")
        if n is not None and len(v) != n:
            raise self.error(key, f"expected {n} names, got {len(v)}")
        return tuple(v)

    def expr(self, key, symbols, value=None, item="") -> sp.Expr:
        v = self.data.get(key) if value is None else value
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise self.error(key, f"expected a number or an expression string{item}, got {type_name(v)}")
        if isinstance(v, int):
            return sp.Integer(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise self.error(key, f"expected a finite number{item}, got {v}")
            return sp.Float(v)
        e = self.loader.parse(v, symbols, self, key)
        self.evaluate(key, e, item=item, partial=True)  # every part of parameters alone: finite and real
        return e

    def vector(self, key, symbols, n=3, value=None) -> tuple:
        v = self.data.get(key) if value is None else value
        if not isinstance(v, list) or len(v) != n:
            got = f"{len(v)} items" if isinstance(v, list) else type_name(v)
            raise self.error(key, f"expected a list of {n} numbers or expression strings, got {got}")
        return tuple(self.expr(key, symbols, x, f" (item {i + 1})") for i, x in enumerate(v))

    def number(self, key, symbols, default=None, positive=False) -> float | None:
        """A float from a number or an expression of the parameters (evaluated with their values)."""
        v = self.data.get(key, default)
        if v is None:
            return None
        return self.evaluate(key, self.expr(key, symbols, v), positive)

    def evaluate(self, key, e, positive=False, item="", partial=False) -> float | None:
        """The value of ``e`` in double precision at the parameter values; with ``partial``, None where ``e``
        depends on more than the parameters (after every part of parameters alone was checked)."""
        try:
            x = float_value(sp.sympify(e), self.loader.values, partial)
        except KeyError as exc:
            raise self.error(key, f"expected a value computable from the parameters{item}, got {_short(e)} "
                                  f"(it depends on {exc.args[0]})") from None
        except (OverflowError, RecursionError):
            raise self.error(key, f"the value{item} is beyond the range of a double (about 1.8e308) or not "
                                  f"finite at the parameter values: {_short(e)}") from None
        except (ValueError, ZeroDivisionError):
            raise self.error(key, f"the value{item} is not a finite real number at the parameter values (a "
                                  f"division by zero, or a function outside its domain): {_short(e)}") from None
        except TypeError as exc:
            raise self.error(key, f"the value{item} cannot be evaluated ({exc}): {_short(e)}") from None
        if x is not None and positive and not x > 0:
            raise self.error(key, f"expected a value > 0{item}, got {x:g}")
        return x


def _key_named(message: str, default, data: dict):
    """The key a builder's message names ("... field 'q0' ...", "body name ...", "coordinate/speed name ..."),
    else ``default``."""
    field = re.search(r"field '(\w+)'", message)
    if field:
        return field.group(1)
    if re.search(r"\b(body|joint|constraint|load) name\b", message):
        return "name"
    taken = re.search(r"coordinate/speed name '([^']*)'", message)
    if taken:
        listed = [k for k in ("coordinates", "speed_names") if taken.group(1) in (data.get(k) or ())]
        return listed[0] if listed else "name"
    return default


def _short(e) -> str:
    text = str(e)
    return text if len(text) <= 80 else text[:77] + "..."


class Loader:
    def __init__(self, text: str, path):
        self.path, self.lines = path, _line_index(text)
        self.values: dict = {}
        self.params: dict = {}
        self.inputs: dict = {}
        self.base = {"t": t}
        self.named: dict = {}

    def parse(self, text, symbols, ctx: Ctx, key) -> sp.Expr:
        try:
            return parse_expression(text, symbols, source=str(self.path), where=f"{ctx.label}, key '{key}'")
        except ExpressionError as exc:
            col = f", column {exc.column}" if exc.column else ""
            raise ctx.error(key, f"bad expression {text!r}{col}: {exc.detail}") from None

    def scope(self, *extra) -> dict:
        out = dict(self.base)
        for d in (self.params, self.inputs, *extra):
            out.update(d)
        return out

