"""Exit code 1: an unexpected error (a bug) is one line on stderr, nothing on stdout, and the
traceback only when asked for with ``SCOUT_DEBUG=1``.

Every other exit code has a real trigger in the suite. A bug has none by definition, so this runs
the real ``scout`` entry point in a fresh process with one extra command that fails the way bugs
do: nothing of the error mapping is replaced, and pytest is not loaded in that process (under
pytest, unexpected errors propagate on purpose).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUGGY_SCOUT = """
from scout.cli.main import cli, main


@cli.command("buggy")
def buggy() -> None:
    '''Fails the way a bug does.'''
    settings: dict[str, str] = {}
    settings.get("missing").strip()  # type: ignore[union-attr]


main()
"""


def _run(*args: str, debug: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SCOUT_DEBUG", "SCOUT_CONFIG")}
    if debug:
        env["SCOUT_DEBUG"] = "1"
    return subprocess.run(
        [sys.executable, "-c", BUGGY_SCOUT, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )


def test_an_unexpected_error_exits_1_with_one_line() -> None:
    done = _run("buggy", debug=False)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "scout: internal error: AttributeError: 'NoneType' object has no attribute 'strip'\n"
    )


def test_scout_debug_shows_the_traceback() -> None:
    done = _run("buggy", debug=True)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert "line 9, in buggy\nAttributeError: " in done.stderr  # -c source shows no lines


@pytest.mark.parametrize(("args", "code"), [(("--version",), 0), (("nonsense",), 2)])
def test_the_same_entry_point_keeps_its_other_codes(args: tuple[str, ...], code: int) -> None:
    # The harness itself changes nothing else: the real commands and click's usage errors work.
    assert _run(*args, debug=False).returncode == code
