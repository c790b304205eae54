"""The environment a child process gets: Scout's own, less every secret the config names; and
how the user's shell runs this Scout (for the commands Scout prints).

The main rule: no process Scout starts (``git``, the ``claude`` CLI) inherits a secret. The forge
token's and the provider key's variables are registered here once the config names them, and every
place that starts a process takes its environment from :func:`child_environment`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

_WITHHELD: set[str] = set()


def withhold_from_children(*names: str) -> None:
    """Keep these environment variables out of every child process Scout starts."""
    _WITHHELD.update(name for name in names if name)


def child_environment() -> dict[str, str]:
    """The environment for a child process: Scout's own, less every withheld secret."""
    return {name: value for name, value in os.environ.items() if name not in _WITHHELD}


def invocation() -> str:
    """How the user's shell can run this Scout: bare ``scout`` only when that finds this one
    (scripts/setup does not put ``.venv/bin`` on PATH), else its absolute path."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "scout" and argv0.exists():
        found = shutil.which("scout")
        if found and Path(found).resolve() == argv0.resolve():
            return "scout"
        return shlex.quote(str(argv0.absolute()))
    return f"{shlex.quote(sys.executable)} -m scout"
