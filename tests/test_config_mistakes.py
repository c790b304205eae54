"""Config mistakes every operator makes: a typo in ``forge.groups``, a docs site on a project that
is not there. Each is exit 3 naming the mistake, and nothing stored is removed (before: exit 0,
every project removed and every accepted signpost withdrawn).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.gitlab_server.server import GitLabServer
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result
from tests.helpers.served import integrity, run_scout, serve_demo, state

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"


def _demo(tmp_path: Path) -> Path:
    demo_estate(tmp_path / "estate")
    config = tmp_path / "scout.toml"
    config.write_text(DEMO_CONFIG.read_text(), encoding="utf-8")
    return config


def _with(config: Path, old: str, new: str) -> None:
    text = config.read_text()
    assert old in text, old
    config.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("groups", "missing"),
    [
        ('["acmee"]', "acmee"),
        ('["acme", "acme-typo"]', "acme-typo"),
        ('["acme/nope"]', "acme/nope"),
    ],
    ids=["a-typo", "one-good-one-typo", "a-subgroup-that-is-not-there"],
)
def test_a_group_that_matches_nothing_is_exit_3_and_nothing_is_removed(
    tmp_path: Path, scout: Callable[..., Result], groups: str, missing: str
) -> None:
    config = _demo(tmp_path)
    assert scout("index", config=config).code == 0
    assert scout("sweep", config=config).code == 0
    db = tmp_path / "scout.db"
    before = state(db)
    assert before["projects"] and any(row[3] == "accepted" for row in before["signposts"])
    _with(config, 'groups = ["acme"]', f"groups = {groups}")
    for command in ("index", "sweep", "worker"):
        args = [command, "--once"] if command == "worker" else [command]
        done = scout(*args, config=config)
        assert (done.code, done.stdout) == (3, ""), (command, done.stderr)
        # a local estate has no token and no server: the message speaks of estate.toml
        assert done.stderr == (
            f"scout: forge.groups: no project of {tmp_path / 'estate' / 'estate.toml'} is in "
            f"group {missing!r}; nothing was removed: check the group against the [[project]] "
            "paths there\n"
        ), command
    assert state(db) == before and integrity(db) == "ok"


@pytest.mark.slow
def test_a_group_gitlab_does_not_know_is_exit_3_through_rest_and_graphql(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> None:
    served = serve_demo(tmp_path, gitlab_server_factory)
    indexed = served.config("indexed")
    assert run_scout(indexed, "index").code == 0
    assert run_scout(indexed, "sweep").code == 0
    for api in ("rest", "graphql"):
        config = served.config(api, api=api)
        db = config.parent / "scout.db"
        # the same store for both (tests/test_graphql.py shows the two APIs sweep it alike)
        with sqlite3.connect(indexed.parent / "scout.db") as source, sqlite3.connect(db) as copy:
            source.backup(copy)
        source.close()
        copy.close()
        before = state(db)
        _with(config, 'groups = ["acme"]', 'groups = ["acmee"]')
        for command in ("index", "sweep"):
            done = run_scout(config, command)
            assert (done.code, done.stdout) == (3, ""), (api, command, done.stderr)
            assert done.stderr.startswith(
                "scout: forge.groups: group 'acmee' does not exist on "
            ), done.stderr
        assert state(db) == before


@pytest.mark.parametrize(
    ("project", "why"),
    [("acme/handbok", "not in the estate"), ("acme/infra", "project_excluded")],
    ids=["a-project-that-is-not-there", "an-excluded-project"],
)
def test_a_docs_site_on_no_qualifying_project_is_exit_3_at_index_naming_the_site(
    tmp_path: Path, scout: Callable[..., Result], project: str, why: str
) -> None:
    config = _demo(tmp_path)
    assert scout("index", config=config).code == 0
    db = tmp_path / "scout.db"
    before = state(db)
    text = config.read_text()
    site = text.split("[[docs_site]]", 1)[1].split('url = "', 1)[1].split('"', 1)[0]
    _with(config, 'project = "acme/handbook"', f'project = "{project}"')
    done = scout("index", config=config)
    assert (done.code, done.stdout) == (3, ""), done.stderr
    kept = "nothing was removed" if why == "not in the estate" else "the estate was indexed"
    assert done.stderr == (
        f"scout: [[docs_site]] {site}: project {project!r} is not a qualifying project ({why}); "
        f"fix docs_site.project or the corpus rules ({kept})\n"
    )
    assert state(db) == before
