"""``scout search QUESTION``: what retrieval finds for a question, without any provider.

The same call ``scout ask`` makes with the same default k, so its list is exactly the passages the
model would be given: the way to see why a question was answered, or declined, as it was.
"""

from __future__ import annotations

from typing import Any

import click

from scout.cli.runtime import (
    Runtime,
    emit,
    json_option,
    pass_runtime,
    passages_option,
)
from scout.store import PassageHit

MAX_HEADING_CHARS = 60


@click.command()
@click.argument("question")
@passages_option("--limit", "Passages to list, as ask would give the model")
@json_option
@pass_runtime
def search(runtime: Runtime, question: str, limit: int | None, as_json: bool) -> None:
    """List the passages retrieval finds for QUESTION, best first (no provider is called)."""
    from scout.retrieve import retrieve

    hits = retrieve(runtime.store(), question, limit or runtime.config.answer.passages)
    emit([hit_json(rank, hit) for rank, hit in enumerate(hits, 1)], as_json, render)


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


def render(rows: list[dict[str, Any]]) -> str:
    """A table a person can scan: rank, score, where, heading; the permalink on its own line."""
    if not rows:
        return "nothing matched"
    out = []
    for row in rows:
        heading = " ".join(row["heading"].split())
        if len(heading) > MAX_HEADING_CHARS:
            heading = heading[: MAX_HEADING_CHARS - 3] + "..."
        start, end = row["lines"]
        where = f"{row['project']} {row['path']} L{start}-{end}"
        out.append(f"{row['rank']:>3}  {row['score']:>8.3f}  {where}  {heading}")
        out.append(f"{'':>15}{row['url']}")
    return "\n".join(out)
