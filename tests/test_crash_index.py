"""SIGKILL anywhere in ``scout index``: a re-run ends where an uninterrupted run does.

Each project's passages are replaced in one transaction, so a kill loses at most the project in
flight, and the next run (which re-reads every project whose indexed sha is not the head) finishes
it. After every kill the database passes ``PRAGMA integrity_check``; after the re-run, every table
index writes equals the uninterrupted run's, row for row.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from tests.helpers.config import render_config
from tests.helpers.run import Started, start_cli
from tests.helpers.served import integrity, state

pytestmark = pytest.mark.faults

PROJECTS = 16
SEED = 20261129
KILLS: list[int] = []  # projects committed at each kill, for the README's figures


def _busy_estate(root: Path) -> Path:
    """Many small projects, each with a few documents, so an index has many commit points."""
    builder = EstateBuilder(root)
    for n in range(PROJECTS):
        files = {
            f"docs/page{k}.md": "".join(
                f"## Section {k}.{s}\n\nProject {n} explains widget{n}x{k}y{s} at length.\n\n"
                for s in range(12)
            )
            for k in range(4)
        }
        builder.project(f"acme/p{n:02d}").commit({"README.md": f"# P{n}\n", **files}, "Docs")
    builder.write()
    return root


def _committed(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("select count(*) from projects").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return -1


def _index(config: Path) -> Started:
    return start_cli(["--config", str(config), "index"])


@pytest.mark.slow
def test_sigkill_during_index_then_rerun_equals_an_uninterrupted_index(tmp_path: Path) -> None:
    estate = _busy_estate(tmp_path / "estate")
    reference = tmp_path / "reference" / "scout.toml"
    reference.parent.mkdir()
    reference.write_text(render_config(estate), encoding="utf-8")
    started = time.monotonic()
    assert _index(reference).wait() == 0
    duration = time.monotonic() - started
    expected = state(reference.parent / "scout.db")
    assert len(expected["projects"]) == PROJECTS

    rng = random.Random(SEED)
    # Kill points are anchored on progress, not on the clock: a trial waits for a number of
    # committed projects placed on purpose (none, one, a quarter, half, three quarters, all but
    # two: the kills land at many points whatever the machine's load), and every other trial
    # then waits a seeded part of one project's time, so the kill falls inside a transaction
    # rather than just after a commit.
    targets = [0, 1, PROJECTS // 4, PROJECTS // 2, 3 * PROJECTS // 4, PROJECTS - 2]
    per_project = duration / PROJECTS
    for trial, target in enumerate(targets):
        config = tmp_path / f"trial{trial}" / "scout.toml"
        config.parent.mkdir()
        config.write_text(render_config(estate), encoding="utf-8")
        db = config.parent / "scout.db"
        process = _index(config)
        while process.poll() is None and _committed(db) < target:
            time.sleep(0.001)
        if trial % 2:
            time.sleep(rng.uniform(0, per_project))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            KILLS.append(_committed(db))
        process.wait()
        if db.exists():
            assert integrity(db) == "ok", f"trial {trial}"
        assert _index(config).wait() == 0
        assert state(db) == expected, f"trial {trial}: killed after {KILLS[-1:]} projects"
    # the kills must land at many different points, not all before or after the work
    assert len(KILLS) >= len(targets) - 1 and len(set(KILLS)) >= 4, KILLS
