"""The gap backlog: declined questions grouped by content words, ranked, with their nearest
passages; ``--since`` in every documented form."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scout.cli.runtime import Runtime
from scout.errors import UsageError
from scout.gaps import GapGroup, gaps, group, normalise, parse_since
from scout.store import QuestionRow, Store
from tests.fakes.corpus import make_store
from tests.fakes.serving import write_serve_config
from tests.helpers.growth import assert_linear
from tests.helpers.samples import NEAR


def row(
    asked_at: str,
    question: str,
    outcome: str = "declined",
    reason: str | None = "nothing matched",
    nearest: tuple[dict[str, Any], ...] = (),
    cause: str | None = None,
    asker: str | None = None,
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
        nearest=nearest,
        cause=cause,
        asker=asker,
    )


WIFI = [
    "What is the office wifi password?",
    "what's the Office wifi password",
    "Office wifi password: what is it?",
    "OFFICE WIFI PASSWORDS?",
    "the wifi password for the office, what\u2019s that",
]


@pytest.mark.parametrize("wording", WIFI[1:])
def test_paraphrases_are_one_gap(wording: str) -> None:
    assert normalise(wording) == normalise(WIFI[0]) == "offic password wifi"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("How do I rotate keys?", "how do i rotate KEYS"),
        ("rotating the key", "the keys rotated"),
        ("Schlüssel rotieren", "SCHLÜSSEL rotieren?"),
    ],
)
def test_same_after_normalisation(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("What is the office wifi password?", "What is the guest wifi password?"),
        ("What is the office wifi password?", "How do I reset the office wifi?"),
        ("rotate keys", "rotate certificates"),
        ("backup", "restore"),
    ],
)
def test_different_questions_stay_apart(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


def test_a_gap_has_its_wordings_latest_first_and_its_latest_nearest_passages() -> None:
    rows = [
        row("2026-11-01T10:00:00Z", WIFI[0], reason="no passage covers: wifi"),
        row("2026-11-02T10:00:00Z", "where are backups", reason="cited nothing"),
        row("2026-11-03T10:00:00Z", WIFI[1], reason="the passages do not say", nearest=(NEAR,)),
        row("2026-11-04T10:00:00Z", "deploy approvals"),
        row("2026-11-05T10:00:00Z", WIFI[0], outcome="answered", reason=None),
        row("2026-11-06T10:00:00Z", WIFI[2], reason="no passage covers: password"),
        row("2026-11-07T10:00:00Z", WIFI[0] + "  ", nearest=(NEAR,)),
    ]
    backlog = group(rows)
    assert [g.to_json() for g in backlog] == [
        {
            "question": WIFI[0] + "  ",
            "wordings": [WIFI[0], WIFI[2], WIFI[1]],
            "asked": 4,
            "askers": 4,  # logged before askers were kept: each row its own
            "first": "2026-11-01T10:00:00Z",
            "last": "2026-11-07T10:00:00Z",
            "reason": "nothing matched",
            "nearest": [NEAR],
            "issues": [],
        },
        {
            "question": "deploy approvals",
            "wordings": ["deploy approvals"],
            "asked": 1,
            "askers": 1,
            "first": "2026-11-04T10:00:00Z",
            "last": "2026-11-04T10:00:00Z",
            "reason": "nothing matched",
            "nearest": [],
            "issues": [],
        },
        {
            "question": "where are backups",
            "wordings": ["where are backups"],
            "asked": 1,
            "askers": 1,
            "first": "2026-11-02T10:00:00Z",
            "last": "2026-11-02T10:00:00Z",
            "reason": "cited nothing",
            "nearest": [],
            "issues": [],
        },
    ]
    assert backlog[0].words == ("office", "wifi", "password")


def test_gaps_rank_by_distinct_askers_so_one_asker_cannot_steer_them() -> None:
    rows = [row(f"2026-11-0{n + 1}T10:00:00Z", "deploy approvals", asker="a") for n in range(6)]
    rows += [row("2026-11-01T10:00:00Z", WIFI[0], asker=who) for who in ("b", "c")]
    rows += [row("2026-11-02T10:00:00Z", "where are backups", asker="d")]
    backlog = group(rows)
    assert [(g.question, g.askers, g.asked) for g in backlog] == [
        (WIFI[0], 2, 2),
        ("deploy approvals", 1, 6),
        ("where are backups", 1, 1),
    ]


def test_the_question_log_keeps_its_days_and_rows(tmp_path: Path) -> None:
    with Store.open(tmp_path / "scout.db", create=True) as store:
        store.keep_questions(days=10, rows=100)

        def log(day: int, question: str, asker: str | None = None) -> None:
            store.log_question(
                question=question,
                outcome="declined",
                reason="nothing matched",
                provider="offline",
                passages=0,
                latency_ms=1,
                asked_at=f"2026-11-{day:02d}T10:00:00Z",
                asker=asker,
            )

        log(1, "an old question")
        for n in range(250):
            log(15, f"question {n}", asker=f"client {n % 7}")
        kept = store.questions()
        assert len(kept) == 100 and kept[0].question == "question 150"
        log(30, "a new question")  # 15 days later: the rest is older than 10 days
        assert [q.question for q in store.questions()] == ["a new question"]
        # askers are hashed with the store's own salt: never the identity, one hash for one
        assert {q.asker for q in kept} == {store.asker_hash(f"client {n}") for n in range(7)}
        assert not {q.asker for q in kept} & {f"client {n}" for n in range(7)}


def test_empty_index_declines_and_wordless_questions_are_not_gaps() -> None:
    rows = [
        row("2026-11-01T10:00:00Z", "office wifi password", cause="index_empty"),
        row("2026-11-02T10:00:00Z", "How do I?"),  # logged before such questions were refused
        row("2026-11-03T10:00:00Z", "?!?"),
    ]
    assert group(rows) == []


def test_stored_issue_links_are_attached_by_gap_key() -> None:
    link = {"project": "acme/handbook", "iid": 4, "url": "https://g/acme/handbook/-/issues/4"}
    (gap,) = group([row("2026-11-01T10:00:00Z", WIFI[0])], {normalise(WIFI[1]): [link]})
    assert gap.issues == (link,)


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
                nearest=[{**NEAR, "body": "never stored"}],
            )
        assert [(g.question, g.asked) for g in gaps(store)] == [("how do i rotate KEYS", 2)]
        assert gaps(store)[0].nearest == (NEAR,)  # only the place, never text
        assert [(g.question, g.asked) for g in gaps(store, since="2026-11-01")] == [
            ("how do i rotate KEYS", 1)
        ]
        assert [g.to_json() for g in gaps(store, since="2026-11-02T09:00:01Z")] == []


NOW = datetime(2026, 12, 1, 19, 45, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "stamp"),
    [
        ("2026-11-01", "2026-11-01T00:00:00Z"),
        ("2026-11-01T12:30:00Z", "2026-11-01T12:30:00Z"),
        ("2026-11-01T12:30:00+02:00", "2026-11-01T10:30:00Z"),
        ("7d", "2026-11-24T19:45:12Z"),
        ("1d", "2026-11-30T19:45:12Z"),
        ("24h", "2026-11-30T19:45:12Z"),
        ("36h", "2026-11-30T07:45:12Z"),
        ("yesterday", "2026-11-30T00:00:00Z"),
        (" Yesterday ", "2026-11-30T00:00:00Z"),
        ("7D", "2026-11-24T19:45:12Z"),
    ],
)
def test_since_accepts_dates_times_and_relative_forms(text: str, stamp: str) -> None:
    assert parse_since(text, now=NOW) == stamp


def test_yesterday_is_the_utc_day_before_whatever_the_local_zone() -> None:
    just_after_midnight = datetime(2026, 12, 1, 0, 30, tzinfo=UTC)
    assert parse_since("yesterday", now=just_after_midnight) == "2026-11-30T00:00:00Z"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "soon",
        "2026-13-01",
        "1 OR 1=1",
        "0d",
        "-7d",
        "7 d",
        "7days",
        "1.5d",
        "7w",
        "d",
        "9999999d",
        "36601d",
        "7d7d",
        "yesterday\x1b[2J",
        "7" * 10_000 + "d",
        "2026-11-01\n7d",
    ],
)
def test_since_rejects_anything_else(text: str) -> None:
    with pytest.raises(UsageError, match="is not a date: use YYYY-MM-DD, 7d, 24h or yesterday"):
        parse_since(text, now=NOW)


def test_since_error_is_one_printable_line() -> None:
    with pytest.raises(UsageError) as caught:
        parse_since("x\x1b[2J\n" * 100, now=NOW)
    message = str(caught.value)
    assert "\x1b" not in message and "\n" not in message and len(message) < 200


def test_gap_json_is_exactly_the_contract() -> None:
    gap = GapGroup("k", "q", ("q",), 1, "a", "b", "r")
    assert list(gap.to_json()) == [
        "question",
        "wordings",
        "asked",
        "askers",
        "first",
        "last",
        "reason",
        "nearest",
        "issues",
    ]


@pytest.mark.parametrize(
    "unit",
    ["wifi ", "a" * 70 + " ", "what's ", "\u2019s'" * 3, "-_-.", "\u0301" * 5 + "x "],
)
def test_grouping_time_grows_linearly_with_the_question(unit: str) -> None:
    assert_linear(lambda n: lambda: normalise(unit * n), 2_000)


def test_the_configured_bounds_reach_every_store_a_command_opens(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_serve_config(
        tmp_path, tables={"store": {"question_log_days": 7, "question_log_rows": 150}}
    )
    runtime = Runtime(str(config))
    try:
        store = runtime.store()
        assert (store.keep_days, store.keep_rows) == (7, 150)
    finally:
        runtime.close()
