"""The documentation gap backlog: declined questions grouped and ranked, with where each answer
should go (retrieval's nearest passages) and where it may already live (issue links).

Two questions are the same gap when they have the same content words after normalisation: case
folded, punctuation and stop words dropped, words stemmed (retrieval's one stemmer), order
ignored. Groups rank by how many distinct askers asked them (a hashed key or address; one
person repeating a question cannot steer the backlog), then by how often, then by most recent.
Answered questions never appear, nor do declines that are not gaps: an empty index or offline
mode (``cause``: no model judged the passages), a question without content words (logged before
such questions became usage errors); :func:`not_gaps` counts the first two apart. Issue links are
links only: the forge search's titles and texts are never kept, printed or passed on, nor are
links to issues of projects the corpus rules leave out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from scout import timefmt
from scout.corpus.rules import CorpusRules
from scout.errors import UsageError
from scout.forge.base import Project, Visibility
from scout.progress import Progress
from scout.safe_text import printable
from scout.store import QuestionRow, Store
from scout.words import content_words, stem

if TYPE_CHECKING:
    from scout.forge.base import Forge

MAX_SEARCHES = 25  # issue-search requests a run: GitLab allows 30 a minute by default
MAX_LINKS = 5  # issue links per gap (the forges fetch a few times more, for those dropped here)
MAX_SEARCH_WORDS = 8  # GitLab requires every word: each one more narrows the search further


def key_words(question: str) -> tuple[str, ...]:
    """The grouping key: the question's distinct content-word stems, sorted."""
    return tuple(sorted({stem(w) for w in content_words(question)}))


def normalise(question: str) -> str:
    """The grouping key as one string (how the store files a gap's issue links)."""
    return " ".join(key_words(question))


@dataclass(frozen=True)
class GapGroup:
    """One gap: its wordings (latest first), how often and when it was asked, why it was last
    declined, the passages retrieval found nearest, and issue links where it may be answered."""

    key: str
    question: str  # the latest wording
    wordings: tuple[str, ...]
    asked: int
    first: str
    last: str
    reason: str | None
    nearest: tuple[dict[str, Any], ...] = ()
    issues: tuple[dict[str, Any], ...] = ()
    words: tuple[str, ...] = ()  # the latest wording's content words: what issue search asks
    askers: int = 1  # distinct askers (hashed keys or addresses; the CLI's user is one)

    def to_json(self) -> dict[str, Any]:
        """Exactly docs/design.md's ``scout gaps --json`` entry."""
        return {
            "question": self.question,
            "wordings": list(self.wordings),
            "asked": self.asked,
            "askers": self.askers,
            "first": self.first,
            "last": self.last,
            "reason": self.reason,
            "nearest": [dict(n) for n in self.nearest],
            "issues": [dict(i) for i in self.issues],
        }


def group(
    rows: Iterable[QuestionRow], issues: dict[str, list[dict[str, Any]]] | None = None
) -> list[GapGroup]:
    """Group declined rows into gaps, rank them, and attach each gap's stored issue links."""
    buckets: dict[str, list[QuestionRow]] = {}
    for row in rows:
        if row.outcome != "declined" or row.cause:
            continue
        key = normalise(row.question)
        if key:
            buckets.setdefault(key, []).append(row)
    groups = []
    for key, members in buckets.items():
        members = sorted(members, key=lambda r: r.asked_at)  # stable: log order breaks ties
        latest = members[-1]
        wordings: dict[str, None] = {}
        for row in reversed(members):
            wordings.setdefault(" ".join(row.question.split()), None)
        groups.append(
            GapGroup(
                key=key,
                question=latest.question,
                wordings=tuple(wordings),
                asked=len(members),
                # a row logged before askers were kept is one asker of its own
                askers=len({row.asker or f"row {n}" for n, row in enumerate(members)}),
                first=members[0].asked_at,
                last=latest.asked_at,
                reason=latest.reason,
                nearest=latest.nearest,
                issues=tuple((issues or {}).get(key, ())),
                words=tuple(content_words(latest.question))[:MAX_SEARCH_WORDS],
            )
        )
    groups.sort(key=lambda g: (g.askers, g.asked, g.last), reverse=True)
    return groups


def parse_since(text: str, now: datetime | None = None) -> str:
    """A ``--since`` value (``2026-11-01``, an ISO 8601 time, ``7d``, ``24h``, ``yesterday``)
    as the store's timestamp format; UsageError (exit 2) for anything else."""
    try:
        return timefmt.since(text, now)
    except (ValueError, OverflowError):
        shown = printable(text, 80)
        raise UsageError(
            f"--since {shown!r} is not a date: use YYYY-MM-DD, 7d, 24h or yesterday"
        ) from None


def gaps(store: Store, *, since: str | None = None) -> list[GapGroup]:
    """The ranked gap backlog from the store's question log (``since`` as given to the CLI)."""
    rows = store.questions(
        outcome="declined", since=parse_since(since) if since is not None else None
    )
    return group(rows, store.gap_issues())


def not_gaps(store: Store, *, since: str | None = None) -> dict[str, int]:
    """Declined questions that are not gaps, counted by cause (``offline``, ``index_empty``):
    what the backlog leaves out, said beside it."""
    rows = store.questions(
        outcome="declined", since=parse_since(since) if since is not None else None
    )
    return dict(Counter(row.cause for row in rows if row.cause))


NOT_GAPS = {
    "offline": "declined in offline mode: no model read their passages (ask with a model to "
    "know whether the documentation answers them)",
    "index_empty": "asked of an empty index",
}


def not_gaps_line(counts: dict[str, int]) -> str:
    """One line saying which declines the backlog leaves out, or ``""`` for none."""
    said = [
        f"{counts[cause]} {NOT_GAPS.get(cause, f'with cause {cause}')}"
        for cause in sorted(counts, key=lambda c: (c not in NOT_GAPS, c))
    ]
    return f"Not counted as gaps: {'; '.join(said)}." if said else ""


def find_issues(
    store: Store,
    forge: Forge,
    backlog: Sequence[GapGroup],
    groups: Sequence[str],
    *,
    rules: CorpusRules,
    include_confidential: bool = False,
    progress: Progress | None = None,
) -> list[GapGroup]:
    """Ask the forge's issue search for the head of the backlog, store the links, and return the
    backlog with them.

    One search request per configured group for each gap, and at most MAX_SEARCHES requests a
    run (GitLab rate-limits searches: 30 a minute by default), the most asked gaps first.
    Confidential issues are left out unless the sweep reads them too (``[ingest]
    include_confidential``), and so are issues of projects the corpus rules leave out (a
    private or excluded project's issue never reaches a report): a link is kept only when its
    project is in the index and passes ``rules`` (indexing's) on the metadata it was indexed with,
    so judging costs no request. Each gap's links are saved as soon as they are found, so a run
    that fails half-way keeps what it found.
    """
    budget = MAX_SEARCHES
    found: dict[str, tuple[dict[str, Any], ...]] = {}
    indexed = store.projects()

    def qualifies(path: str) -> bool:
        row = indexed.get(path)
        if row is None:
            return False  # never indexed: left out by the rules, or unknown to them
        project = Project(
            path=row.path,
            visibility=cast(Visibility, row.visibility),
            archived=row.archived,
            default_branch=row.default_branch,
            web_url=row.web_url,
        )
        return rules.project(project).ok

    shown = progress or Progress()
    shown.phase("searches", total=min(MAX_SEARCHES, len(backlog) * max(1, len(groups))))
    for gap in backlog:
        # A gap is searched in every group or not at all (unless the groups alone exceed the
        # budget: then the first gap is searched in the first 25).
        if budget <= 0 or (found and budget < len(groups)):
            break
        names = list(groups)[:budget]
        budget -= len(names)
        links: dict[str, dict[str, Any]] = {}
        for name in names:
            for link in forge.search_issues(name, list(gap.words), MAX_LINKS):
                if link.confidential and not include_confidential:
                    continue
                if not qualifies(link.project):
                    continue
                links.setdefault(link.url, link.to_json())
            shown.advance("searches")
        kept = list(links.values())[:MAX_LINKS]
        store.save_gap_issues(gap.key, kept)
        found[gap.key] = tuple(kept)
    return [replace(g, issues=found[g.key]) if g.key in found else g for g in backlog]


@dataclass(frozen=True)
class AnsweringCost:
    """What answering questions cost over a period, from the question log: tokens and dollars as
    the providers reported them. ``unpriced`` counts questions whose provider gave no price
    (their dollars are not in ``usd``)."""

    since: str | None
    questions: int
    answered: int
    input_tokens: int
    output_tokens: int
    usd: float
    unpriced: int

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "questions": self.questions,
            "answered": self.answered,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": round(self.usd, 6),
            "unpriced": self.unpriced,
        }

    def line(self) -> str:
        period = f"since {self.since}" if self.since else "in all"
        unpriced = f", {self.unpriced} without a known price" if self.unpriced else ""
        return (
            f"Answering {period}: {self.questions} question(s), {self.answered} answered; "
            f"{self.input_tokens} input + {self.output_tokens} output tokens, "
            f"${self.usd:.4f}{unpriced}"
        )


def answering_cost(store: Store, *, since: str | None = None) -> AnsweringCost:
    """The cost of every logged question asked on or after ``since`` (as given to the CLI)."""
    start = parse_since(since) if since is not None else None
    rows = store.questions(since=start)
    return AnsweringCost(
        since=start,
        questions=len(rows),
        answered=sum(r.outcome == "answered" for r in rows),
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        usd=sum(r.usd for r in rows if r.usd is not None),
        unpriced=sum(r.usd is None for r in rows),
    )
