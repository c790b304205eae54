"""Signpost validation: may this reference inform answers, and if so, with which passages?

Checks run in docs/design.md's order and stop at the first failure:

1. ``corpus_rules`` — the target project (and path) against the same rule code indexing uses,
   from metadata only. Nothing of a target's content is fetched before this passes.
2. ``resolves`` — the target exists at the head of its project's default branch, and (for
   commits and merge requests) is still in effect there.
3. ``addresses`` — the target's passages, fenced like answer passages, judged against the
   issue's question by the configured provider. The question is never a passage.

A surviving target yields passages read at the current head sha, cited by permalink to it.

Faults are contained per reference: a check that cannot complete for a reason that will not
change on retry (``CannotCheck``, or a not-found the check did not expect) is a ``resolves``
rejection whose reason starts ``cannot check:``. Any other forge error is transient and
propagates, so the sweep stops before the issue and a later sweep tries it again.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scout.config import DocsSiteConfig
from scout.corpus.index import decode_text
from scout.corpus.passages import Section, split_document, window
from scout.corpus.rst_ids import AUTO_ID
from scout.corpus.rules import MAX_FILE_BYTES, CorpusRules
from scout.doc_paths import is_documentation
from scout.errors import CannotCheck, ForgeError, NotFound
from scout.forge.base import FileDiff, Forge, Project, count_lines, lines_fragment
from scout.forge.cached import CachedForge
from scout.providers.base import Provider
from scout.records import PassageRecord, Source
from scout.safe_text import one_line
from scout.verdict import Check, CheckOutcome, Kind, Status, Verdict
from signposts.diffs import added_lines, file_change, map_lines, meaningful, whole_file_diff
from signposts.docs_map import detect_generator, find_source, source_candidates
from signposts.references import Reference

MAX_QUESTION_CHARS = 2_000  # title plus the opening of the description: enough to judge, bounded
MAX_TARGET_PASSAGES = 4  # per target: a signpost adds a few passages, never a whole project
ADDRESSES = "addresses the issue's question"
NOT_ADDRESSES = "does not address the issue's question"
_LEXICAL = re.compile(r"the target shares (\d{1,6}) of (\d{1,6}) question terms \(lexical check\)")
CANNOT_CHECK = "cannot check: "
LIVE_DEADLINE = 5.0  # for one page's whole live check, redirects included
LIVE_HOPS = 4
REDIRECTS = (301, 302, 303, 307, 308)


class _Failed(Exception):
    def __init__(self, check: Check, reason: str) -> None:
        super().__init__(reason)
        self.check = check
        self.reason = reason


@dataclass
class _Target:
    """What a reference resolved to, filled in as the checks go."""

    project: Project | None = None
    path: str | None = None
    lines: tuple[int, int] | None = None
    sha: str | None = None
    key: str | None = None
    passages: list[PassageRecord] = field(default_factory=list)
    note: str | None = None  # what an accepted verdict's reason adds (the page stood in)


def cannot_check(error: ForgeError | str) -> str:
    """The one-line reason of a check that could not complete: ``cannot check: <why>``."""
    why = error if isinstance(error, str) else str(error).removeprefix("forge ")
    if isinstance(error, CannotCheck):
        why = error.detail
    return CANNOT_CHECK + one_line(why, 300)


@dataclass
class Pending:
    """A reference past corpus rules and resolves; ``verdict`` is set when nothing is left to
    judge (a check failed, or there is no question)."""

    reference: Reference
    target: _Target
    checks: list[CheckOutcome]
    question: str | None
    detail: str
    verdict: Verdict | None = None

    @property
    def needs_judgement(self) -> bool:
        return self.verdict is None


def question_of(title: str, description: str | None) -> str:
    """The issue's question for the addresses check: title and the description's opening."""
    text = f"{title.strip()}\n\n{(description or '').strip()}".strip()
    return text[:MAX_QUESTION_CHARS]


class Validator:
    """Validates references against one estate snapshot; forge lookups are memoised per run."""

    def __init__(
        self,
        forge: Forge,
        rules: CorpusRules,
        provider: Provider,
        docs_sites: list[DocsSiteConfig] | tuple[DocsSiteConfig, ...] = (),
        *,
        live_deadline: float = LIVE_DEADLINE,
    ) -> None:
        self.forge = CachedForge.around(forge)
        self.rules = rules
        self.provider = provider
        self.docs_sites = {site.url: site for site in docs_sites}
        self.live_deadline = live_deadline
        self._live: dict[str, str | None] = {}  # docs URL -> why it failed its live check

    # ------------------------------------------------------------------ entry point
    def validate(self, reference: Reference, question: str) -> Verdict:
        return self._run(reference, question)

    def recheck(self, reference: Reference) -> Verdict:
        """Re-validation against a moved head: corpus rules and resolves only.

        The question that was judged lives in issue prose, which is not stored (docs/design.md,
        invariant 1), so an accepted signpost keeps its addresses judgement while its target still
        resolves.
        """
        return self._run(reference, None)

    def _run(self, reference: Reference, question: str | None) -> Verdict:
        return self.judge(self.prepare(reference, question))

    def prepare(self, reference: Reference, question: str | None) -> Pending:
        """Corpus rules and resolves (forge reads: call it from the thread that owns the forge);
        the addresses judgement is left to :meth:`judge`."""
        target = _Target()
        checks: list[CheckOutcome] = []
        try:
            self._corpus_rules(reference, target)
            checks.append(CheckOutcome(Check.CORPUS_RULES, True, "project qualifies"))
            detail = self._resolves(reference, target)
            checks.append(CheckOutcome(Check.RESOLVES, True, detail))
        except _Failed as failed:
            checks.append(CheckOutcome(failed.check, False, failed.reason))
            verdict = self._verdict(reference, target, checks, failed.check, failed.reason)
            return Pending(reference, target, checks, None, detail="", verdict=verdict)
        except (CannotCheck, NotFound) as exc:
            reason = cannot_check(exc)
            checks.append(CheckOutcome(Check.RESOLVES, False, reason))
            verdict = self._verdict(reference, target, checks, Check.RESOLVES, reason)
            return Pending(reference, target, checks, None, detail="", verdict=verdict)
        if question is None:
            verdict = self._verdict(reference, target, checks, None, detail)
            return Pending(reference, target, checks, None, detail=detail, verdict=verdict)
        return Pending(reference, target, checks, question, detail=detail)

    def judge(self, pending: Pending) -> Verdict:
        """The addresses judgement of a prepared reference: it touches only the provider, so
        several may run at once on other threads."""
        if pending.verdict is not None:
            return pending.verdict
        assert pending.question is not None
        checks = list(pending.checks)
        try:
            detail = self._addresses(pending.question, pending.target)
        except _Failed as failed:
            checks.append(CheckOutcome(failed.check, False, failed.reason))
            return self._verdict(
                pending.reference, pending.target, checks, failed.check, failed.reason
            )
        checks.append(CheckOutcome(Check.ADDRESSES, True, detail))
        return self._verdict(pending.reference, pending.target, checks, None, detail)

    def _verdict(
        self,
        reference: Reference,
        target: _Target,
        checks: list[CheckOutcome],
        check: Check | None,
        reason: str,
    ) -> Verdict:
        if check is None and target.note and target.note not in reason:
            reason = f"{reason}; {target.note}"
        return Verdict(
            kind=Kind(reference.kind),
            reference=reference.reference,
            reference_json=reference.to_store(),
            status=Status.REJECTED if check else Status.ACCEPTED,
            check=check,
            reason=reason,
            target_project=target.project.path if target.project else reference.project,
            target_path=target.path,
            target_lines=target.lines,
            target_sha=target.sha,
            target=target.key if check is None else None,
            checks=tuple(checks),
            passages=tuple(target.passages) if check is None else (),
        )

    # ------------------------------------------------------------------ 1. corpus rules
    def _target_project_path(self, reference: Reference) -> str | None:
        if reference.kind == "docs_page":
            site = self.docs_sites.get(reference.docs_site or "")
            return site.project if site else None
        return reference.project

    def _corpus_rules(self, reference: Reference, target: _Target) -> None:
        path = self._target_project_path(reference)
        if path is None:
            raise _Failed(Check.CORPUS_RULES, "no target project")
        # Group membership is decided on the path alone: a project outside the groups is not
        # even looked up.
        inside = self.rules.group(path)
        if not inside:
            raise _Failed(Check.CORPUS_RULES, f"{inside.reason}: {path}")
        try:
            project = self.forge.project(path)
        except NotFound:
            raise _Failed(Check.CORPUS_RULES, f"project_not_found: {path}") from None
        target.project = project
        verdict = self.rules.project(project)
        if not verdict:
            raise _Failed(Check.CORPUS_RULES, f"{verdict.reason}: {path}")
        if reference.kind == "file" and reference.path is not None:
            self._path_rules(reference.path)

    def _path_rules(self, path: str) -> None:
        verdict = self.rules.path(path)
        if not verdict:
            raise _Failed(Check.CORPUS_RULES, f"{verdict.reason}: {path}")

    # ------------------------------------------------------------------ 2. resolves
    def _head(self, project: Project) -> str:
        head = self.forge.head(project)
        if head is None:
            raise _Failed(Check.RESOLVES, "the project has no commits on its default branch")
        return str(head)

    def _resolves(self, reference: Reference, target: _Target) -> str:
        assert target.project is not None
        head = self._head(target.project)
        target.sha = head
        if reference.kind == "file":
            return self._resolve_file(reference, target, head)
        if reference.kind == "commit":
            return self._resolve_commit(reference, target, head)
        if reference.kind == "merge_request":
            return self._resolve_merge_request(reference, target, head)
        return self._resolve_docs_page(reference, target, head)

    def _read_text(self, project: Project, sha: str, path: str) -> str | None:
        # The path actually read, whatever the issue wrote: a rename, a docs mapping or a
        # change's file list may lead somewhere the corpus rules keep out.
        self._path_rules(path)
        try:
            data: bytes = self.forge.read(project, sha, path)
        except NotFound:
            return None
        if len(data) > MAX_FILE_BYTES:
            raise _Failed(Check.CORPUS_RULES, f"file_too_large: {path}")
        text = decode_text(data)
        if text is None:
            raise _Failed(Check.RESOLVES, f"{path} is not a text file")
        return text

    def _resolve_file(self, reference: Reference, target: _Target, head: str) -> str:
        project = target.project
        assert project is not None
        pinned = reference.sha
        path = reference.path
        if reference.ref_path:
            split = self.forge.resolve_ref_path(project, reference.ref_path)
            if split is None:
                raise _Failed(
                    Check.RESOLVES,
                    f"no branch or tag of {project.path} matches {reference.ref_path}",
                )
            path, pinned = split.path, split.sha
            self._path_rules(path)
        assert path is not None
        target.path = path
        lines = reference.lines
        if pinned and pinned != head and lines:
            lines, path = self._map_lines(project, pinned, head, path, lines)
            target.path = path
        text = self._read_text(project, head, path)
        if text is None and self.forge.is_folder(project, head, path):
            # A folder is no signpost (docs/design.md, "Edges of the forms"): said so, rather
            # than "does not exist", which sends an auditor looking for a deleted file.
            raise _Failed(Check.RESOLVES, f"{path} is a folder at {head[:12]}, not a file")
        if text is None:
            raise _Failed(Check.RESOLVES, self._missing(project, path, pinned, head))
        total = count_lines(text.encode("utf-8"))
        if lines and lines[1] > total:
            raise _Failed(
                Check.RESOLVES, f"line {lines[1]} of {path} is past its end ({total} lines)"
            )
        target.lines = lines
        target.key = f"file:{project.path}:{path}{lines_fragment(lines)}"
        target.passages = self._file_passages(project, head, path, text, lines, target.key)
        where = f" L{lines[0]}-{lines[1]}" if lines else ""
        return f"{path}{where} exists at {head[:12]}"

    def _missing(self, project: Project, path: str, pinned: str | None, head: str) -> str:
        """Why a file is not at the head, without contradicting itself: deleted since the sha the
        link pinned (it was there), never there (not at the pinned sha either), or simply absent
        (the link pinned nothing older than the head)."""
        if not pinned or pinned == head:
            return f"{path} does not exist at the head {head[:12]}"
        if self._read_or_none(project, pinned, path) is not None:
            return f"{path} was deleted since {pinned[:12]}"
        return (
            f"{path} does not exist at {pinned[:12]} (the linked sha) nor at the head {head[:12]}"
        )

    def _map_lines(
        self, project: Project, old: str, head: str, path: str, lines: tuple[int, int]
    ) -> tuple[tuple[int, int], str]:
        try:
            diffs: list[FileDiff] = self.forge.compare(project, old, head)
        except NotFound:
            raise _Failed(
                Check.RESOLVES,
                f"{CANNOT_CHECK}the pinned commit {old[:12]} is not in {project.path}",
            ) from None
        diff = file_change(diffs, path, old, head, self._text_at(project))
        if diff is None:
            return lines, path
        if diff.deleted_file:
            raise _Failed(Check.RESOLVES, f"{path} was deleted since {old[:12]}")
        self._path_rules(diff.new_path)  # renamed into an excluded folder: not read
        mapped = map_lines(diff.diff, lines)
        if mapped is None:
            raise _Failed(
                Check.RESOLVES, f"lines {lines[0]}-{lines[1]} of {path} changed since {old[:12]}"
            )
        return mapped, diff.new_path

    def _text_at(self, project: Project) -> Callable[[str, str], str | None]:
        """Reads text at (sha, path) for diffing locally what GitLab's diff limits cut."""

        def read(sha: str, path: str) -> str | None:
            data = self._read_or_none(project, sha, path)
            text = None if data is None else decode_text(data)
            if data is not None and text is None:
                raise CannotCheck(f"{path} at {sha[:12]} is not text to diff")
            return text

        return read

    def _file_passages(
        self,
        project: Project,
        sha: str,
        path: str,
        text: str,
        lines: tuple[int, int] | None,
        key: str,
    ) -> list[PassageRecord]:
        if is_documentation(path):
            sections = split_document(path, text)
            if lines:
                sections = [
                    s for s in sections if s.line_end >= lines[0] and s.line_start <= lines[1]
                ]
            return self._records(project, sha, path, sections[:MAX_TARGET_PASSAGES], "docs", key)
        section = window(text, lines)
        return self._records(project, sha, path, [section], "code", key)

    def _records(
        self,
        project: Project,
        sha: str,
        path: str,
        sections: list[Section],
        source: Source,
        key: str,
    ) -> list[PassageRecord]:
        return [
            PassageRecord(
                project=project.path,
                path=s.path or path,
                sha=sha,
                line_start=s.line_start,
                line_end=s.line_end,
                heading=s.heading or path,
                body=s.body,
                source=source,
                origin="signpost",
                url=self.forge.permalink(project, sha, s.path or path, (s.line_start, s.line_end)),
                target=key,
            )
            for s in sections
            if s.body.strip()
        ]

    def _resolve_commit(self, reference: Reference, target: _Target, head: str) -> str:
        project = target.project
        assert project is not None and reference.sha
        try:
            commit = self.forge.commit(project, reference.sha)
        except NotFound:
            raise _Failed(
                Check.RESOLVES, f"commit {reference.sha[:12]} does not exist in {project.path}"
            ) from None
        try:
            on_head = self.forge.is_ancestor(project, commit.sha, head)
        except NotFound:
            # GitLab answers merge_base 404 "Merge Base not found" for unrelated histories.
            raise _Failed(
                Check.RESOLVES,
                f"{CANNOT_CHECK}no merge base of commit {commit.sha[:12]} and the head {head[:12]}",
            ) from None
        if not on_head:
            raise _Failed(
                Check.RESOLVES,
                f"commit {commit.sha[:12]} is not on the default branch (not merged)",
            )
        diffs = self.forge.commit_diff(project, commit.sha)
        parent = commit.parents[0] if commit.parents else None
        target.key = f"commit:{project.path}@{commit.sha}"
        what = f"commit {commit.sha[:12]}"
        self._in_effect(project, head, diffs, parent, what, target, commit.sha)
        return f"commit {commit.sha[:12]} is on the default branch and still in effect"

    def _resolve_merge_request(self, reference: Reference, target: _Target, head: str) -> str:
        project = target.project
        assert project is not None and reference.iid is not None
        try:
            mr = self.forge.merge_request(project, reference.iid)
        except NotFound:
            raise _Failed(
                Check.RESOLVES, f"merge request !{reference.iid} does not exist"
            ) from None
        if mr.state != "merged":
            raise _Failed(Check.RESOLVES, f"merge request !{mr.iid} is {mr.state}, not merged")
        landed = mr.merge_commit_sha or mr.squash_commit_sha or mr.sha
        if not landed:
            raise _Failed(Check.RESOLVES, f"merge request !{mr.iid} records no merged commit")
        try:
            on_head = self.forge.is_ancestor(project, landed, head)
        except NotFound:
            on_head = False
        if not on_head:
            raise _Failed(
                Check.RESOLVES,
                f"merge request !{mr.iid}'s commit {landed[:12]} is not on the default branch",
            )
        diffs = self.forge.merge_request_diffs(project, mr.iid)
        parent: str | None = None
        if mr.merge_commit_sha or mr.squash_commit_sha:
            parents = self.forge.commit(project, landed).parents
            parent = parents[0] if parents else None
        target.key = f"merge_request:{project.path}!{mr.iid}"
        changed = landed if parent is not None else None
        self._in_effect(project, head, diffs, parent, f"merge request !{mr.iid}", target, changed)
        return f"merge request !{mr.iid} is merged and still in effect"

    def _in_effect(
        self,
        project: Project,
        head: str,
        diffs: list[FileDiff],
        parent: str | None,
        what: str,
        target: _Target,
        changed: str | None = None,
    ) -> None:
        """Keep windows around the change's added lines that still stand at the head.

        ``changed`` is the commit whose first parent is ``parent``: with both, a file diff GitLab
        cut is diffed locally; a diff still incomplete never yields "adds no lines".
        """
        standing: list[tuple[str, str, list[int]]] = []
        added_any = False
        partial = not getattr(diffs, "complete", True)
        for diff in diffs:
            if diff.deleted_file or not self.rules.path(diff.new_path):
                continue
            if not diff.complete:
                if changed is None or (parent is None and not diff.new_file):
                    partial = True
                    continue
                diff = whole_file_diff(diff, parent or "", changed, self._text_at(project))
            added = {text.strip() for _, text in added_lines(diff.diff) if meaningful(text)}
            if not added:
                continue
            added_any = True
            text = self._read_text(project, head, diff.new_path)
            if text is None:
                continue
            numbers = [
                n for n, line in enumerate(text.split("\n"), start=1) if line.strip() in added
            ]
            if numbers:
                standing.append((diff.new_path, text, numbers))
        if partial and not standing:
            raise CannotCheck(f"GitLab's diff of {what} is over its limits")
        if not added_any:
            raise _Failed(Check.RESOLVES, f"{what} adds no lines that could still stand")
        if not standing:
            how = (
                "was reverted"
                if self._reverted(project, head, diffs, parent)
                else ("was superseded: its added lines were all rewritten since")
            )
            raise _Failed(Check.RESOLVES, f"{what} {how}")
        records: list[PassageRecord] = []
        first_path, _, first_numbers = standing[0]
        target.path = first_path
        target.lines = (min(first_numbers), max(first_numbers))
        for path, text, numbers in standing:
            lines = (min(numbers), max(numbers))
            records += self._file_passages(project, head, path, text, lines, target.key or "")
            if len(records) >= MAX_TARGET_PASSAGES:
                break
        target.passages = records[:MAX_TARGET_PASSAGES]

    def _reverted(
        self, project: Project, head: str, diffs: list[FileDiff], parent: str | None
    ) -> bool:
        """Whether every file the change touched is back to its content before the change."""
        if parent is None:
            return False
        for diff in diffs:
            if not (self.rules.path(diff.new_path) and self.rules.path(diff.old_path)):
                continue  # an excluded file's content is not read, not even to compare it
            now_text = self._read_or_none(project, head, diff.new_path)
            before = None if diff.new_file else self._read_or_none(project, parent, diff.old_path)
            if now_text != before:
                return False
        return True

    def _read_or_none(self, project: Project, sha: str, path: str) -> bytes | None:
        self._path_rules(path)
        try:
            return bytes(self.forge.read(project, sha, path))
        except NotFound:
            return None

    def _resolve_docs_page(self, reference: Reference, target: _Target, head: str) -> str:
        project = target.project
        site = self.docs_sites.get(reference.docs_site or "")
        assert project is not None and site is not None
        candidate, text = self._docs_source(project, head, reference.path or "", site)
        if candidate is None or text is None:
            raise _Failed(
                Check.RESOLVES, f"no source file under {site.root} builds {reference.url}"
            )
        target.path = candidate
        sections = split_document(candidate, text, self._include_reader(project, head))
        sections = [s for s in sections if s.body.strip()]
        anchor = reference.anchor
        if anchor and any(s.has_anchor(anchor) for s in sections):
            sections = [s for s in sections if s.has_anchor(anchor)]
        elif anchor and _numbered_by_docutils(anchor, candidate, site):
            # Sphinx numbers ids (`#id7`) as docutils meets elements; where Scout cannot place
            # the number (an include or a parse error moved it), the page stands in, and says so.
            target.note = (
                f"#{anchor} is an id Sphinx numbered that cannot be placed: the page is the target"
            )
            anchor = None
        elif anchor:
            raise _Failed(Check.RESOLVES, f"#{anchor} matches no heading of {candidate}")
        if site.check_live:
            self._check_live(reference.url or "", site.url)
        chosen = sections[:MAX_TARGET_PASSAGES]
        own = [s for s in chosen if s.path is None]  # included passages cite their own file
        if own:
            target.lines = (own[0].line_start, own[-1].line_end)
        target.key = f"docs_page:{project.path}:{candidate}" + (f"#{anchor}" if anchor else "")
        target.passages = self._records(project, head, candidate, chosen, "docs", target.key)
        built = f"{reference.url} is built from {candidate} at {head[:12]}"
        return f"{built}; {target.note}" if target.note else built

    def _docs_source(
        self, project: Project, head: str, page: str, site: DocsSiteConfig
    ) -> tuple[str | None, str | None]:
        """The source file (and its text) that builds a docs page: the generator's usual
        candidates first, then, from the tree listing, the file whose front matter or path the
        generator publishes at that URL (`signposts.docs_map`)."""
        for candidate in source_candidates(page, site.root, site.generator):
            if self.rules.path(candidate):
                text = self._read_text(project, head, candidate)
                if text is not None:
                    return candidate, text
        paths = [e.path for e in self.forge.files(project, head) if e.kind == "blob"]
        generator: str = site.generator
        if generator == "auto":
            generator = detect_generator(paths, site.root) or "auto"

        def read(path: str) -> str | None:
            if not self.rules.path(path):
                return None
            try:
                return self._read_text(project, head, path)
            except _Failed:
                return None

        allowed = [p for p in paths if self.rules.path(p)]
        found = find_source(page, site.root, generator, allowed, read)
        return (found, read(found)) if found is not None else (None, None)

    def _include_reader(self, project: Project, head: str) -> Callable[[str], str | None]:
        """Reads the files a docs page includes: regular files the corpus rules allow (the
        tree listing, fetched only when a page has an include, tells symlinks apart)."""
        listing: dict[str, str] = {}

        def read(path: str) -> str | None:
            if not listing:
                listing.update({e.path: e.kind for e in self.forge.files(project, head)})
            if listing.get(path) != "blob" or not self.rules.path(path):
                return None
            try:
                return self._read_text(project, head, path)
            except _Failed:
                return None

        return read

    def _check_live(self, url: str, site_url: str) -> None:
        """The page answers 200 on the docs site itself, asked once per run (memoised)."""
        page = url.split("#", 1)[0]  # the anchor is never sent: one page, one check
        if page not in self._live:
            self._live[page] = live_failure(page, site_url, self.live_deadline)
        failure = self._live[page]
        if failure is not None:
            raise _Failed(Check.RESOLVES, failure)

    # ------------------------------------------------------------------ 3. addresses
    def _addresses(self, question: str, target: _Target) -> str:
        from scout.compose.prompt import addresses_task

        if not target.passages:
            raise _Failed(Check.ADDRESSES, "the target has no text to judge")
        output = self.provider.run(addresses_task(question, target.passages))
        # A model's reason paraphrases the question, which is issue prose: only a fixed reason is
        # kept, plus the offline check's two counts (digits only) when that is what answered.
        lexical = _LEXICAL.fullmatch(str(output.reason))
        counts = (
            f" (the target shares {lexical[1]} of {lexical[2]} question terms, lexical check)"
            if lexical
            else ""
        )
        if not output.addresses:
            raise _Failed(Check.ADDRESSES, NOT_ADDRESSES + counts)
        return ADDRESSES + counts


def _numbered_by_docutils(anchor: str, source: str, site: DocsSiteConfig) -> bool:
    """Whether ``anchor`` is an id Sphinx numbers (``id7``) on a page docutils builds: a reST
    source, or any source of a site configured as Sphinx (MyST Markdown goes through docutils)."""
    docutils = source.endswith((".rst", ".txt")) or site.generator == "sphinx"
    return docutils and AUTO_ID.fullmatch(anchor) is not None


# ---------------------------------------------------------------------- live docs check
def live_failure(url: str, site_url: str, deadline: float = LIVE_DEADLINE) -> str | None:
    """Why the docs site does not serve ``url`` (None: it answers 200), within one deadline.

    Only the status is asked for (HEAD, or a GET closed before its body when HEAD is refused),
    and redirects are followed only on the site. A per-read timeout cannot bound a server that
    drips its answer a byte at a time, so the probe runs in a daemon thread and the deadline is
    waited for here: the sweep goes on, and a dripping probe dies with the process.
    """
    outcome: list[str | None] = []
    probe = threading.Thread(
        target=lambda: outcome.append(_probe(url, site_url, deadline)),
        name="scout-live-check",
        daemon=True,
    )
    probe.start()
    probe.join(deadline)
    if not outcome:
        return f"{url} did not answer within {deadline:g} s"
    return outcome[0]


def _probe(url: str, site_url: str, deadline: float) -> str | None:
    import httpx

    with httpx.Client(timeout=deadline, follow_redirects=False) as client:
        try:
            for _hop in range(LIVE_HOPS):
                status, location = _status(client, url)
                if status in REDIRECTS:
                    target = str(httpx.URL(url).join(location))
                    if not target.startswith(site_url):
                        return f"{url} redirects off the docs site"
                    url = target
                    continue
                return None if status == 200 else f"{url} answered {status}"
        except httpx.HTTPError as exc:
            return f"{url} did not answer: {exc.__class__.__name__}"
    return f"{url} redirects too many times"


def _status(client: Any, url: str) -> tuple[int, str]:
    """HEAD; a server that refuses HEAD gets a GET whose body is never read."""
    response = client.head(url)
    if response.status_code in (405, 501):
        with client.stream("GET", url) as streamed:
            return streamed.status_code, streamed.headers.get("location", "")
    return response.status_code, response.headers.get("location", "")
