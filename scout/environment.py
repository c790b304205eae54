"""The environment a child process gets: Scout's own, less every secret the config names.

The main rule: no process Scout starts (``git``, the ``claude`` CLI) inherits a secret. The forge
token's and the provider key's variables are registered here once the config names them, and every
place that starts a process takes its environment from :func:`child_environment`.
"""

from __future__ import annotations

import os

_WITHHELD: set[str] = set()


def withhold_from_children(*names: str) -> None:
    """Keep these environment variables out of every child process Scout starts."""
    _WITHHELD.update(name for name in names if name)


def child_environment() -> dict[str, str]:
    """The environment for a child process: Scout's own, less every withheld secret."""
    return {name: value for name, value in os.environ.items() if name not in _WITHHELD}
