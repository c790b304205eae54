"""``scout serve`` and ``scout mcp``: Scout behind HTTP, a page, and MCP (docs/design.md,
"Serving questions").

Modules, by role: ``service`` (the one question path every way in shares), ``limits`` (rate per
client, answer slots), ``routes`` (HTTP handlers), ``page`` (the HTML page), ``metrics``
(Prometheus), ``mcp`` (the MCP tools), ``app`` (the ASGI app and running it). Their libraries are
the optional ``serve`` extra; this package's ``__init__`` imports none of them, so the CLI can say
what is missing before anything fails.
"""

from __future__ import annotations

import importlib.util

from scout.errors import ConfigError

# module name -> the distribution that provides it
EXTRA = {
    "starlette": "starlette",
    "uvicorn": "uvicorn",
    "mcp": "mcp",
    "prometheus_client": "prometheus-client",
    "jinja2": "jinja2",
}


def missing() -> list[str]:
    """The serve extra's distributions that are not installed."""
    return [dist for module, dist in EXTRA.items() if importlib.util.find_spec(module) is None]


def require_extra(command: str) -> None:
    """ConfigError (exit 3) naming what to install when the serve extra is incomplete."""
    absent = missing()
    if absent:
        raise ConfigError(
            f"{command} needs the serve extra ({', '.join(absent)} missing): "
            "pip install 'scout[serve]'"
        )
