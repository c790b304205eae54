"""``scout index`` and ``scout sweep`` with ``forge.kind = "gitlab"`` over the GitLab test server.

The demo estate is built with the server's own URL (``build_demo_estate(url=server.url)``), so
its issue links point at the configured forge and extraction accepts them. The server is started
first on a placeholder estate.toml (its port is only known then) and re-reads estate.toml when the
demo build replaces it. The request log is the witness: it shows what Scout asked for, and what
it never asked for.

The serving helpers (``serve_demo``, ``Served``) live in ``tests/helpers/served.py``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from scout.demo.builder import EstateBuilder
from tests.gitlab_server.server import GitLabServer
from tests.helpers.served import (
    TOKEN,
    Served,
    config_text,
    passages,
    placeholder,
    run_scout,
    serve_demo,
)

# Requests that read repository content; anything else is metadata (projects, heads, issues).
CONTENT = re.compile(
    r"/repository/(files|archive|tree|blobs|compare)|/repository/commits/[^/]+/diff"
    r"|/merge_requests/\d+/(diffs|changes)|/raw"
)


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


@pytest.mark.slow
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
