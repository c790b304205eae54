"""A retrieved passage as JSON: one row of the ``scout search --json`` list.

Here, below the CLI, so ``scout search`` and the server's ``GET /api/v1/search`` print one
document from one function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scout.records import PassageHit
from scout.retrieve import Retrieved


def hit_json(
    rank: int, hit: PassageHit, score: float, found: Retrieved | None = None
) -> dict[str, Any]:
    """One row of docs/design.md's ``scout search --json`` list: ``score`` is the one the list
    is ordered by (lower is better, as BM25's), ``bm25`` BM25's own, and the ranks in the
    lexical and dense lists say why the passage is where it is; ``expanded`` are the model's
    terms retrieval searched with (the same on every row; null when none were asked for or
    none came, with ``expansion_error`` saying why)."""
    return {
        "rank": rank,
        "score": round(score, 4),
        "bm25": None if hit.bm25 is None else round(hit.bm25, 4),
        "lexical_rank": hit.lexical_rank,
        "dense_rank": hit.dense_rank,
        "project": hit.project,
        "path": hit.path,
        "heading": hit.heading,
        "lines": [hit.line_start, hit.line_end],
        "sha": hit.sha,
        "url": hit.url,
        "source": hit.source,
        "kind": hit.kind,
        "expanded": found.expanded if found is not None else None,
        "expansion_error": found.expansion_error if found is not None else None,
        "dense_error": found.dense_error if found is not None else None,
    }


def hits_json(hits: Sequence[PassageHit], found: Retrieved | None = None) -> list[dict[str, Any]]:
    """The whole list, ranked from 1, best first. A passage the re-ranking moved down (one
    file's or section's share) shows the score of the one before it: scores follow the order."""
    rows = []
    score = float("-inf")
    for rank, hit in enumerate(hits, 1):
        score = max(score, hit.score)
        rows.append(hit_json(rank, hit, score, found))
    return rows
