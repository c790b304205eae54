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
from scout.hits import hits_json

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
    emit(hits_json(hits), as_json, render)


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
