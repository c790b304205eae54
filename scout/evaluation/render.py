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


def render(report: EvalReport) -> str:
    doc = report.to_json()
    model = f", model {report.model}" if report.model else ""
    lines = [
        f"Eval: {doc['questions']} question(s), provider {report.provider}{model}, "
        f"{report.k} passages",
        "",
    ]
    lines.append(f"{'band':<14}{'n':>5}{'answered':>10}{'declined':>10}{'correct':>9}")
    for name, b in doc["bands"].items():
        lines.append(
            f"{name:<14}{b['n']:>5}{b['answered']:>10}{b['declined']:>10}{b['correct']:>9}"
        )
    lines += ["", *summary(report), ""]
    lines.append(f"{'':4}{'band':<14}{'outcome':<10}{'score':>8}  question (cited)")
    for row in doc["rows"]:
        mark = "ok" if row["correct"] else "--"
        score = "-" if row["best_score"] is None else f"{row['best_score']:.2f}"
        lines.append(f"{mark:<4}{row['band']:<14}{row['outcome']:<10}{score:>8}  {row['question']}")
        for c in row["cited"]:
            where = f"{c['project']} {c['path']} L{c['lines'][0]}-{c['lines'][1]}"
            lines.append(f"{'':38}-> {where}")
    return "\n".join(lines)


def render_comparison(comparison: Comparison) -> str:
    width = max(len(f.name) for f in comparison.figures)
    cells = [(_number(f.a), _number(f.b)) for f in comparison.figures]
    a_width = max([len("A"), *(len(a) for a, _ in cells)])
    lines = [f"A: {comparison.a}", f"B: {comparison.b}", ""]
    lines.append(f"{'figure':<{width}}  {'A':>{a_width}}  B")
    for figure, (a, b) in zip(comparison.figures, cells, strict=True):
        lines.append(f"{figure.name:<{width}}  {a:>{a_width}}  {b}")
    if comparison.changed:
        lines += ["", "Questions whose correctness differs (A -> B):"]
        for c in comparison.changed:
            lines.append(f"  {_mark(c.a)} -> {_mark(c.b)}  {c.question}")
    return "\n".join(lines)


def _mark(correct: bool | None) -> str:
    return {True: "ok", False: "--", None: "(not asked)"}[correct]
