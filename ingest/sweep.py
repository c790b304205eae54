"""``scout sweep``: read the issues that changed, validate their signposts, keep targets true.

Per issue, everything lands in one transaction with the group's cursor (verdicts, target
passages, the issue's stored reference list), so a sweep killed at any point is finished by the
next run with nothing lost and nothing doubled. Issue prose lives in memory only (invariant 1):
it is extracted from, used as the question of the addresses check, and dropped.

Forge latency dominates a sweep, and most of its requests are notes listings, one per issue with
notes, which depend on nothing but the issue. So notes are fetched ahead by a small thread pool
(at most ``CONCURRENCY`` requests in flight, ``READ_AHEAD`` issues ahead), while validation and
every store write stay on the sweeping thread, in issue order, one transaction per issue. Notes
are fetched ahead only for issues that will be read (changed, in a qualifying project).

With a model provider each addresses judgement is a model call, so judgements run on a second
bounded pool (``[ingest] concurrency`` at once), up to ``4 x concurrency`` issues ahead of the one
being committed; forge reads (corpus rules, resolves) stay on the sweeping thread, which owns the
forge's git readers, and commits still happen in issue order, so the cursor never passes an
issue whose verdicts are not stored. On stop, judgements not yet started are dropped and the
issues whose judgements are all in are committed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ingest.recheck import recheck_one
from ingest.records import new_signpost
from scout.config import Config
from scout.corpus.rules import CorpusRules
from scout.errors import NotFound
from scout.forge.base import Forge, Issue, Note
from scout.progress import Progress, as_progress
from scout.providers.base import Provider
from scout.store import IssueRow, SignpostRow, Store
from signposts.cache import CachedForge
from signposts.extract import extract_issue
from signposts.references import DocsSite, ExtractContext
from signposts.validate import Pending, Validator, Verdict, question_of

log = logging.getLogger("scout.sweep")
CHECKS = ("corpus_rules", "resolves", "addresses")
# Notes requests in flight at once, and how many issues ahead of the one being written they are
# fetched: bounded, so memory stays flat in the number of issues.
CONCURRENCY = 4
READ_AHEAD = 16


@dataclass
class _Staged:
    """An issue read and checked against the forge, waiting for its judgements and its commit."""

    issue: Issue
    cursor: tuple[str, str]
    skip: str | None = None
    notes: int = 0
    extract_skipped: Counter[str] = field(default_factory=Counter)
    judged: list[Future[Verdict]] = field(default_factory=list)

    def complete(self) -> bool:
        """Every judgement finished (none cancelled): the issue can be committed whole."""
        return all(f.done() and not f.cancelled() and f.exception() is None for f in self.judged)


@dataclass
class SweepSummary:
    issues_read: int = 0
    notes_read: int = 0
    references: int = 0
    accepted: int = 0
    rejected: Counter[str] = field(default_factory=lambda: Counter(dict.fromkeys(CHECKS, 0)))
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
            "rejected": {check: self.rejected[check] for check in CHECKS},
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
        progress: Progress | Callable[[str], None] | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.config = config
        self.forge = CachedForge(forge)
        self.store = store
        self.rules = CorpusRules(tuple(config.forge.groups), config.corpus)
        self.validator = Validator(self.forge, self.rules, provider, config.docs_site)
        self.stop = stop or threading.Event()
        self.progress = as_progress(progress)
        self.summary = SweepSummary()
        self.concurrency = concurrency or config.ingest.concurrency
        # issues read ahead of the one being committed while their judgements run: enough to
        # keep every judge busy when issues have one or two references each
        self.judge_ahead = 4 * self.concurrency
        self._staged_keys: set[tuple[str, int, str]] = set()

    def run(self) -> SweepSummary:
        started = time.monotonic()
        self.progress.phase("issues")
        self.progress.phase("references")
        for group in self.config.forge.groups:
            self._sweep_group(group)
            if self.stop.is_set():
                break
        if not self.stop.is_set():
            self._revalidate()
        self.summary.stopped = self.stop.is_set()
        self.summary.seconds = time.monotonic() - started
        self.summary.forge_requests = dict(sorted(self.forge.forge.requests.items()))
        return self.summary

    # ------------------------------------------------------------------ issues
    def _sweep_group(self, group: str) -> None:
        scope = f"issues:{group}"
        pool = ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="scout-notes")
        judges = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="scout-judge")
        window: deque[tuple[Issue, Future[list[Note]] | None]] = deque()
        staged: deque[_Staged] = deque()
        try:
            for issue in self.forge.issues_updated_after(group, self.store.cursor(scope)):
                if self.stop.is_set():
                    break
                window.append((issue, self._notes_ahead(pool, issue)))
                if len(window) > READ_AHEAD:
                    ahead, notes = window.popleft()
                    staged.append(self._stage(ahead, scope, notes, judges))
                    self._commit_ready(staged, self.judge_ahead)
            while window and not self.stop.is_set():
                ahead, notes = window.popleft()
                staged.append(self._stage(ahead, scope, notes, judges))
                self._commit_ready(staged, self.judge_ahead)
            if self.stop.is_set():
                # Judgements not started are dropped; those running finish, and every issue
                # whose judgements are all in is committed, in order.
                for item in staged:
                    for future in item.judged:
                        future.cancel()
                judges.shutdown(wait=True)
                while staged and staged[0].complete():
                    self._commit(staged.popleft())
            else:
                self._commit_ready(staged, 0)
        finally:
            judges.shutdown(wait=True, cancel_futures=True)
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
        notes = self.forge.forge.issue_notes
        return pool.submit(lambda: list(notes(issue)))

    def _project_qualifies(self, path: str) -> str | None:
        try:
            project = self.forge.project(path)
        except NotFound:
            return "issue_project_not_found"
        verdict = self.rules.project(project)
        return None if verdict else f"issue_{verdict.reason}"

    def _stage(
        self,
        issue: Issue,
        scope: str,
        notes_ahead: Future[list[Note]] | None,
        judges: ThreadPoolExecutor,
    ) -> _Staged:
        """Read one issue and run its forge checks on this thread; its addresses judgements go
        to the pool. Nothing is written here: :meth:`_commit` writes, in issue order."""
        staged = _Staged(issue, (scope, issue.updated_at))
        key = (issue.project, issue.iid, issue.updated_at)
        stored = self.store.issue(issue.project, issue.iid)
        if key in self._staged_keys or (
            stored is not None and stored.updated_at == issue.updated_at
        ):
            # a listing that restarts a page may repeat an issue not yet committed
            staged.skip = "issue_unchanged"
            return staged
        self._staged_keys.add(key)
        skip = self._project_qualifies(issue.project)
        if skip is not None:
            staged.skip = skip
            return staged
        notes: list[str] = []
        if issue.user_notes_count > 0:
            fetched = notes_ahead.result() if notes_ahead else self.forge.issue_notes(issue)
            notes = [note.body for note in fetched]
            staged.notes = len(notes)
        extraction = extract_issue(
            issue.title, issue.description, notes, extract_context(self.config, issue.project)
        )
        staged.extract_skipped = extraction.skipped
        question = question_of(issue.title, issue.description)
        for ref in extraction.references:
            pending = self.validator.prepare(ref, question)
            if pending.needs_judgement:
                staged.judged.append(judges.submit(self._judge, pending))
            else:
                done: Future[Verdict] = Future()
                done.set_result(self.validator.judge(pending))
                staged.judged.append(done)
                self.progress.advance("references")
        del notes, question
        return staged

    def _judge(self, pending: Pending) -> Verdict:
        verdict = self.validator.judge(pending)
        self.progress.advance("references")
        return verdict

    def _commit_ready(self, staged: deque[_Staged], keep: int) -> None:
        """Commit staged issues in order: every one already judged, then (waiting for their
        judgements) as many as it takes to leave at most ``keep`` staged."""
        while staged and (len(staged) > keep or staged[0].complete()):
            self._commit(staged.popleft())

    def _commit(self, staged: _Staged) -> None:
        summary = self.summary
        issue = staged.issue
        self._staged_keys.discard((issue.project, issue.iid, issue.updated_at))
        if staged.skip is not None:
            summary.skipped[staged.skip] += 1
            if staged.skip != "issue_unchanged":
                # Issues of private or excluded projects are dropped unread; only the cursor moves.
                self.store.save_issue(
                    IssueRow(issue.project, issue.iid, issue.web_url, issue.updated_at, ()),
                    [],
                    {},
                    staged.cursor,
                )
            self.progress.advance("issues")
            return
        verdicts = [future.result() for future in staged.judged]
        summary.issues_read += 1
        summary.notes_read += staged.notes
        summary.skipped.update(staged.extract_skipped)
        summary.references += len(verdicts)
        passages = {}
        for verdict in verdicts:
            if verdict.status == "accepted":
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
                tuple(v.reference.reference for v in verdicts),
            ),
            [new_signpost(v) for v in verdicts],
            passages,
            staged.cursor,
        )
        self.progress.advance("issues")

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
            if change is not None and change["after"]["status"] == "withdrawn":
                self.summary.withdrawn += 1
