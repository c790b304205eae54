"""The GitLab forge: the forge protocol over GitLab's REST API v4 with python-gitlab.

Main rule: economy. Content at a sha comes from ONE archive request per (project, sha), held in
memory for the last snapshot only; only where GitLab refuses archives (403/404/406), limits them
(429) or the archive is too large does it fall back to the tree listing plus one raw request per
file that could qualify. Blob URLs split their ref locally against one listing of the project's
branches and tags. Diffs GitLab cut at its limits are marked incomplete (``FileDiff.complete``,
``Diffs.complete``) for validation to finish locally. All HTTP, retries, rate limits, request
counting and error translation live in ``gitlab_http.Transport``; this module turns GitLab's JSON
into ``scout.forge.base`` records (a missing field is "bad data").
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from scout.doc_paths import is_documentation
from scout.errors import CannotCheck, ForgeError, GroupNotFound, NotFound
from scout.forge.base import (
    Commit,
    Diffs,
    FileDiff,
    FileEntry,
    Issue,
    IssueLink,
    MergeRequest,
    Note,
    Project,
    RefPath,
    count_lines,
    merge_state,
    permalink,
    visibility,
)
from scout.forge.gitlab_archive import BadArchive, Snapshot, parse_archive
from scout.forge.gitlab_http import (
    MAX_PAGES,
    WAIT_BUDGET,
    WINDOW,
    RateLimiter,
    TooLarge,
    Transport,
    enc,
)
from scout.timefmt import from_forge

ARCHIVE_LIMIT = 200 * 1024 * 1024  # bytes, compressed and unpacked alike; beyond: file by file
FILE_LIMIT = 32 * 1024 * 1024  # bytes of one raw file
LINE_CACHE_SIZE = 4096
# 429: the archive endpoint has its own limit (5 a minute per project and user on GitLab.com,
# doc/user/gitlab_com/index.md); waiting it out would stall everything, the tree path does not.
_REFUSED_ARCHIVE = (403, 404, 406, 429)
# GitLab's default caps on a diff, which are also the lowest an administrator may set
# (doc/administration/diff_limits.md; application settings diff_max_files, diff_max_lines): a
# listing that reaches either may have been cut short without saying so (commit and MR diffs
# have no compare_timeout flag).
DIFF_FILES_FLOOR = 1_000
DIFF_LINES_FLOOR = 50_000
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _moment(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _when(value: str) -> datetime:
    """A timestamp GitLab sent, or ForgeError("bad data")."""
    try:
        return _moment(value)
    except ValueError:
        raise ForgeError("bad data", f"GitLab sent an unreadable time {value[:40]!r}") from None


def _wire(moment: datetime) -> str:
    """A time for GitLab's filters, to the microsecond it stores."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _unseen(items: list[Any], seen: set[tuple[Any, str]]) -> Iterator[Issue]:
    for data in items:
        issue = _issue(data)
        key = (data.get("id") if isinstance(data, dict) else None, issue.updated_at)
        if key not in seen:
            seen.add(key)
            yield issue


class GitLabForge:
    """The forge protocol on a GitLab instance; see ``scout.forge.base.Forge``.

    One instance serves one thread (the snapshot, the line cache and the transport are not
    shared safely); the token lives only inside python-gitlab's auth and is never shown.
    """

    kind = "gitlab"

    def __init__(
        self,
        url: str,
        token: str | None,
        groups: list[str],
        *,
        timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        per_page: int = 100,
        archive_limit: int = ARCHIVE_LIMIT,
        rate_wait_budget: float = WAIT_BUDGET,
        rate_window: float = WINDOW,
    ) -> None:
        self.url = url.rstrip("/")
        self.groups = [g.strip("/") for g in groups]
        self.requests: Counter[str] = Counter()
        self._http = Transport(
            self.url,
            token,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            counter=self.requests,
            per_page=per_page,
            limiter=RateLimiter(rate_wait_budget, rate_window),
        )
        self._archive_limit = archive_limit
        self._refs: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
        self._snapshot_key: tuple[str, str] | None = None
        self._snapshot = Snapshot()
        self._lines: OrderedDict[tuple[str, str, str], int | None] = OrderedDict()

    def __repr__(self) -> str:
        return f"GitLabForge({self._http.public_url!r}, groups={self.groups!r})"

    def close(self) -> None:
        self._http.close()

    # groups and projects

    def group(self, path: str) -> dict[str, Any]:
        """The group at ``path`` as GitLab describes it (``GET /groups/:id``, one request):
        GroupNotFound when GitLab answers 404, which it does for a group that does not exist
        and for one the token cannot see alike (doc/api/groups.md, "Get a single group")."""
        try:
            data = self._http.json("group", f"/groups/{enc(path.strip('/'))}")
        except NotFound:
            raise GroupNotFound(path.strip("/"), self._http.public_url) from None
        if not isinstance(data, dict) or not isinstance(data.get("full_path"), str):
            raise ForgeError("bad data", f"GET /groups/{path}: no full_path in GitLab's answer")
        return data

    def projects(self) -> Iterator[Project]:
        seen: set[Any] = set()
        for group in self.groups:
            # with_shared defaults to true: projects of other groups shared into this one are not
            # inside it (doc/api/groups.md, "List projects of a group").
            query = {
                "include_subgroups": "true",
                "with_shared": "false",
                "order_by": "id",
                "sort": "asc",
            }
            listing = self._http.pages("projects", f"/groups/{enc(group)}/projects", query)
            for data in self._group_listing(group, listing):
                project = _project(data)
                if project.id not in seen:
                    seen.add(project.id)
                    yield project

    def _group_listing(self, group: str, items: Iterator[Any]) -> Iterator[Any]:
        """A group listing whose first page's 404 means the group is not there (GitLab answers
        404 for a group that does not exist and for one the token cannot see alike)."""
        try:
            first = next(items, None)
        except NotFound:
            raise GroupNotFound(group, self._http.public_url) from None
        if first is not None:
            yield first
            yield from items

    def project(self, path: str) -> Project:
        return _project(self._http.json("project", f"/projects/{enc(path.strip('/'))}"))

    def head(self, project: Project) -> str | None:
        if not project.default_branch:
            return None
        try:
            data = self._http.json(
                "head", f"{_base(project)}/repository/branches/{enc(project.default_branch)}"
            )
        except NotFound:
            return None  # an empty repository has a default branch name but no branch
        sha: str = _get(_get(data, "commit", dict), "id", str)
        return sha

    # content at a sha

    def files(self, project: Project, sha: str) -> list[FileEntry]:
        return sorted(self._load(project, sha).entries.values(), key=lambda e: e.path)

    def read(self, project: Project, sha: str, path: str) -> bytes:
        if self._snapshot_key != (_key(project), sha):
            # Not the snapshot being indexed: one raw request beats downloading a whole
            # archive for a single file (signpost validation reads one file of many heads).
            body = self._raw(project, sha, path)
            if body is None:
                raise NotFound(f"{path} at {sha[:12]} in {project.path}")
            return body
        snapshot = self._snapshot
        entry = snapshot.entries.get(path)
        if entry is None or entry.kind == "submodule":
            raise NotFound(f"{path} at {sha[:12]} in {project.path}")
        body = snapshot.content.get(path)
        if body is None:
            body = self._raw(project, sha, path)
            if body is None:
                raise NotFound(f"{path} at {sha[:12]} in {project.path}")
        return body

    def line_count(self, project: Project, sha: str, path: str) -> int | None:
        if self._snapshot_key == (_key(project), sha):
            entry = self._snapshot.entries.get(path)
            if entry is None or entry.kind == "submodule":
                return None
            body = self._snapshot.content.get(path)
            if body is not None:
                return count_lines(body)
        key = (_key(project), sha, path)
        if key in self._lines:
            self._lines.move_to_end(key)
            return self._lines[key]
        body = self._raw(project, sha, path)
        count = None if body is None else count_lines(body)
        self._lines[key] = count
        if len(self._lines) > LINE_CACHE_SIZE:
            self._lines.popitem(last=False)
        return count

    def permalink(
        self, project: Project, sha: str, path: str, lines: tuple[int, int] | None
    ) -> str:
        return permalink(project.web_url, sha, path, lines)

    def is_folder(self, project: Project, sha: str, path: str) -> bool:
        # One entry of the folder's listing is enough (doc/api/repositories.md, "List repository
        # tree"); GitLab answers 404 for a path that is no folder (an empty list before late
        # 2023, python-gitlab#2710), and no folder in git is empty.
        if not path.strip("/"):
            return False  # the root is no link's folder: a blob URL always names a path
        try:
            entries = self._http.json(
                "tree",
                f"{_base(project)}/repository/tree",
                {"ref": sha, "path": path, "per_page": 1},
            )
        except NotFound:
            return False
        return isinstance(entries, list) and bool(entries)

    def _raw(self, project: Project, sha: str, path: str) -> bytes | None:
        """One raw file request; None when GitLab has no file there."""
        try:
            return self._http.raw(
                "files",
                f"{_base(project)}/repository/files/{enc(path)}/raw",
                # lfs=true: an LFS file's content, as the archive holds it, not its pointer
                # (doc/api/repository_files.md, "Get raw file from repository").
                {"ref": sha, "lfs": "true"},
                FILE_LIMIT,
            )
        except NotFound:
            return None
        except TooLarge as exc:
            raise CannotCheck(f"{path} is over the {FILE_LIMIT >> 20} MiB read limit") from exc

    def _load(self, project: Project, sha: str) -> Snapshot:
        key = (_key(project), sha)
        if self._snapshot_key != key:
            self._snapshot_key, self._snapshot = None, Snapshot()  # drop the last one first
            self._snapshot = self._archive(project, sha) or self._tree(project, sha)
            self._snapshot_key = key
        return self._snapshot

    def _archive(self, project: Project, sha: str) -> Snapshot | None:
        try:
            data = self._http.raw(
                "archive",
                f"{_base(project)}/repository/archive.tar.gz",
                {"sha": sha},
                self._archive_limit,
                refused=_REFUSED_ARCHIVE,
            )
            return None if data is None else parse_archive(data, self._archive_limit)
        except (TooLarge, BadArchive):
            return None  # too big or unreadable: the file-by-file path still works

    def _tree(self, project: Project, sha: str) -> Snapshot:
        """The tree listing; only files that could qualify are read (for their size and content),
        the others are listed with size 0, which the corpus rules never look at for them."""
        snapshot, held = Snapshot(), 0
        query = {"ref": sha, "recursive": "true", "pagination": "keyset"}
        for data in self._http.pages("tree", f"{_base(project)}/repository/tree", query):
            path, mode, kind = _get(data, "path", str), data.get("mode"), data.get("type")
            if kind == "commit":
                snapshot.entries[path] = FileEntry(path, 0, "submodule")
            elif kind == "blob" and not is_documentation(path):
                symlink = mode == "120000"
                snapshot.entries[path] = FileEntry(path, 0, "symlink" if symlink else "blob")
            elif kind == "blob":
                body = self._raw(project, sha, path)
                if body is None:
                    continue
                symlink = mode == "120000"
                snapshot.entries[path] = FileEntry(
                    path, len(body), "symlink" if symlink else "blob"
                )
                held += len(body)
                if held <= self._archive_limit:  # beyond the bound, read() asks again
                    snapshot.content[path] = body
        return snapshot

    # history

    def commit(self, project: Project, sha: str) -> Commit:
        data = self._http.json("commits", f"{_base(project)}/repository/commits/{enc(sha)}")
        return Commit(
            sha=_get(data, "id", str),
            parents=tuple(_get(data, "parent_ids", list)),
            title=data.get("title") or "",
            authored_date=from_forge(data.get("authored_date")),
        )

    def is_ancestor(self, project: Project, ancestor: str, descendant: str) -> bool:
        # GitLab answers 400 "Could not find ref" for an unknown sha: that is a NotFound; and
        # 404 "Merge Base not found" for unrelated histories (an orphan branch): not an ancestor
        # (doc/api/repositories.md, "Merge base").
        try:
            data = self._http.call(
                "commits",
                f"{_base(project)}/repository/merge_base",
                {"refs[]": [ancestor, descendant]},
                self._http.consume_json,
                refused=(400,),
            )
        except NotFound:
            return False
        if data is None:
            raise NotFound(f"commit {ancestor} or {descendant} in {project.path}")
        base = _get(data, "id", str)
        return base == ancestor if len(ancestor) >= 40 else base.startswith(ancestor)

    def commit_diff(self, project: Project, sha: str) -> Diffs:
        path = f"{_base(project)}/repository/commits/{enc(sha)}/diff"
        return _diffs(self._http.pages("diff", path))

    def compare(self, project: Project, old: str, new: str) -> Diffs:
        # straight=true: the diff from old to new as ``git diff old new``, not from the merge base.
        data = self._http.json(
            "diff",
            f"{_base(project)}/repository/compare",
            {"from": old, "to": new, "straight": "true"},
        )
        diffs = _diffs(_get(data, "diffs", list))
        if data.get("compare_timeout"):
            diffs.complete = False  # over the diff limits (doc/api/repositories.md, compare)
        return diffs

    def merge_request(self, project: Project, iid: int) -> MergeRequest:
        data = self._http.json("mrs", f"{_base(project)}/merge_requests/{int(iid)}")
        return MergeRequest(
            project=project.path,
            iid=_get(data, "iid", int),
            state=merge_state(data.get("state")),
            target_branch=_get(data, "target_branch", str),
            source_branch=data.get("source_branch"),
            sha=data.get("sha"),
            merge_commit_sha=data.get("merge_commit_sha"),
            squash_commit_sha=data.get("squash_commit_sha"),
        )

    def merge_request_diffs(self, project: Project, iid: int) -> Diffs:
        path = f"{_base(project)}/merge_requests/{int(iid)}/diffs"
        return _diffs(self._http.pages("diff", path))

    def resolve_ref_path(self, project: Project, ref_and_path: str) -> RefPath | None:
        parts = ref_and_path.strip("/").split("/")
        if len(parts) < 2:
            return None
        if _SHA.fullmatch(parts[0]):
            # A permalink splits without asking, but the commit must exist to resolve.
            try:
                self._http.json("refs", f"{_base(project)}/repository/commits/{parts[0]}")
            except NotFound:
                return None
            return RefPath(parts[0], "/".join(parts[1:]), parts[0])
        # Split locally against the project's branches and tags, listed once per run: asking
        # GitLab about every cut cost thousands of requests for one issue of long paths. The
        # longest name wins, a branch before a tag of the same name, as GitLab's ref extraction.
        branches, tags = self._ref_names(project)
        for cut in range(len(parts) - 1, 0, -1):
            ref = "/".join(parts[:cut])
            sha = branches.get(ref) or tags.get(ref)
            if sha:
                return RefPath(ref, "/".join(parts[cut:]), sha)
        return None

    def _ref_names(self, project: Project) -> tuple[dict[str, str], dict[str, str]]:
        key = _key(project)
        if key not in self._refs:
            found: list[dict[str, str]] = []
            for kind in ("branches", "tags"):
                names: dict[str, str] = {}
                for data in self._http.pages("refs", f"{_base(project)}/repository/{kind}"):
                    names[_get(data, "name", str)] = _get(_get(data, "commit", dict), "id", str)
                found.append(names)
            self._refs[key] = (found[0], found[1])
        return self._refs[key]

    # issues

    def issues_updated_after(self, group: str, after: str | None) -> Iterator[Issue]:
        # Offset pages shift when an issue is edited mid-listing (it moves to the end), so the
        # issue sliding into its place would be skipped, and the sweep's cursor would then pass
        # it for good. Each page therefore restarts from the last updated_at seen (GitLab's
        # updated_after is inclusive, and so is the protocol: the sweep drops repeats). A page
        # that is all one timestamp is paged to its end inside that exact timestamp
        # (updated_before) before the listing moves past it. Group issues have no keyset.
        path = f"/groups/{enc(group.strip('/'))}/issues"
        per_page, cursor = self._http.per_page, after
        seen: set[tuple[Any, str]] = set()
        for number in range(MAX_PAGES):
            try:
                items, _total = self._issue_page(path, cursor, None, 1)
            except NotFound:
                if number:
                    raise
                raise GroupNotFound(group.strip("/"), self._http.public_url) from None
            yield from _unseen(items, seen)
            if len(items) < per_page:
                return
            last = _get(items[-1], "updated_at", str)
            if cursor is None or _when(last) != _when(cursor):
                cursor = last
            else:
                yield from self._issues_at(path, cursor, seen)
                # GitLab shows milliseconds; the next millisecond starts after the tie window.
                cursor = _wire(_when(cursor) + timedelta(milliseconds=1))
            seen = {k for k in seen if k[1] and _when(k[1]) >= _when(cursor)}
        raise ForgeError("bad data", f"GET {path}: more than {MAX_PAGES} pages")

    def _issues_at(self, path: str, moment: str, seen: set[tuple[Any, str]]) -> Iterator[Issue]:
        """Every issue updated within one displayed millisecond, paged to the end.

        An edit only moves issues out of this window (to now), never in; when the window's total
        changed while it was paged, an issue may have slid back over a page edge: page it again.
        """
        start = _when(moment)
        end = _wire(start + timedelta(microseconds=999))
        for _pass in range(10):
            totals: set[str | None] = set()
            for page in range(1, MAX_PAGES):
                items, total = self._issue_page(path, _wire(start), end, page)
                totals.add(total)
                yield from _unseen(items, seen)
                if len(items) < self._http.per_page:
                    break
            if len(totals) <= 1:
                return
        raise ForgeError("server error", f"GET {path}: issues at {moment} kept changing")

    def _issue_page(
        self, path: str, after: str | None, before: str | None, page: int
    ) -> tuple[list[Any], str | None]:
        query = {"order_by": "updated_at", "sort": "asc", "scope": "all"}
        query.update({"per_page": str(self._http.per_page), "page": str(page)})
        # non_archived defaults to true, which hides archived projects' issues (doc/api/issues.md,
        # "List group issues"); their signposts are judged by their targets, as the local forge's.
        query["non_archived"] = "false"
        if after:
            query["updated_after"] = after
        if before:
            query["updated_before"] = before
        got = self._http.call("issues", path, query, self._listing)
        assert got is not None
        return got

    def _listing(self, response: Any) -> tuple[list[Any], str | None]:
        items = self._http.consume_json(response)
        if not isinstance(items, list):
            raise ForgeError("bad data", "GET group issues: a listing that is not a JSON list")
        return items, response.headers.get("x-total")

    def issue_notes(self, issue: Issue) -> Iterator[Note]:
        project = issue.project_id if issue.project_id is not None else issue.project
        path = f"/projects/{enc(project)}/issues/{int(issue.iid)}/notes"
        # only_comments: GitLab leaves system notes out itself (doc/api/notes.md).
        query = {"sort": "asc", "order_by": "updated_at", "activity_filter": "only_comments"}
        for data in self._http.pages("notes", path, query):
            if data.get("system"):
                continue
            yield Note(
                id=_get(data, "id", int),
                body=data.get("body") or "",
                system=False,
                updated_at=from_forge(data.get("updated_at")),
                # ``internal`` since GitLab 15.0; ``confidential`` is its deprecated old name.
                internal=bool(data.get("internal") or data.get("confidential")),
            )

    def search_issues(self, group: str, words: list[str], limit: int) -> list[IssueLink]:
        # GitLab's own issue search (doc/api/issues.md, "List group issues": ``search`` matches
        # title and description, every word of it). Searches are rate-limited on their own,
        # 30 a minute by default (NOTES-round3.md): one page, one request, through the shared
        # limiter. Everything but the link fields is dropped here, title and text included.
        path = f"/groups/{enc(group.strip('/'))}/issues"
        query = {
            "search": " ".join(words),
            "in": "title,description",
            "scope": "all",
            "state": "all",
            "per_page": str(min(100, max(limit * 4, 20))),
        }
        got = self._http.call("search", path, query, self._listing)
        assert got is not None
        return [_link(data) for data in got[0]]


# JSON to records


_T = TypeVar("_T")


def _get(data: Any, key: str, kind: type[_T]) -> _T:
    """``data[key]`` of the given type, or ForgeError("bad data")."""
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ForgeError("bad data", f"GitLab's answer lacks a valid {key!r}")
    return value


def _key(project: Project) -> str:
    return str(project.id if project.id is not None else project.path)


def _base(project: Project) -> str:
    return f"/projects/{enc(_key(project))}"


def _project(data: Any) -> Project:
    return Project(
        path=_get(data, "path_with_namespace", str),
        visibility=visibility(data.get("visibility")),
        archived=bool(data.get("archived", False)),
        default_branch=data.get("default_branch") or None,
        web_url=_get(data, "web_url", str),
        last_activity_at=from_forge(data.get("last_activity_at")),
        id=_get(data, "id", int),
    )


def _diff(data: Any) -> FileDiff:
    text = data.get("diff") or ""
    # A file over the patch limit comes with an empty diff and too_large or collapsed set
    # (doc/api/commits.md, doc/api/merge_requests.md "List merge request diffs").
    cut = bool(data.get("too_large") or data.get("collapsed")) and not text
    return FileDiff(
        old_path=_get(data, "old_path", str),
        new_path=_get(data, "new_path", str),
        diff=text,
        new_file=bool(data.get("new_file")),
        renamed_file=bool(data.get("renamed_file")),
        deleted_file=bool(data.get("deleted_file")),
        complete=not cut,
    )


def _diffs(items: Any) -> Diffs:
    diffs = Diffs(_diff(d) for d in items)
    lines = sum(d.diff.count("\n") for d in diffs)
    diffs.complete = len(diffs) < DIFF_FILES_FLOOR and lines < DIFF_LINES_FLOOR
    return diffs


def _link(data: Any) -> IssueLink:
    references = _get(data, "references", dict)
    return IssueLink(
        project=_get(references, "full", str).rsplit("#", 1)[0],
        iid=_get(data, "iid", int),
        url=_get(data, "web_url", str),
        state=_get(data, "state", str),
        confidential=bool(data.get("confidential", False)),
    )


def _issue(data: Any) -> Issue:
    references = _get(data, "references", dict)
    full = _get(references, "full", str)
    return Issue(
        project=full.rsplit("#", 1)[0],
        iid=_get(data, "iid", int),
        title=data.get("title") or "",
        description=data.get("description") or "",
        state=_get(data, "state", str),
        updated_at=from_forge(_get(data, "updated_at", str)) or "",
        web_url=_get(data, "web_url", str),
        user_notes_count=int(data.get("user_notes_count") or 0),
        project_id=data.get("project_id"),
        confidential=bool(data.get("confidential", False)),
    )
