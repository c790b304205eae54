"""The GitLab forge: the forge protocol over GitLab's REST API v4 with python-gitlab.

Main rule: economy. Content at a sha comes from ONE archive request per (project, sha), held in
memory for the last snapshot only; only where GitLab refuses archives (403/404/406) or the
archive is too large does it fall back to the tree listing plus one raw request per file. All
HTTP, retries, request counting and error translation live in ``gitlab_http.Transport``; this
module turns GitLab's JSON into ``scout.forge.base`` records (a missing field is "bad data").
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Iterator
from typing import Any, TypeVar

from scout.errors import ForgeError, NotFound
from scout.forge.base import (
    Commit,
    FileDiff,
    FileEntry,
    Issue,
    MergeRequest,
    Note,
    Project,
    RefPath,
    count_lines,
    permalink,
)
from scout.forge.gitlab_archive import BadArchive, Snapshot, parse_archive
from scout.forge.gitlab_http import MAX_PAGES, TooLarge, Transport, enc
from scout.timefmt import from_forge

ARCHIVE_LIMIT = 200 * 1024 * 1024  # bytes, compressed and unpacked alike; beyond: file by file
FILE_LIMIT = 32 * 1024 * 1024  # bytes of one raw file
LINE_CACHE_SIZE = 4096
_REFUSED_ARCHIVE = (403, 404, 406)
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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
        )
        self._archive_limit = archive_limit
        self._snapshot_key: tuple[str, str] | None = None
        self._snapshot = Snapshot()
        self._lines: OrderedDict[tuple[str, str, str], int | None] = OrderedDict()

    def __repr__(self) -> str:
        return f"GitLabForge({self._http.public_url!r}, groups={self.groups!r})"

    def close(self) -> None:
        self._http.close()

    # projects

    def projects(self) -> Iterator[Project]:
        seen: set[Any] = set()
        for group in self.groups:
            query = {"include_subgroups": "true", "order_by": "id", "sort": "asc"}
            for data in self._http.pages("projects", f"/groups/{enc(group)}/projects", query):
                project = _project(data)
                if project.id not in seen:
                    seen.add(project.id)
                    yield project

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

    def _raw(self, project: Project, sha: str, path: str) -> bytes | None:
        """One raw file request; None when GitLab has no file there."""
        try:
            return self._http.raw(
                "files",
                f"{_base(project)}/repository/files/{enc(path)}/raw",
                {"ref": sha},
                FILE_LIMIT,
            )
        except NotFound:
            return None
        except TooLarge as exc:
            raise ForgeError(
                "bad data", f"{path} in {project.path} exceeds {FILE_LIMIT} bytes"
            ) from exc

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
        snapshot, held = Snapshot(), 0
        query = {"ref": sha, "recursive": "true", "pagination": "keyset"}
        for data in self._http.pages("tree", f"{_base(project)}/repository/tree", query):
            path, mode, kind = _get(data, "path", str), data.get("mode"), data.get("type")
            if kind == "commit":
                snapshot.entries[path] = FileEntry(path, 0, "submodule")
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
        # GitLab answers 400 "Could not find ref" for an unknown sha: that is a NotFound.
        data = self._http.call(
            "commits",
            f"{_base(project)}/repository/merge_base",
            {"refs[]": [ancestor, descendant]},
            self._http.consume_json,
            refused=(400,),
        )
        if data is None:
            raise NotFound(f"commit {ancestor} or {descendant} in {project.path}")
        base = _get(data, "id", str)
        return base == ancestor if len(ancestor) >= 40 else base.startswith(ancestor)

    def commit_diff(self, project: Project, sha: str) -> list[FileDiff]:
        path = f"{_base(project)}/repository/commits/{enc(sha)}/diff"
        return [_diff(d) for d in self._http.pages("diff", path)]

    def compare(self, project: Project, old: str, new: str) -> list[FileDiff]:
        # straight=true: the diff from old to new as ``git diff old new``, not from the merge base.
        data = self._http.json(
            "diff",
            f"{_base(project)}/repository/compare",
            {"from": old, "to": new, "straight": "true"},
        )
        return [_diff(d) for d in _get(data, "diffs", list)]

    def merge_request(self, project: Project, iid: int) -> MergeRequest:
        data = self._http.json("mrs", f"{_base(project)}/merge_requests/{int(iid)}")
        return MergeRequest(
            project=project.path,
            iid=_get(data, "iid", int),
            state=_get(data, "state", str),
            target_branch=_get(data, "target_branch", str),
            source_branch=data.get("source_branch"),
            sha=data.get("sha"),
            merge_commit_sha=data.get("merge_commit_sha"),
            squash_commit_sha=data.get("squash_commit_sha"),
        )

    def merge_request_diffs(self, project: Project, iid: int) -> list[FileDiff]:
        path = f"{_base(project)}/merge_requests/{int(iid)}/diffs"
        return [_diff(d) for d in self._http.pages("diff", path)]

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
        # Most links name the default branch: try it first, then the longest candidates.
        cuts = list(range(len(parts) - 1, 0, -1))
        if project.default_branch:
            branch_parts = project.default_branch.split("/")
            if parts[: len(branch_parts)] == branch_parts and len(branch_parts) < len(parts):
                cuts.remove(len(branch_parts))
                cuts.insert(0, len(branch_parts))
        for cut in cuts:
            ref = "/".join(parts[:cut])
            for kind in ("branches", "tags"):
                try:
                    data = self._http.json("refs", f"{_base(project)}/repository/{kind}/{enc(ref)}")
                except NotFound:
                    continue
                sha = _get(_get(data, "commit", dict), "id", str)
                return RefPath(ref, "/".join(parts[cut:]), sha)
        return None

    # issues

    def issues_updated_after(self, group: str, after: str | None) -> Iterator[Issue]:
        # Offset pages shift when an issue is edited mid-listing (it moves to the end), so the
        # issue sliding into its place would be skipped, and the sweep's cursor would then pass
        # it for good. Each page therefore restarts from the last updated_at seen (GitLab's
        # updated_after is inclusive, and so is the protocol: the sweep drops repeats); only a
        # page that is all one timestamp moves on by page number. Group issues have no keyset.
        path = f"/groups/{enc(group.strip('/'))}/issues"
        per_page, page, cursor = self._http.per_page, 1, after
        seen: set[tuple[Any, Any]] = set()
        for _ in range(MAX_PAGES):
            query = {"order_by": "updated_at", "sort": "asc", "scope": "all"}
            query.update({"per_page": str(per_page), "page": str(page)})
            if cursor:
                query["updated_after"] = cursor
            items = self._http.json("issues", path, query)
            if not isinstance(items, list):
                raise ForgeError("bad data", f"GET {path}: a listing that is not a JSON list")
            for data in items:
                key = (data.get("id") if isinstance(data, dict) else None, _issue(data).updated_at)
                if key not in seen:
                    seen.add(key)
                    yield _issue(data)
            if len(items) < per_page:
                return
            last = _get(items[-1], "updated_at", str)
            page = page + 1 if last == cursor else 1
            cursor = last
            seen = {k for k in seen if k[1] is not None and k[1] >= (from_forge(last) or "")}
        raise ForgeError("bad data", f"GET {path}: more than {MAX_PAGES} pages")

    def issue_notes(self, issue: Issue) -> Iterator[Note]:
        project = issue.project_id if issue.project_id is not None else issue.project
        path = f"/projects/{enc(project)}/issues/{int(issue.iid)}/notes"
        for data in self._http.pages("notes", path, {"sort": "asc", "order_by": "updated_at"}):
            if data.get("system"):
                continue
            yield Note(
                id=_get(data, "id", int),
                body=data.get("body") or "",
                system=False,
                updated_at=from_forge(data.get("updated_at")),
            )


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
        visibility=_get(data, "visibility", str),
        archived=bool(data.get("archived", False)),
        default_branch=data.get("default_branch") or None,
        web_url=_get(data, "web_url", str),
        last_activity_at=from_forge(data.get("last_activity_at")),
        id=_get(data, "id", int),
    )


def _diff(data: Any) -> FileDiff:
    return FileDiff(
        old_path=_get(data, "old_path", str),
        new_path=_get(data, "new_path", str),
        diff=data.get("diff") or "",
        new_file=bool(data.get("new_file")),
        renamed_file=bool(data.get("renamed_file")),
        deleted_file=bool(data.get("deleted_file")),
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
    )
