"""``scout serve`` (HTTP API, page, MCP over HTTP) and ``scout mcp`` (MCP over stdio).

Thin: check the serve extra is installed (exit 3 naming it otherwise), read the config, hand
over to :mod:`scout.serve`. Neither imports the server's libraries unless it runs.
"""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING, Any

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime
from scout.errors import ConfigError
from scout.serve import require_extra

if TYPE_CHECKING:
    from scout.config import Config
    from scout.serve.security import Security


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


LIMITS = (
    "rate_limit",
    "max_concurrent_answers",
    "max_concurrent_answers_per_client",
    "queue_timeout",
    "answer_timeout",
    "header_timeout",
    "max_question_chars",
    "max_body_bytes",
)


@click.command()
@click.option("--host", default=None, help="Address to listen on (default: serve.host).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=None, help="Port (default: serve.port)."
)
@click.option(
    "--check",
    is_flag=True,
    help="Print the effective security settings and what is unsafe in them, then exit: 0, or 3 "
    "when a setting would stop the server or expose it on an address other than loopback.",
)
@json_option
@pass_runtime
def serve(runtime: Runtime, host: str | None, port: int | None, check: bool, as_json: bool) -> None:
    """Serve the HTTP API, the page at / and MCP at /mcp until SIGTERM (exit 0) or Ctrl-C.

    On SIGTERM it prints how many questions it answered and declined (--json:
    {"questions": {"answered", "declined"}}). It refuses to start (exit 3) when
    serve.api_keys_env names a variable that holds no key, or when it would listen on an
    address other than loopback without keys, unless serve.open = true.
    """
    from scout.serve.security import Security, refuse_unsafe_start

    config = runtime.config
    host = host or config.serve.host
    port = config.serve.port if port is None else port
    security = Security.of(config, host)
    if check:
        _check(security, config, port, as_json)
        return
    refuse_unsafe_start(security, config.source)
    require_extra("scout serve")
    from scout.serve.app import serve as run

    runtime.store().close()  # a missing or unreadable store is exit 4 now, not a 503 later
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


def _check(security: Security, config: Config, port: int, as_json: bool) -> None:
    """``--check``: the settings (never a key), each finding, and exit 3 for an unsafe one."""
    serve = config.serve
    findings = security.findings()
    report = {
        **security.summary(),
        "port": port,
        "limits": {name: getattr(serve, name) for name in LIMITS},
        "findings": [{"level": level, "text": text} for level, text in findings],
    }
    emit(report, as_json, _render_check)
    unsafe = [text for level, text in findings if level == "unsafe"]
    if unsafe:
        raise ConfigError(f"{config.source}: unsafe to serve: {unsafe[0]}")


def _render_check(report: dict[str, Any]) -> str:
    keys = "no keys" if not report["api_keys"] else f"{report['api_keys']} API key(s)"
    lines = [
        f"listening on {report['host']}:{report['port']} "
        f"({'loopback' if report['loopback'] else 'not loopback'})",
        f"keys: {keys} from {report['api_keys_env'] or '(api_keys_env unset)'}, "
        f"{report['maintainer_keys']} maintainer key(s); open = {str(report['open']).lower()}",
        f"allowed hosts: {', '.join(report['allowed_hosts'])}",
        f"trusted proxies: {', '.join(report['trusted_proxies']) or 'none'}",
        f"CORS origins: {', '.join(report['cors_origins']) or 'none'}",
        "limits: " + ", ".join(f"{k} = {v}" for k, v in report["limits"].items()),
    ]
    lines += [f"{f['level']}: {f['text']}" for f in report["findings"]]
    return "\n".join(lines)


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
