"""``scout serve`` (HTTP API, page, MCP over HTTP) and ``scout mcp`` (MCP over stdio).

Thin: check the serve extra is installed (exit 3 naming it otherwise), read the config, hand
over to :mod:`scout.serve`. Neither imports the server's libraries unless it runs.
"""

from __future__ import annotations

import errno
import socket

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime
from scout.errors import ConfigError
from scout.serve import require_extra


def check_listen(host: str, port: int) -> None:
    """ConfigError (exit 3, one line) when ``host:port`` cannot be listened on: a port another
    process holds, an address this machine does not have. Checked before uvicorn starts, which
    would log its own error after "Application startup complete" and exit 1."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        # create_server's own text repeats the address after the reason: the reason is enough
        why = (exc.strerror or str(exc)).split(" (while attempting", 1)[0]
        hint = "another process listens there (another scout serve?): stop it, or "
        if exc.errno != errno.EADDRINUSE:
            hint = ""
        raise ConfigError(
            f"cannot listen on {host}:{port}: {why.lower()}; {hint}pass --host/--port or set "
            "[serve] host and port"
        ) from None


def _log_info() -> None:
    # the server's stderr is its log (journald, a file): one safe line a record, from INFO
    import logging

    from scout.safe_text import configure_logging

    configure_logging(logging.INFO, "%(asctime)s %(name)s %(message)s")


@click.command()
@click.option("--host", default=None, help="Address to listen on (default: serve.host).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=None, help="Port (default: serve.port)."
)
@json_option
@pass_runtime
def serve(runtime: Runtime, host: str | None, port: int | None, as_json: bool) -> None:
    """Serve the HTTP API, the page at / and MCP at /mcp until SIGTERM (exit 0) or Ctrl-C.

    On SIGTERM it prints how many questions it answered and declined (--json:
    {"questions": {"answered", "declined"}}).
    """
    require_extra("scout serve")
    from scout.serve.app import serve as run

    config = runtime.config
    runtime.store().close()  # a missing or unreadable store is exit 4 now, not a 503 later
    host = host or config.serve.host
    port = config.serve.port if port is None else port
    check_listen(host, port)
    _log_info()
    served = run(config, host=host, port=port)
    emit(
        {"questions": served},
        as_json,
        lambda r: (
            f"stopped after {r['questions']['answered']} answered and "
            f"{r['questions']['declined']} declined question(s)"
        ),
    )


@click.command()
@json_option
@pass_runtime
def mcp(runtime: Runtime, as_json: bool) -> None:
    """Serve the MCP tools search_docs and ask_docs on stdin and stdout."""
    require_extra("scout mcp")
    from scout.serve.mcp import run_stdio
    from scout.serve.service import Service

    config = runtime.config
    runtime.store().close()
    _log_info()
    service = Service(config)
    try:
        run_stdio(service)
    finally:
        service.close()
