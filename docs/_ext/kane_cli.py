"""Sphinx extension: the ``kane-command`` directive writes a command's usage, help and option table from click.

``{kane-command} simulate`` (or ``study conditioning``) reads the command from :data:`kane.cli.main` when the site
is built, so an option added to the command appears in its how-to page without editing the page.
"""

from __future__ import annotations

import inspect

import click
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

__all__ = ["KaneCommand", "command_markdown", "setup"]


def _find(path: list[str]) -> tuple[click.Command, click.Context]:
    """The click command and its context at ``path`` below ``kane`` (raises ValueError naming an unknown one)."""
    from kane.cli import main

    command, ctx = main, click.Context(main, info_name="kane")
    for name in path:
        sub = command.get_command(ctx, name) if isinstance(command, click.Group) else None
        if sub is None:
            raise ValueError(f"kane has no command {' '.join(path)!r}")
        command, ctx = sub, click.Context(sub, info_name=name, parent=ctx)
    return command, ctx


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _type_text(param: click.Parameter) -> str:
    if param.is_flag if isinstance(param, click.Option) else False:
        return "flag"
    if isinstance(param.type, click.Choice):
        return " \\| ".join(f"`{c}`" for c in param.type.choices)
    metavar = getattr(param, "metavar", None)
    return _cell(metavar or param.type.name.upper())


def _default_text(param: click.Option, ctx: click.Context) -> str:
    default = param.get_default(ctx, call=False)
    if type(default).__name__ == "Sentinel" or callable(default):  # click's UNSET: no default
        return ""
    if default is None or default == () or (param.is_flag and default is False and not param.secondary_opts):
        return ""
    if param.secondary_opts and isinstance(default, bool):
        return f"`{(param.opts if default else param.secondary_opts)[0]}`"
    return f"`{_cell(default)}`"


def command_markdown(path: list[str]) -> str:
    """Markdown for the command at ``path``: usage line, help text and a table of its arguments and options."""
    command, ctx = _find(path)
    lines = ["```text", f"{' '.join(['kane', *path])} {' '.join(command.collect_usage_pieces(ctx))}", "```", ""]
    help_text = inspect.cleandoc((command.help or command.short_help or "").split("\f")[0])
    lines += [click.unstyle(help_text).replace("\b\n", ""), ""]
    if isinstance(command, click.Group):
        lines += ["Subcommands: " + ", ".join(f"`{n}`" for n in command.list_commands(ctx)) + ".", ""]
    args = [p for p in command.params if isinstance(p, click.Argument)]
    opts = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    if args:
        lines += ["| Argument | Type |", "|---|---|"]
        lines += [f"| `{a.human_readable_name}` | {_type_text(a)} |" for a in args]
        lines.append("")
    lines += ["| Option | Value | Default | Meaning |", "|---|---|---|---|"]
    for o in opts:
        names = ", ".join(f"`{n}`" for n in [*o.opts, *o.secondary_opts])
        lines.append(f"| {names} | {_type_text(o)} | {_default_text(o, ctx)} | {_cell(o.help or '')} |")
    lines += ["| `-h`, `--help` | flag |  | Show the help and exit. |", ""]
    return "\n".join(lines)


class KaneCommand(SphinxDirective):
    """``kane-command NAME [SUBNAME]``: the command's usage, help and options, read from click at build time."""

    required_arguments = 1
    optional_arguments = 2
    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            text = command_markdown(list(self.arguments))
        except ValueError as exc:
            raise self.error(str(exc)) from None
        container = nodes.container(classes=["kane-command"])
        self.state.nested_parse(StringList(text.splitlines(), source=f"kane {' '.join(self.arguments)}"),
                                self.content_offset, container)
        return [container]


def setup(app):
    app.add_directive("kane-command", KaneCommand)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
