"""Tests' way to run the real ``scout serve``: a subprocess on a free loopback port.

The server is the real command (uvicorn, the real app, the real store); tests talk to it with
real HTTP clients. ``running`` yields once ``/healthz`` answers and stops the server with SIGTERM
on the way out, as systemd would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn  # noqa: F401

import scout.serve.app  # noqa: F401
import scout.serve.mcp  # noqa: F401
from tests.helpers.run import Started, start_cli

# The three imports above are for the servers these tests fork (tests.helpers.run): a forked
# `scout serve` inherits them instead of importing starlette and uvicorn again, 0.17 s of CPU
# a server, some 70 times a run, and the MCP SDK its /mcp route is built with, 1 s more.
# What importing them costs is the whole-process bench's.

SCOUT = [sys.executable, "-m", "scout"]
FAKE_CLAUDE = Path(__file__).parent / "fake_claude.py"
# Starting Python, uvicorn and the app: generous, because the machine is shared.
START_SECONDS = 60.0


@dataclass
class Server:
    url: str
    process: Started
    log: Path

    def stop(self, sig: int = signal.SIGTERM, wait: float = 30.0) -> int:
        """Send ``sig`` and return the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(wait)

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stdout(self) -> str:
        return self.log.with_suffix(".out").read_text(encoding="utf-8", errors="replace")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, process: Started, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"scout serve exited {process.returncode}: {log.read_text()}")
        try:
            httpx.get(url + "/healthz", timeout=2.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("scout serve did not start: " + log.read_text())


@contextmanager
def running(
    config: Path, *, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> Iterator[Server]:
    """The real ``scout serve`` for ``config`` on a free port, stopped (SIGTERM) afterwards."""
    port = free_port()
    log = config.parent / f"serve-{port}.log"
    with open(log, "wb") as err, open(log.with_suffix(".out"), "wb") as out:
        process = start_cli(
            ["--config", str(config), "serve", "--port", str(port), *args],
            stdout=out,
            stderr=err,
            cwd=config.parent,
            env={**os.environ, **(env or {})},
        )
    server = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until_up(server.url, process, log)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def claude_on_path(directory: Path) -> dict[str, str]:
    """Environment with the fake ``claude`` first on PATH (its calls recorded in directory)."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "claude"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    script.chmod(0o755)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_CLAUDE_RECORD": str(directory / "claude-calls.jsonl"),
        "FAKE_CLAUDE_SPANS": str(directory / "claude-spans"),
        "FAKE_CLAUDE_PIDS": str(directory / "claude-pids"),
    }


def write_serve_config(
    directory: Path,
    provider: str = "offline",
    *,
    tables: dict[str, dict[str, object]] | None = None,
    **serve: object,
) -> Path:
    """A config for the test corpus (tests.fakes.corpus) with a ``[serve]`` table of ``serve``;
    ``tables`` adds keys to the other tables (``answer``, ``store``) or new ones (``retrieval``).
    """
    sections: dict[str, dict[str, object]] = {
        "forge": {
            "kind": "local",
            "url": "https://gitlab.acme.example",
            "path": "estate",
            "groups": ["acme"],
        },
        "answer": {"provider": provider},
        "store": {"path": "scout.db"},
    }
    for name, values in (tables or {}).items():
        sections.setdefault(name, {}).update(values)
    sections["serve"] = dict(serve)
    lines = []
    for name, values in sections.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
        lines.append("")
    config = directory / "scout.toml"
    config.write_text("\n".join(lines), encoding="utf-8")
    return config


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | list):
        return json.dumps(value)  # a JSON string or list of strings is a TOML one
    return str(value)
