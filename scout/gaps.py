"""The documentation gap backlog: declined questions grouped and ranked. Pure over question rows.

Two questions are the same gap when they have the same words after normalisation: case folded,
punctuation dropped, words stemmed, order ignored. Groups rank by count, then by most recent.
Answered questions never appear.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scout import timefmt
from scout.errors import UsageError
from scout.retrieve import stem, words
from scout.store import QuestionRow, Store


def normalise(question: str) -> tuple[str, ...]:
    """The grouping key: the question's distinct word stems, sorted."""
    return tuple(sorted({stem(w) for w in words(question)}))


@dataclass(frozen=True)
class GapGroup:
    """One gap: its latest wording, how often and when it was asked, and why it was declined."""

    question: str
    count: int
    reasons: tuple[str, ...]  # distinct, most frequent first
    first_seen: str
    last_seen: str

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "count": self.count,
            "reasons": list(self.reasons),
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
        }


def group(rows: Iterable[QuestionRow]) -> list[GapGroup]:
    """Group declined rows (by ``asked_at``, ``question``, ``outcome``, ``reason``); rank them."""
    buckets: dict[tuple[str, ...], list[QuestionRow]] = {}
    for row in rows:
        if row.outcome != "declined":
            continue
        buckets.setdefault(normalise(row.question), []).append(row)
    groups = []
    for members in buckets.values():
        members = sorted(members, key=lambda r: r.asked_at)  # stable: log order breaks ties
        tally: dict[str, int] = {}
        for row in members:
            if row.reason:
                tally[row.reason] = tally.get(row.reason, 0) + 1
        reasons = sorted(tally, key=lambda r: -tally[r])
        groups.append(
            GapGroup(
                question=members[-1].question,
                count=len(members),
                reasons=tuple(reasons),
                first_seen=members[0].asked_at,
                last_seen=members[-1].asked_at,
            )
        )
    groups.sort(key=lambda g: g.last_seen, reverse=True)
    groups.sort(key=lambda g: g.count, reverse=True)
    return groups


def parse_since(text: str) -> str:
    """A ``--since`` value (``2026-11-01`` or an ISO 8601 time) as the store's timestamp format."""
    try:
        return timefmt.normalise(text)
    except ValueError:
        raise UsageError(
            f"--since {text!r} is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ"
        ) from None


def gaps(store: Store, *, since: str | None = None) -> list[GapGroup]:
    """The ranked gap backlog from the store's question log (``since`` as given to the CLI)."""
    rows = store.questions(outcome="declined", since=parse_since(since) if since else None)
    return group(rows)


@dataclass(frozen=True)
class AnsweringCost:
    """What answering questions cost over a period, from the question log: tokens and dollars as
    the providers reported them. ``unpriced`` counts questions whose provider gave no price
    (their dollars are not in ``usd``)."""

    since: str | None
    questions: int
    answered: int
    input_tokens: int
    output_tokens: int
    usd: float
    unpriced: int

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "questions": self.questions,
            "answered": self.answered,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": round(self.usd, 6),
            "unpriced": self.unpriced,
        }

    def line(self) -> str:
        period = f"since {self.since}" if self.since else "in all"
        unpriced = f", {self.unpriced} without a known price" if self.unpriced else ""
        return (
            f"Answering {period}: {self.questions} question(s), {self.answered} answered; "
            f"{self.input_tokens} input + {self.output_tokens} output tokens, "
            f"${self.usd:.4f}{unpriced}"
        )


def answering_cost(store: Store, *, since: str | None = None) -> AnsweringCost:
    """The cost of every logged question asked on or after ``since`` (as given to the CLI)."""
    start = parse_since(since) if since else None
    rows = store.questions(since=start)
    return AnsweringCost(
        since=start,
        questions=len(rows),
        answered=sum(r.outcome == "answered" for r in rows),
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        usd=sum(r.usd for r in rows if r.usd is not None),
        unpriced=sum(r.usd is None for r in rows),
    )
