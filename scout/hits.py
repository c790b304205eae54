"""A retrieved passage as JSON: one row of the ``scout search --json`` list.

Here, below the CLI, so ``scout search`` and the server's ``GET /api/v1/search`` print one
document from one function.
"""

from __future__ import annotations

from typing import Any

from scout.store import PassageHit


def hit_json(rank: int, hit: PassageHit) -> dict[str, Any]:
    """One row of docs/design.md's ``scout search --json`` list."""
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
    }


def hits_json(hits: list[PassageHit]) -> list[dict[str, Any]]:
    """The whole list, ranked from 1, best first."""
    return [hit_json(rank, hit) for rank, hit in enumerate(hits, 1)]
