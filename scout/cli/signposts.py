"""``scout signposts``: audit verdicts (list, summary, show), re-check them against the current
heads, and extract references from one issue offline.

Commands parse options and print; summaries come from :mod:`signposts.audit`. ``recheck`` is the
one writer here: it holds the sweep lock, as the sweep does, for as long as it runs.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from typing import TYPE_CHECKING, Any

import click

from scout.cli.progress import log
from scout.cli.runtime import (
    Runtime,
    emit,
    emit_rows,
    json_option,
    pass_runtime,
    rows_option,
)
from scout.errors import UsageError
from scout.forge.base import lines_fragment
from scout.gaps import parse_since
from scout.safe_text import printable, printable_block
from scout.store import SignpostRow, Store
from scout.table import Column, Styled, Terminal, table
from scout.verdict import Check, Kind, Status, status_filters
from signposts import audit

if TYPE_CHECKING:
    from ingest.recheck import Recheck

MAX_DOCUMENT_BYTES = 32 << 20  # an issue file larger than this is refused, not truncated silently
# Values, not enum members: click would show and match members by their names.
STATUSES = (Status.REJECTED.value, Status.ACCEPTED.value, Status.WITHDRAWN.value, "all")
CHECKS = tuple(c.value for c in Check)
KINDS = tuple(k.value for k in Kind)


DEFAULT_LIMIT = 50  # table rows; --json and --csv list everything unless --limit is given


COLUMNS = (
    Column("id", "id", align="right"),
    Column("status", "state", status=True),
    Column("kind", "kind", drop=2),
    Column("reference", "reference", cut="middle", flex=9, minimum=20),
    Column("check", "check"),
    Column("reason", "reason", flex=8, minimum=16),
    Column("issue", "issue", cut="middle", flex=4, minimum=20),
    Column("checked_at", "checked", drop=3),
)


def _table(rows: list[dict[str, Any]], more: int = 0, terminal: Terminal | None = None) -> Styled:
    """A header row and one line per verdict, fitted to the terminal: a column the same on every
    row becomes a caption, narrow terminals drop the checked time and then the kind before cutting
    references and reasons; references and issues keep their distinctive tails."""
    if not rows:
        return Styled("no signposts match")
    cells = [
        {
            **row,
            "check": row["check"] or "-",
            "issue": f"{row['issue']['project']}#{row['issue']['iid']}",
        }
        for row in rows
    ]
    footer = [f"… and {more} more: pass --limit {len(rows) + more} (or --limit 0) for all"]
    return table(cells, COLUMNS, terminal=terminal, footer=footer if more else ())


# A spreadsheet reads a cell starting with one of these as a formula (or, for tab and CR, strips
# the character and then does): OWASP "CSV Injection". References come from issue text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet shows as text: a leading ``'`` before anything formula-like."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


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
        cells = [
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
        writer.writerow([csv_cell(cell) for cell in cells])
    return out.getvalue().rstrip("\n")


@click.group(invoke_without_command=True)
@click.option(
    "--status",
    type=click.Choice(STATUSES),
    default="rejected",
    show_default=True,
    help="Which verdicts: rejected when first judged, accepted, withdrawn later, or all.",
)
@click.option("--check", type=click.Choice(CHECKS), default=None, help="Only this failed check.")
@click.option("--reason", default=None, help="Only verdicts whose reason contains this text.")
@click.option("--kind", type=click.Choice(KINDS), default=None, help="Only this kind of reference.")
@click.option("--project", default=None, help="Issue or target project (full path).")
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Checked on or after DATE: YYYY-MM-DD, 7d, 24h or yesterday (UTC).",
)
@click.option(
    "--limit",
    type=click.IntRange(0, 10_000_000),
    default=None,
    help=f"At most N verdicts, 0 for all (default: {DEFAULT_LIMIT} in the table, all otherwise).",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV for spreadsheets.")
@rows_option
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
    as_nl: bool,
    as_json: bool,
) -> None:
    """Audit signpost verdicts, newest first (rejected ones by default)."""
    if ctx.invoked_subcommand is not None:
        return
    if as_csv and as_json:
        raise UsageError("--json and --csv cannot be given together: choose one")
    runtime = ctx.find_object(Runtime)
    assert runtime is not None
    rows = [
        {**row.to_json(), "status": audit.state(row)}
        for row in runtime.store().signposts(
            **status_filters(status, check),
            kind=kind,
            project=project,
            since=parse_since(since) if since is not None else None,
            limit=None,
        )
        if reason is None or reason.lower() in row.reason.lower()
    ]
    if limit is None and not (as_csv or as_json or as_nl):
        limit = DEFAULT_LIMIT
    more = max(0, len(rows) - limit) if limit else 0
    rows = rows[: limit or None]
    if as_csv:
        if as_nl:
            raise UsageError("--nl and --csv cannot be given together: choose one")
        click.echo(printable_block(_csv(rows)))
        return
    emit_rows(rows, as_json, as_nl, lambda r: _table(r, more))


@signposts.command()
@click.option("--project", default=None, help="The issue's project, for short references.")
@click.option(
    "--dropped",
    is_flag=True,
    help="Also list what was dropped and why (with --json: {references, dropped}).",
)
@click.argument("source", required=False, default="-", type=click.Path(allow_dash=True))
@rows_option
@json_option
@pass_runtime
def extract(
    runtime: Runtime, project: str | None, dropped: bool, source: str, as_nl: bool, as_json: bool
) -> None:
    """Print the references in an issue (JSON issue or plain text, FILE or -); no network."""
    from signposts.extract import extract_issue, parse_issue_document
    from signposts.references import extract_context

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
    if not dropped:
        emit_rows(rows, as_json, as_nl, lambda r: table(r, EXTRACTED) if r else "")
        return
    left_out = [{"reference": ref, "reason": why} for ref, why in found.dropped]
    # the table and JSON lines show a dropped one as a row of kind "dropped"
    shown = [*rows, *({"kind": "dropped", **d} for d in left_out)]
    described = [
        {**row, "reference": f"{row['reference']} ({row['reason']})"} if "reason" in row else row
        for row in shown
    ]
    emit_rows(
        shown,
        as_json,
        as_nl,
        lambda _: table(described, EXTRACTED) if described else "",
        document={"references": rows, "dropped": left_out},
    )


EXTRACTED = (Column("kind", "kind"), Column("reference", "reference", cut="middle", flex=1))


SKIPPED = {
    "no_project": "{n} short reference(s) need --project",
    "bytes_over_limit": "{n} byte(s) past the size limit were not read",
    "references_over_limit": "{n} reference(s) past the per-issue limit were dropped",
    "timeout": "{n} text(s) abandoned on the pattern timeout",
    "other_host": "{n} GitLab-shaped URL(s) on another host were dropped "
    "(if that host is this GitLab, add it to forge.aliases)",
    "folder": "{n} link(s) to a folder were dropped (a folder is no signpost: link a file in it)",
}


def skipped_lines(skipped: dict[str, int]) -> list[str]:
    """What extraction left out, one line per cause, for stderr."""
    return [
        SKIPPED.get(cause, "{n} skipped: " + cause).format(n=n)
        for cause, n in sorted(skipped.items())
        if n
    ]


# ---------------------------------------------------------------------- summary and show
@signposts.command()
@click.option(
    "--top",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="How many issues and targets each ranking shows.",
)
@json_option
@pass_runtime
def summary(runtime: Runtime, top: int, as_json: bool) -> None:
    """Counts by status, check, reason and kind; the issues and targets that stand out."""
    result = audit.summarise(runtime.store().signposts(), top=top)
    emit(result.to_json(), as_json, lambda _: audit.render(result))


def _one(store: Store, signpost_id: int) -> SignpostRow:
    rows = store.signposts(ids=[signpost_id])
    if not rows:
        raise UsageError(f"no signpost with id {signpost_id}: see `scout signposts --status all`")
    return rows[0]


def detail(store: Store, row: SignpostRow) -> dict[str, Any]:
    """One verdict in full: every check's outcome, the ref and sha it was read at, and (accepted)
    the passages it contributes. Passages the corpus already holds are not repeated here."""
    project = store.projects().get(row.target_project or "")
    reference = json.loads(row.reference_json)
    passages = store.target_passages(row.target) if row.status == "accepted" and row.target else []
    return {
        **row.to_json(),
        "state": audit.state(row),
        "first_seen_at": row.first_seen_at,
        "checks": json.loads(row.checks),
        # validation reads the target at the head of its project's default branch, whatever
        # branch or tag the link named: ``ref`` and ``sha`` are where it was read, and
        # ``linked_ref`` the ref a blob URL named (``<ref>/<path>`` minus the path)
        "ref": project.default_branch if project else None,
        "linked_ref": _linked_ref(reference.get("ref_path"), row.target_path),
        "passages": [
            {
                "heading": p.heading,
                "path": p.path,
                "lines": [p.line_start, p.line_end],
                "sha": p.sha,
                "url": p.url,
            }
            for p in passages
        ],
    }


def _linked_ref(ref_path: str | None, path: str | None) -> str | None:
    if not ref_path:
        return None
    if path and ref_path.endswith("/" + path):
        return ref_path[: -len(path) - 1]
    return ref_path


def _render_detail(d: dict[str, Any]) -> str:
    target, issue = d["target"], d["issue"]
    lines = target["lines"]
    out = [
        f"signpost {d['id']}: {d['state']} {d['kind']} {printable(d['reference'])}",
        f"  issue     {printable(issue['project'])}#{issue['iid']}  {printable(issue['url'])}",
        f"  target    {printable(target['project'] or '-')}"
        + (f":{printable(target['path'])}" if target["path"] else "")
        + lines_fragment(tuple(lines) if lines else None),
        f"  read at   {printable(d['ref'] or '-')}  sha {d['target']['sha'] or '-'}"
        + (
            f"  (the link named {printable(d['linked_ref'])}; targets are read at the head)"
            if d.get("linked_ref") and d["linked_ref"] != d["ref"]
            else ""
        ),
        f"  checked   {d['checked_at']} (first seen {d['first_seen_at']})"
        + (f", withdrawn {d['withdrawn_at']}" if d["withdrawn_at"] else ""),
        f"  reason    {printable(d['reason'])}",
        "  checks:",
    ]
    out += [
        f"    {'ok  ' if c['ok'] else 'FAIL'} {c['check']:<12} {printable(c['detail'])}"
        for c in d["checks"]
    ]
    if d["status"] == "accepted":
        out.append(f"  passages ({len(d['passages'])}):")
        out += [
            f"    L{p['lines'][0]}-{p['lines'][1]}  {printable(p['heading'], 80)}  {p['url']}"
            for p in d["passages"]
        ]
        if not d["passages"]:
            out.append("    none of its own: the corpus already holds this text at this sha")
    return "\n".join(out)


@signposts.command()
@click.argument("signpost_id", metavar="ID", type=int)
@json_option
@pass_runtime
def show(runtime: Runtime, signpost_id: int, as_json: bool) -> None:
    """One verdict in full: checks, resolved ref and sha, and the passages it contributed."""
    store = runtime.store()
    emit(detail(store, _one(store, signpost_id)), as_json, _render_detail)


def _render_recheck(result: Recheck) -> str:
    out = [f"rechecked {result.rechecked} signpost(s): {len(result.changed)} changed"]
    for c in result.changed:
        b, a = c.before, c.after
        out.append(
            f"{c.id:>5}  {printable(c.reference, 90)}  {printable(c.issue.project)}#{c.issue.iid}"
        )
        if a.status == b.status == Status.ACCEPTED:
            out.append(
                f"       accepted, re-read at {(a.sha or '-')[:12]} (was {(b.sha or '-')[:12]})"
            )
            continue
        out.append(f"       before {b.status} ({b.check or '-'}): {printable(b.reason)}")
        out.append(
            f"       after  {a.status} ({a.check or '-'}): {printable(a.reason)}"
            + ("" if c.stored else "  [reported, not stored]")
        )
    return "\n".join(out)


@signposts.command()
@click.argument("signpost_id", metavar="[ID]", type=int, required=False)
@click.option("--all", "every", is_flag=True, help="Re-check every verdict.")
@json_option
@pass_runtime
def recheck(runtime: Runtime, signpost_id: int | None, every: bool, as_json: bool) -> None:
    """Re-validate one verdict (ID) or all (--all) against the current heads; show what changed."""
    from ingest.lock import sweep_lock
    from ingest.recheck import recheck_verdicts

    if (signpost_id is None) == (not every):
        raise UsageError("give one signpost ID or --all")
    store = runtime.store()
    with sweep_lock(store.path):
        rows = store.signposts() if every else [_one(store, signpost_id or 0)]
        result = recheck_verdicts(runtime.config, runtime.forge(), store, rows)
    emit(result, as_json, _render_recheck)
