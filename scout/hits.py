"""A retrieved passage as JSON: one row of the ``scout search --json`` list.

Here, below the CLI, so ``scout search`` and the server's ``GET /api/v1/search`` print one
document from one function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scout.records import PassageHit


def hit_json(rank: int, hit: PassageHit, expanded: Sequence[str] | None = None) -> dict[str, Any]:
    """One row of docs/design.md's ``scout search --json`` list (``expanded``: the model's
    terms retrieval searched with, the same on every row; empty when expansion is off)."""
    return {
        "rank": rank,
        "score": round(hit.score, 4),
        "project": hit.project,
        "path": hit.path,
        "heading": hit.heading,
        "lines": [hit.line_start, hit.line_end],
        "sha": hit.sha,
        "url": hit.url,
        "source": hit.source,
        "kind": hit.kind,
        "expanded": list(expanded or ()),
    }


def hits_json(
    hits: Sequence[PassageHit], expanded: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The whole list, ranked from 1, best first."""
    return [hit_json(rank, hit, expanded) for rank, hit in enumerate(hits, 1)]
