"""The gap backlog: declined questions grouped after normalisation, ranked by count then recency."""

from __future__ import annotations

from pathlib import Path

import pytest

from scout.errors import UsageError
from scout.gaps import GapGroup, gaps, group, normalise, parse_since
from scout.store import QuestionRow, Store


def row(
    asked_at: str, question: str, outcome: str = "declined", reason: str | None = "nothing matched"
) -> QuestionRow:
    return QuestionRow(
        asked_at=asked_at,
        question=question,
        outcome=outcome,
        reason=reason,
        provider="offline",
        passages=0,
        latency_ms=0,
        input_tokens=0,
        output_tokens=0,
        usd=0.0,
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("How do I rotate keys?", "how do i rotate KEYS"),
        ("rotate keys", "keys, rotate!"),
        ("rotating the key", "the keys rotated"),
        ("Schlüssel rotieren", "SCHLÜSSEL rotieren?"),
    ],
)
def test_same_after_normalisation(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"), [("rotate keys", "rotate certificates"), ("backup", "restore")]
)
def test_different_questions_stay_apart(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


def test_groups_rank_by_count_then_recency_and_skip_answered() -> None:
    rows = [
        row("2026-11-01T10:00:00Z", "How do I rotate keys?"),
        row("2026-11-02T10:00:00Z", "where are backups", reason="cited nothing"),
        row("2026-11-03T10:00:00Z", "how do i rotate KEYS", reason="cited passage 9 of 8"),
        row("2026-11-04T10:00:00Z", "deploy approvals"),
        row("2026-11-05T10:00:00Z", "how do I rotate keys", outcome="answered", reason=None),
        row("2026-11-06T10:00:00Z", "rotate keys how do I"),
    ]
    assert group(rows) == [
        GapGroup(
            question="rotate keys how do I",
            count=3,
            reasons=("nothing matched", "cited passage 9 of 8"),
            first_seen="2026-11-01T10:00:00Z",
            last_seen="2026-11-06T10:00:00Z",
        ),
        GapGroup("deploy approvals", 1, ("nothing matched",), *["2026-11-04T10:00:00Z"] * 2),
        GapGroup("where are backups", 1, ("cited nothing",), *["2026-11-02T10:00:00Z"] * 2),
    ]


def test_gaps_reads_declined_questions_from_the_store_since_a_date(tmp_path: Path) -> None:
    with Store.open(tmp_path / "scout.db", create=True) as store:
        for asked_at, question, outcome in [
            ("2026-10-30T09:00:00Z", "How do I rotate keys?", "declined"),
            ("2026-11-02T09:00:00Z", "how do i rotate KEYS", "declined"),
            ("2026-11-03T09:00:00Z", "backups", "answered"),
        ]:
            store.log_question(
                question=question,
                outcome=outcome,
                reason="nothing matched" if outcome == "declined" else None,
                provider="offline",
                passages=0,
                latency_ms=3,
                asked_at=asked_at,
            )
        assert [(g.question, g.count) for g in gaps(store)] == [("how do i rotate KEYS", 2)]
        assert [(g.question, g.count) for g in gaps(store, since="2026-11-01")] == [
            ("how do i rotate KEYS", 1)
        ]
        assert [g.to_json() for g in gaps(store, since="2026-11-02T09:00:01Z")] == []


@pytest.mark.parametrize(
    ("text", "stamp"),
    [
        ("2026-11-01", "2026-11-01T00:00:00Z"),
        ("2026-11-01T12:30:00Z", "2026-11-01T12:30:00Z"),
        ("2026-11-01T12:30:00+02:00", "2026-11-01T10:30:00Z"),
    ],
)
def test_since_accepts_dates_and_times(text: str, stamp: str) -> None:
    assert parse_since(text) == stamp


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "", "1 OR 1=1"])
def test_since_rejects_anything_else(text: str) -> None:
    with pytest.raises(UsageError, match="is not a date: use YYYY-MM-DD"):
        parse_since(text)
