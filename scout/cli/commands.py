"""Every command of the ``scout`` group, in help order, with the module that holds it.

A command's module is imported when the command runs (or when help lists the commands), not
when ``scout`` starts: ``scout ask`` behind a chat channel starts a process per question, and
importing the sweep, the signpost audit and the report cost it about 25 ms it never used.
"""

from __future__ import annotations

import importlib

import click

# name -> (module, attribute)
COMMANDS = {
    "init": ("scout.cli.init", "init"),
    "index": ("scout.cli.index", "index"),
    "ask": ("scout.cli.ask", "ask"),
    "search": ("scout.cli.search", "search"),
    "sweep": ("scout.cli.ingest", "sweep"),
    "worker": ("scout.cli.ingest", "worker"),
    "signposts": ("scout.cli.signposts", "signposts"),
    "gaps": ("scout.cli.gaps", "gaps"),
    "report": ("scout.cli.report", "report"),
    "eval": ("scout.cli.evaluate", "evaluate"),
    "serve": ("scout.cli.serve", "serve"),
    "mcp": ("scout.cli.serve", "mcp"),
    "demo": ("scout.cli.demo", "demo"),
    "backup": ("scout.cli.backup", "backup"),
}


def load(name: str) -> click.Command | None:
    """The command called ``name``, its module imported now; None for no such command."""
    if name not in COMMANDS:
        return None
    module, attribute = COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command) and command.name == name
    return command
