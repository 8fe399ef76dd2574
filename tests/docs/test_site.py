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


def _sh_lines(page: Path):
    for block in re.findall(r"^```sh\n(.*?)^```", page.read_text(), re.S | re.M):
        for line in block.splitlines():
            for command in line.split("#")[0].split("&&"):
                if command.strip().startswith("kane "):
                    yield command.strip()


def test_the_invocations_on_the_pages_use_options_the_commands_have_and_examples_that_exist():
    import shlex

    ctx = click.Context(main, info_name="kane")
    pages = [*sorted((DOCS / "howto").glob("*.md")), DOCS / "getting-started.md"]
    seen = 0
    for page in pages:
        for line in _sh_lines(page):
            words = shlex.split(line)[1:]
            command, path = main.get_command(ctx, words[0]), [words[0]]
            if isinstance(command, click.Group) and not words[1].startswith("-"):
                command, path = command.get_command(ctx, words[1]), [*path, words[1]]
            assert command is not None, f"{page.name}: {line}: no such command"
            names = {n for p in command.params for n in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
            for word in words[len(path):]:
                if word.startswith("-") and not re.fullmatch(r"-?[\d.e-]+", word):
                    assert word.split("=")[0] in names, f"{page.name}: {line}: kane {' '.join(path)} has no {word}"
                if word.startswith("examples/"):
                    assert (DOCS.parent / word).is_file(), f"{page.name}: {line}: no file {word}"
            seen += 1
    assert seen >= 25
