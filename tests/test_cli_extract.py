"""``scout signposts extract``: references out of an issue file or stdin, no network."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.helpers.run import Result

ISSUE = {
    "iid": 3,
    "title": "Rates",
    "description": "See !4, #5 and https://gitlab.acme.example/acme/ledger/-/blob/main/src/a.py#L3-9",
    "state": "opened",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "web_url": "https://gitlab.acme.example/acme/ledger/-/issues/3",
    "notes": [
        {"id": 1, "body": "Fixed in acme/ledger@abc1234def", "system": False},
        {"id": 2, "body": "mentioned in commit 0123abc4", "system": True},
    ],
}


def test_extract_reads_an_issue_file_and_prints_design_fields(
    tmp_path: Path, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    source = tmp_path / "issue.json"
    source.write_text(json.dumps(ISSUE))
    result = scout("signposts", "extract", str(source), "--json", config=write_config())
    assert result.code == 0, result.stderr
    assert result.json() == [
        {
            "kind": "merge_request",
            "reference": "acme/ledger!4",
            "project": "acme/ledger",
            "path": None,
            "lines": None,
            "sha": None,
            "iid": 4,
            "url": None,
        },
        {
            "kind": "file",
            "reference": "acme/ledger/-/blob/main/src/a.py#L3-9",
            "project": "acme/ledger",
            "path": None,
            "lines": [3, 9],
            "sha": None,
            "iid": None,
            "url": "https://gitlab.acme.example/acme/ledger/-/blob/main/src/a.py#L3-9",
        },
        {
            "kind": "commit",
            "reference": "acme/ledger@abc1234def",
            "project": "acme/ledger",
            "path": None,
            "lines": None,
            "sha": "abc1234def",
            "iid": None,
            "url": None,
        },
    ]


def test_extract_reads_plain_text_from_stdin_with_a_project(
    write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    result = scout(
        "signposts",
        "extract",
        "--project",
        "acme/ledger",
        "-",
        "--json",
        config=write_config(),
        input="The fix is !12; see docs/setup.md:4 and group/x#3.",
    )
    assert result.code == 0, result.stderr
    assert [r["reference"] for r in result.json()] == [
        "acme/ledger!12",
        "acme/ledger:docs/setup.md#L4",
    ]


def test_extract_of_a_missing_file_is_a_usage_error(
    tmp_path: Path, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    result = scout("signposts", "extract", str(tmp_path / "nope.json"), config=write_config())
    assert result.code == 2 and result.stdout == "" and "cannot read" in result.stderr
