"""Extraction over a whole issue: one byte budget, one reference budget, de-duplication and order
across title, description and notes, the timeout, and reading estate issue documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from signposts.extract import extract, extract_issue, parse_issue_document
from signposts.references import ExtractContext

G = "https://gitlab.acme.example"
CTX = ExtractContext(gitlab_url=G, project="acme/app")


def test_order_and_de_duplication_run_across_title_description_and_notes() -> None:
    result = extract_issue("!3 in title", "src/a.py and !3", ["abc1234 !4", "src/a.py"], CTX)
    assert [r.reference for r in result.references] == [
        "acme/app!3",
        "acme/app:src/a.py",
        "acme/app@abc1234",
        "acme/app!4",
    ]
    assert result.skipped == {}


def test_references_past_the_limit_are_counted_not_kept() -> None:
    ctx = ExtractContext(gitlab_url=G, project="acme/app", max_references=2)
    result = extract_issue("!1 !2", "!3 !1", ["!4 !2"], ctx)
    assert [r.reference for r in result.references] == ["acme/app!1", "acme/app!2"]
    assert result.skipped == {"references_over_limit": 2}


@pytest.mark.parametrize(
    ("title", "description", "notes", "max_bytes", "expected", "over"),
    [
        ("!1", "!2", ["!3"], 100, ["acme/app!1", "acme/app!2", "acme/app!3"], 0),
        ("!1", "!2 !5", ["!3"], 5, ["acme/app!1", "acme/app!2"], 5),  # cut at whitespace
        ("!1", "!2", ["!3"], 2, ["acme/app!1"], 4),
        ("!1", "!2", ["!3"], 0, [], 6),
        ("", "\u00e9\u00e9 !2", [], 4, [], 3),  # multi-byte characters count as bytes
        ("", "\u00e9\u00e9", [], 3, [], 2),  # never half a character
        # decision: with no whitespace in the last 4096 characters the cut is hard, and what
        # precedes it is read as written
        ("", "docs/a.md/b.md", [], 9, ["acme/app:docs/a.md"], 5),
    ],
)
def test_one_byte_budget_for_the_whole_issue(
    title: str, description: str, notes: list[str], max_bytes: int, expected: list[str], over: int
) -> None:
    ctx = ExtractContext(gitlab_url=G, project="acme/app", max_bytes=max_bytes)
    result = extract_issue(title, description, notes, ctx)
    assert [r.reference for r in result.references] == expected
    assert result.skipped["bytes_over_limit"] == over


def test_a_text_past_its_time_budget_is_skipped_whole_and_counted() -> None:
    ctx = ExtractContext(gitlab_url=G, project="acme/app", timeout=0.0)
    result = extract_issue("!1", "!2", ["!3"], ctx)
    assert result.references == []
    assert result.skipped == {"timeout": 3}


def test_a_worst_case_text_finishes_well_inside_the_timeout() -> None:
    text = ("/" * 5000 + "!" * 5000 + "#" * 5000 + "ab12" * 1250 + "[(" * 2500 + "." * 5000) * 4
    text += " https://gitlab.acme.example/" + "a/" * 20000 + "](" * 5000
    result = extract(text, CTX)
    assert result.skipped == {}


ISSUE = {
    "iid": 3,
    "title": "Rates wrong, see !12",
    "description": "In src/ledger/rates.py:42",
    "state": "opened",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-02T00:00:00Z",
    "web_url": "https://gitlab.acme.example/acme/ledger/-/issues/3",
    "notes": [
        {"id": 1, "body": "changed the description", "system": True},
        {"id": 2, "body": "fixed by abc1234", "system": False},
        {"id": 3, "body": None, "system": False},
    ],
}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            json.dumps(ISSUE),
            (
                "Rates wrong, see !12",
                "In src/ledger/rates.py:42",
                ["fixed by abc1234"],
                "acme/ledger",
            ),
        ),
        ("just text with !12", ("", "just text with !12", [], None)),
        ("[1, 2]", ("", "[1, 2]", [], None)),
        ('{"title": null, "description": null}', ("", "", [], None)),
        ('{"title": "t", "web_url": "https://h/acme/x/issues/3"}', ("t", "", [], None)),
        ('{"title": "t", "web_url": "https://h/-/issues/3"}', ("t", "", [], None)),
        ('{"title": "t", "web_url": "https://h/a/../b/-/issues/3"}', ("t", "", [], None)),
        (
            '{"title": "t", "web_url": "https://h/acme/sub/x/-/issues/3"}',
            ("t", "", [], "acme/sub/x"),
        ),
    ],
)
def test_parse_issue_document(raw: str, expected: tuple[str, str, list[str], str | None]) -> None:
    assert parse_issue_document(raw) == expected


def test_an_issue_document_end_to_end() -> None:
    title, description, notes, project = parse_issue_document(json.dumps(ISSUE))
    ctx = ExtractContext(gitlab_url=G, project=project)
    result = extract_issue(title, description, notes, ctx)
    assert [r.to_json() for r in result.references] == [
        {
            "kind": "merge_request",
            "reference": "acme/ledger!12",
            "project": "acme/ledger",
            "path": None,
            "lines": None,
            "sha": None,
            "iid": 12,
            "url": None,
        },
        {
            "kind": "file",
            "reference": "acme/ledger:src/ledger/rates.py#L42",
            "project": "acme/ledger",
            "path": "src/ledger/rates.py",
            "lines": [42, 42],
            "sha": None,
            "iid": None,
            "url": None,
        },
        {
            "kind": "commit",
            "reference": "acme/ledger@abc1234",
            "project": "acme/ledger",
            "path": None,
            "lines": None,
            "sha": "abc1234",
            "iid": None,
            "url": None,
        },
    ]


def test_an_issue_line_written_by_the_estate_builder(tmp_path: Path) -> None:
    estate = EstateBuilder(tmp_path / "estate")
    estate.issue(
        "acme/sub/ledger",
        7,
        "Rounding",
        f"See {G}/acme/config/-/blob/main/docs/rates.md#L3 and [notes](docs/notes.md)",
        notes=["closed by !9", {"body": "mentioned in !10", "system": True}],
    )
    root = estate.write()
    line = (root / "issues/acme/sub/ledger.jsonl").read_text("utf-8")
    title, description, notes, project = parse_issue_document(line)
    assert (title, notes, project) == ("Rounding", ["closed by !9"], "acme/sub/ledger")
    result = extract_issue(title, description, notes, ExtractContext(gitlab_url=G, project=project))
    assert [r.reference for r in result.references] == [
        "acme/config/-/blob/main/docs/rates.md#L3",
        "acme/sub/ledger:docs/notes.md",
        "acme/sub/ledger!9",
    ]
