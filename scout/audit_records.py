"""The signpost audit's typed records: what :mod:`signposts.audit` computes and the report
reads.

They live in ``scout/`` so the report can take them without importing ``signposts/`` (the
dependency runs ``ingest -> signposts -> scout``); only :meth:`Summary.to_json` turns them into
a JSON document, at the edge.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from scout.verdict import Check, Kind


@dataclass(frozen=True)
class ReasonCount:
    check: str
    reason: str  # the reason's class (see signposts.audit.reason_class)
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
    url: str | None  # a link to look at the target (only with a GitLab URL; left out when None)
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
    check: dict[str, int]  # rejected verdicts by failed check: sums to status["rejected"]
    withdrawn_check: dict[str, int]  # withdrawn ones by failed check: sums to status["withdrawn"]
    reasons: list[ReasonCount]
    kind: dict[str, dict[str, int]]  # kind -> {"accepted", "rejected", "withdrawn"}
    top_issues: list[IssueCount]
    top_accepted_targets: list[AcceptedTarget]
    top_rejected_targets: list[RejectedTarget]
    all_rejected_issues: AllRejected

    def to_json(self) -> dict[str, Any]:
        """The JSON document, at the edge (the CLI); field names are its keys."""
        document = dataclasses.asdict(self)
        for target in document["top_rejected_targets"]:
            if target["url"] is None:
                del target["url"]
        return document


@dataclass(frozen=True)
class GroupedVerdict:
    """One verdict of a rejection group, as the report lists it."""

    id: int
    state: str  # rejected or withdrawn
    kind: Kind
    reference: str
    reference_url: str | None  # a link to look at the reference, when one can be built
    reason: str
    issue_project: str
    issue_iid: int
    issue_url: str
    checked_at: str


@dataclass(frozen=True)
class RejectionGroup:
    """The verdicts of one (check, reason class), at most ``per_group`` of them; ``more``
    counts the rest and ``command`` lists them all."""

    check: str
    reason: str
    count: int
    more: int
    command: str
    verdicts: list[GroupedVerdict]
