"""The signpost audit: pure summaries over stored verdicts, for ``scout signposts summary`` and
the HTML report.

Main rule: counts only, from rows already read; nothing here touches the store or the forge.
A withdrawn verdict (accepted once, rejected on re-validation) counts as ``withdrawn`` in the
status counts and as a rejection everywhere else, under the check that failed. Reasons are
grouped by their class: ``project_private: acme/secrets`` counts as ``project_private``, and a
sentence such as ``docs/x.md was deleted since 45f370a64862`` as ``<path> was deleted since <sha>``,
so one stale link pointed at from many issues is one row, not many.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scout.store import SignpostRow
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
    reason = " ".join(reason.split())[:MAX_REASON_CHARS]
    prefix = _PREFIX.match(reason)
    if prefix:
        return prefix.group(1)
    for pattern, placeholder in _TEMPLATES:
        reason = pattern.sub(placeholder, reason)
    return reason


def state(row: SignpostRow) -> str:
    """``accepted``, ``rejected`` or ``withdrawn``."""
    return str(row.state)


@dataclass(frozen=True)
class ReasonCount:
    check: str
    reason: str  # the reason's class (see reason_class)
    count: int


@dataclass(frozen=True)
class IssueCount:
    project: str
    iid: int
    url: str
    rejected: int
    total: int


@dataclass(frozen=True)
class AcceptedTarget:
    target: str  # the target key
    kind: Kind
    project: str | None
    path: str | None
    count: int


@dataclass(frozen=True)
class RejectedTarget:
    reference: str
    kind: Kind
    project: str | None
    path: str | None
    check: Check | None
    reason: str
    count: int


@dataclass(frozen=True)
class AllRejected:
    issues: int  # issues whose every signpost was rejected
    of: int  # issues with any signpost
    share: float


@dataclass(frozen=True)
class Summary:
    """What ``scout signposts summary`` shows; every list is ranked, most first."""

    total: int
    status: dict[str, int]
    check: dict[str, int]
    reasons: list[ReasonCount]
    kind: dict[str, dict[str, int]]  # kind -> {"accepted", "rejected"}
    top_issues: list[IssueCount]
    top_accepted_targets: list[AcceptedTarget]
    top_rejected_targets: list[RejectedTarget]
    all_rejected_issues: AllRejected

    def to_json(self) -> dict[str, Any]:
        """The JSON document, at the edge (the CLI and the report); field names are its keys."""
        return dataclasses.asdict(self)


def summarise(rows: Iterable[SignpostRow], *, top: int = 10) -> Summary:
    """Counts by status, check, reason class and kind, and the ``top`` issues and targets."""
    rows = list(rows)
    rejected = [r for r in rows if r.status == "rejected"]
    status = Counter(state(r) for r in rows)
    check = Counter(r.check_name or "?" for r in rejected)
    reasons = Counter((r.check_name or "?", reason_class(r.reason)) for r in rejected)
    kind: dict[str, dict[str, int]] = {}
    for r in rows:
        counts = kind.setdefault(r.kind, {"accepted": 0, "rejected": 0})
        counts["accepted" if r.status == "accepted" else "rejected"] += 1
    return Summary(
        total=len(rows),
        status={name: status[name] for name in STATUSES},
        check={name: check[name] for name in (*CHECKS, *sorted(set(check) - set(CHECKS)))},
        reasons=[
            ReasonCount(c, reason, n)
            for (c, reason), n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        kind={name: kind[name] for name in sorted(kind, key=_kind_order)},
        top_issues=_top_issues(rows, top),
        top_accepted_targets=_top_accepted(rows, top),
        top_rejected_targets=_top_rejected(rejected, top),
        all_rejected_issues=_all_rejected(rows),
    )


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
        rejected = sum(r.status == Status.REJECTED for r in members)
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


def _top_rejected(rejected: list[SignpostRow], top: int) -> list[RejectedTarget]:
    by_reference: dict[str, list[SignpostRow]] = {}
    for r in rejected:
        by_reference.setdefault(r.reference, []).append(r)
    ranked = sorted(by_reference.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    result = []
    for reference, members in ranked:
        latest = max(members, key=lambda r: (r.checked_at, r.id))
        result.append(
            RejectedTarget(
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
    every = sum(all(r.status == Status.REJECTED for r in members) for members in issues.values())
    return AllRejected(every, len(issues), round(every / len(issues), 3) if issues else 0.0)


def rejection_groups(rows: Iterable[SignpostRow]) -> list[tuple[str, str, list[SignpostRow]]]:
    """Rejected verdicts grouped by (check, reason class): the biggest group first, each group's
    verdicts newest first (as ``rows`` come from the store)."""
    groups: dict[tuple[str, str], list[SignpostRow]] = {}
    for r in rows:
        if r.status == "rejected":
            groups.setdefault((r.check_name or "?", reason_class(r.reason)), []).append(r)
    ordered = sorted(groups.items(), key=lambda kv: (_check_order(kv[0][0]), -len(kv[1]), kv[0][1]))
    return [(check, reason, members) for (check, reason), members in ordered]


def _check_order(check: str) -> int:
    return CHECKS.index(check) if check in CHECKS else len(CHECKS)


def printable(text: str, limit: int = 300) -> str:
    """One terminal-safe line: references and reasons carry untrusted text (no escapes)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:limit]


def render(summary: Summary) -> str:
    """The human rendering of :func:`summarise`."""
    if not summary.total:
        return "no signposts yet: run `scout sweep`"
    s = summary
    lines = [
        f"{s.total} signpost(s): " + ", ".join(f"{s.status[name]} {name}" for name in STATUSES),
        "rejected by check: " + ", ".join(f"{name} {n}" for name, n in s.check.items()),
        "by kind: "
        + ", ".join(
            f"{name} {c['accepted']} accepted / {c['rejected']} rejected"
            for name, c in s.kind.items()
        ),
        f"issues whose every signpost was rejected: {s.all_rejected_issues.issues} of "
        f"{s.all_rejected_issues.of} ({s.all_rejected_issues.share:.0%})",
    ]
    if s.reasons:
        lines += ["", "rejections by reason:"]
        lines += [f"{r.count:>5}  {r.check:<12} {printable(r.reason, 120)}" for r in s.reasons]
    if s.top_issues:
        lines += ["", "issues with the most rejected signposts:"]
        lines += [
            f"{i.rejected:>5}  of {i.total:<3} {printable(i.project)}#{i.iid}  {printable(i.url)}"
            for i in s.top_issues
        ]
    if s.top_accepted_targets:
        lines += ["", "targets most often signposted (accepted):"]
        lines += [f"{t.count:>5}  {printable(t.target)}" for t in s.top_accepted_targets]
    if s.top_rejected_targets:
        lines += ["", "targets most often rejected:"]
        lines += [
            f"{t.count:>5}  {printable(t.reference, 100)}  ({t.check})"
            for t in s.top_rejected_targets
        ]
    return "\n".join(lines)


def rejections(rows: Iterable[SignpostRow], *, per_group: int = 100) -> list[dict[str, Any]]:
    """:func:`rejection_groups` as JSON-able groups, each with at most ``per_group`` verdicts
    (``more`` counts the rest), for the report."""
    result = []
    for check, reason, members in rejection_groups(rows):
        result.append(
            {
                "check": check,
                "reason": reason,
                "count": len(members),
                "more": max(0, len(members) - per_group),
                "verdicts": [_verdict_json(r) for r in members[:per_group]],
            }
        )
    return result


def _verdict_json(row: SignpostRow) -> dict[str, Any]:
    data = row.to_json()
    data["state"] = state(row)
    data["reference_url"] = _reference_url(row.reference_json)
    return data


def _reference_url(reference_json: str) -> str | None:
    try:
        url = json.loads(reference_json).get("url")
    except (ValueError, AttributeError):
        return None
    return url if isinstance(url, str) else None
