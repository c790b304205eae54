"""Shared fixtures: estates built with real git, config files, and running the real ``scout``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scout.demo.builder import EstateBuilder
from tests.helpers.config import render_config
from tests.helpers.run import Result, run_cli

_PLUGIN = Path(__file__).parent / "gitlab_server" / "pytest_plugin.py"
pytest_plugins = [
    "tests.helpers.xdist_groups",
    *(["tests.gitlab_server.pytest_plugin"] if _PLUGIN.exists() else []),
]

FAKE_CLAUDE = Path(__file__).parent / "fakes" / "fake_claude.py"


@pytest.fixture(autouse=True)
def _terminal_as_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables are laid out for the width CI sees (no terminal: the 160-column fallback), not
    for the terminal a developer happens to run pytest in, nor a worker's pipe under xdist."""
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setenv("LINES", "24")


@pytest.fixture
def estate_builder(tmp_path: Path) -> EstateBuilder:
    return EstateBuilder(tmp_path / "estate")


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    def write(estate: Path | None = None, name: str = "scout.toml", **sections: Any) -> Path:
        target = tmp_path / name
        target.write_text(
            render_config(estate or tmp_path / "estate", **sections), encoding="utf-8"
        )
        return target

    return write


@pytest.fixture
def scout(tmp_path: Path) -> Callable[..., Result]:
    """Run the real ``scout`` in a process of its own (exit codes and stdout/stderr kept apart;
    ``tests.helpers.run.run_cli``)."""

    def run(
        *args: str,
        config: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
        timeout: float = 120,
    ) -> Result:
        return run_cli(
            [*(["--config", str(config)] if config else []), *args],
            cwd=tmp_path,
            env={**os.environ, **(env or {})},
            input=input,
            timeout=timeout,
        )

    return run


@pytest.fixture
def claude_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``claude`` on PATH that runs the fake; returns the file its calls are recorded in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "claude"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    script.chmod(0o755)
    record = tmp_path / "claude-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(record))
    monkeypatch.delenv("FAKE_CLAUDE_OUTPUT", raising=False)
    monkeypatch.delenv("FAKE_CLAUDE_BY_QUESTION", raising=False)
    return record
