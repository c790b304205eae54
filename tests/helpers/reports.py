"""Report records built by hand, for rendering tests: one with every section filled, one empty,
and one whose values test escaping, truncation and the link rule at the edges."""

from __future__ import annotations

import dataclasses

from scout.audit_records import (
    AcceptedTarget,
    AllRejected,
    GroupedVerdict,
    IssueCount,
    RejectedTarget,
    RejectionGroup,
    Summary,
)
from scout.gaps import AnsweringCost, GapGroup
from scout.report import ProjectSummary, Report
from scout.store import SweepStatus
from scout.verdict import Check, Kind

G = "https://gitlab.acme.example"


def _verdict(n: int, state: str, reference: str, url: str | None, reason: str) -> GroupedVerdict:
    return GroupedVerdict(
        id=n,
        state=state,
        kind=Kind.FILE,
        reference=reference,
        reference_url=url,
        reason=reason,
        issue_project="acme/ledger",
        issue_iid=n,
        issue_url=f"{G}/acme/ledger/-/issues/{n}",
        checked_at=f"2026-11-0{n}T10:00:00Z",
    )


def full_report() -> Report:
    """Every section with rows: gaps (with wordings, nearest passages and issues), cards, every
    table of the audit, rejections over two checks with a 'more' line, withdrawals, projects."""
    summary = Summary(
        total=7,
        status={"accepted": 3, "rejected": 3, "withdrawn": 1},
        check={"corpus_rules": 1, "resolves": 2},
        withdrawn_check={"resolves": 1},
        reasons=[],
        kind={
            "file": {"accepted": 2, "rejected": 2, "withdrawn": 1},
            "merge_request": {"accepted": 1, "rejected": 1},
        },
        top_issues=[
            IssueCount("acme/ledger", 4, f"{G}/acme/ledger/-/issues/4", rejected=2, total=3)
        ],
        top_accepted_targets=[
            AcceptedTarget("acme/handbook:docs/keys.md", Kind.FILE, "acme/handbook", "k.md", 2),
            AcceptedTarget("acme/ledger!7", Kind.MERGE_REQUEST, "acme/ledger", None, 1),
        ],
        top_rejected_targets=[
            RejectedTarget(
                url=f"{G}/acme/ledger/-/blob/main/old.md",
                reference="acme/ledger:old.md",
                kind=Kind.FILE,
                project="acme/ledger",
                path="old.md",
                check=Check.RESOLVES,
                reason="the file is gone at the default branch",
                count=2,
            ),
            RejectedTarget(
                url=None,
                reference="acme/secrets!1",
                kind=Kind.MERGE_REQUEST,
                project="acme/secrets",
                path=None,
                check=Check.CORPUS_RULES,
                reason="the project is private",
                count=1,
            ),
        ],
        all_rejected_issues=AllRejected(issues=1, of=4, share=0.25),
    )
    rejections = [
        RejectionGroup(
            check="corpus_rules",
            reason="the project is private",
            count=1,
            more=0,
            command="scout signposts --check corpus_rules",
            verdicts=[_verdict(1, "rejected", "acme/secrets!1", None, "the project is private")],
        ),
        RejectionGroup(
            check="resolves",
            reason="the file is gone at the default branch",
            count=2,
            more=1,
            command="scout signposts --check resolves --limit 0",
            verdicts=[
                _verdict(2, "rejected", "old.md", f"{G}/acme/ledger/-/blob/main/old.md", "gone")
            ],
        ),
    ]
    withdrawals = [
        RejectionGroup(
            check="resolves",
            reason="the file is gone at the default branch",
            count=1,
            more=0,
            command="scout signposts --status withdrawn",
            verdicts=[_verdict(3, "withdrawn", "docs/release.md", None, "gone")],
        )
    ]
    return Report(
        generated_at="2026-11-30T12:00:00Z",
        gaps=[
            GapGroup(
                key="rota call",
                question="Where is the on-call rota?",
                wordings=("Where is the on-call rota?", "where is the  on-call rota"),
                asked=3,
                first="2026-11-01T09:00:00Z",
                last="2026-11-29T09:00:00Z",
                reason="no passage covers the question",
                nearest=(
                    {
                        "project": "acme/handbook",
                        "path": "docs/oncall.md",
                        "heading": "On call > Escalation",
                        "lines": [10, 24],
                        "url": f"{G}/acme/handbook/-/blob/abc/docs/oncall.md#L10-24",
                    },
                ),
                issues=(
                    {
                        "project": "acme/ops",
                        "iid": 12,
                        "url": f"{G}/acme/ops/-/issues/12",
                        "state": "opened",
                    },
                ),  # fmt: skip
            ),
            GapGroup(
                key="vpn",
                question="How do I get VPN access?",
                wordings=("How do I get VPN access?",),
                asked=1,
                first="2026-11-02T09:00:00Z",
                last="2026-11-02T09:00:00Z",
                reason=None,
            ),
        ],
        gaps_total=5,
        summary=summary,
        rejections=rejections,
        withdrawals=withdrawals,
        target_links={"acme/handbook:docs/keys.md": f"{G}/acme/handbook/-/blob/abc/k.md#L1-9"},
        projects=[
            ProjectSummary(
                path="acme/handbook",
                visibility="public",
                default_branch="main",
                web_url=f"{G}/acme/handbook",
                indexed_sha="0123456789abcdef0123456789abcdef01234567",
                indexed_at="2026-11-30T11:00:00Z",
                passages=42,
                signpost_passages=3,
            ),
            ProjectSummary(
                path="acme/empty",
                visibility="internal",
                default_branch=None,
                web_url=f"{G}/acme/empty",
                indexed_sha=None,
                indexed_at=None,
                passages=0,
                signpost_passages=0,
            ),
        ],
        sweep=SweepStatus(
            cursors={"group:acme": "2026-11-30T10:59:00Z"},
            issues=9,
            last_read_at="2026-11-30T11:00:00Z",
            last_checked_at="2026-11-30T11:01:00Z",
        ),
        answering=AnsweringCost(None, 9, 6, 1200, 340, 0.0123, 2),
    )


def empty_report() -> Report:
    """A store with nothing in it yet: no gaps, no signposts, no projects, no sweep."""
    return Report(
        generated_at="2026-11-30T12:00:00Z",
        gaps=[],
        gaps_total=0,
        summary=Summary(
            total=0,
            status={"accepted": 0, "rejected": 0, "withdrawn": 0},
            check={},
            withdrawn_check={},
            reasons=[],
            kind={},
            top_issues=[],
            top_accepted_targets=[],
            top_rejected_targets=[],
            all_rejected_issues=AllRejected(issues=0, of=0, share=0.0),
        ),
        rejections=[],
        target_links={},
        projects=[],
        sweep=SweepStatus(cursors={}, issues=0, last_read_at=None, last_checked_at=None),
        answering=AnsweringCost("2026-11-01", 0, 0, 0, 0, 0.0, 0),
    )


EDGE = 'it\'s "quoted" & <b>bold</b> \u202eevil\u202c \x1b[31mred ' + "long " * 120


def edge_report() -> Report:
    """Quotes of both kinds, ampersands, tags, bidi overrides, escape sequences and values past
    the length cap, in every kind of field; links of every scheme; an iid that is not a number;
    no rejections (so the empty rejection section shows)."""
    full = full_report()
    summary = dataclasses.replace(
        full.summary, top_accepted_targets=[AcceptedTarget(EDGE, Kind.FILE, None, None, 1)]
    )
    return Report(
        generated_at=EDGE,
        gaps=[
            GapGroup(
                key=EDGE,
                question=EDGE,
                wordings=(" ".join(EDGE.split()), EDGE + "?"),
                asked=2,
                first=EDGE,
                last=EDGE,
                reason=EDGE,
                nearest=(
                    {"project": EDGE, "path": EDGE, "heading": None, "lines": [], "url": None},
                    {
                        "project": "p",
                        "path": "a",
                        "heading": EDGE,
                        "lines": [3],
                        "url": "HTTPS://gitlab.acme.example/x?a=1&b='2'",
                    },
                ),  # fmt: skip
                issues=(
                    {"project": EDGE, "iid": True, "url": "ftp://x.example/", "state": EDGE},
                    {"project": "p", "iid": "7", "url": 'http://x.example/?q="1"', "state": None},
                ),
            )
        ],
        gaps_total=1,
        summary=summary,
        rejections=[],
        withdrawals=[],
        target_links={EDGE: "javascript:alert(1)"},
        projects=[
            ProjectSummary(
                path=EDGE,
                visibility=EDGE,
                default_branch="",
                web_url="https://gitlab.acme.example/a&b",
                indexed_sha="abc'def\"0123456789",
                indexed_at=EDGE,
                passages=1,
                signpost_passages=2,
            )
        ],
        sweep=SweepStatus(cursors={EDGE: EDGE}, issues=1, last_read_at=None, last_checked_at=EDGE),
        answering=AnsweringCost(EDGE, 1, 0, 0, 0, 0.0, 1),
    )
