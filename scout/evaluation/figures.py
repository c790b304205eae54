"""The figures of an eval run, as pure functions of its rows (one row per question).

Rules, as docs/design.md's ``scout eval`` contract states them: a row is correct when an answerable
or contradicts question is answered with at least one citation inside an expected source, or a
covered or unanswerable question is declined. An answer is *precise* when every citation lies
inside an expected source. Recall@k counts answerable and contradicts questions with an expected
source among the k passages the provider was given. The floor figure measures the design's
"no relevance threshold" claim: set a BM25 floor high enough to keep out 90% of the unanswerable
questions, and report the share of answerable ones it would lose with them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scout.answer import Outcome
from scout.evaluation.evalfile import Band
from scout.providers.base import Usage

KEEP_OUT = 0.9  # the share of unanswerable questions the floor figure keeps out


@dataclass(frozen=True)
class Cited:
    """A citation of an answer, as the eval reports it."""

    project: str
    path: str
    lines: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "path": self.path, "lines": list(self.lines)}


@dataclass(frozen=True)
class Row:
    """One question's outcome. ``best_score`` is the top passage's BM25 score (lower is better,
    as SQLite's FTS5 reports it), None when nothing matched."""

    question: str
    band: Band
    outcome: Outcome
    reason: str | None
    cited: tuple[Cited, ...]
    cited_expected: tuple[bool, ...]  # per citation: inside an expected source
    retrieved_expected: bool  # an expected source among the passages given
    best_score: float | None
    usage: Usage
    latency_ms: int
    expanded: tuple[str, ...] = ()  # the model's terms retrieval searched with
    expansion: ExpansionCall | None = None  # the expansion stage's call (None: not asked)

    @property
    def answered(self) -> bool:
        return self.outcome == "answered"

    @property
    def correct(self) -> bool:
        if self.band.wants_answer:
            return self.answered and any(self.cited_expected)
        return not self.answered

    @property
    def precise(self) -> bool:
        return self.answered and bool(self.cited_expected) and all(self.cited_expected)

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "band": self.band.value,
            "outcome": self.outcome,
            "reason": self.reason,
            "correct": self.correct,
            "cited": [c.to_json() for c in self.cited],
            "best_score": None if self.best_score is None else round(self.best_score, 4),
            "retrieved_expected": self.retrieved_expected,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "usd": self.usage.usd,
            "latency_ms": self.latency_ms,
            "expanded": list(self.expanded),
            "expansion": None if self.expansion is None else self.expansion.to_json(),
        }


@dataclass(frozen=True)
class ExpansionCall:
    """What asking a model for one question's search terms cost: its part of the row's tokens,
    how long it took, whether the cache answered instead, and why it failed (None: it did not)."""

    usage: Usage
    ms: int
    cached: bool
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "usd": self.usage.usd,
            "ms": self.ms,
            "cached": self.cached,
            "error": self.error,
        }


@dataclass(frozen=True)
class ExpansionFigures:
    """The expansion stage over a run: calls made, calls the cache saved, failures, and what
    the calls cost in tokens, dollars and time (per question asked: ``per_call``)."""

    asked: int
    calls: int
    cached: int
    errors: int
    input_tokens: int
    output_tokens: int
    usd: float | None
    ms: LatencyFigures

    def to_json(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "calls": self.calls,
            "calls_saved_by_cache": self.cached,
            "errors": self.errors,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "input_tokens_per_call": round(self.input_tokens / self.calls, 1)
            if self.calls
            else None,
            "output_tokens_per_call": round(self.output_tokens / self.calls, 1)
            if self.calls
            else None,
            "usd": self.usd,
            "ms": self.ms.to_json(),
        }


def expansion(rows: Sequence[Row]) -> ExpansionFigures:
    calls = [r.expansion for r in rows if r.expansion is not None]
    made = [c for c in calls if not c.cached]
    total = sum((c.usage for c in made), Usage())
    usd = None if total.usd is None else round(total.usd, 6)
    times = [c.ms for c in made]
    return ExpansionFigures(
        asked=len(calls),
        calls=len(made),
        cached=len(calls) - len(made),
        errors=sum(c.error is not None for c in calls),
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        usd=usd,
        ms=LatencyFigures(percentile(times, 50), percentile(times, 95)),
    )


@dataclass(frozen=True)
class BandFigures:
    """One band's questions, answered, declined and correct."""

    n: int
    answered: int
    declined: int
    correct: int

    def to_json(self) -> dict[str, int]:
        return {
            "n": self.n,
            "answered": self.answered,
            "declined": self.declined,
            "correct": self.correct,
        }


def bands(rows: Sequence[Row]) -> dict[Band, BandFigures]:
    """Per band, in band order (every band listed, even if empty)."""
    out: dict[Band, BandFigures] = {}
    for band in Band:
        members = [r for r in rows if r.band is band]
        answered = sum(r.answered for r in members)
        out[band] = BandFigures(
            len(members), answered, len(members) - answered, sum(r.correct for r in members)
        )
    return out


@dataclass(frozen=True)
class CitationFigures:
    """Answers, how many of them cite only expected sources, and that share (None: none)."""

    answers: int
    precise: int
    precision: float | None

    def to_json(self) -> dict[str, Any]:
        return {"answers": self.answers, "precise": self.precise, "precision": self.precision}


def citations(rows: Sequence[Row]) -> CitationFigures:
    answers = [r for r in rows if r.answered]
    precise = sum(r.precise for r in answers)
    return CitationFigures(len(answers), precise, _share(precise, len(answers)))


@dataclass(frozen=True)
class RecallFigures:
    """Recall@k over the questions the documentation answers (answerable and contradicts)."""

    recall_at_k: float | None
    k: int

    def to_json(self) -> dict[str, Any]:
        return {"recall_at_k": self.recall_at_k, "k": self.k}


def recall(rows: Sequence[Row], k: int) -> RecallFigures:
    wanted = [r for r in rows if r.band.wants_answer]
    return RecallFigures(_share(sum(r.retrieved_expected for r in wanted), len(wanted)), k)


def floor_loss(rows: Sequence[Row], kept_out: Band) -> float | None:
    """The share of answerable questions lost to a score floor that keeps out ``KEEP_OUT`` of the
    ``kept_out`` band's questions (None when either band is empty).

    Relevance is the negated BM25 score, 0 when nothing matched. The floor is the relevance at or
    below which ``ceil(KEEP_OUT * n)`` of the kept-out questions lie; an answerable question at or
    below the floor is lost.
    """
    out = sorted(_relevance(r) for r in rows if r.band is kept_out)
    answerable = [_relevance(r) for r in rows if r.band is Band.ANSWERABLE]
    if not out or not answerable:
        return None
    floor = out[math.ceil(KEEP_OUT * len(out)) - 1]
    return _share(sum(value <= floor for value in answerable), len(answerable))


def _relevance(row: Row) -> float:
    return 0.0 if row.best_score is None else -row.best_score


@dataclass(frozen=True)
class CostFigures:
    """Tokens and dollars in total and per question (dollars None if any price is unknown)."""

    input_tokens: int
    output_tokens: int
    usd: float | None
    usd_per_question: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": self.usd,
            "usd_per_question": self.usd_per_question,
        }


def cost(rows: Sequence[Row]) -> CostFigures:
    total = sum((r.usage for r in rows), Usage())
    per = None if total.usd is None or not rows else round(total.usd / len(rows), 6)
    usd = None if total.usd is None else round(total.usd, 6)
    return CostFigures(total.input_tokens, total.output_tokens, usd, per)


def percentile(values: Sequence[int], q: float) -> int | None:
    """The nearest-rank ``q`` percentile (0 < q <= 100) of ``values``; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@dataclass(frozen=True)
class LatencyFigures:
    p50: int | None
    p95: int | None

    def to_json(self) -> dict[str, int | None]:
        return {"p50": self.p50, "p95": self.p95}


def latency(rows: Sequence[Row]) -> LatencyFigures:
    values = [r.latency_ms for r in rows]
    return LatencyFigures(percentile(values, 50), percentile(values, 95))


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass(frozen=True)
class EvalReport:
    """A whole run: who answered, with how many passages, and one row per question."""

    provider: str
    model: str | None
    k: int
    rows: tuple[Row, ...]
    expand: Literal["model", "off"] = "off"  # whether the run asked for a model's terms

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "expand": self.expand,
            "questions": len(self.rows),
            "bands": {band.value: f.to_json() for band, f in bands(self.rows).items()},
            "citations": citations(self.rows).to_json(),
            "retrieval": recall(self.rows, self.k).to_json(),
            "floor": {
                "answerable_lost_at_floor_keeping_out_90pct_unanswerable": floor_loss(
                    self.rows, Band.UNANSWERABLE
                ),
                "answerable_lost_at_floor_keeping_out_90pct_covered": floor_loss(
                    self.rows, Band.COVERED
                ),
            },
            "cost": cost(self.rows).to_json(),
            "latency_ms": latency(self.rows).to_json(),
            "expansion": expansion(self.rows).to_json(),
            "rows": [r.to_json() for r in self.rows],
        }
