"""Every line Scout writes to a terminal goes through the terminal-safe path: log records and
Python warnings (logging is configured for every command, warnings captured, no raw last-resort
handler) and progress notes (rich strips only some control characters)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.cli.progress import LogProgress, TerminalProgress
from tests.conftest import Result, render_config

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b2J\u202e"
TERMINAL = ["\x1b]", "\x07", "\x1b[2J", "\x9b", "\u202e"]


def _clean(text: str) -> bool:
    return not any(bad in text for bad in TERMINAL)


def test_a_warning_logged_during_a_sweep_is_escaped(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    root = tmp_path / f"estate{ESCAPES}"  # where the warning's file path comes from
    root.mkdir()
    (root / "estate.toml").write_text(
        '[[project]]\npath = "acme/a"\nvisibility = "public"\ndefault_branch = "main"\n'
    )
    issues = root / "issues" / "acme" / "a.jsonl"
    issues.parent.mkdir(parents=True)
    issues.write_text("not json\n" + json.dumps({"iid": 1, "updated_at": "2026-01-01"}) + "\n")
    config = tmp_path / "scout.toml"
    config.write_text(render_config(root), encoding="utf-8")
    done = scout("sweep", "--json", config=config)
    assert done.code == 0, done.stderr
    assert "line 1: not an issue record, skipped" in done.stderr
    assert _clean(done.stderr), repr(done.stderr)


def test_python_warnings_are_logged_through_the_safe_formatter() -> None:
    code = (
        "import warnings\n"
        "from scout.safe_text import configure_logging\n"
        "configure_logging()\n"
        f"warnings.warn({('server said ' + ESCAPES + ' go')!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "UserWarning: server said" in done.stderr and "go" in done.stderr
    assert _clean(done.stderr), repr(done.stderr)


def test_progress_lines_and_notes_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    lines: list[str] = []
    progress = LogProgress(lines.append, every=0.0)
    progress.advance(f"files{ESCAPES}")
    assert lines and all(_clean(line) for line in lines)
    terminal = TerminalProgress()
    terminal.note(f"removed acme/{ESCAPES}x")
    with terminal.waiting(f"judging {ESCAPES}"):
        pass
    terminal.close()
    err = capsys.readouterr().err
    assert "removed acme/" in err
    assert _clean(err), repr(err)
