"""Declarations of the tables and keys of a TOML model file: the one object each table's reader checks its keys
against and the model-file reference (``docs/reference/model-file.md``, :mod:`kane.model_reference`) is written
from, so the two cannot disagree.

A reader declares its table once::

    SPEC = TableSpec("realtime", "The default coupling of kane realtime.", keys=(
        KeySpec("body", "name", "the coupled body", required=True, example='"B"'),
        KeySpec("rate", "number", "loop rate", unit="Hz", default="1000", example="500.0")))

and checks a table's keys with ``SPEC.check(ctx)`` (``ctx`` a :class:`kane.io.model_context.Ctx`), or reads the
kind key and checks the keys of that kind with ``SPEC.kind(ctx)``. A key the reader accepts is a declared key:
an undeclared one is refused naming the table and the key, with the keys allowed.

A new table (such as ``[[collision]]``, read by its own module): declare its ``TableSpec`` beside the reader and
check every item with it; add its name to ``kane.io.model_tables.TOP_TABLES`` (and ``EXTENSION_TABLES`` when it is
read after ``parse_model``, through ``LoadedModel.context``), its spec to
:func:`kane.model_reference.table_specs`, and its reader to ``READERS`` in tests/io/test_model_schema.py, which
then loads every key's ``example``; regenerate the page with ``python -m kane.model_reference
docs/reference/model-file.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TYPES", "KeySpec", "KindSpec", "TableSpec", "check_fields"]

# the value types of keys, as the reference names and explains them
TYPES = {
    "expr": "a number, or an expression string of the symbols in scope",
    "vec": "a list of 3 `expr`",
    "vecs": "a list of `vec`",
    "exprs": "a list of `expr` (or one `expr`)",
    "3x3": "3 rows of 3 `expr`, or an inline table `{sequence, angles}`",
    "inertia": "[Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or 3 rows of 3 `expr`",
    "number": "a TOML number (no expression)",
    "numbers": "a (nested) list of TOML numbers",
    "integer": "a TOML integer",
    "string": "a string",
    "name": "a string naming another item of the file",
    "names": "a list of strings",
    "boolean": "true or false",
    "intervals": "a list of [start, end] pairs of `expr`",
    "matrix": "a list of rows of `expr`",
    "color": "[r, g, b] with each in 0-1, or a string \"#rrggbb\"",
    "speeds": "\"rates\", \"body\", or an inline table {Y = [[expr]], Z = [expr]}",
    "name or expr": "the name of another item, or an `expr`",
    "string or vec": "an axis name such as \"x\" or \"-z\", or a `vec`",
}


@dataclass(frozen=True)
class KeySpec:
    """One key: its ``name``, value ``type`` (one of :data:`TYPES`), what it means (``doc``), ``unit`` (SI, "" for
    none), ``default`` (as written in TOML; None: no default), ``allowed`` values (strings; () for any),
    ``required``, ``example`` (a TOML value that a reader accepts in the reference test's small models),
    ``kinds`` (for a key shared by kinds: the only kinds that take it; (): all) and ``fields`` (the keys of an
    inline table value)."""

    name: str
    type: str
    doc: str
    unit: str = ""
    default: str | None = None
    allowed: tuple[str, ...] = ()
    required: bool = False
    example: str = ""
    kinds: tuple[str, ...] = ()
    fields: tuple[KeySpec, ...] = ()

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"key {self.name!r}: type {self.type!r} is not one of {', '.join(TYPES)}")


@dataclass(frozen=True)
class KindSpec:
    """One kind of item of a table whose items have kinds (a joint's ``type``): its ``name``, ``doc`` and the
    ``keys`` only this kind takes."""

    name: str
    doc: str
    keys: tuple[KeySpec, ...] = ()


@dataclass(frozen=True)
class TableSpec:
    """One table of a model file: its ``name``, ``doc``, ``array`` (``[[name]]``, one table per item) or not
    (``[name]``), its ``keys`` (those of every kind), its ``kinds`` chosen by the key ``kind_key`` (with
    ``kind_doc``), and ``any_key`` where the table's keys are names the file chooses (``[parameters]``).
    ``reader`` names the function that reads it (for the reference)."""

    name: str
    doc: str
    keys: tuple[KeySpec, ...] = ()
    array: bool = False
    kinds: tuple[KindSpec, ...] = ()
    kind_key: str = "type"
    any_key: KeySpec | None = None
    reader: str = ""

    def __post_init__(self):
        names = [k.name for k in self.keys]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name!r}: a key is declared twice in {names}")
        kinds = {k.name for k in self.kinds}
        for key in self.keys:
            if set(key.kinds) - kinds:
                raise ValueError(f"table {self.name!r}, key {key.name!r}: unknown kinds {set(key.kinds) - kinds}")

    @property
    def title(self) -> str:
        return f"[[{self.name}]]" if self.array else f"[{self.name}]"

    def kind_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.kinds)

    def keys_for(self, kind: str | None = None, without=()) -> tuple[KeySpec, ...]:
        """The keys an item of ``kind`` (None for a table without kinds) takes, less the names ``without``."""
        own = () if kind is None else next(k.keys for k in self.kinds if k.name == kind)
        shared = tuple(k for k in self.keys if not k.kinds or kind in k.kinds)
        return tuple(k for k in (*shared, *own) if k.name not in without)

    def key(self, name: str, kind: str | None = None) -> KeySpec:
        return next(k for k in self.keys_for(kind) if k.name == name)

    def check(self, ctx, kind: str | None = None, without=(), what: str = "") -> None:
        """Refuse a key of ``ctx`` (a model_context.Ctx) that an item of ``kind`` does not take, and a missing
        required key; the error names the table, the key and the keys allowed."""
        if self.any_key is not None:
            return
        check_fields(ctx, self.keys_for(kind, without), what or (f" for a {kind} {self.name.rstrip('s')}"
                                                                  if kind else ""))

    def kind(self, ctx, default: str | None = None, what: str = "") -> str:
        """The kind key of ``ctx`` (one of the kinds; ``default`` where it is absent), after checking the keys of
        that kind."""
        kind = ctx.string(self.kind_key, default, choices=list(self.kind_names()))
        if kind is None:
            raise ctx.error(self.kind_key, f"missing required key '{self.kind_key}' (one of: "
                                           f"{', '.join(self.kind_names())})")
        self.check(ctx, kind, what=f" for a {kind} {what or self.name.rstrip('s')}")
        return kind


def check_fields(ctx, keys, what: str = "") -> None:
    """Refuse a key of ``ctx`` not among ``keys`` (KeySpecs) and a missing required one."""
    ctx.check_keys({k.name for k in keys}, tuple(k.name for k in keys if k.required), what)
