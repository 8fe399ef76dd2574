"""Sphinx extension: kane's docstrings write ``|x|`` for a magnitude; escape those bars so reST reads no
substitution in them (outside ``literals``, doctest lines and literal blocks), without editing the docstrings."""

from __future__ import annotations

import re

__all__ = ["escape_bars", "setup"]

_LITERAL = re.compile(r"(``.+?``)")


def _escape_line(line: str) -> str:
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else re.sub(r"(?<!\\)\|", r"\\|", p) for i, p in enumerate(parts))


def escape_bars(lines: list[str]) -> list[str]:
    """The docstring ``lines`` with every bare ``|`` escaped, except in literals, doctests and literal blocks."""
    out, block_indent, after_colons = [], None, False
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and stripped and indent <= block_indent:
            block_indent = None
        if after_colons and stripped and block_indent is None:
            block_indent = indent - 1 if indent > 0 else None
        if stripped:
            after_colons = False
        if block_indent is not None or stripped.startswith((">>>", "...")):
            out.append(line)
        else:
            out.append(_escape_line(line))
        if stripped.endswith("::"):
            after_colons, block_indent = True, None
    return out


def _process(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = escape_bars(lines)


def setup(app):
    app.connect("autodoc-process-docstring", _process)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
