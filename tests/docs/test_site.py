"""The documentation site's own tools: the internal link check finds a missing page and a missing anchor and lists
external links; every ``kane`` command has a how-to page whose option table (read from click) names every option
``kane COMMAND --help`` prints; docstring magnitudes |x| are escaped for reST outside literals."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kane.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
from check_links import check_site  # noqa: E402
from kane_cli import command_markdown  # noqa: E402
from kane_docstrings import escape_bars  # noqa: E402


def _site(root: Path, link: str) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text(f'<html><body><h1 id="top">x</h1><a href="{link}">l</a>'
                                     '<a href="https://example.org/x">e</a><a href="#top">t</a></body></html>')
    (root / "sub" / "page.html").write_text('<html><body><section id="part-2"><a href="../index.html#top">up</a>'
                                            '<img src="../missing.png"></section></body></html>')


def test_the_link_check_finds_missing_pages_and_anchors(tmp_path):
    _site(tmp_path / "bad", "sub/page.html#part-3")
    report = check_site(tmp_path / "bad")
    assert report.pages == 2 and report.internal == 4 and report.external == ("https://example.org/x",)
    assert sorted(report.broken) == [("index.html", "sub/page.html#part-3", "no anchor #part-3 in page.html"),
                                     ("sub/page.html", "../missing.png", "no such file")]
    _site(tmp_path / "good", "sub/page.html#part-2")
    (tmp_path / "good" / "missing.png").write_bytes(b"\x89PNG")
    assert check_site(tmp_path / "good").broken == ()
    with pytest.raises(FileNotFoundError, match="no HTML pages"):
        check_site(tmp_path / "empty")


def _commands(group=main, ctx=None, path=()):
    ctx = ctx or click.Context(main, info_name="kane")
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from _commands(command, click.Context(command, info_name=name, parent=ctx), (*path, name))


def test_every_command_has_a_howto_page_listing_every_option_of_its_help():
    index = (DOCS / "howto" / "index.md").read_text()
    for path in _commands():
        page = DOCS / "howto" / f"{path[0]}.md"
        assert page.is_file() and f"\n{path[0]}\n" in index, f"kane {path[0]}: no how-to page in the toctree"
        assert f"```{{kane-command}} {' '.join(path)}\n" in page.read_text(), f"kane {' '.join(path)}: no table"
        assert "```sh\nkane " in page.read_text()  # a real invocation
        help_text = CliRunner().invoke(main, [*path, "--help"]).output
        options = set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", help_text.split("Options:")[1]))
        table = command_markdown(list(path))
        assert options and all(f"`{o}`" in table for o in options), (path, options)


def test_magnitude_bars_are_escaped_outside_literals_and_doctests():
    lines = ["The largest |C(q)| and ``|x|``:", "", "    >>> abs(-1) | 2", "", "Example::", "", "    a | b", "",
             "after |u|"]
    assert escape_bars(lines) == ["The largest \\|C(q)\\| and ``|x|``:", "", "    >>> abs(-1) | 2", "",
                                  "Example::", "", "    a | b", "", "after \\|u\\|"]
