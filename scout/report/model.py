"""What the report shows, gathered from the store into typed records.

The signpost audit is passed in already summarised, as :mod:`scout.audit_records` (``scout/``
does not import ``signposts/``: the CLI computes it with :mod:`signposts.audit`), so this module
only reads the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scout.audit_records import RejectionGroup, Summary
from scout.gaps import AnsweringCost, GapGroup, answering_cost, gaps, not_gaps, not_gaps_line
from scout.store import Store, SweepStatus, now

MAX_GAPS = 50  # the head of the backlog is what a maintainer acts on


@dataclass(frozen=True)
class ProjectSummary:
    """One indexed project as the report lists it, with its passage counts by source."""

    path: str
    visibility: str
    default_branch: str | None
    web_url: str
    indexed_sha: str | None
    indexed_at: str | None
    passages: int  # from the corpus
    signpost_passages: int  # from signpost targets


@dataclass(frozen=True)
class Report:
    generated_at: str
    gaps: list[GapGroup]  # ranked, the head of the backlog
    gaps_total: int
    summary: Summary  # signposts.audit.summarise()
    rejections: list[RejectionGroup]  # signposts.audit.rejections()
    target_links: dict[str, str]  # accepted target key -> a permalink of its first passage
    projects: list[ProjectSummary]
    sweep: SweepStatus
    answering: AnsweringCost  # every logged question: tokens and dollars
    # signposts.audit.rejections(status="withdrawn")
    withdrawals: list[RejectionGroup] = field(default_factory=list)
    not_gaps: str = ""  # the declines the backlog leaves out (offline mode, an empty index)


def collect(
    store: Store,
    *,
    summary: Summary,
    rejections: list[RejectionGroup],
    withdrawals: list[RejectionGroup] | None = None,
) -> Report:
    """Everything the page shows; ``summary``, ``rejections`` and ``withdrawals`` come from
    signposts.audit."""
    backlog = gaps(store)
    counts = store.passage_counts()
    projects = [
        ProjectSummary(
            path=p.path,
            visibility=p.visibility,
            default_branch=p.default_branch,
            web_url=p.web_url,
            indexed_sha=p.indexed_sha,
            indexed_at=p.indexed_at,
            passages=counts.get(p.path, {}).get("corpus", 0),
            signpost_passages=counts.get(p.path, {}).get("signpost", 0),
        )
        for p in store.projects().values()
    ]
    links = {}
    for target in summary.top_accepted_targets:
        passages = store.target_passages(target.target)
        if passages:
            links[target.target] = passages[0].url
    return Report(
        generated_at=now(),
        gaps=backlog[:MAX_GAPS],
        gaps_total=len(backlog),
        summary=summary,
        rejections=rejections,
        withdrawals=withdrawals or [],
        target_links=links,
        projects=projects,
        sweep=store.sweep_state(),
        answering=answering_cost(store),
        not_gaps=not_gaps_line(not_gaps(store)),
    )
