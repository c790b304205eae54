"""``scout index``: bring the store's corpus in line with the estate's default-branch heads.

A project is re-read only when its head moved (or its metadata changed); its passages are replaced
in one transaction, so a failure half-way leaves the previous passages in place. A project that no
longer qualifies, or that the forge confirms is gone, loses its passages. A project whose
repository cannot be read (a read error is a fault, not a verdict) keeps its passages while the
other projects are indexed; the run then reports it (``IndexSummary.fault``, exit 5). A failure of
the forge itself (unreachable, rate limited beyond its budget) stops the run: the store is left as
the last good run made it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from scout.config import DocsSiteConfig
from scout.corpus.budget import SPLIT_BUDGET_SECONDS, Clock, SplitTooSlow, split_budget
from scout.corpus.passages import PASSAGES_FORMAT, redirect_stub, split_document
from scout.corpus.rules import MAX_FILE_BYTES, CorpusRules
from scout.errors import (
    CannotCheck,
    ConfigError,
    ForgeError,
    ForgeReason,
    NotFound,
    Unreadable,
)
from scout.forge.base import FileEntry, Forge, Project
from scout.progress import Progress, as_progress
from scout.store import PassageRecord, ProjectRow, Store, now

log = logging.getLogger("scout.index")
# Forge failures that are about the forge as a whole, not one project: they stop the run.
GLOBAL_FAULTS: frozenset[ForgeReason] = frozenset({"unreachable", "rate limited"})


class _Stopped(Exception):
    """Raised inside a run when its stop event is set; the run returns with ``stopped``."""


@dataclass
class IndexSummary:
    projects_indexed: int = 0
    projects_unchanged: int = 0
    projects_removed: int = 0
    passages: int = 0
    seconds: float = 0.0
    skipped: Counter[str] = field(default_factory=Counter)
    forge_requests: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # project -> why it could not be read
    config_problem: str | None = None  # a docs site on a project the rules keep out

    def fault(self) -> ForgeError | ConfigError | None:
        """The error to exit with when a docs site names a project the rules keep out, or some
        project could not be read (its passages were kept)."""
        if self.config_problem is not None:
            return ConfigError(self.config_problem)
        if not self.failed:
            return None
        names = "; ".join(f"{path} ({why})" for path, why in sorted(self.failed.items()))
        return Unreadable(
            f"could not read {len(self.failed)} project(s), their passages are kept and the "
            f"others were indexed: {names}"
        )

    signposts_withdrawn: int = 0
    # withdrawn by the corpus rules, back now that the rules let their targets in (ingest.recheck)
    signposts_reinstated: int = 0
    stopped: bool = False  # a stop (SIGTERM) ended the run; the project in flight was not written

    def describe(self) -> str:
        """The summary as a person reads it (``scout index``, the worker's log)."""
        result = self.to_json()
        line = (
            f"indexed {result['projects_indexed']} project(s), "
            f"{result['projects_unchanged']} unchanged, "
            f"{result['projects_removed']} removed; {result['passages']} passage(s) written "
            f"in {result['seconds']}s"
        )
        if self.stopped:
            line += " (stopped: the project being read keeps its previous passages)"
        if result["skipped"]:
            line += "\nskipped: " + ", ".join(f"{k} {v}" for k, v in result["skipped"].items())
        return line

    def to_json(self) -> dict[str, Any]:
        return {
            "projects_indexed": self.projects_indexed,
            "projects_unchanged": self.projects_unchanged,
            "projects_removed": self.projects_removed,
            "passages": self.passages,
            "seconds": round(self.seconds, 3),
            "skipped": dict(sorted(self.skipped.items())),
            "forge_requests": self.forge_requests,
            "signposts_withdrawn": self.signposts_withdrawn,
            "signposts_reinstated": self.signposts_reinstated,
        }


def decode_text(data: bytes) -> str | None:
    """UTF-8 text, or None for binary or non-UTF-8 content (which is skipped, not guessed at)."""
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def project_passages(
    forge: Forge,
    rules: CorpusRules,
    project: Project,
    sha: str,
    skipped: Counter[str],
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    *,
    split_seconds: float = SPLIT_BUDGET_SECONDS,
    split_clock: Clock = time.thread_time,
) -> Iterator[PassageRecord]:
    """The corpus passages of one project at one sha; skipped files are counted (a file whose
    splitting runs past `split_seconds` of `split_clock` as `file_too_slow`). A line per skipped
    file is for debugging only: a worker's log gets the counts."""
    entries: list[FileEntry] = sorted(forge.files(project, sha), key=lambda e: e.path)
    by_path = {entry.path: entry for entry in entries}
    included: set[tuple[str, tuple[int, int]]] = set()

    def read_include(path: str) -> str | None:
        # Only regular files the corpus rules allow (never a symlink, never outside the
        # repository), and not documentation that is indexed in its own right: that file's
        # passages are already in the store once, cited at that file.
        entry = by_path.get(path)
        if entry is None or entry.kind != "blob" or entry.size > MAX_FILE_BYTES:
            return None
        if not rules.path(path) or rules.file(entry):
            return None
        try:
            return decode_text(forge.read(project, sha, path))
        except (NotFound, CannotCheck):
            return None

    for entry in entries:
        if stop is not None and stop.is_set():
            raise _Stopped
        verdict = rules.file(entry)
        if not verdict:
            if verdict.reason != "file_not_documentation":
                skipped[verdict.reason or "?"] += 1
                log.debug("skipped %s:%s (%s)", project.path, entry.path, verdict.reason)
            continue
        try:
            data = forge.read(project, sha, entry.path)
        except NotFound:
            skipped["file_vanished"] += 1
            continue
        except CannotCheck as exc:
            # One file that will never read (corrupt object, over the read limit) must not keep
            # its whole project stale: it is left out and counted.
            skipped["file_unreadable"] += 1
            log.debug("skipped %s:%s (%s)", project.path, entry.path, exc)
            continue
        if progress is not None:
            progress.advance("files")
        text = decode_text(data)
        if text is None:
            skipped["file_not_utf8"] += 1
            log.debug("skipped %s:%s (binary or not UTF-8)", project.path, entry.path)
            continue
        try:
            with split_budget(split_seconds, split_clock):
                sections = split_document(entry.path, text, read_include)
        except SplitTooSlow:
            # Linear patterns keep this rare; one file must never stall its project's index.
            skipped["file_too_slow"] += 1
            log.warning(
                "skipped %s:%s (over the %g s splitting budget)",
                project.path,
                entry.path,
                split_seconds,
            )
            continue
        if redirect_stub(sections):
            skipped["redirect_stub"] += 1
            log.debug("skipped %s:%s (a redirect stub)", project.path, entry.path)
            continue
        for section in sections:
            lines = (section.line_start, section.line_end)
            path = section.path or entry.path
            if section.path is not None:  # a file two pages include is indexed once
                if (path, lines) in included:
                    continue
                included.add((path, lines))
            yield PassageRecord(
                project=project.path,
                path=path,
                sha=sha,
                line_start=section.line_start,
                line_end=section.line_end,
                heading=section.heading,
                body=section.body,
                source="docs",
                origin="corpus",
                url=forge.permalink(project, sha, path, lines),
            )


def rejudge_targets(
    store: Store,
    rules: CorpusRules,
    listed: dict[str, Project],
    progress: Callable[[str], None] = lambda _message: None,
) -> int:
    """Withdraw accepted signposts whose target the corpus rules now keep out; how many.

    Metadata only (the listing's projects, stored paths): a rule change takes effect on signpost
    targets at the next index, as it does on the corpus. A target project missing from the
    listing is left to the sweep, which looks it up.
    """
    withdrawn = 0
    for row in store.signposts(status="accepted"):
        path = row.target_project
        if path is None:
            continue
        verdict = rules.group(path)
        if verdict and path in listed:
            verdict = rules.project(listed[path])
        failed = None if verdict else f"{verdict.reason}: {path}"
        if failed is None and row.target:
            read = {row.target_path} | {p.path for p in store.target_passages(row.target)}
            for file in sorted(p for p in read if p):
                file_verdict = rules.path(file)
                if not file_verdict:
                    failed = f"{file_verdict.reason}: {file}"
                    break
        if failed is None:
            continue
        checks = json.dumps([{"check": "corpus_rules", "ok": False, "detail": failed}])
        store.withdraw(row.id, "corpus_rules", failed, checks)
        withdrawn += 1
        progress(f"withdrew signpost {row.id} ({failed})")
    return withdrawn


def docs_site_problem(
    sites: Sequence[DocsSiteConfig], rules: CorpusRules, listed: dict[str, Project]
) -> tuple[str, bool] | None:
    """The first docs site whose project is not a qualifying project, as a message, and whether
    the project is missing from the estate altogether (a typo) rather than kept out by the rules.
    Either way its pages could never map to sources: every signpost to it would be rejected."""
    for site in sites:
        project = listed.get(site.project.strip("/"))
        verdict = rules.project(project) if project else rules.group(site.project)
        why = verdict.reason if not verdict else None if project else "not in the estate"
        if why is not None:
            message = (
                f"[[docs_site]] {site.url}: project {site.project!r} is not a qualifying project "
                f"({why}); fix docs_site.project or the corpus rules"
            )
            return message, project is None
    return None


def index_estate(
    forge: Forge,
    store: Store,
    rules: CorpusRules,
    *,
    progress: Progress | Callable[[str], None] | None = None,
    docs_sites: Sequence[DocsSiteConfig] = (),
    stop: threading.Event | None = None,
) -> IndexSummary:
    """Bring the store in line with the estate. The whole listing is read before anything is
    written, so a configured group that is not there (GroupNotFound, exit 3) or a docs site on
    no qualifying project (ConfigError) removes nothing. ``stop`` ends the run between projects
    (and inside one, between files): the project being read keeps its previous passages."""
    started = time.monotonic()
    report = as_progress(progress)
    summary = IndexSummary()
    stored = store.projects()
    seen: dict[str, Project] = {}
    # listed whole first, so progress has a total and an ETA (the listing is pages of ids and
    # names, small beside reading the projects' files)
    listed = list(forge.projects())
    report.phase("projects", len(listed))
    report.phase("files")
    for project in listed:
        report.advance("projects")
        seen[project.path] = project
    problem = docs_site_problem(docs_sites, rules, seen)
    if problem is not None and problem[1]:
        raise ConfigError(f"{problem[0]} (nothing was removed)")
    # A site on a project the rules keep out (turned private, excluded) is a mistake too, but
    # that project's passages must still go: the run goes on, and ends in the ConfigError.
    summary.config_problem = None if problem is None else f"{problem[0]} (the estate was indexed)"
    try:
        _index_listed(forge, store, rules, seen, stored, summary, report, stop)
    except _Stopped:
        summary.stopped = True
    summary.seconds = time.monotonic() - started
    summary.forge_requests = dict(sorted(forge.requests.items()))
    return summary


def _index_listed(
    forge: Forge,
    store: Store,
    rules: CorpusRules,
    seen: dict[str, Project],
    stored: dict[str, ProjectRow],
    summary: IndexSummary,
    report: Progress,
    stop: threading.Event | None,
) -> None:
    for project in seen.values():
        if stop is not None and stop.is_set():
            raise _Stopped
        verdict = rules.project(project)
        if not verdict:
            summary.skipped[verdict.reason or "?"] += 1
            if project.path in stored:
                store.remove_project(project.path)
                summary.projects_removed += 1
                report.note(f"removed {project.path} ({verdict.reason})")
            continue
        try:
            _index_project(forge, store, rules, project, stored, summary, report, stop)
        except ForgeError as exc:
            if exc.reason in GLOBAL_FAULTS:
                raise
            summary.failed[project.path] = str(exc).removeprefix("forge ")
            # info, not a warning: the run's one error line (Summary.fault) names every project
            # that could not be read and why, so a warning here would say it twice
            log.info("could not read %s, its passages are kept: %s", project.path, exc)
            report.note(f"could not read {project.path}: its passages are kept")
    for path in sorted(set(stored) - set(seen)):
        # Offset pages shift when a project goes away mid-listing, so one missing from the
        # listing may still exist: it loses its passages only when the forge says it is gone.
        try:
            if rules.project(forge.project(path)):
                continue
        except NotFound:
            pass
        except ForgeError as exc:
            if exc.reason in GLOBAL_FAULTS:
                raise
            summary.failed[path] = str(exc).removeprefix("forge ")
            continue
        store.remove_project(path)
        summary.projects_removed += 1
        report.note(f"removed {path} (no longer in the estate)")
    summary.signposts_withdrawn = rejudge_targets(store, rules, seen, report.note)


def _index_project(
    forge: Forge,
    store: Store,
    rules: CorpusRules,
    project: Project,
    stored: dict[str, ProjectRow],
    summary: IndexSummary,
    report: Progress,
    stop: threading.Event | None = None,
) -> None:
    """Bring one qualifying project to its head; on a ForgeError (or a stop) its passages stay."""
    try:
        head = forge.head(project)
    except NotFound:
        head = None
    if head is None:
        summary.skipped["project_empty"] += 1
        log.info("skipped %s (no commits on its default branch)", project.path)
        if project.path in stored:
            store.remove_project(project.path)
            summary.projects_removed += 1
        return
    before = stored.get(project.path)
    row = ProjectRow(
        path=project.path,
        visibility=project.visibility,
        archived=project.archived,
        default_branch=project.default_branch,
        web_url=project.web_url,
        indexed_sha=head,
        indexed_at=now(),
        # the rules it was read under, and how its files were cut into passages
        rules=f"{rules.fingerprint}/passages-{PASSAGES_FORMAT}",
    )
    if (
        before is not None
        and before.indexed_sha == head
        and before.web_url == row.web_url
        and before.rules == row.rules
    ):
        summary.projects_unchanged += 1
        return
    report.note(f"indexing {project.path} at {head[:12]}")
    # Read everything first: the write transaction must not wait on the forge (an archive
    # download would hold the database's write lock and stall a concurrent sweep).
    passages = list(project_passages(forge, rules, project, head, summary.skipped, report, stop))
    count = store.replace_project(row, passages)
    summary.projects_indexed += 1
    summary.passages += count
