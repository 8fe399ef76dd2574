"""Run a documentation page as its reader would: every ```python block of a MyST page, in order, in one
namespace, in a fresh directory that sees the repository's ``examples/`` (shared by the docs tests)."""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["DOCS", "REPO", "python_blocks", "run_page"]

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    """The source of every ```python block of ``page``, in order."""
    return _BLOCK.findall(Path(page).read_text(encoding="utf-8"))


def run_page(page: Path, workdir: Path) -> dict:
    """Execute the blocks of ``page`` in ``workdir`` (which gets an ``examples`` link to the repository's) and
    return the namespace; an exception names the page and the block (1-based) that raised it."""
    blocks = python_blocks(page)
    if not blocks:
        raise AssertionError(f"{page}: no python blocks")
    examples = Path(workdir) / "examples"
    if not examples.exists():
        examples.symlink_to(REPO / "examples", target_is_directory=True)
    namespace = {"__name__": "__tutorial__"}
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        for k, source in enumerate(blocks, 1):
            try:
                exec(compile(source, f"{Path(page).name}:block{k}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"{Path(page).name}, python block {k} raised {exc!r}") from exc
    finally:
        os.chdir(cwd)
    return namespace
