"""Every read of file content passes the path rules on the path actually read.

Through the GitLab test server, whose request log shows every file Scout fetched: a sha-pinned
link to a page later moved into an excluded folder, a docs URL that maps into one, and a reverted
change that touched one. None of the excluded files is requested, none is accepted, and
``scout ask`` never answers from one (the local forge, same estate, agrees on the verdicts).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from scout.demo.estate import DOCS_URL
from tests.gitlab_server.server import GitLabServer
from tests.helpers.served import TOKEN, config_text, placeholder, run_scout

RUNBOOK = "".join(f"Step {n}: thaw the zebrafrost valve number {n}.\n" for n in range(1, 12))


def build(estate: Path, url: str) -> dict[str, str]:
    builder = EstateBuilder(estate, url=url)
    repo = builder.project("acme/handbook")
    shas = {
        "pinned": repo.commit(
            {
                "docs/runbook.md": "# Runbook\n\n" + RUNBOOK,
                "docs/guide.md": "# Guide\n\nThe zebrafrost guide.\n",
            },
            "Runbook",
        )
    }
    # Moved into the excluded folder: same content, so git sees a rename.
    repo.commit({"docs/runbook.md": None, "internal/runbook.md": "# Runbook\n\n" + RUNBOOK}, "Move")
    shas["change"] = repo.commit(
        {
            "docs/guide.md": "# Guide\n\nThe zebrafrost guide.\n\nValves open clockwise always.\n",
            "internal/notes.md": "# Notes\n\nThe zebrafrost master code is 4417.\n",
        },
        "Valve notes",
    )
    repo.revert(shas["change"])
    builder.issue(
        "acme/handbook",
        1,
        "How do I thaw the zebrafrost valve?",
        f"See {url}/acme/handbook/-/blob/{shas['pinned']}/docs/runbook.md#L3-6, "
        f"commit {shas['change']}, and {DOCS_URL}internal/runbook.html "
        f"(thaw zebrafrost valve steps).",
    )
    builder.write()
    return shas


def configure(
    directory: Path, url: str, *, kind: str = "gitlab", estate: Path | None = None
) -> Path:
    text = config_text(url, kind=kind, estate=estate).replace(
        'exclude_projects = ["acme/infra"]',
        'exclude_projects = ["acme/infra"]\nexclude_paths = ["internal/*"]',
    )
    # The docs site builds from the repository root, so a page URL can map into internal/.
    text = text.replace('root = "docs/"', 'root = ""')
    config = directory / "scout.toml"
    directory.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")
    return config


def verdicts(config: Path) -> dict[str, tuple[str, str | None, str]]:
    conn = sqlite3.connect(config.parent / "scout.db")
    try:
        rows = conn.execute("select kind, status, check_name, reason from signposts").fetchall()
    finally:
        conn.close()
    return {kind: (status, check, reason) for kind, status, check, reason in rows}


@pytest.fixture
def served(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> tuple[GitLabServer, Path, dict[str, str]]:
    estate = placeholder(tmp_path / "estate")
    server = gitlab_server_factory(estate, token=TOKEN)
    (estate / "estate.toml").unlink()
    return server, estate, build(estate, server.url)


@pytest.mark.slow
def test_no_excluded_file_is_read_through_a_rename_a_revert_or_a_docs_mapping(
    tmp_path: Path, served: tuple[GitLabServer, Path, dict[str, str]]
) -> None:
    server, estate, shas = served
    config = configure(tmp_path / "gitlab", server.url)
    assert run_scout(config, "index").code == 0
    done = run_scout(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    found = verdicts(config)
    assert found["file"] == ("rejected", "corpus_rules", "path_excluded: internal/runbook.md")
    assert found["commit"][:2] == ("rejected", "resolves")
    assert found["commit"][2].endswith("was reverted")
    assert found["docs_page"][:2] == ("rejected", "resolves")
    read = [r.path for r in server.log if "internal" in r.path]
    assert read == []
    asked = run_scout(config, "ask", "How do I thaw the zebrafrost valve?", "--json")
    assert asked.code == 0, asked.stderr
    cited = [c["path"] for c in asked.json()["citations"]]
    assert not [p for p in cited if p.startswith("internal/")]
    assert "zebrafrost master code" not in asked.stdout

    # The local forge reads the same estate the same way.
    local = configure(tmp_path / "local", server.url, kind="local", estate=estate)
    assert run_scout(local, "sweep").code == 0
    assert verdicts(local) == found
