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

With a model provider each addresses judgement is a model call, so judgements run on a second
bounded pool (``[ingest] concurrency`` at once), up to ``4 x concurrency`` issues ahead of the one
being committed; forge reads (corpus rules, resolves) stay on the sweeping thread, which owns the
forge's git readers, and commits still happen in issue order, so the cursor never passes an
issue whose verdicts are not stored. On stop, judgements not yet started are dropped and the
issues whose judgements are all in are committed.

Faults are contained (docs/design.md, "Faults are contained per reference and per project"): a check
that can never complete is a ``cannot check:`` rejection (the validator decides); any other forge
error stops the sweep before the issue it hit, keeping every whole issue before it, and exits 5.
An issue that stopped ``MAX_ISSUE_FAILURES`` sweeps in a row is recorded with its references
rejected ``cannot check: <error>`` and passed. Re-validation never withdraws on a read error: a
project whose repository cannot be read keeps its accepted signposts and is named in the error.
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

from ingest.recheck import INDEX_RULES_SETTING, recheck_one
from scout.config import Config
from scout.corpus.passages import PASSAGES_FORMAT
from scout.corpus.rules import CorpusRules
from scout.errors import ForgeError, NotFound, Unreadable
from scout.forge.base import Forge, Issue, Note
from scout.forge.cached import CachedForge
from scout.progress import Progress, as_progress
from scout.providers.base import Provider
from scout.store import IssueRow, PassageRecord, SignpostRow, Store
from scout.verdict import Check, CheckOutcome, Kind, Status, Verdict
from signposts.extract import extract_issue
from signposts.references import Reference, extract_context
from signposts.validate import Pending, Validator, cannot_check, question_of

log = logging.getLogger("scout.sweep")
# Notes requests in flight at once, and how many issues ahead of the one being written they are
# fetched: bounded, so memory stays flat in the number of issues.
CONCURRENCY = 4
READ_AHEAD = 16
MAX_ISSUE_FAILURES = 3  # sweeps in a row an issue may stop before it is recorded and passed
# The corpus rules' fingerprint and the passages' format accepted signposts were checked by.
RULES_SETTING = "sweep_rules"


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
    rejected: Counter[str] = field(default_factory=lambda: Counter(dict.fromkeys(Check, 0)))
    withdrawn: int = 0
    revalidated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    forge_requests: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: bool = False
    failed: dict[str, str] = field(default_factory=dict)  # project -> read error (re-validation)
    # [retrieval.embeddings]: what the pass after the sweep embedded (None: no model), or why
    # it failed (the sweep's work is kept; ``scout sweep`` then exits 6)
    embeddings: dict[str, Any] | None = None
    embeddings_error: str | None = None

    def describe(self) -> str:
        """The summary as a person reads it (``scout sweep``, the worker's log)."""
        result = self.to_json()
        rejected = result["rejected"]
        return (
            f"read {result['issues_read']} issue(s) and {result['notes_read']} note(s); "
            f"{result['references']} reference(s): {result['accepted']} accepted, "
            f"{sum(rejected.values())} rejected ("
            + ", ".join(f"{k} {v}" for k, v in rejected.items())
            + f"); {result['withdrawn']} withdrawn in {result['seconds']}s"
        )

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
            **({} if self.embeddings is None else {"embeddings": self.embeddings}),
            **(
                {} if self.embeddings_error is None else {"embeddings_error": self.embeddings_error}
            ),
        }


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
        self._extracted: tuple[Issue, list[Reference]] | None = None

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
        self.summary.forge_requests = dict(sorted(self.forge.requests.items()))
        if self.summary.failed:
            names = "; ".join(f"{p} ({why})" for p, why in sorted(self.summary.failed.items()))
            raise Unreadable(
                f"issues swept, but could not re-validate signposts into {names}: they are "
                "kept as they were"
            )
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
                    self._stage_contained(ahead, scope, notes, judges, staged)
                    self._commit_ready(staged, self.judge_ahead)
            while window and not self.stop.is_set():
                ahead, notes = window.popleft()
                self._stage_contained(ahead, scope, notes, judges, staged)
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

    def _stage_contained(
        self,
        issue: Issue,
        scope: str,
        notes_ahead: Future[list[Note]] | None,
        judges: ThreadPoolExecutor,
        staged: deque[_Staged],
    ) -> None:
        """Stage one issue; a forge error stops the sweep here, unless this issue keeps failing.

        Stopping commits every issue staged before this one first (waiting for their
        judgements), so the cursor ends right before the issue that failed.
        """
        self._extracted = None
        try:
            staged.append(self._stage(issue, scope, notes_ahead, judges))
            return
        except ForgeError as exc:
            failure = exc
        self._commit_ready(staged, 0)
        why = str(failure).removeprefix("forge ")
        failures = self.store.issue_failed(issue.project, issue.iid, issue.updated_at, why)
        where = f"{issue.project}#{issue.iid}"
        if failures < MAX_ISSUE_FAILURES:
            message = str(failure).removeprefix(f"forge {failure.reason}: ")
            raise ForgeError(
                failure.reason,
                f"{message}; the sweep stopped before {where} (failure {failures} of "
                f"{MAX_ISSUE_FAILURES}), every issue before it is kept",
            ) from failure
        log.warning("%s failed %d sweeps in a row, passed: %s", where, failures, why)
        self._pass_issue(issue, scope, why)
        self._staged_keys.discard((issue.project, issue.iid, issue.updated_at))

    def _pass_issue(self, issue: Issue, scope: str, why: str) -> None:
        """Record an issue that keeps failing with its references rejected ``cannot check:``."""
        if self._extracted is not None and self._extracted[0] is issue:
            references = self._extracted[1]
        else:
            # The failure came before extraction (its notes could not be read): what the
            # title and description hold is all that can be recorded.
            context = extract_context(self.config, issue.project)
            references = extract_issue(issue.title, issue.description, [], context).references
        reason = cannot_check(why)
        verdicts = [
            Verdict(
                kind=Kind(ref.kind),
                reference=ref.reference,
                reference_json=ref.to_store(),
                status=Status.REJECTED,
                check=Check.RESOLVES,
                reason=reason,
                target_project=ref.project,
                checks=(CheckOutcome(Check.RESOLVES, False, reason),),
            )
            for ref in references
        ]
        self.summary.skipped["issue_failed_repeatedly"] += 1
        self._save(issue, verdicts, (scope, issue.updated_at))

    def _notes_ahead(self, pool: ThreadPoolExecutor, issue: Issue) -> Future[list[Note]] | None:
        """Start fetching the notes of an issue the sweep will read; None if it will not."""
        if issue.user_notes_count <= 0:
            return None
        stored = self.store.issue(issue.project, issue.iid)
        if stored is not None and stored.updated_at == issue.updated_at:
            return None
        if self._project_qualifies(issue.project) is not None or self._confidential(issue):
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

    def _confidential(self, issue: Issue) -> bool:
        """A confidential issue the config does not let the sweep read (its members' business)."""
        return issue.confidential and not self.config.ingest.include_confidential

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
        if skip is None and self._confidential(issue):
            skip = "issue_confidential"
        if skip is not None:
            staged.skip = skip
            return staged
        notes: list[str] = []
        internal = 0
        if issue.user_notes_count > 0:
            fetched = list(notes_ahead.result() if notes_ahead else self.forge.issue_notes(issue))
            hidden = not self.config.ingest.include_confidential
            notes = [note.body for note in fetched if not (hidden and note.internal)]
            internal = len(fetched) - len(notes)
            staged.notes = len(notes)
        extraction = extract_issue(
            issue.title, issue.description, notes, extract_context(self.config, issue.project)
        )
        staged.extract_skipped = extraction.skipped
        if internal:
            staged.extract_skipped["note_internal"] += internal
        self._extracted = (issue, list(extraction.references))
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
        summary.issues_read += 1
        summary.notes_read += staged.notes
        summary.skipped.update(staged.extract_skipped)
        self._save(issue, [future.result() for future in staged.judged], staged.cursor)
        self.progress.advance("issues")

    def _save(self, issue: Issue, verdicts: list[Verdict], cursor: tuple[str, str]) -> None:
        """Count an issue's verdicts and store them with their passages, moving the cursor."""
        summary = self.summary
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

    # ------------------------------------------------------------------ re-validation
    def _moved(self, row: SignpostRow) -> bool:
        """Whether a signpost's target project moved (head or rules) since it was last judged.

        Withdrawn signposts count too, once their project has a new head: a target that vanished
        may be back. A project the forge confirms gone withdraws accepted signposts into it; a
        project that cannot be read raises (a fault, never a verdict).
        """
        if row.target_project is None:
            return False
        try:
            project = self.forge.project(row.target_project)
        except NotFound:
            return row.withdrawn_at is None
        qualifies = bool(self.rules.project(project))
        head = self.forge.head(project)
        if row.withdrawn_at is not None:
            return qualifies and head is not None and head != row.target_sha
        return head != row.target_sha or not qualifies

    def _revalidate(self) -> None:
        """Accepted signposts whose target moved: re-read at the new head, or withdrawn; withdrawn
        ones whose project moved: reinstated when their target is back.

        After a change of corpus rules every accepted signpost counts as moved: a target the
        new rules keep out must go without waiting for a commit. So it does after a change of
        how files become passages (``PASSAGES_FORMAT``), as ``scout index`` re-reads every
        project then: a signposted file's passages must not keep the old cut for good.
        """
        checked_by = f"{self.rules.fingerprint}/passages-{PASSAGES_FORMAT}"
        before = self.store.setting(RULES_SETTING)
        rules_changed = before is not None and before != checked_by
        rows = self.store.signposts(status="accepted") + self.store.signposts(
            status="rejected", withdrawn=True
        )
        for row in rows:
            if self.stop.is_set():
                return
            project = row.target_project or "?"
            if project in self.summary.failed:
                continue
            try:
                if not (rules_changed and row.withdrawn_at is None) and not self._moved(row):
                    continue
                change = recheck_one(self.store, self.validator, row, rewrite=rules_changed)
            except ForgeError as exc:
                if exc.reason in ("unreachable", "rate limited"):
                    raise
                self.summary.failed[project] = str(exc).removeprefix("forge ")
                log.warning("could not re-validate signposts into %s: %s", project, exc)
                continue
            self.summary.revalidated += 1
            if change is not None and change.after.status == Status.WITHDRAWN:
                self.summary.withdrawn += 1
        if before != checked_by and not self.summary.failed:
            # a project that could not be read is re-checked against the new rules next time
            self.store.set_setting(RULES_SETTING, checked_by)
            # what these rules withdrew, the next index judges again once the rules change back
            self.store.set_setting(INDEX_RULES_SETTING, "")
