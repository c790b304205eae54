"""Signpost validation: may this reference inform answers, and if so, with which passages?

Checks run in docs/design.md's order and stop at the first failure:

1. ``corpus_rules`` — the target project (and path) against the same rule code indexing uses,
   from metadata only. Nothing of a target's content is fetched before this passes.
2. ``resolves`` — the target exists at the head of its project's default branch, and (for
   commits and merge requests) is still in effect there.
3. ``addresses`` — the target's passages, fenced like answer passages, judged against the
   issue's question by the configured provider. The question is never a passage.

A surviving target yields passages read at the current head sha, cited by permalink to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scout.config import DocsSiteConfig
from scout.corpus.index import decode_text
from scout.corpus.passages import Section, split_document, window
from scout.corpus.rules import MAX_FILE_BYTES, CorpusRules, is_documentation
from scout.errors import NotFound
from scout.forge.base import FileDiff, Forge, Project, count_lines, lines_fragment
from scout.forge.cached import CachedForge
from scout.providers.base import Provider
from scout.store import PassageRecord
from scout.verdict import Check, CheckOutcome, Kind, Status, Verdict
from signposts.diffs import added_lines, map_lines, meaningful
from signposts.docs_map import source_candidates
from signposts.references import Reference

MAX_QUESTION_CHARS = 2_000  # title plus the opening of the description: enough to judge, bounded
MAX_TARGET_PASSAGES = 4  # per target: a signpost adds a few passages, never a whole project
LIVE_TIMEOUT = 5.0
LIVE_MAX_BYTES = 2 << 20


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
        live_client: Any | None = None,
    ) -> None:
        self.forge = CachedForge.around(forge)
        self.rules = rules
        self.provider = provider
        self.docs_sites = {site.url: site for site in docs_sites}
        self.live_client = live_client

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
        target = _Target()
        checks: list[CheckOutcome] = []
        try:
            self._corpus_rules(reference, target)
            checks.append(CheckOutcome(Check.CORPUS_RULES, True, "project qualifies"))
            detail = self._resolves(reference, target)
            checks.append(CheckOutcome(Check.RESOLVES, True, detail))
            if question is not None:
                detail = self._addresses(question, target)
                checks.append(CheckOutcome(Check.ADDRESSES, True, detail))
        except _Failed as failed:
            checks.append(CheckOutcome(failed.check, False, failed.reason))
            return self._verdict(reference, target, checks, failed.check, failed.reason)
        return self._verdict(reference, target, checks, None, detail)

    def _verdict(
        self,
        reference: Reference,
        target: _Target,
        checks: list[CheckOutcome],
        check: Check | None,
        reason: str,
    ) -> Verdict:
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
        if text is None:
            since = f" (it existed at {pinned[:12]})" if pinned else ""
            raise _Failed(Check.RESOLVES, f"{path} does not exist at the head {head[:12]}{since}")
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

    def _map_lines(
        self, project: Project, old: str, head: str, path: str, lines: tuple[int, int]
    ) -> tuple[tuple[int, int], str]:
        try:
            diffs: list[FileDiff] = self.forge.compare(project, old, head)
        except NotFound:
            raise _Failed(Check.RESOLVES, f"the pinned commit {old[:12]} does not exist") from None
        for diff in diffs:
            if diff.old_path != path:
                continue
            if diff.deleted_file:
                raise _Failed(Check.RESOLVES, f"{path} was deleted since {old[:12]}")
            mapped = map_lines(diff.diff, lines)
            if mapped is None:
                raise _Failed(
                    Check.RESOLVES,
                    f"lines {lines[0]}-{lines[1]} of {path} changed since {old[:12]}",
                )
            return mapped, diff.new_path
        return lines, path

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
        source: str,
        key: str,
    ) -> list[PassageRecord]:
        return [
            PassageRecord(
                project=project.path,
                path=path,
                sha=sha,
                line_start=s.line_start,
                line_end=s.line_end,
                heading=s.heading or path,
                body=s.body,
                source=source,
                origin="signpost",
                url=self.forge.permalink(project, sha, path, (s.line_start, s.line_end)),
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
        if not self.forge.is_ancestor(project, commit.sha, head):
            raise _Failed(
                Check.RESOLVES,
                f"commit {commit.sha[:12]} is not on the default branch (not merged)",
            )
        diffs = self.forge.commit_diff(project, commit.sha)
        parent = commit.parents[0] if commit.parents else None
        target.key = f"commit:{project.path}@{commit.sha}"
        self._in_effect(project, head, diffs, parent, f"commit {commit.sha[:12]}", target)
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
        self._in_effect(project, head, diffs, parent, f"merge request !{mr.iid}", target)
        return f"merge request !{mr.iid} is merged and still in effect"

    def _in_effect(
        self,
        project: Project,
        head: str,
        diffs: list[FileDiff],
        parent: str | None,
        what: str,
        target: _Target,
    ) -> None:
        """Keep windows around the change's added lines that still stand at the head."""
        standing: list[tuple[str, str, list[int]]] = []
        added_any = False
        for diff in diffs:
            if diff.deleted_file or not self.rules.path(diff.new_path):
                continue
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
            now_text = self._read_or_none(project, head, diff.new_path)
            before = None if diff.new_file else self._read_or_none(project, parent, diff.old_path)
            if now_text != before:
                return False
        return True

    def _read_or_none(self, project: Project, sha: str, path: str) -> bytes | None:
        try:
            return bytes(self.forge.read(project, sha, path))
        except NotFound:
            return None

    def _resolve_docs_page(self, reference: Reference, target: _Target, head: str) -> str:
        project = target.project
        site = self.docs_sites.get(reference.docs_site or "")
        assert project is not None and site is not None
        for candidate in source_candidates(reference.path or "", site.root):
            if not self.rules.path(candidate):
                continue
            text = self._read_text(project, head, candidate)
            if text is not None:
                break
        else:
            raise _Failed(
                Check.RESOLVES, f"no source file under {site.root} builds {reference.url}"
            )
        target.path = candidate
        sections = [s for s in split_document(candidate, text) if s.body.strip()]
        if reference.anchor:
            wanted = reference.anchor.lower()
            sections = [s for s in sections if (s.anchor or "").lower() == wanted]
            if not sections:
                raise _Failed(
                    Check.RESOLVES, f"#{reference.anchor} matches no heading of {candidate}"
                )
        if site.check_live:
            self._check_live(reference.url or "", site.url)
        chosen = sections[:MAX_TARGET_PASSAGES]
        if chosen:
            target.lines = (chosen[0].line_start, chosen[-1].line_end)
        target.key = f"docs_page:{project.path}:{candidate}" + (
            f"#{reference.anchor}" if reference.anchor else ""
        )
        target.passages = self._records(project, head, candidate, chosen, "docs", target.key)
        return f"{reference.url} is built from {candidate} at {head[:12]}"

    def _check_live(self, url: str, site_url: str) -> None:
        """The page answers 200 on the docs site itself; redirects are followed only on-site."""
        import httpx

        client = self.live_client or httpx.Client(timeout=LIVE_TIMEOUT, follow_redirects=False)
        try:
            for _hop in range(4):
                with client.stream("GET", url) as response:
                    if response.is_redirect:
                        location = str(response.url.join(response.headers.get("location", "")))
                        if not location.startswith(site_url):
                            raise _Failed(Check.RESOLVES, f"{url} redirects off the docs site")
                        url = location
                        continue
                    if response.status_code != 200:
                        raise _Failed(Check.RESOLVES, f"{url} answered {response.status_code}")
                    size = 0
                    for chunk in response.iter_bytes():
                        size += len(chunk)
                        if size > LIVE_MAX_BYTES:
                            break
                    return
            raise _Failed(Check.RESOLVES, f"{url} redirects too many times")
        except httpx.HTTPError as exc:
            raise _Failed(
                Check.RESOLVES, f"{url} did not answer: {exc.__class__.__name__}"
            ) from None
        finally:
            if self.live_client is None:
                client.close()

    # ------------------------------------------------------------------ 3. addresses
    def _addresses(self, question: str, target: _Target) -> str:
        from scout.compose.prompt import addresses_task

        if not target.passages:
            raise _Failed(Check.ADDRESSES, "the target has no text to judge")
        output = self.provider.run(addresses_task(question, target.passages))
        reason = " ".join(str(output.reason).split())[:200]
        if not output.addresses:
            raise _Failed(Check.ADDRESSES, reason or "the target does not address the issue")
        return reason or "the target addresses the issue"
