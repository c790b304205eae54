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
    from scout.gaps import gaps as gap_backlog
    from scout.gaps import render

    groups = gap_backlog(runtime.store(), since=since)
    emit([g.to_json() for g in groups], as_json, lambda _: render(groups))
