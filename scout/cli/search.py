"""``scout search QUESTION``: what retrieval finds for a question, without any provider.

The same call ``scout ask`` makes with the same default k, so its list is exactly the passages the
model would be given: the way to see why a question was answered, or declined, as it was.
"""

from __future__ import annotations

from typing import Any

import click

from scout.cli.runtime import (
    Runtime,
    emit_rows,
    json_option,
    pass_runtime,
    passages_option,
    question_argument,
    question_text,
    rows_option,
)
from scout.store import PassageHit
from scout.table import Column, Styled, Terminal, table


@click.command()
@question_argument
@passages_option("--limit", "Passages to list, as ask would give the model")
@rows_option
@json_option
@pass_runtime
def search(
    runtime: Runtime, question: tuple[str, ...], limit: int | None, as_nl: bool, as_json: bool
) -> None:
    """List the passages retrieval finds for QUESTION, best first (no provider is called).

    QUESTION may be given unquoted; `-` reads it from standard input."""
    from scout.retrieve import retrieve

    asked = question_text(question)
    hits = retrieve(runtime.store(), asked, limit or runtime.config.answer.passages)
    emit_rows([hit_json(rank, hit) for rank, hit in enumerate(hits, 1)], as_json, as_nl, render)


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


COLUMNS = (
    Column("rank", "#", align="right", caption=False),
    Column("score", "score", align="right", caption=False),
    Column("project", "project", cut="middle", flex=2, minimum=12),
    Column("path", "path", cut="middle", flex=3, minimum=16),
    Column("lines", "lines"),
    Column("heading", "heading", flex=4, minimum=16, caption=False),
    Column(
        "url",
        "permalink",
        drop=1,
        flex=6,
        minimum=10_000,
        caption=False,
        note="permalinks: a wider terminal, or --json / --nl",
    ),
)


def render(rows: list[dict[str, Any]], terminal: Terminal | None = None) -> str | Styled:
    """A table a person can scan: rank, score, where, heading, and the permalink where it fits
    whole (a cut permalink opens nothing; project, path and lines name the passage anyway)."""
    if not rows:
        return "nothing matched"
    cells = [
        {
            **row,
            "score": f"{row['score']:.3f}",
            "lines": f"L{row['lines'][0]}-{row['lines'][1]}",
        }
        for row in rows
    ]
    return table(cells, COLUMNS, terminal=terminal)
