"""``scout gaps``: the documentation gap backlog, declined questions grouped and ranked."""

from __future__ import annotations

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime

SINCE_HELP = "Only questions asked on or after DATE: YYYY-MM-DD, 7d, 24h or yesterday (UTC)."


@click.command()
@click.option("--since", default=None, metavar="DATE", help=SINCE_HELP)
@click.option(
    "--issues",
    "search_issues",
    is_flag=True,
    help="Ask GitLab's issue search for the most asked gaps and list up to 5 issue links each "
    "(links only; at most 25 searches a run).",
)
@json_option
@pass_runtime
def gaps(runtime: Runtime, since: str | None, search_issues: bool, as_json: bool) -> None:
    """List declined questions grouped by content words, ranked by times asked, then recency."""
    from scout.gaps import answering_cost, find_issues, render
    from scout.gaps import gaps as gap_backlog

    store = runtime.store()
    groups = gap_backlog(store, since=since)
    cost = answering_cost(store, since=since)
    if search_issues and groups:
        config = runtime.config
        with runtime.progress() as progress:
            groups = find_issues(
                store,
                runtime.forge(),
                groups,
                config.forge.groups,
                include_confidential=config.ingest.include_confidential,
                progress=progress,
            )
    # The JSON contract is the list of groups; what answering cost is for the person reading.
    emit(
        [g.to_json() for g in groups],
        as_json,
        lambda _: render(groups) + "\n\n" + cost.line(),
    )
