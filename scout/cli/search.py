"""``scout search QUESTION``: what retrieval finds for a question, without any provider.

The same call ``scout ask`` makes with the same default k, so its list is exactly the passages the
model would be given: the way to see why a question was answered, or declined, as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from scout.cli.runtime import (
    Runtime,
    emit,
    json_option,
    pass_runtime,
    project_option,
)
from scout.retrieve import MAX_SEARCH, MIN_PASSAGES
from scout.store import PassageHit

MAX_HEADING_CHARS = 60


@click.command()
@click.argument("question")
@click.option(
    "--limit",
    type=click.IntRange(MIN_PASSAGES, MAX_SEARCH),
    default=None,
    help=f"Passages to list, {MIN_PASSAGES}-{MAX_SEARCH} (default: answer.passages, what ask "
    "would give the model).",
)
@project_option
@json_option
@pass_runtime
def search(
    runtime: Runtime,
    question: str,
    limit: int | None,
    projects: tuple[str, ...],
    as_json: bool,
) -> None:
    """List the passages retrieval finds for QUESTION, best first (no answer is composed; with
    retrieval.expand = "model" the provider is asked for search terms first)."""
    from scout.answer import search as searching

    config = runtime.config
    expand = None
    if config.retrieval.expand == "model":
        from scout.providers import make_provider

        settings = config.answer
        expand = lambda: make_provider(  # noqa: E731 - a factory, called once
            settings.provider, model=settings.model, timeout=settings.timeout
        )
    found = searching(
        question,
        store=runtime.store(),
        limit=limit or config.answer.passages,
        projects=projects or None,
        expand=expand,
    )
    rows = [hit_json(rank, hit, found.expanded) for rank, hit in enumerate(found.hits, 1)]
    emit(rows, as_json, render)


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
