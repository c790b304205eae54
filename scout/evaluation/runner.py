"""Runs an eval file's questions through the real answer path (retrieval, prompt, provider,
citation check) without logging them: eval questions are not user questions, so they never reach
the question log or the gap backlog.
"""

from __future__ import annotations

from collections.abc import Sequence

from scout.answer import Composed, compose
from scout.errors import ProviderError
from scout.evaluation.evalfile import EvalQuestion
from scout.evaluation.figures import Cited, EvalReport, ExpansionCall, Row
from scout.progress import Progress
from scout.providers.base import Provider
from scout.retrieve.settings import WORDS_ONLY, RetrievalSettings
from scout.store import PassageHit, Store


def run_eval(
    questions: Sequence[EvalQuestion],
    *,
    store: Store,
    provider: Provider,
    passages: int,
    model: str | None,
    progress: Progress | None = None,
    retrieval: RetrievalSettings = WORDS_ONLY,
) -> EvalReport:
    """One row per question, in file order. A provider failure stops the run (ProviderError
    naming the question): a figure computed around a failure would mislead. With
    ``retrieval.expand`` the provider is asked for search terms first (a cached reply is
    reused), its cost counted in the row's and apart in the row's ``expansion``."""
    rows = []
    shown = progress or Progress()
    shown.phase("questions", len(questions))
    for n, item in enumerate(questions, 1):
        try:
            composed = compose(
                item.question,
                store=store,
                provider=provider,
                passages=passages,
                provider_name=provider.name,
                retrieval=retrieval,
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
                best_score=_best_bm25(composed.hits),
                usage=composed.usage,
                latency_ms=composed.latency_ms,
                expanded=composed.expanded or (),
                expansion=_expansion(composed),
            )
        )
        shown.advance("questions")
    return EvalReport(
        provider=provider.name,
        model=model,
        k=passages,
        rows=tuple(rows),
        expand="model" if retrieval.expand else "off",
    )


def _best_bm25(hits: Sequence[PassageHit]) -> float | None:
    """The best BM25 score among the passages given (the floor figure is BM25's)."""
    scores = [hit.bm25 for hit in hits if hit.bm25 is not None]
    return min(scores) if scores else None


def _expansion(composed: Composed) -> ExpansionCall | None:
    stage = composed.retrieved.expansion if composed.retrieved is not None else None
    if stage is None:
        return None
    return ExpansionCall(stage.usage, round(stage.seconds * 1000), stage.cached, stage.error)
