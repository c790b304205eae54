"""``scout signposts``: audit verdicts (list, summary, show), re-check them against the current
heads, and extract references from one issue offline.

Commands parse options and print; summaries come from :mod:`signposts.audit`. ``recheck`` is the
one writer here: it holds the sweep lock, as the sweep does, for as long as it runs.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sys
from typing import Any

import click

from scout.cli.runtime import Runtime, emit, json_option, log, pass_runtime
from scout.config import Config
from scout.errors import UsageError
from scout.forge.base import Forge
from scout.store import SignpostRow, Store
from signposts.audit import printable, render, state, summarise

MAX_DOCUMENT_BYTES = 32 << 20  # an issue file larger than this is refused, not truncated silently
STATUSES = ("rejected", "accepted", "withdrawn", "all")
CHECKS = ("corpus_rules", "resolves", "addresses")
KINDS = ("docs_page", "file", "commit", "merge_request")


def _filters(status: str, check: str | None) -> dict[str, Any]:
    if status == "withdrawn":
        return {"status": "rejected", "withdrawn": True, "check": check}
    return {"status": None if status == "all" else status, "check": check}


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no signposts match"
    lines = []
    for row in rows:
        issue = row["issue"]
        state = row["status"] if not row.get("withdrawn_at") else "withdrawn"
        lines.append(
            f"{row['id']:>5}  {state:<9} {row['kind']:<13} {printable(row['reference'], 70):<70}  "
            f"{row['check'] or '-':<12} {printable(row['reason'], 80)}  "
            f"{printable(issue['project'])}#{issue['iid']}  {row['checked_at']}"
        )
    return "\n".join(lines)


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "id",
            "status",
            "kind",
            "reference",
            "check",
            "reason",
            "issue_project",
            "issue_iid",
            "issue_url",
            "target_project",
            "target_path",
            "target_lines",
            "target_sha",
            "checked_at",
            "withdrawn_at",
        ]
    )
    for row in rows:
        target = row["target"]
        lines = target["lines"]
        writer.writerow(
            [
                row["id"],
                row["status"],
                row["kind"],
                row["reference"],
                row["check"] or "",
                row["reason"],
                row["issue"]["project"],
                row["issue"]["iid"],
                row["issue"]["url"],
                target["project"] or "",
                target["path"] or "",
                f"{lines[0]}-{lines[1]}" if lines else "",
                target["sha"] or "",
                row["checked_at"],
                row["withdrawn_at"] or "",
            ]
        )
    return out.getvalue().rstrip("\n")


@click.group(invoke_without_command=True)
@click.option("--status", type=click.Choice(STATUSES), default="rejected", show_default=True)
@click.option("--check", type=click.Choice(CHECKS), default=None, help="Only this failed check.")
@click.option("--reason", default=None, help="Only verdicts whose reason contains this text.")
@click.option("--kind", type=click.Choice(KINDS), default=None)
@click.option("--project", default=None, help="Issue or target project (full path).")
@click.option("--since", default=None, help="Checked at or after this date (YYYY-MM-DD).")
@click.option("--limit", type=click.IntRange(1, 100_000), default=None)
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV for spreadsheets.")
@json_option
@click.pass_context
def signposts(
    ctx: click.Context,
    status: str,
    check: str | None,
    reason: str | None,
    kind: str | None,
    project: str | None,
    since: str | None,
    limit: int | None,
    as_csv: bool,
    as_json: bool,
) -> None:
    """Audit signpost verdicts, newest first (rejected ones by default)."""
    if ctx.invoked_subcommand is not None:
        return
    runtime = ctx.find_object(Runtime)
    assert runtime is not None
    rows = [
        row.to_json()
        for row in runtime.store().signposts(
            **_filters(status, check), kind=kind, project=project, since=since, limit=None
        )
        if reason is None or reason.lower() in row.reason.lower()
    ][: limit or None]
    if as_csv:
        click.echo(_csv(rows))
        return
    emit(rows, as_json, _table)


@signposts.command()
@click.option("--project", default=None, help="The issue's project, for short references.")
@click.argument("source", required=False, default="-", type=click.Path(allow_dash=True))
@json_option
@pass_runtime
def extract(runtime: Runtime, project: str | None, source: str, as_json: bool) -> None:
    """Print the references in an issue (JSON issue or plain text, FILE or -); no network."""
    from ingest.sweep import extract_context
    from signposts.extract import extract_issue, parse_issue_document

    if source == "-":
        raw_bytes = sys.stdin.buffer.read(MAX_DOCUMENT_BYTES + 1)
    else:
        try:
            with open(source, "rb") as handle:
                raw_bytes = handle.read(MAX_DOCUMENT_BYTES + 1)
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    if len(raw_bytes) > MAX_DOCUMENT_BYTES:
        raise UsageError(f"{source} is larger than {MAX_DOCUMENT_BYTES >> 20} MiB")
    title, description, notes, own = parse_issue_document(raw_bytes.decode("utf-8", "replace"))
    context = extract_context(runtime.config, project or own)
    found = extract_issue(title, description, notes, context)
    for line in skipped_lines(found.skipped):
        log(line)
    rows = [reference.to_json() for reference in found.references]
    emit(rows, as_json, lambda r: "\n".join(f"{x['kind']:<13} {x['reference']}" for x in r))
