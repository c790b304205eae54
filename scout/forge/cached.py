"""A per-run memo in front of a forge, so fifty references to one file cost one lookup.

``CachedForge`` is itself a ``Forge``: it implements every method of the protocol, so callers keep
the forge's type and never reach through it. Only lookups whose answer cannot change within a run
are memoised: everything keyed by a sha, plus project metadata and heads (a sweep validates
against one snapshot of the estate). Not-found answers are memoised too. The memo is bounded
(least recently used out) so a huge sweep stays flat in memory. Listings (projects, files,
issues, notes, searches) pass straight through: they are read once per run, and notes are fetched
from several threads, which the memo is not built for.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import TypeVar, cast

from scout.errors import NotFound
from scout.forge.base import (
    Commit,
    FileDiff,
    FileEntry,
    Forge,
    Issue,
    IssueLink,
    MergeRequest,
    Note,
    Project,
    RefPath,
)

MAX_ENTRIES = 2_048
T = TypeVar("T")


class CachedForge:
    """Wraps a forge; memoised methods answer from memory after their first call."""

    def __init__(self, forge: Forge, max_entries: int = MAX_ENTRIES) -> None:
        self.inner = forge
        # The protocol's attributes are the wrapped forge's own (the same request counter).
        self.kind: str = forge.kind
        self.url: str = forge.url
        self.requests: Counter[str] = forge.requests
        self.max_entries = max_entries
        self._memo: OrderedDict[tuple[Hashable, ...], tuple[object, NotFound | None]] = (
            OrderedDict()
        )

    @classmethod
    def around(cls, forge: Forge) -> CachedForge:
        """``forge`` itself when it is already cached, else a new memo in front of it."""
        return forge if isinstance(forge, CachedForge) else cls(forge)

    def _memoised(self, key: tuple[Hashable, ...], call: Callable[[], T]) -> T:
        if key in self._memo:
            self._memo.move_to_end(key)
        else:
            try:
                self._memo[key] = (call(), None)
            except NotFound as exc:
                self._memo[key] = (None, exc)
            if len(self._memo) > self.max_entries:
                self._memo.popitem(last=False)
        value, error = self._memo[key]
        if error is not None:
            raise error
        return cast(T, value)

    def close(self) -> None:
        self.inner.close()

    # projects
    def projects(self) -> Iterator[Project]:
        return self.inner.projects()

    def project(self, path: str) -> Project:
        return self._memoised(("project", path), lambda: self.inner.project(path))

    def head(self, project: Project) -> str | None:
        return self._memoised(("head", project.path), lambda: self.inner.head(project))

    # content at a sha
    def files(self, project: Project, sha: str) -> list[FileEntry]:
        return self.inner.files(project, sha)

    def read(self, project: Project, sha: str, path: str) -> bytes:
        key = ("read", project.path, sha, path)
        return self._memoised(key, lambda: self.inner.read(project, sha, path))

    def line_count(self, project: Project, sha: str, path: str) -> int | None:
        key = ("line_count", project.path, sha, path)
        return self._memoised(key, lambda: self.inner.line_count(project, sha, path))

    def is_folder(self, project: Project, sha: str, path: str) -> bool:
        key = ("is_folder", project.path, sha, path)
        return self._memoised(key, lambda: self.inner.is_folder(project, sha, path))

    def permalink(
        self, project: Project, sha: str, path: str, lines: tuple[int, int] | None
    ) -> str:
        return self.inner.permalink(project, sha, path, lines)

    # history
    def commit(self, project: Project, sha: str) -> Commit:
        return self._memoised(
            ("commit", project.path, sha), lambda: self.inner.commit(project, sha)
        )

    def is_ancestor(self, project: Project, ancestor: str, descendant: str) -> bool:
        key = ("is_ancestor", project.path, ancestor, descendant)
        return self._memoised(key, lambda: self.inner.is_ancestor(project, ancestor, descendant))

    def commit_diff(self, project: Project, sha: str) -> list[FileDiff]:
        key = ("commit_diff", project.path, sha)
        return self._memoised(key, lambda: self.inner.commit_diff(project, sha))

    def compare(self, project: Project, old: str, new: str) -> list[FileDiff]:
        key = ("compare", project.path, old, new)
        return self._memoised(key, lambda: self.inner.compare(project, old, new))

    def merge_request(self, project: Project, iid: int) -> MergeRequest:
        key = ("merge_request", project.path, iid)
        return self._memoised(key, lambda: self.inner.merge_request(project, iid))

    def merge_request_diffs(self, project: Project, iid: int) -> list[FileDiff]:
        key = ("merge_request_diffs", project.path, iid)
        return self._memoised(key, lambda: self.inner.merge_request_diffs(project, iid))

    def resolve_ref_path(self, project: Project, ref_and_path: str) -> RefPath | None:
        key = ("resolve_ref_path", project.path, ref_and_path)
        return self._memoised(key, lambda: self.inner.resolve_ref_path(project, ref_and_path))

    # issues
    def issues_updated_after(self, group: str, after: str | None) -> Iterator[Issue]:
        return self.inner.issues_updated_after(group, after)

    def issue_notes(self, issue: Issue) -> Iterator[Note]:
        return self.inner.issue_notes(issue)

    def search_issues(self, group: str, words: list[str], limit: int) -> list[IssueLink]:
        return self.inner.search_issues(group, words, limit)


def _is_a_forge(forge: CachedForge) -> Forge:
    # mypy checks here that CachedForge satisfies the protocol it stands in for.
    return forge
