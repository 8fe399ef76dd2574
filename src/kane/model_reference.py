"""The model-file reference (docs/reference/model-file.md), written in Markdown from the declarations the readers of
a model file check their keys against (:mod:`kane.io.model_schema`), so a key a reader accepts is in the reference.

``python -m kane.model_reference [PATH]`` writes it (default: print it); the documentation build calls
:func:`render_reference` through docs/_ext/model_reference.py.
"""

from __future__ import annotations

import json
import sys
import tomllib

from .io.model_keys import CORE_TABLES, FORMAT_NOTES
from .io.model_schema import TYPES, KeySpec, TableSpec
from .io.model_surfaces import CONTACTS, SURFACES
from .io.model_tables import TOP_TABLES
from .realtime.model_table import REALTIME
from .switching.model_table import SWITCHING
from .viz.visuals import VISUALS

__all__ = ["table_specs", "render_reference", "main"]

_HEADER = "| key | type | unit | default | allowed | required | meaning |\n| --- | --- | --- | --- | --- | --- | --- |"


def table_specs() -> dict[str, TableSpec]:
    """name -> declaration of every table of a model file, in the order of ``kane.io.model_tables.TOP_TABLES``
    (tables declared without a place there last)."""
    specs = {s.name: s for s in (*CORE_TABLES, REALTIME, VISUALS, SURFACES, CONTACTS, SWITCHING)}
    order = [n for n in TOP_TABLES if n in specs] + [n for n in specs if n not in TOP_TABLES]
    return {n: specs[n] for n in order}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _toml(text: str) -> bool:
    """True where ``text`` is a TOML value (shown as code), False for words ("the file's stem")."""
    try:
        tomllib.loads(f"x = {text}")
    except tomllib.TOMLDecodeError:
        return False
    return True


def _value(text: str | None) -> str:
    if text is None:
        return ""
    return f"`{text}`" if _toml(text) else _cell(text)


def _row(key: KeySpec, kinds=()) -> str:
    allowed = ", ".join(f"`{json.dumps(a) if key.type == 'string' else a}`" for a in key.allowed)
    others = [k for k in kinds if k not in key.kinds]
    note = "" if not key.kinds else f" (not for: {', '.join(others)})" if len(others) < len(key.kinds) else \
        f" (only for: {', '.join(key.kinds)})"
    doc = key.doc + note
    cells = (f"`{key.name}`", f"`{key.type}`", _cell(key.unit), _value(key.default), allowed,
             "yes" if key.required else "", _cell(doc))
    return "| " + " | ".join(cells) + " |"


def _keys(keys, lead: str, kinds=()) -> list[str]:
    if not keys:
        return []
    out = [lead, "", _HEADER, *(_row(k, kinds) for k in keys), ""]
    for key in keys:
        if key.fields:
            out += _keys(key.fields, f"The inline table `{key.name} = {{...}}` takes:")
    return out


def _table(spec: TableSpec) -> list[str]:
    out = [f"## `{spec.title}`", "", spec.doc + (" One table per item." if spec.array else ""), ""]
    if spec.reader:
        out += [f"Read by `{spec.reader}`.", ""]
    if spec.any_key is not None:
        k = spec.any_key
        out += [f"Every key is a name the file chooses: `{k.name} = ...`, of type `{k.type}`: {k.doc}.", "",
                "```toml", spec.title, f"{k.name.lower()} = {k.example}", "```", ""]
        return out
    lead = (f"Keys of every kind (the kind is chosen by `{spec.kind_key}`):" if spec.kinds else "Keys:")
    out += _keys(spec.keys, lead, spec.kind_names())
    for kind in spec.kinds:
        out += [f"### `{spec.title}` {spec.kind_key} = \"{kind.name}\"", "", kind.doc[0].upper() + kind.doc[1:] + ".",
                ""]
        out += _keys(kind.keys, "Its own keys:") or ["No other keys.", ""]
        shared_only = [k.name for k in spec.keys if k.kinds and kind.name not in k.kinds]
        if shared_only:
            out += [f"It does not take {', '.join(f'`{n}`' for n in shared_only)}.", ""]
    return out


def render_reference() -> str:
    """The model-file reference in Markdown (MyST and GitHub render it): the format's rules, the value types, and
    every table with every key's type, unit, default, allowed values, whether it is required, and its meaning."""
    specs = table_specs()
    out = ["# Model-file reference", "",
           "<!-- Written by kane.model_reference.render_reference() from the declarations the model-file readers "
           "check keys against; do not edit (tests/io/test_model_schema.py compares). -->", "",
           "A model file is a TOML file that describes a multibody system: `kane derive`, `kane simulate`, "
           "`kane view` and the other commands read it, and `kane.io.load_model(path)` loads it in Python. "
           f"It has these tables: {', '.join(f'`{s.title}`' for s in specs.values())}.", "",
           FORMAT_NOTES.strip(), "", "## Value types", "", "| type | written as |", "| --- | --- |",
           *(f"| `{name}` | {_cell(text)} |" for name, text in TYPES.items()), ""]
    for spec in specs.values():
        out += _table(spec)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv=None) -> int:
    """Print the reference, or write it to the path given."""
    argv = sys.argv[1:] if argv is None else argv
    text = render_reference()
    if argv:
        with open(argv[0], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
