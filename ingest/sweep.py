"""``scout sweep``: read the issues that changed, validate their signposts, keep targets true.

Per issue, everything lands in one transaction with the group's cursor (verdicts, target passages,
the issue's stored reference list), so a sweep killed at any point is finished by the next run with
nothing lost and nothing doubled. Issue prose lives in memory only (docs/design.md, invariant 1): it
is extracted from, used as the question of the addresses check, and dropped.

Forge latency dominates a sweep, and most of its requests are notes listings, one per issue with
notes, which depend on nothing but the issue. So notes are fetched ahead by a small thread pool
(at most ``CONCURRENCY`` requests in flight, ``READ_AHEAD`` issues ahead), while validation and
every store write stay on the sweeping thread, in issue order, one transaction per issue. Notes
are fetched ahead only for issues that will be read (changed, in a qualifying project).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ingest.recheck import recheck_one
from scout.config import Config
from scout.corpus.rules import CorpusRules
from scout.errors import NotFound
from scout.forge.base import Forge, Issue, Note
from scout.forge.cached import CachedForge
from scout.providers.base import Provider
from scout.store import IssueRow, PassageRecord, SignpostRow, Store
from scout.verdict import Check, Status
from signposts.extract import extract_issue
from signposts.references import DocsSite, ExtractContext
from signposts.validate import Validator, question_of

log = logging.getLogger("scout.sweep")
# Notes requests in flight at once, and how many issues ahead of the one being written they are
# fetched: bounded, so memory stays flat in the number of issues.
CONCURRENCY = 4
READ_AHEAD = 16


@dataclass
class SweepSummary:
    issues_read: int = 0
    notes_read: int = 0
    references: int = 0
    accepted: int = 0
    rejected: Counter[str] = field(default_factory=lambda: Counter(dict.fromkeys(Check, 0)))
    withdrawn: int = 0
    revalidated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    forge_requests: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "issues_read": self.issues_read,
            "notes_read": self.notes_read,
            "references": self.references,
            "accepted": self.accepted,
            "rejected": {check.value: self.rejected[check] for check in Check},
            "withdrawn": self.withdrawn,
            "revalidated": self.revalidated,
            "skipped": dict(sorted(self.skipped.items())),
            "forge_requests": self.forge_requests,
            "seconds": round(self.seconds, 3),
        }


def extract_context(config: Config, project: str | None) -> ExtractContext:
    return ExtractContext(
        gitlab_url=config.forge.url,
        docs_sites=tuple(DocsSite(s.url, s.project, s.root) for s in config.docs_site),
        project=project,
    )


class Sweep:
    """One sweep over the configured groups, then re-validation of moved targets."""

    def __init__(
        self,
        config: Config,
        forge: Forge,
        store: Store,
        provider: Provider,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[str], None] = lambda _message: None,
    ) -> None:
        self.config = config
        self.forge = CachedForge(forge)
        self.store = store
        self.rules = CorpusRules(tuple(config.forge.groups), config.corpus)
        self.validator = Validator(self.forge, self.rules, provider, config.docs_site)
        self.stop = stop or threading.Event()
        self.progress = progress
        self.summary = SweepSummary()

    def run(self) -> SweepSummary:
        started = time.monotonic()
        for group in self.config.forge.groups:
            self._sweep_group(group)
            if self.stop.is_set():
                break
        if not self.stop.is_set():
            self._revalidate()
        self.summary.stopped = self.stop.is_set()
        self.summary.seconds = time.monotonic() - started
        self.summary.forge_requests = dict(sorted(self.forge.requests.items()))
        return self.summary

    # ------------------------------------------------------------------ issues
    def _sweep_group(self, group: str) -> None:
        scope = f"issues:{group}"
        pool = ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="scout-notes")
        window: deque[tuple[Issue, Future[list[Note]] | None]] = deque()
        try:
            for issue in self.forge.issues_updated_after(group, self.store.cursor(scope)):
                if self.stop.is_set():
                    return
                window.append((issue, self._notes_ahead(pool, issue)))
                if len(window) > READ_AHEAD:
                    ahead, notes = window.popleft()
                    self._one_issue(ahead, scope, notes)
            while window:
                if self.stop.is_set():
                    return
                ahead, notes = window.popleft()
                self._one_issue(ahead, scope, notes)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _notes_ahead(self, pool: ThreadPoolExecutor, issue: Issue) -> Future[list[Note]] | None:
        """Start fetching the notes of an issue the sweep will read; None if it will not."""
        if issue.user_notes_count <= 0:
            return None
        stored = self.store.issue(issue.project, issue.iid)
        if stored is not None and stored.updated_at == issue.updated_at:
            return None
        if self._project_qualifies(issue.project) is not None:
            return None
        notes = self.forge.issue_notes
        return pool.submit(lambda: list(notes(issue)))

    def _project_qualifies(self, path: str) -> str | None:
        try:
            project = self.forge.project(path)
        except NotFound:
            return "issue_project_not_found"
        verdict = self.rules.project(project)
        return None if verdict else f"issue_{verdict.reason}"

    def _one_issue(
        self, issue: Issue, scope: str, notes_ahead: Future[list[Note]] | None = None
    ) -> None:
        summary = self.summary
        stored = self.store.issue(issue.project, issue.iid)
        cursor = (scope, issue.updated_at)
        if stored is not None and stored.updated_at == issue.updated_at:
            summary.skipped["issue_unchanged"] += 1
            return
        skip = self._project_qualifies(issue.project)
        if skip is not None:
            # Issues of private or excluded projects are dropped unread; only the cursor moves.
            summary.skipped[skip] += 1
            self.store.save_issue(
                IssueRow(issue.project, issue.iid, issue.web_url, issue.updated_at, ()),
                [],
                {},
                cursor,
            )
            return
        summary.issues_read += 1
        notes: list[str] = []
        if issue.user_notes_count > 0:
            fetched = notes_ahead.result() if notes_ahead else self.forge.issue_notes(issue)
            notes = [note.body for note in fetched]
            summary.notes_read += len(notes)
        extraction = extract_issue(
            issue.title, issue.description, notes, extract_context(self.config, issue.project)
        )
        summary.skipped.update(extraction.skipped)
        question = question_of(issue.title, issue.description)
        verdicts = [self.validator.validate(ref, question) for ref in extraction.references]
        del notes, question
        summary.references += len(verdicts)
        passages: dict[str, Sequence[PassageRecord]] = {}
        for verdict in verdicts:
            if verdict.accepted:
                summary.accepted += 1
                assert verdict.target is not None
                passages[verdict.target] = verdict.passages
            else:
                summary.rejected[verdict.check or "?"] += 1
        self.store.save_issue(
            IssueRow(
                issue.project,
                issue.iid,
                issue.web_url,
                issue.updated_at,
                tuple(v.reference for v in verdicts),
            ),
            verdicts,
            passages,
            cursor,
        )
        self.progress(
            f"{issue.project}#{issue.iid}: {len(verdicts)} reference(s), "
            f"{sum(v.accepted for v in verdicts)} accepted"
        )

    # ------------------------------------------------------------------ re-validation
    def _moved(self, row: SignpostRow) -> bool:
        if row.target_project is None:
            return False
        try:
            project = self.forge.project(row.target_project)
        except NotFound:
            return True
        return self.forge.head(project) != row.target_sha or not self.rules.project(project)

    def _revalidate(self) -> None:
        """Accepted signposts whose target moved: re-read at the new head, or withdrawn."""
        for row in self.store.signposts(status="accepted"):
            if self.stop.is_set():
                return
            if not self._moved(row):
                continue
            change = recheck_one(self.store, self.validator, row)
            self.summary.revalidated += 1
            if change is not None and change.after.status == Status.WITHDRAWN:
                self.summary.withdrawn += 1
