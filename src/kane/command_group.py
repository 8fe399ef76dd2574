"""The ``kane`` command's click group: commands whose logic lives in other packages are imported when used, so
``kane --version`` and ``kane --help`` start without them (issue 28 item 8)."""

from __future__ import annotations

import importlib
import threading

import click

__all__ = ["LazyGroup"]


class LazyGroup(click.Group):
    """A click group whose ``lazy_commands`` (name -> (module, a function of the imported module giving the click
    command, its short help)) are imported when one of them is run or asked for: ``--help`` lists them by the
    short help kept in the table, and ``--version`` imports none of them. Loading one is done once, under a lock."""

    lazy_commands: dict = {}
    _lock = threading.Lock()

    def list_commands(self, ctx) -> list[str]:
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx, cmd_name: str):
        if cmd_name in self.lazy_commands and cmd_name not in self.commands:
            module, make, _ = self.lazy_commands[cmd_name]
            with self._lock:
                if cmd_name not in self.commands:
                    self.add_command(make(importlib.import_module(module)), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx, formatter) -> None:
        """click's list of commands and their short help, a lazy command not yet imported by its table entry's."""
        commands = [(name, self.commands.get(name) or click.Command(name, short_help=self.lazy_commands[name][2]))
                    for name in self.list_commands(ctx)]
        commands = [(name, cmd) for name, cmd in commands if not cmd.hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in commands])
