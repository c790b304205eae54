"""Confidential issues and internal notes are for project members: skipped unless configured.

Both forges, on one estate: the local estate files and the GitLab test server (which answers
``confidential`` on issues and ``internal`` on notes as GitLab does). By default the sweep reads
neither, counts them in ``skipped`` and stores nothing of them; with
``[ingest] include_confidential = true`` they are read like any other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from tests.gitlab_server.server import GitLabServer
from tests.test_gitlab_paths import config_text, run_scout, serve_built

SECRET = "kestrelmoon"  # in the confidential issue and the internal note only


def build(estate: Path, url: str) -> None:
    builder = EstateBuilder(estate, url=url)
    builder.project("acme/ledger").commit(
        {
            "README.md": "# Ledger\n",
            "docs/fx.md": "# FX rounding\n\nFX rates are rounded half-even in ledger postings.\n",
            "docs/close.md": "# Closing\n\nThe month closes on the last working day.\n",
            "docs/audit.md": "# Audit\n\nAuditors read the posting journal.\n",
        },
        "Docs",
    )
    secret = builder.issue(
        "acme/ledger",
        1,
        f"{SECRET}: how are FX rates rounded?",
        f"{SECRET} see docs/fx.md",
        updated_at="2026-02-01T10:00:00Z",
    )
    secret["confidential"] = True
    builder.issue(
        "acme/ledger",
        2,
        "When does the month close?",
        "Closing the month: see docs/close.md",
        updated_at="2026-02-01T11:00:00Z",
        notes=[
            {"body": f"{SECRET} (internal) the auditors' view: docs/audit.md", "internal": True},
            "Also docs/close.md for the ledger close.",
        ],
    )
    builder.write()


@pytest.fixture
def estate(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> tuple[Path, GitLabServer]:
    root = tmp_path / "estate"
    return root, serve_built(root, gitlab_server_factory, build)


def configure(directory: Path, url: str, kind: str, estate: Path, include: bool) -> Path:
    directory.mkdir(parents=True)
    text = config_text(url, kind=kind, estate=estate)
    if include:
        text += "\n[ingest]\ninclude_confidential = true\n"
    (directory / "scout.toml").write_text(text, encoding="utf-8")
    return directory / "scout.toml"


def stored(db: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute("select issue_iid, reference from signposts").fetchall())
    finally:
        conn.close()


@pytest.mark.parametrize("kind", ["local", "gitlab"])
def test_confidential_issues_and_internal_notes_are_skipped_by_default(
    tmp_path: Path, estate: tuple[Path, GitLabServer], kind: str
) -> None:
    root, server = estate
    config = configure(tmp_path / kind, server.url, kind, root, include=False)
    done = run_scout(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    summary = done.json()
    assert (summary["issues_read"], summary["notes_read"]) == (1, 1)
    assert summary["skipped"] == {"issue_confidential": 1, "note_internal": 1}
    assert stored(config.parent / "scout.db") == [(2, "acme/ledger:docs/close.md")]
    assert SECRET.encode() not in (config.parent / "scout.db").read_bytes()


@pytest.mark.parametrize("kind", ["local", "gitlab"])
def test_include_confidential_reads_them(
    tmp_path: Path, estate: tuple[Path, GitLabServer], kind: str
) -> None:
    root, server = estate
    config = configure(tmp_path / kind, server.url, kind, root, include=True)
    done = run_scout(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    summary = done.json()
    assert (summary["issues_read"], summary["notes_read"]) == (2, 2)
    assert "issue_confidential" not in summary["skipped"]
    assert "note_internal" not in summary["skipped"]
    assert stored(config.parent / "scout.db") == [
        (1, "acme/ledger:docs/fx.md"),
        (2, "acme/ledger:docs/audit.md"),
        (2, "acme/ledger:docs/close.md"),
    ]


@pytest.mark.slow
def test_an_issue_made_confidential_loses_its_verdicts(
    tmp_path: Path, estate: tuple[Path, GitLabServer]
) -> None:
    root, server = estate
    config = configure(tmp_path / "local", server.url, "local", root, include=True)
    assert run_scout(config, "sweep").code == 0
    assert (1, "acme/ledger:docs/fx.md") in stored(config.parent / "scout.db")
    config.write_text(config_text(server.url, kind="local", estate=root), encoding="utf-8")
    issues = root / "issues" / "acme" / "ledger.jsonl"
    issues.write_text(
        issues.read_text().replace("2026-02-01T10:00:00Z", "2026-02-02T10:00:00Z"),
        encoding="utf-8",
    )
    assert run_scout(config, "sweep").code == 0
    assert [iid for iid, _ in stored(config.parent / "scout.db")].count(1) == 0
