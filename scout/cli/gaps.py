"""``scout gaps``: the documentation gap backlog, declined questions grouped and ranked."""

from __future__ import annotations

from typing import Any

import click

from scout.cli.runtime import Runtime, emit_rows, json_option, pass_runtime, rows_option
from scout.table import Column, Styled, Terminal, table, wrap

SINCE_HELP = "Only questions asked on or after DATE: YYYY-MM-DD, 7d, 24h or yesterday (UTC)."

COLUMNS = (
    Column("asked", "asked", align="right", caption=False),
    Column("question", "question", flex=5, minimum=24, caption=False),
    Column("last", "last asked"),
    Column("first", "first asked", drop=4),
    Column("reason", "why declined", flex=3, minimum=16, drop=3),
    Column("nearest", "nearest passage", cut="middle", flex=3, minimum=16, drop=2),
    Column("issues", "issues", flex=2, minimum=14),
)


def render(
    groups: list[dict[str, Any]], cost: str, terminal: Terminal | None = None
) -> str | Styled:
    """One row per gap, most asked first: its latest wording (and how many others), when, why,
    the passage retrieval found nearest (where the answer would go) and the issues that may hold
    it; then the lines under it (the declines left out, the answering cost). Narrow terminals
    drop the first day, then the reason, then the nearest passage; every link is in --json and
    --nl."""
    if not groups:
        return "No documentation gaps.\n\n" + wrap(cost, terminal)
    cells = [
        {
            **g,
            "question": g["question"] + _others(len(g["wordings"]) - 1),
            # the day is enough to rank a backlog by; --json has the time
            "last": g["last"][:10],
            "first": g["first"][:10],
            "nearest": _place(g["nearest"][0]) if g["nearest"] else "-",
            "issues": ", ".join(f"{i['project']}#{i['iid']}" for i in g["issues"]) or "-",
        }
        for g in groups
    ]
    return table(cells, COLUMNS, terminal=terminal) + "\n\n" + wrap(cost, terminal)


def _others(count: int) -> str:
    if count <= 0:
        return ""
    return f" (+{count} other wording{'s' if count > 1 else ''})"


def _place(passage: dict[str, Any]) -> str:
    start, end = passage.get("lines") or (0, 0)
    return f"{passage.get('project')} {passage.get('path')} L{start}-{end}"


@click.command()
@click.option("--since", default=None, metavar="DATE", help=SINCE_HELP)
@click.option(
    "--issues",
    "search_issues",
    is_flag=True,
    help="Ask GitLab's issue search for the most asked gaps and list up to 5 issue links each "
    "(links only; at most 25 searches a run).",
)
@rows_option
@json_option
@pass_runtime
def gaps(
    runtime: Runtime, since: str | None, search_issues: bool, as_nl: bool, as_json: bool
) -> None:
    """List declined questions grouped by content words, ranked by distinct askers, times
    asked, then recency."""
    from scout.corpus.rules import CorpusRules
    from scout.gaps import answering_cost, find_issues, not_gaps, not_gaps_line
    from scout.gaps import gaps as gap_backlog

    store = runtime.store()
    groups = gap_backlog(store, since=since)
    cost = answering_cost(store, since=since)
    left_out = not_gaps_line(not_gaps(store, since=since))
    if search_issues and groups:
        config = runtime.config
        with runtime.progress() as progress:
            groups = find_issues(
                store,
                runtime.forge(),
                groups,
                config.forge.groups,
                rules=CorpusRules(tuple(config.forge.groups), config.corpus),
                include_confidential=config.ingest.include_confidential,
                progress=progress,
            )
    # The JSON contract is the list of groups; what answering cost is for the person reading.
    rows = [g.to_json() for g in groups]
    said = "\n".join(line for line in (left_out, cost.line()) if line)
    emit_rows(rows, as_json, as_nl, lambda listed: render(listed, said))
