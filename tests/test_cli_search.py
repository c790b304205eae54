"""``scout search``: the JSON contract, the table, exit codes, and agreement with ``scout ask``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scout.cli.main import cli
from tests.fakes.corpus import CRED_URL, SHA, make_store, write_config

BACKUPS_URL = f"https://gitlab.acme.example/acme/ops/-/blob/{SHA}/docs/backups.md#L1-9"


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    make_store(tmp_path).close()
    return write_config(tmp_path)


def invoke(config: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--config", str(config), *args])


def test_search_json_lists_passages_best_first(estate: Path) -> None:
    result = invoke(estate, "search", "how do I rotate keys and restore a backup?", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    rows = json.loads(result.stdout)
    assert [r["rank"] for r in rows] == [1, 2]
    assert {r["path"] for r in rows} == {"docs/credentials.md", "docs/backups.md"}
    first = next(r for r in rows if r["path"] == "docs/credentials.md")
    assert set(first) == {
        "rank", "score", "bm25", "lexical_rank", "dense_rank", "project", "path", "heading",
        "lines", "sha", "url", "source", "kind", "expanded", "expansion_error", "dense_error",
    }  # fmt: skip
    assert first | {"rank": None, "score": None, "bm25": None, "lexical_rank": None} == {
        "rank": None,
        "score": None,
        "bm25": None,
        "lexical_rank": None,
        "dense_rank": None,
        "expansion_error": None,
        "dense_error": None,
        "project": "acme/config",
        "path": "docs/credentials.md",
        "heading": "Rotating credentials",
        "lines": [12, 30],
        "sha": SHA,
        "url": CRED_URL,
        "source": "docs",
        "kind": "docs",
        "expanded": [],
    }
    # BM25 in FTS5: lower is better, so best first means ascending scores; with words alone
    # the list is BM25's own ranking, its score BM25's times the re-ranking's factors.
    assert rows[0]["score"] < rows[1]["score"] < 0
    assert [r["lexical_rank"] for r in rows] == [1, 2]
    assert all(r["bm25"] < 0 for r in rows)


def test_search_table_names_each_passage_and_its_permalink(estate: Path) -> None:
    wide = CliRunner().invoke(
        cli, ["--config", str(estate), "search", "restore a backup"], env={"COLUMNS": "200"}
    )
    assert wide.exit_code == 0
    header, row = wide.stdout.splitlines()
    assert header.split() == ["#", "score", "project", "path", "lines", "heading", "permalink"]
    assert row.startswith("1  ")
    assert row.endswith("acme/ops  docs/backups.md  L1-9   Backups  " + BACKUPS_URL)
    # a permalink is never cut (a cut one opens nothing): too narrow, and it says where it is
    narrow = CliRunner().invoke(
        cli, ["--config", str(estate), "search", "restore a backup"], env={"COLUMNS": "80"}
    )
    narrow = narrow.stdout.splitlines()
    assert "permalink" not in narrow[0] and BACKUPS_URL not in narrow[1]
    assert narrow[-1] == "permalinks: a wider terminal, or --json / --nl"


def test_search_nothing_matched_is_an_empty_result(estate: Path) -> None:
    assert json.loads(invoke(estate, "search", "weather in Lisbon", "--json").stdout) == []
    assert invoke(estate, "search", "weather in Lisbon").stdout == "nothing matched\n"


def test_limit_caps_the_list(estate: Path) -> None:
    result = invoke(estate, "search", "rotate keys backup deploys", "--limit", "2", "--json")
    assert [r["rank"] for r in json.loads(result.stdout)] == [1, 2]


def test_search_gives_the_passages_ask_gives_the_model(estate: Path) -> None:
    question = "How do I rotate keys?"
    searched = json.loads(invoke(estate, "search", question, "--json").stdout)
    asked = json.loads(invoke(estate, "ask", question, "--json").stdout)
    assert asked["passages"] == len(searched)
    assert asked["citations"][0]["url"] == searched[0]["url"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["search", "x" * 4001], 2, "question is 4001 characters"),
        (["search", "?!"], 2, "question has no words"),
        (["search", "keys", "--limit", "0"], 2, "Invalid value for '--limit'"),
        (["search", "keys", "--limit", "101"], 2, "Invalid value for '--limit'"),
        (["search", "keys", "--project", "nobody/*"], 2, "matches no indexed project"),
        (["search", "keys", "--project", ""], 2, "--project must be a glob"),
        (["ask", "keys", "--project", "x" * 600], 2, "--project must be a glob"),
    ],
)
def test_bad_input_is_a_usage_error(estate: Path, args: list[str], code: int, message: str) -> None:
    result = invoke(estate, *args)
    assert result.exit_code == code
    assert result.stdout == ""
    assert message in result.stderr


def test_missing_store_is_a_store_error(tmp_path: Path) -> None:
    result = invoke(write_config(tmp_path), "search", "keys", "--json")
    assert (result.exit_code, result.stdout) == (4, "")
    assert "run `scout index` first" in result.stderr
