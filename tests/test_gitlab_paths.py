"""``scout index`` and ``scout sweep`` with ``forge.kind = "gitlab"`` over the GitLab test server.

The demo estate is built with the server's own URL (``build_demo_estate(url=server.url)``), so
its issue links point at the configured forge and extraction accepts them. The server is started
first on a placeholder estate.toml (its port is only known then) and re-reads estate.toml when the
demo build replaces it. The request log is the witness: it shows what Scout asked for, and what
it never asked for.

The helpers here (``serve_demo``, ``Served``) are shared by the fault, crash and hostile suites.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from scout.demo.builder import EstateBuilder
from scout.demo.estate import DOCS_URL, DemoEstate, build_demo_estate
from tests.conftest import Result
from tests.gitlab_server.server import GitLabServer

TOKEN_ENV = "SCOUT_TEST_GITLAB_TOKEN"
TOKEN = "glpat-h9-do-not-print-0123456789"
SCOUT = [sys.executable, "-m", "scout"]
# Requests that read repository content; anything else is metadata (projects, heads, issues).
CONTENT = re.compile(
    r"/repository/(files|archive|tree|blobs|compare)|/repository/commits/[^/]+/diff"
    r"|/merge_requests/\d+/(diffs|changes)|/raw"
)


def placeholder(estate: Path) -> Path:
    """An estate directory the server can start on before the real estate is built into it."""
    estate.mkdir(parents=True, exist_ok=True)
    (estate / "estate.toml").write_text('url = "http://placeholder.invalid"\n', encoding="utf-8")
    return estate


def serve_built(
    estate: Path, start: Callable[..., GitLabServer], build: Callable[[Path, str], None]
) -> GitLabServer:
    """A test server over an estate built for its URL (``build(estate, server.url)``): the
    server starts on a placeholder, then the real estate is built into the same folder."""
    server = start(placeholder(estate), token=TOKEN)
    (estate / "estate.toml").unlink()
    build(estate, server.url)
    return server


def config_text(
    url: str,
    *,
    kind: str = "gitlab",
    estate: Path | None = None,
    provider: str = "offline",
    api: str = "rest",
) -> str:
    # forge.api is pinned to REST here: these suites assert REST's requests, path by path;
    # tests/test_graphql.py runs the same estates through GraphQL and compares the stores.
    forge = (
        f'token_env = "{TOKEN_ENV}"\napi = "{api}"' if kind == "gitlab" else f'path = "{estate}"'
    )
    return f"""[forge]
kind = "{kind}"
url = "{url}"
{forge}
groups = ["acme"]

[corpus]
visibility = ["public"]
exclude_projects = ["acme/infra"]

[[docs_site]]
url = "{DOCS_URL}"
project = "acme/handbook"
root = "docs/"

[answer]
provider = "{provider}"

[store]
path = "scout.db"
"""


def run_scout(
    config: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> Result:
    done = subprocess.run(
        [*SCOUT, "--config", str(config), *args],
        capture_output=True,
        text=True,
        env={**os.environ, TOKEN_ENV: TOKEN, **(env or {})},
        timeout=timeout,
        cwd=config.parent,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@dataclass
class Served:
    """The demo estate served by a GitLab test server, and configs that point Scout at it."""

    server: GitLabServer
    demo: DemoEstate
    directory: Path

    @property
    def estate(self) -> Path:
        return self.demo.root

    def config(self, name: str = "gitlab", *, kind: str = "gitlab", **options: Any) -> Path:
        folder = self.directory / name
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / "scout.toml"
        text = config_text(self.server.url, kind=kind, estate=self.estate, **options)
        target.write_text(text, encoding="utf-8")
        return target

    def project_id(self, path: str) -> int | None:
        found = self.server.estate.data().project(path)
        return None if found is None else found.id


def serve_demo(
    directory: Path, start: Callable[..., GitLabServer], *, canary: str | None = None, **kw: Any
) -> Served:
    estate = placeholder(directory / "estate")
    server = start(estate, token=TOKEN, **kw)
    (estate / "estate.toml").unlink()
    demo = build_demo_estate(estate, canary=canary, url=server.url)
    return Served(server, demo, directory)


def passages(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return sorted(
            conn.execute(
                "select project, path, sha, line_start, line_end, heading, body, source, origin, "
                "url, target from passages"
            ).fetchall(),
            key=repr,
        )
    finally:
        conn.close()


def state(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything index and sweep decide, without ids and timestamps."""
    conn = sqlite3.connect(db)
    try:
        queries = {
            "signposts": "select issue_project, issue_iid, reference, status, check_name, reason, "
            "target_project, target_path, target_line_start, target_line_end, target_sha, target "
            "from signposts",
            "passages": "select project, path, sha, line_start, line_end, heading, body, source, "
            "origin, url, target from passages",
            "issues": "select project, iid, updated_at, refs from issues",
            "cursors": "select scope, value from cursors",
            "projects": "select path, indexed_sha, web_url from projects",
        }
        return {k: sorted(conn.execute(q).fetchall(), key=repr) for k, q in queries.items()}
    finally:
        conn.close()


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("pragma integrity_check").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def served(tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]) -> Served:
    return serve_demo(tmp_path, gitlab_server_factory)


# ---------------------------------------------------------------------------------- index


def test_gitlab_index_gives_the_same_passages_as_the_local_forge(served: Served) -> None:
    via_gitlab, via_local = served.config("gitlab"), served.config("local", kind="local")
    for config in (via_gitlab, via_local):
        done = run_scout(config, "index", "--json")
        assert done.code == 0, done.stderr
    rows = passages(via_gitlab.parent / "scout.db")
    assert rows == passages(via_local.parent / "scout.db")
    assert {r[0] for r in rows} == {"acme/handbook", "acme/ledger", "acme/platform/gateway"}
    heads = {
        "acme/handbook": served.demo.shas["handbook:head"],
        "acme/ledger": served.demo.shas["ledger:head"],
        "acme/platform/gateway": served.demo.shas["gateway:head"],
    }
    for project, path, sha, start, end, *_rest, url, _target in rows:
        assert sha == heads[project]
        assert url == f"{served.server.url}/{project}/-/blob/{sha}/{path}#L{start}-{end}"


def test_an_unchanged_estate_reindexes_without_content_requests(served: Served) -> None:
    config = served.config()
    assert run_scout(config, "index").code == 0
    served.server.clear_log()
    done = run_scout(config, "index", "--json")
    assert done.code == 0, done.stderr
    summary = done.json()
    assert (summary["projects_indexed"], summary["projects_unchanged"]) == (0, 3)
    assert summary["forge_requests"] == {"head": 3, "projects": 1}
    paths = [r.path for r in served.server.log]
    assert not [p for p in paths if CONTENT.search(p)]
    assert len([p for p in paths if p.endswith("/groups/acme/projects")]) == 1
    assert len(paths) == 4


def test_private_projects_visible_to_the_token_stay_excluded(served: Served) -> None:
    config = served.config()
    done = run_scout(config, "index", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["skipped"]["project_private"] == 1
    secrets = served.project_id("acme/secrets")
    # the token sees the private project in the listing ...
    listing = served.server.requests("/groups/acme/projects")
    assert listing and all(r.status == 200 for r in listing)
    # ... and Scout never asks for anything inside it
    assert served.server.requests(f"/projects/{secrets}") == []
    assert served.server.requests(quote("acme/secrets", safe="")) == []
    assert "acme/secrets" not in {r[0] for r in passages(config.parent / "scout.db")}
    # a public project turned private loses its passages on the next run
    served.server.set_visibility("acme/handbook", "private")
    done = run_scout(config, "index")
    # the docs site now names a project the rules keep out: exit 3, once its passages are gone
    assert done.code == 3 and "[[docs_site]] " in done.stderr, done.stderr
    assert "acme/handbook" not in {r[0] for r in passages(config.parent / "scout.db")}


# ---------------------------------------------------------------------------------- sweep


def test_a_sweep_fetches_no_content_of_targets_that_fail_corpus_rules(served: Served) -> None:
    config = served.config()
    assert run_scout(config, "index").code == 0
    done = run_scout(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["rejected"]["corpus_rules"] == 5
    conn = sqlite3.connect(config.parent / "scout.db")
    rejected = {
        row[0]
        for row in conn.execute(
            "select target_project from signposts where check_name = 'corpus_rules'"
        )
    }
    conn.close()
    assert rejected >= {"acme/secrets", "acme/infra", "acme/legacy"}
    for project in ("acme/secrets", "acme/infra", "acme/legacy", "globex/tools"):
        prefixes = [f"/api/v4/projects/{quote(project, safe='')}"]
        if (pid := served.project_id(project)) is not None:
            prefixes.append(f"/api/v4/projects/{pid}")
        touched = [
            r.path
            for r in served.server.log
            if any(r.path.startswith(p) for p in prefixes) and r.path not in prefixes
        ]
        # only the project's metadata was looked at: no head, file, archive, diff or MR
        assert touched == [], project
    assert not [r.path for r in served.server.log if "globex" in r.path and CONTENT.search(r.path)]


def test_issue_references_trigger_no_forge_request(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> None:
    estate = placeholder(tmp_path / "estate")
    server = gitlab_server_factory(estate, token=TOKEN)
    (estate / "estate.toml").unlink()
    builder = EstateBuilder(estate, url=server.url)
    builder.project("acme/ledger").commit({"README.md": "# Ledger\n"}, "Start")
    builder.project("acme/handbook").commit({"README.md": "# Handbook\n"}, "Start")
    text = (
        f"Same as #5 and acme/handbook#5, see {server.url}/acme/handbook/-/issues/5, "
        f"{server.url}/groups/acme/-/work_items/7, {server.url}/groups/acme/-/epics/3 "
        "and [issue:acme/handbook#9]."
    )
    builder.issue("acme/ledger", 1, "Why does posting fail?", text)
    builder.write()
    (tmp_path / "scout.toml").write_text(config_text(server.url), encoding="utf-8")
    done = run_scout(tmp_path / "scout.toml", "sweep", "--json")
    assert done.code == 0, done.stderr
    summary = done.json()
    assert (summary["issues_read"], summary["references"]) == (1, 0)
    # the issue listing, and the issue's own project to check it may be read: nothing else
    assert sorted(r.path for r in server.log) == [
        "/api/v4/groups/acme/issues",
        f"/api/v4/projects/{quote('acme/ledger', safe='')}",
    ]


def test_a_second_sweep_with_nothing_changed_asks_for_issues_and_heads_only(
    served: Served,
) -> None:
    config = served.config()
    assert run_scout(config, "index").code == 0
    assert run_scout(config, "sweep").code == 0
    served.server.clear_log()
    done = run_scout(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    summary = done.json()
    assert (summary["issues_read"], summary["references"], summary["revalidated"]) == (0, 0, 0)
    paths = [r.path for r in served.server.log]
    assert paths.count("/api/v4/groups/acme/issues") == 1
    others = [p for p in paths if p != "/api/v4/groups/acme/issues"]
    heads = [p for p in others if "/repository/branches/" in p]
    metadata = [p for p in others if re.fullmatch(r"/api/v4/projects/[^/]+", p)]
    assert sorted(heads + metadata) == sorted(others)
    # one head (and one metadata lookup) per target project, whatever the number of signposts
    assert len(heads) == len(set(heads)) <= 3
    assert len(metadata) == len(set(metadata)) <= 3
