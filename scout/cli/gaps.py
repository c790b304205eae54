"""``scout gaps``: the documentation gap backlog, declined questions grouped and ranked."""

from __future__ import annotations

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime


@click.command()
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only questions asked on or after DATE (YYYY-MM-DD).",
)
@json_option
@pass_runtime
def gaps(runtime: Runtime, since: str | None, as_json: bool) -> None:
    """List declined questions grouped by wording and ranked by count, then recency."""
    from scout.gaps import answering_cost, render
    from scout.gaps import gaps as gap_backlog

    store = runtime.store()
    groups = gap_backlog(store, since=since)
    cost = answering_cost(store, since=since)
    # The JSON contract is the list of groups; what answering cost is for the person reading.
    emit(
        [g.to_json() for g in groups],
        as_json,
        lambda _: render(groups) + "\n\n" + cost.line(),
    )
