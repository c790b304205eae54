"""Text renderings of an eval run and of a comparison of two runs."""

from __future__ import annotations

from typing import Any

from scout.evaluation.compare import Comparison
from scout.evaluation.evalfile import Band
from scout.evaluation.figures import (
    EvalReport,
    bands,
    citations,
    cost,
    floor_loss,
    latency,
    recall,
)
from scout.table import Column, Styled, Terminal, table, wrap


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def summary(report: EvalReport) -> list[str]:
    """The few lines that say how a run went (``scout demo`` prints these)."""
    rows = report.rows
    by_band = bands(rows)
    total = sum(b.correct for b in by_band.values())
    cites, retrieval = citations(rows), recall(rows, report.k)
    spent, latency_ms = cost(rows), latency(rows)
    return [
        f"{total} of {len(rows)} correct: "
        + ", ".join(f"{band.value} {b.correct}/{b.n}" for band, b in by_band.items()),
        f"citation precision {_share(cites.precision)} ({cites.precise} of "
        f"{cites.answers} answers cite only expected sources); "
        f"recall@{retrieval.k} {_share(retrieval.recall_at_k)}",
        "a score floor keeping out 90% of unanswerable questions would lose "
        f"{_share(floor_loss(rows, Band.UNANSWERABLE))} of the "
        "answerable ones (keeping out 90% of covered ones: "
        f"{_share(floor_loss(rows, Band.COVERED))})",
        f"cost {spent.input_tokens} input + {spent.output_tokens} output tokens, "
        f"{_usd(spent.usd)} ({_usd(spent.usd_per_question)} a question); "
        f"latency p50 {latency_ms.p50} ms, p95 {latency_ms.p95} ms",
    ]


BANDS = (
    Column("band", "band", caption=False),
    Column("n", "n", align="right", caption=False),
    Column("answered", "answered", align="right", caption=False),
    Column("declined", "declined", align="right", caption=False),
    Column("correct", "correct", align="right", caption=False),
)
QUESTIONS = (
    Column("mark", "ok", status=True, caption=False),
    Column("band", "band", caption=False),
    Column("outcome", "outcome", status=True, caption=False),
    Column("score", "score", align="right", caption=False),
    Column("question", "question", flex=3, minimum=24, caption=False),
    Column("cited", "cited", cut="middle", flex=2, minimum=16, drop=1, caption=False),
)


def render(report: EvalReport, terminal: Terminal | None = None) -> Styled:
    doc = report.to_json()
    model = f", model {report.model}" if report.model else ""
    bands_table = table(
        [{"band": name, **b} for name, b in doc["bands"].items()], BANDS, terminal=terminal
    )
    questions = table(
        [
            {
                "mark": "ok" if row["correct"] else "--",
                "band": row["band"],
                "outcome": row["outcome"],
                "score": "-" if row["best_score"] is None else f"{row['best_score']:.2f}",
                "question": row["question"],
                "cited": ", ".join(
                    f"{c['project']} {c['path']} L{c['lines'][0]}-{c['lines'][1]}"
                    for c in row["cited"]
                ),
            }
            for row in doc["rows"]
        ],
        QUESTIONS,
        terminal=terminal,
    )
    heading = (
        f"Eval: {doc['questions']} question(s), provider {report.provider}{model}, "
        f"{report.k} passages"
    )
    prose = [wrap(line, terminal) for line in [heading, "", *summary(report)]]
    return Styled.join([*prose[:2], bands_table, "", *prose[2:], "", questions])


def render_comparison(comparison: Comparison, terminal: Terminal | None = None) -> Styled:
    figures = table(
        [{"figure": f.name, "a": _number(f.a), "b": _number(f.b)} for f in comparison.figures],
        (
            Column("figure", "figure", caption=False),
            Column("a", "A", align="right", caption=False),
            Column("b", "B", align="right", caption=False),
        ),
        terminal=terminal,
    )
    lines: list[str | Styled] = [f"A: {comparison.a}", f"B: {comparison.b}", "", figures]
    if comparison.changed:
        lines += ["", "Questions whose correctness differs (A -> B):"]
        for c in comparison.changed:
            lines.append(f"  {_mark(c.a)} -> {_mark(c.b)}  {c.question}")
    return Styled.join(lines)


def _mark(correct: bool | None) -> str:
    return {True: "ok", False: "--", None: "(not asked)"}[correct]
