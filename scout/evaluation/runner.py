"""Runs an eval file's questions through the real answer path (retrieval, prompt, provider,
citation check) without logging them: eval questions are not user questions, so they never reach
the question log or the gap backlog.
"""

from __future__ import annotations

from collections.abc import Sequence

from scout.answer import compose
from scout.errors import ProviderError
from scout.evaluation.evalfile import EvalQuestion
from scout.evaluation.figures import Cited, EvalReport, Row
from scout.progress import Progress
from scout.providers.base import Provider
from scout.store import Store


def run_eval(
    questions: Sequence[EvalQuestion],
    *,
    store: Store,
    provider: Provider,
    passages: int,
    model: str | None,
    progress: Progress | None = None,
    expand: bool = False,
) -> EvalReport:
    """One row per question, in file order. A provider failure stops the run (ProviderError
    naming the question): a figure computed around a failure would mislead. ``expand`` asks
    the provider for search terms first (``scout.expansion``), its cost counted in the row's."""
    rows = []
    shown = progress or Progress()
    shown.phase("questions", len(questions))
    for n, item in enumerate(questions, 1):
        try:
            composed = compose(
                item.question, store=store, provider=provider, passages=passages, expand=expand
            )
        except ProviderError as exc:
            raise ProviderError(f"question {n} of the eval file: {exc}") from exc
        result = composed.result
        cited = tuple(Cited(c.project, c.path, c.lines) for c in result.citations)
        rows.append(
            Row(
                question=item.question,
                band=item.band,
                outcome=result.outcome,
                reason=result.reason,
                cited=cited,
                cited_expected=tuple(item.expects(c.project, c.path, c.lines) for c in cited),
                retrieved_expected=any(
                    item.expects(h.project, h.path, (h.line_start, h.line_end))
                    for h in composed.hits
                ),
                best_score=composed.hits[0].score if composed.hits else None,
                usage=composed.usage,
                latency_ms=composed.latency_ms,
                expanded=composed.expanded or (),
            )
        )
        shown.advance("questions")
    return EvalReport(
        provider=provider.name,
        model=model,
        k=passages,
        rows=tuple(rows),
        expand="model" if expand else "off",
    )
