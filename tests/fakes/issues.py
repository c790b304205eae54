"""Many small estate issues for tests that need volume (commit points, GraphQL pages)."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.helpers.run import start_cli


def rounding_issue(n: int, web: str, **extra: Any) -> dict[str, Any]:
    """Issue ``1000 + n`` of acme/ledger: one line reference and one merge request each, with
    ``updated_at`` spread over minutes and days so listings page through them in order."""
    return {
        "iid": 1000 + n,
        "title": f"Rounding question {n}: how are FX rates rounded?",
        "description": f"See src/ledger/rates.py#L{1 + n % 20} and !{1 + n % 4}.",
        "state": "opened",
        "created_at": "2026-03-01T00:00:00Z",
        "updated_at": f"2026-03-{1 + n // 60:02d}T{n % 24:02d}:{n % 60:02d}:00Z",
        "web_url": f"{web}/{1000 + n}",
        "notes": [],
        **extra,
    }


def committed_issues(db: Path) -> int:
    """Issues a sweep has committed so far, read as another process would (0 before the store
    exists or while it cannot be read)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("select count(*) from issues").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def kill_sweep_at(
    args: list[str], db: Path, point: int, env: dict[str, str] | None = None
) -> int | None:
    """Run ``scout ARGS`` (a sweep) and SIGKILL it once ``point`` issues are committed; the
    store must pass SQLite's integrity check after. Returns where it died (None: it finished
    first)."""
    process = start_cli(args, env=env)
    killed_at = None
    while process.poll() is None and committed_issues(db) < point:
        time.sleep(0.002)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
        killed_at = committed_issues(db)
    process.wait()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    return killed_at
