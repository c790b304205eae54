"""``scout search QUESTION``: what retrieval finds for a question, without any provider.

The same call ``scout ask`` makes with the same default k, so its list is exactly the passages the
model would be given: the way to see why a question was answered, or declined, as it was.
"""

from __future__ import annotations

import functools
from typing import Any

import click

from scout.cli.runtime import (
    Runtime,
    emit_rows,
    json_option,
    no_expand_option,
    pass_runtime,
    project_option,
    question_argument,
    question_text,
    rows_option,
)
from scout.hits import hits_json
from scout.providers import configured_provider
from scout.retrieve.question import MAX_SEARCH, MIN_PASSAGES
from scout.table import Column, Styled, Terminal, table


@click.command()
@question_argument
@click.option(
    "--limit",
    type=click.IntRange(MIN_PASSAGES, MAX_SEARCH),
    default=None,
    help=f"Passages to list, {MIN_PASSAGES}-{MAX_SEARCH} (default: answer.passages, what ask "
    "would give the model).",
)
@project_option
@no_expand_option
@rows_option
@json_option
@pass_runtime
def search(
    runtime: Runtime,
    question: tuple[str, ...],
    limit: int | None,
    projects: tuple[str, ...],
    no_expand: bool,
    as_nl: bool,
    as_json: bool,
) -> None:
    """List the passages retrieval finds for QUESTION, best first. No answer is composed, but
    with a model provider (retrieval.expand = "auto", the default) the model is asked for
    search terms first, with the question alone; --no-expand turns that off.

    QUESTION may be given unquoted; `-` reads it from standard input."""
    from scout.answer import search as searching
    from scout.retrieve.settings import RetrievalSettings

    asked = question_text(question)
    config = runtime.config
    name = config.answer.provider
    found = searching(
        asked,
        store=runtime.store(),
        limit=limit or config.answer.passages,
        projects=projects or None,
        provider=functools.partial(configured_provider, config),  # made only if asked
        provider_name=name,
        retrieval=RetrievalSettings.of(config, name, expand=not no_expand),
    )
    emit_rows(hits_json(found.hits, found), as_json, as_nl, render)


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
