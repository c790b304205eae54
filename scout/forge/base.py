"""The forge protocol: what Scout asks of a GitLab estate, and the plain records it gets back.

Two real implementations: ``local`` (an estate directory of git repositories, see docs/design.md)
and ``gitlab`` (REST v4 through python-gitlab). Both yield these records and raise only
``scout.errors.ForgeError`` (``NotFound`` for a 404), so nothing above this package knows which
forge it talks to. Every call that would be a request on GitLab is counted in ``requests`` by kind
(``projects``, ``project``, ``head``, ``tree``, ``files``, ``archive``, ``commits``, ``mrs``,
``issues``, ``notes``, ``refs``, ``search``) so tests and ``--json`` summaries can report forge
economy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from scout.errors import ForgeError

Visibility = Literal["public", "internal", "private"]
MergeState = Literal["opened", "closed", "merged", "locked"]
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
MERGE_STATES: tuple[MergeState, ...] = get_args(MergeState)


def visibility(value: object) -> Visibility:
    """A project's visibility as GitLab or the estate spells it, or ForgeError("bad data")."""
    for known in VISIBILITIES:
        if value == known:
            return known
    raise ForgeError("bad data", f"a project visibility that is not one of {VISIBILITIES}")


def merge_state(value: object) -> MergeState:
    """A merge request's state as GitLab or the estate spells it, or ForgeError("bad data")."""
    for known in MERGE_STATES:
        if value == known:
            return known
    raise ForgeError("bad data", f"a merge request state that is not one of {MERGE_STATES}")


@dataclass(frozen=True)
class Project:
    """Project metadata: enough for the corpus rules, without reading any content."""

    path: str  # full path, group/subgroup/project
    visibility: Visibility
    archived: bool
    default_branch: str | None  # None for a repository with no commits
    web_url: str
    last_activity_at: str | None = None
    id: int | str | None = None  # GitLab's numeric id; the path for the local forge


@dataclass(frozen=True)
class FileEntry:
    """One entry of a tree listing at a sha."""

    path: str
    size: int
    kind: Literal["blob", "symlink", "submodule"] = "blob"


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    title: str = ""
    authored_date: str | None = None


@dataclass(frozen=True)
class FileDiff:
    """One file of a commit's or merge request's diff, in GitLab's shape (``diff`` starts at @@)."""

    old_path: str
    new_path: str
    diff: str
    new_file: bool = False
    renamed_file: bool = False
    deleted_file: bool = False
    complete: bool = True  # False: GitLab left ``diff`` out (too_large, collapsed: diff limits)


class Diffs(list[FileDiff]):
    """A diff's files; ``complete`` is False when the forge may have left files out.

    GitLab caps diffs (doc/administration/diff_limits.md: files, lines and bytes per patch); past
    the caps a compare says ``compare_timeout`` and files go missing from the listing.
    """

    complete: bool = True


@dataclass(frozen=True)
class MergeRequest:
    project: str
    iid: int
    state: MergeState
    target_branch: str
    source_branch: str | None = None
    sha: str | None = None  # head sha of the source branch (fast-forward merges land this)
    merge_commit_sha: str | None = None
    squash_commit_sha: str | None = None


@dataclass(frozen=True)
class Issue:
    """An issue as read for signpost extraction. Its prose lives in memory only (docs/design.md,
    invariant 1)."""

    project: str  # full path of the issue's project
    iid: int
    title: str
    description: str
    state: str
    updated_at: str
    web_url: str
    user_notes_count: int = 0
    project_id: int | str | None = None
    confidential: bool = False  # GitLab's ``confidential``: visible to project members only


@dataclass(frozen=True)
class IssueLink:
    """An issue the forge's search found: a link, nothing of its title or text."""

    project: str
    iid: int
    url: str
    state: str
    confidential: bool = False

    def to_json(self) -> dict[str, object]:
        return {"project": self.project, "iid": self.iid, "url": self.url, "state": self.state}


@dataclass(frozen=True)
class Note:
    id: int
    body: str
    system: bool = False
    updated_at: str | None = None
    internal: bool = False  # GitLab's ``internal`` note: visible to project members only


@dataclass(frozen=True)
class RefPath:
    """``<ref>/<path>`` of a blob URL split against the project's real branches and tags."""

    ref: str
    path: str
    sha: str


class Forge(Protocol):
    """What the corpus, signpost validation and the sweep need from an estate."""

    kind: str
    url: str  # the web URL that permalinks are built on
    requests: Counter[str]

    def close(self) -> None:
        """Release connections and helper processes."""
        ...

    # projects
    def projects(self) -> Iterator[Project]:
        """Projects of the configured groups, subgroups included (no rule filtering here)."""
        ...

    def project(self, path: str) -> Project:
        """One project's metadata by full path; NotFound when it does not exist."""
        ...

    def head(self, project: Project) -> str | None:
        """Sha at the head of the default branch; None when the repository has no commits."""
        ...

    # content at a sha
    def files(self, project: Project, sha: str) -> list[FileEntry]: ...

    def read(self, project: Project, sha: str, path: str) -> bytes:
        """A file's bytes at a sha; NotFound when absent."""
        ...

    def line_count(self, project: Project, sha: str, path: str) -> int | None:
        """Number of lines of a file at a sha, or None when the path is not a file there."""
        ...

    def is_folder(self, project: Project, sha: str, path: str) -> bool:
        """Whether ``path`` is a folder (a tree) at a sha: why a link to it finds no file."""
        ...

    def permalink(
        self, project: Project, sha: str, path: str, lines: tuple[int, int] | None
    ) -> str: ...

    # history
    def commit(self, project: Project, sha: str) -> Commit:
        """A commit by full sha or unique prefix; NotFound when unknown."""
        ...

    def is_ancestor(self, project: Project, ancestor: str, descendant: str) -> bool: ...

    def commit_diff(self, project: Project, sha: str) -> list[FileDiff]:
        """The diff of a commit against its first parent."""
        ...

    def compare(self, project: Project, old: str, new: str) -> list[FileDiff]:
        """The diff between two commits (GitLab's ``repository/compare?from=&to=``)."""
        ...

    def merge_request(self, project: Project, iid: int) -> MergeRequest: ...

    def merge_request_diffs(self, project: Project, iid: int) -> list[FileDiff]: ...

    def resolve_ref_path(self, project: Project, ref_and_path: str) -> RefPath | None:
        """Split ``<ref>/<path>`` by trying branch and tag names longest first."""
        ...

    # issues
    def issues_updated_after(self, group: str, after: str | None) -> Iterator[Issue]:
        """Issues of a group's projects updated at or after ``after`` (GitLab's ``updated_after`` is
        inclusive), oldest update first."""
        ...

    def issue_notes(self, issue: Issue) -> Iterator[Note]:
        """The issue's non-system notes."""
        ...

    def search_issues(self, group: str, words: list[str], limit: int) -> list[IssueLink]:
        """Up to ``limit`` issues of a group's projects that GitLab's issue search finds for
        ``words`` (its ``search`` parameter: every word, in the title or the description); one
        request, counted as ``search``."""
        ...


def lines_fragment(lines: tuple[int, int] | None) -> str:
    """The one line anchor: ``#L13`` for one line, ``#L13-20`` for a range (GitLab's own form),
    ``""`` for none. Permalinks, references, target keys and printed targets all use it."""
    if not lines:
        return ""
    a, b = lines
    return f"#L{a}" if a == b else f"#L{a}-{b}"


def permalink(web_url: str, sha: str, path: str, lines: tuple[int, int] | None) -> str:
    """GitLab's blob permalink: ``<web_url>/-/blob/<sha>/<path>#L<a>-<b>``."""
    from urllib.parse import quote

    return f"{web_url.rstrip('/')}/-/blob/{sha}/{quote(path)}{lines_fragment(lines)}"


def count_lines(data: bytes) -> int:
    """Lines as an editor numbers them: a final line without a newline still counts."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def in_groups(path: str, groups: list[str]) -> bool:
    """Whether a full project path lies inside one of the groups (subgroups included).

    GitLab's paths are case-insensitive: a group configured as ``ACME`` holds ``acme/docs``.
    """
    folded = path.casefold()
    return any(folded.startswith(g.strip("/").casefold() + "/") for g in groups)


__all__ = [
    "Commit",
    "Diffs",
    "FileDiff",
    "FileEntry",
    "Forge",
    "Issue",
    "IssueLink",
    "MergeRequest",
    "Note",
    "Project",
    "RefPath",
    "count_lines",
    "in_groups",
    "lines_fragment",
    "permalink",
]
