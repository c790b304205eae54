"""``scout gaps``: the documentation gap backlog, declined questions grouped and ranked."""

from __future__ import annotations

from typing import Any

import click

from scout.cli.runtime import Runtime, emit_rows, json_option, pass_runtime, rows_option
from scout.table import Column, Styled, Terminal, table, wrap

COLUMNS = (
    Column("count", "asked", align="right", caption=False),
    Column("question", "question", flex=5, minimum=24, caption=False),
    Column("last_seen", "last asked"),
    Column("first_seen", "first asked", drop=2),
    Column("reasons", "why declined", flex=3, minimum=16),
)


def render(
    groups: list[dict[str, Any]], cost: str, terminal: Terminal | None = None
) -> str | Styled:
    """One row per gap, most asked first, then the answering cost line."""
    if not groups:
        return "No declined questions.\n\n" + wrap(cost, terminal)
    cells = [{**g, "reasons": "; ".join(g["reasons"]) or "-"} for g in groups]
    return table(cells, COLUMNS, terminal=terminal) + "\n\n" + wrap(cost, terminal)


@click.command()
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only questions asked on or after DATE (YYYY-MM-DD).",
)
@rows_option
@json_option
@pass_runtime
def gaps(runtime: Runtime, since: str | None, as_nl: bool, as_json: bool) -> None:
    """List declined questions grouped by wording and ranked by count, then recency."""
    from scout.gaps import answering_cost
    from scout.gaps import gaps as gap_backlog

    store = runtime.store()
    groups = [g.to_json() for g in gap_backlog(store, since=since)]
    cost = answering_cost(store, since=since)
    # The JSON contract is the list of groups; what answering cost is for the person reading.
    emit_rows(groups, as_json, as_nl, lambda rows: render(rows, cost.line()))
