"""The signpost audit: pure summaries over stored verdicts, for ``scout signposts summary`` and
the HTML report.

Main rule: counts only, from rows already read; nothing here touches the store or the forge.
Each verdict has exactly one of three states (:func:`state`), and every count, list filter and
report table uses that one definition: a withdrawn verdict (accepted once, failed on
re-validation) is ``withdrawn`` everywhere, never also ``rejected``, so the by-check counts of
each state add up to that state's total. Reasons are
grouped by their class: ``project_private: acme/secrets`` counts as ``project_private``, and a
sentence such as ``docs/x.md was deleted since 45f370a64862`` as ``<path> was deleted since <sha>``,
so one stale link pointed at from many issues is one row, not many.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterable
from urllib.parse import quote

from scout.audit_records import (
    AcceptedTarget,
    AllRejected,
    GroupedVerdict,
    IssueCount,
    ReasonCount,
    RejectedTarget,
    RejectionGroup,
    Summary,
)
from scout.safe_text import one_line
from scout.store import SignpostRow
from scout.table import Column, Styled, Terminal, table, wrap
from scout.verdict import Check, Kind, Status

CHECKS = tuple(c.value for c in Check)
STATUSES = tuple(s.value for s in Status)
KINDS = tuple(k.value for k in Kind)
MAX_REASON_CHARS = 200  # a provider's reason is free text: classes stay one short line

_PREFIX = re.compile(r"^([a-z][a-z0-9_]*): ")
_TEMPLATES = (
    (re.compile(r"https?://\S+"), "<url>"),
    (re.compile(r"(?<![\w/])#[\w-]+"), "#<anchor>"),
    (re.compile(r"!\d+"), "!<n>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"), "<sha>"),
    (re.compile(r"[\w.-]*/[\w./-]*|\b[\w-]+\.[A-Za-z]\w*\b"), "<path>"),
    (re.compile(r"\b\d+\b"), "<n>"),
)


def reason_class(reason: str) -> str:
    """The reason with what varies between verdicts (paths, shas, URLs, numbers) taken out."""
    reason = one_line(reason, MAX_REASON_CHARS)
    prefix = _PREFIX.match(reason)
    if prefix:
        return prefix.group(1)
    for pattern, placeholder in _TEMPLATES:
        reason = pattern.sub(placeholder, reason)
    return reason


def state(row: SignpostRow) -> str:
    """``accepted``, ``rejected`` (failed when first judged) or ``withdrawn`` (accepted, then
    failed on re-validation: stored as rejected with a ``withdrawn_at``)."""
    return str(row.state)


def summarise(
    rows: Iterable[SignpostRow], *, top: int = 10, gitlab_url: str | None = None
) -> Summary:
    """Counts by status, check, reason class and kind, and the ``top`` issues and targets;
    with ``gitlab_url``, each most-rejected target carries a ``url`` to look at it."""
    rows = list(rows)
    rejected = [r for r in rows if state(r) == "rejected"]
    status = Counter(state(r) for r in rows)
    check = Counter(r.check_name or "?" for r in rejected)
    withdrawn = Counter(r.check_name or "?" for r in rows if state(r) == "withdrawn")
    reasons = Counter((r.check_name or "?", reason_class(r.reason)) for r in rejected)
    kind: dict[str, dict[str, int]] = {}
    for r in rows:
        kind.setdefault(r.kind, dict.fromkeys(STATUSES, 0))[state(r)] += 1
    return Summary(
        total=len(rows),
        status={name: status[name] for name in STATUSES},
        check=_by_check(check),
        withdrawn_check=_by_check(withdrawn),
        reasons=[
            ReasonCount(c, reason, n)
            for (c, reason), n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        kind={name: kind[name] for name in sorted(kind, key=_kind_order)},
        top_issues=_top_issues(rows, top),
        top_accepted_targets=_top_accepted(rows, top),
        top_rejected_targets=_top_rejected(rejected, top, gitlab_url),
        all_rejected_issues=_all_rejected(rows),
    )


def _by_check(counts: Counter[str]) -> dict[str, int]:
    return {name: counts[name] for name in (*CHECKS, *sorted(set(counts) - set(CHECKS)))}


def _kind_order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), kind)


def _issues(rows: list[SignpostRow]) -> dict[tuple[str, int], list[SignpostRow]]:
    issues: dict[tuple[str, int], list[SignpostRow]] = {}
    for r in rows:
        issues.setdefault((r.issue_project, r.issue_iid), []).append(r)
    return issues


def _top_issues(rows: list[SignpostRow], top: int) -> list[IssueCount]:
    ranked: list[IssueCount] = []
    for (project, iid), members in _issues(rows).items():
        rejected = sum(state(r) == Status.REJECTED for r in members)
        if rejected:
            ranked.append(IssueCount(project, iid, members[0].issue_url, rejected, len(members)))
    ranked.sort(key=lambda i: (-i.rejected, i.project, i.iid))
    return ranked[:top]


def _top_accepted(rows: list[SignpostRow], top: int) -> list[AcceptedTarget]:
    counts: Counter[str] = Counter()
    first: dict[str, SignpostRow] = {}
    for r in rows:
        if r.status == "accepted" and r.target:
            counts[r.target] += 1
            first.setdefault(r.target, r)
    return [
        AcceptedTarget(key, first[key].kind, first[key].target_project, first[key].target_path, n)
        for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    ]


def _top_rejected(
    rejected: list[SignpostRow], top: int, gitlab_url: str | None = None
) -> list[RejectedTarget]:
    by_reference: dict[str, list[SignpostRow]] = {}
    for r in rejected:
        by_reference.setdefault(r.reference, []).append(r)
    ranked = sorted(by_reference.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    result = []
    for reference, members in ranked:
        latest = max(members, key=lambda r: (r.checked_at, r.id))
        result.append(
            RejectedTarget(
                reference_url(latest.reference_json, gitlab_url) if gitlab_url else None,
                reference,
                latest.kind,
                latest.target_project,
                latest.target_path,
                latest.check_name,
                latest.reason,
                len(members),
            )
        )
    return result


def _all_rejected(rows: list[SignpostRow]) -> AllRejected:
    issues = _issues(rows)
    every = sum(all(state(r) == Status.REJECTED for r in members) for members in issues.values())
    return AllRejected(every, len(issues), round(every / len(issues), 3) if issues else 0.0)


def rejection_groups(
    rows: Iterable[SignpostRow], status: str = "rejected"
) -> list[tuple[str, str, list[SignpostRow]]]:
    """Verdicts in ``status`` (rejected or withdrawn) grouped by (check, reason class): the
    biggest group first, each group's verdicts newest first (as ``rows`` come from the store)."""
    groups: dict[tuple[str, str], list[SignpostRow]] = {}
    for r in rows:
        if state(r) == status:
            groups.setdefault((r.check_name or "?", reason_class(r.reason)), []).append(r)
    ordered = sorted(groups.items(), key=lambda kv: (_check_order(kv[0][0]), -len(kv[1]), kv[0][1]))
    return [(check, reason, members) for (check, reason), members in ordered]


def _check_order(check: str) -> int:
    return CHECKS.index(check) if check in CHECKS else len(CHECKS)


def render(summary: Summary, terminal: Terminal | None = None) -> str | Styled:
    """The human rendering of :func:`summarise`: counts as sentences, rankings as tables."""
    if not summary.total:
        return "no signposts yet: run `scout sweep`"
    s = summary
    lines = [
        f"{s.total} signpost(s): " + ", ".join(f"{s.status[name]} {name}" for name in STATUSES),
        "rejected by check: " + ", ".join(f"{name} {n}" for name, n in s.check.items()),
    ]
    if s.status["withdrawn"]:
        lines.append(
            "withdrawn by check: "
            + ", ".join(f"{name} {n}" for name, n in s.withdrawn_check.items())
        )
    lines += [
        "by kind: "
        + ", ".join(
            f"{name} {c['accepted']} accepted / {c['rejected']} rejected"
            + (f" / {c['withdrawn']} withdrawn" if c["withdrawn"] else "")
            for name, c in s.kind.items()
        ),
        f"issues whose every signpost was rejected: {s.all_rejected_issues.issues} of "
        f"{s.all_rejected_issues.of} ({s.all_rejected_issues.share:.0%})",
    ]
    out: list[str | Styled] = [wrap("\n".join(lines), terminal)]
    if s.reasons:
        rows = [{"count": r.count, "check": r.check, "reason": r.reason} for r in s.reasons]
        out += ["", "rejections by reason:", table(rows, REASONS, terminal=terminal)]
    if s.top_issues:
        rows = [
            {
                "rejected": i.rejected,
                "of": i.total,
                "issue": f"{i.project}#{i.iid}",
                "url": i.url,
            }
            for i in s.top_issues
        ]
        out += [
            "",
            "issues with the most rejected signposts:",
            table(rows, ISSUES, terminal=terminal),
        ]
    if s.top_accepted_targets:
        rows = [{"count": t.count, "target": t.target} for t in s.top_accepted_targets]
        out += [
            "",
            "targets most often signposted (accepted):",
            table(rows, ACCEPTED, terminal=terminal),
        ]
    if s.top_rejected_targets:
        rows = [
            {"count": t.count, "reference": t.reference, "check": t.check}
            for t in s.top_rejected_targets
        ]
        out += ["", "targets most often rejected:", table(rows, REJECTED, terminal=terminal)]
    return Styled.join(out)


REASONS = (
    Column("count", "n", align="right", caption=False),
    Column("check", "check", caption=False),
    Column("reason", "reason", flex=1, minimum=24, caption=False),
)
ISSUES = (
    Column("rejected", "rejected", align="right", caption=False),
    Column("of", "of", align="right", caption=False),
    Column("issue", "issue", cut="middle", flex=1, minimum=16, caption=False),
    Column("url", "url", cut="middle", flex=2, minimum=10_000, drop=1, caption=False),
)
ACCEPTED = (
    Column("count", "n", align="right", caption=False),
    Column("target", "target", cut="middle", flex=1, minimum=24, caption=False),
)
REJECTED = (
    Column("count", "n", align="right", caption=False),
    Column("reference", "reference", cut="middle", flex=1, minimum=24, caption=False),
    Column("check", "check", caption=False),
)


def rejections(
    rows: Iterable[SignpostRow],
    *,
    per_group: int = 100,
    status: str = "rejected",
    gitlab_url: str | None = None,
) -> list[RejectionGroup]:
    """:func:`rejection_groups` as typed groups, each with at most ``per_group`` verdicts
    (``more`` counts the rest, and ``command`` lists them all), for the report."""
    return [
        RejectionGroup(
            check=check,
            reason=reason,
            count=len(members),
            more=max(0, len(members) - per_group),
            command=list_command(status, check, reason),
            verdicts=[_grouped(r, gitlab_url) for r in members[:per_group]],
        )
        for check, reason, members in rejection_groups(rows, status)
    ]


_PLACEHOLDER = re.compile(r"<(?:url|anchor|n|sha|path)>")


def list_command(status: str, check: str, reason_class_: str) -> str:
    """The ``scout signposts`` command that lists every verdict of one reason class: the class's
    longest literal fragment is a ``--reason`` substring every member contains."""
    fragments = [f.strip(" #!:()") for f in _PLACEHOLDER.split(reason_class_)]
    fragment = max(fragments, key=len, default="")
    args = ["scout", "signposts", "--status", status, "--check", check]
    if fragment:
        args += ["--reason", fragment]
    return shlex.join([*args, "--limit", "0"])


def _grouped(row: SignpostRow, gitlab_url: str | None = None) -> GroupedVerdict:
    return GroupedVerdict(
        id=row.id,
        state=state(row),
        kind=row.kind,
        reference=row.reference,
        reference_url=reference_url(row.reference_json, gitlab_url),
        reason=row.reason,
        issue_project=row.issue_project,
        issue_iid=row.issue_iid,
        issue_url=row.issue_url,
        checked_at=row.checked_at,
    )


def reference_url(reference_json: str, gitlab_url: str | None = None) -> str | None:
    """Where a reference points: its own URL, or for a short form (``acme/x!3``, a sha, a path)
    the GitLab page built from its parts on ``gitlab_url``."""
    try:
        data = json.loads(reference_json)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    url = data.get("url")
    if isinstance(url, str):
        return url
    project = data.get("project")
    if not gitlab_url or not isinstance(project, str) or not project:
        return None
    base = f"{gitlab_url.rstrip('/')}/{quote(project, safe='/')}"
    kind, sha, iid, path = data.get("kind"), data.get("sha"), data.get("iid"), data.get("path")
    if kind == "merge_request" and isinstance(iid, int):
        return f"{base}/-/merge_requests/{iid}"
    if kind == "commit" and isinstance(sha, str):
        return f"{base}/-/commit/{quote(sha, safe='')}"
    if kind == "file" and isinstance(path, str):
        ref = sha if isinstance(sha, str) else "HEAD"
        lines = data.get("lines")
        anchor = ""
        if isinstance(lines, list) and len(lines) == 2 and all(isinstance(n, int) for n in lines):
            anchor = f"#L{lines[0]}" if lines[0] == lines[1] else f"#L{lines[0]}-{lines[1]}"
        return f"{base}/-/blob/{quote(ref, safe='')}/{quote(path, safe='/')}{anchor}"
    return None
