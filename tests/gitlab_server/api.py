"""The GitLab REST v4 endpoints the test server answers, read-only, from an estate directory.

``dispatch`` takes the raw (percent-encoded) request path: it is split on ``/`` before decoding, so
``acme%2Fconfig`` is one project id and ``docs%2Fsetup.md`` one file path, as on GitLab.

Merge request diffs (``/merge_requests/:iid/diffs``) are computed from git, since the estate stores
no diff versions: for a merge commit, from the merge base of its two parents to its second parent
(the MR head at merge time); for a squash commit, from its parent to it; otherwise from the merge
base of the target branch and the MR head to that head, and if the head is already in the target
branch (a fast-forward merge), from the head's first parent to the head.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from tests.gitlab_server import search, shapes
from tests.gitlab_server.estate import EstateData, ProjectInfo
from tests.gitlab_server.limits import DiffLimits, archive_with_lfs, lfs_object
from tests.gitlab_server.wire import (
    ApiError,
    Query,
    Response,
    bool_param,
    first,
    keyset,
    not_found,
    paginate,
)

VERSION = {"version": "17.5.0", "revision": "scout-test", "kas": {"enabled": False}}


@dataclass(frozen=True)
class Context:
    data: EstateData
    api_url: str  # http://127.0.0.1:<port>/api/v4
    link_base: str  # the request URL without its query, for Link headers
    method: str
    query: Query
    diff_limits: DiffLimits = field(default_factory=DiffLimits)
    estate_root: Path | None = None
    archives: dict[str, bytes] = field(default_factory=dict)  # project path -> archive served


def dispatch(ctx: Context, raw_path: str) -> Response:
    """The answer to one authenticated GET or HEAD request on an ``/api/v4`` path."""
    if not raw_path.startswith("/api/v4/"):
        raise ApiError(404, "404 Not Found", "error")
    seg = [unquote(s) for s in raw_path[len("/api/v4/") :].split("/")]
    if seg and seg[-1] == "":
        seg.pop()
    match seg:
        case ["version"] | ["metadata"]:
            return Response.json(VERSION)
        case ["user"]:
            return Response.json(shapes.current_user(ctx.data.url))
        case ["groups", gid]:
            return Response.json(shapes.group(ctx.data, _group(ctx, gid)))
        case ["groups", gid, "projects"]:
            return _group_projects(ctx, gid)
        case ["groups", gid, "issues"]:
            g = _group(ctx, gid)
            chosen = [p for p in ctx.data.projects if _in_group(p.path, g.full_path)]
            # non_archived defaults to true: archived projects' issues are left out unless
            # non_archived=false (doc/api/issues.md, "List group issues").
            if (first(ctx.query, "non_archived") or "true").lower() != "false":
                chosen = [p for p in chosen if not p.archived]
            return _issues(ctx, chosen)
        case ["projects", pid, "issues"]:
            return _issues(ctx, [_project(ctx, pid)])
        case ["projects", pid]:
            p = _project(ctx, pid)
            return Response.json(shapes.project(ctx.data, p, ctx.api_url))
        case ["projects", pid, "repository", *rest] if rest:
            return _repository(ctx, _project(ctx, pid), rest)
        case ["projects", pid, "merge_requests", iid]:
            p = _project(ctx, pid)
            return Response.json(_merge_request(ctx, p, _mr_record(ctx, p, iid)))
        case ["projects", pid, "merge_requests", iid, "diffs"]:
            p = _project(ctx, pid)
            changes = _mr_changes(p, _mr_record(ctx, p, iid))
            return _page(ctx, _limited(ctx, changes)[0])
        case ["projects", pid, "issues", iid]:
            p = _project(ctx, pid)
            return Response.json(shapes.issue(ctx.data, p, _issue_record(ctx, p, iid)))
        case ["projects", pid, "issues", iid, "notes"]:
            return _issue_notes(ctx, _project(ctx, pid), iid)
    raise ApiError(404, "404 Not Found", "error")


def _limited(ctx: Context, changes: list[Any]) -> tuple[list[dict[str, Any]], bool]:
    """Diff rows under the server's diff limits (see limits.py), and whether files were cut."""
    return ctx.diff_limits.apply([shapes.diff(c) for c in changes])


def _page(ctx: Context, items: list[Any]) -> Response:
    chunk, headers = paginate(items, ctx.query, ctx.link_base)
    return Response.json(chunk, headers=headers)


def _group(ctx: Context, gid: str) -> Any:
    found = ctx.data.group(gid)
    if found is None:
        raise not_found("Group")
    return found


def _project(ctx: Context, pid: str) -> ProjectInfo:
    found = ctx.data.project(pid)
    if found is None:
        raise not_found("Project")
    return found


def _head(p: ProjectInfo) -> str | None:
    return p.repo.resolve(p.default_branch) if p.repo.exists() else None


def _in_group(path: str, group_path: str) -> bool:
    return path.lower().startswith(group_path.lower() + "/")


_PROJECT_ORDER = {"id", "name", "path", "created_at", "updated_at", "last_activity_at"}


def _group_projects(ctx: Context, gid: str) -> Response:
    g = _group(ctx, gid)
    subgroups = bool_param(ctx.query, "include_subgroups")
    chosen = [
        p
        for p in ctx.data.projects
        if _in_group(p.path, g.full_path)
        and (subgroups or p.namespace.lower() == g.full_path.lower())
    ]
    # with_shared defaults to true: projects shared into the group are listed with its own
    # (doc/api/groups.md, "List projects of a group").
    if (first(ctx.query, "with_shared") or "true").lower() != "false":
        wanted = g.full_path.lower()
        chosen += [
            p
            for p in ctx.data.projects
            if p not in chosen and any(s.lower() == wanted for s in p.shared_with)
        ]
    if bool_param(ctx.query, "archived"):
        chosen = [p for p in chosen if p.archived]
    visibility = first(ctx.query, "visibility")
    if visibility:
        chosen = [p for p in chosen if p.visibility == visibility]
    order = first(ctx.query, "order_by") or "created_at"
    if order not in _PROJECT_ORDER:
        raise ApiError(400, "order_by does not have a valid value", "error")
    # created_at grows with the id; the other orders are rarely used by clients and fall back to it
    keyfn: Any = {"name": lambda p: p.name, "path": lambda p: p.name}.get(order, lambda p: p.id)
    chosen.sort(key=keyfn, reverse=(first(ctx.query, "sort") or "desc") == "desc")
    rows = [shapes.project(ctx.data, p, ctx.api_url) for p in chosen]
    return _page(ctx, rows)


def _repository(ctx: Context, p: ProjectInfo, rest: list[str]) -> Response:
    match rest:
        case ["branches"]:
            return _page(ctx, [_branch(p, n, sha) for n, sha in _refs(p, "heads")])
        case ["branches", *name] if name:
            wanted = "/".join(name)
            for n, sha in _refs(p, "heads"):
                if n == wanted:
                    return Response.json(_branch(p, n, sha))
            raise not_found("Branch")
        case ["tags"]:
            return _page(ctx, [_tag(p, n, sha) for n, sha in reversed(_refs(p, "tags"))])
        case ["tags", *name] if name:
            wanted = "/".join(name)
            for n, sha in _refs(p, "tags"):
                if n == wanted:
                    return Response.json(_tag(p, n, sha))
            raise not_found("Tag")
        case ["commits", ref]:
            return Response.json(shapes.commit_detail(p, p.repo.commit(_commit(p, ref))))
        case ["commits", ref, "diff"]:
            sha = _commit(p, ref)
            info = p.repo.commit(sha)
            changes = p.repo.diff(info.parents[0] if info.parents else None, sha)
            return _page(ctx, _limited(ctx, changes)[0])
        case ["commits", ref, "refs"]:
            return _commit_refs(ctx, p, _commit(p, ref))
        case ["tree"]:
            return _tree(ctx, p)
        case ["files", *path, "raw"] if path:
            return _file(ctx, p, "/".join(path), raw=True)
        case ["files", *path] if path:
            return _file(ctx, p, "/".join(path), raw=False)
        case ["archive"] | ["archive.tar.gz"] | ["archive.tgz"] | ["archive.tar"]:
            return _archive(ctx, p, gzipped=rest[0] != "archive.tar")
        case ["merge_base"]:
            return _merge_base(ctx, p)
        case ["compare"]:
            return _compare(ctx, p)
    raise ApiError(404, "404 Not Found", "error")


def _refs(p: ProjectInfo, kind: str) -> list[tuple[str, str]]:
    return p.repo.refs(kind) if p.repo.exists() else []


def _branch(p: ProjectInfo, name: str, sha: str) -> dict[str, Any]:
    head = _head(p)
    merged = name != p.default_branch and head is not None and p.repo.is_ancestor(sha, head)
    return shapes.branch(p, name, p.repo.commit(sha), merged)


def _tag(p: ProjectInfo, name: str, sha: str) -> dict[str, Any]:
    return shapes.tag(p, name, p.repo.commit(sha), p.repo.tag_message(name))


def _commit(p: ProjectInfo, ref: str) -> str:
    sha = p.repo.resolve(ref) if p.repo.exists() else None
    if sha is None:
        raise not_found("Commit")
    return sha


def _commit_refs(ctx: Context, p: ProjectInfo, sha: str) -> Response:
    kind = first(ctx.query, "type") or "all"
    if kind not in ("branch", "tag", "all"):
        raise ApiError(400, "type does not have a valid value", "error")
    refs = [{"type": t, "name": n} for t, n in p.repo.refs_containing(sha) if kind in ("all", t)]
    return _page(ctx, refs)


def _tree(ctx: Context, p: ProjectInfo) -> Response:
    ref = first(ctx.query, "ref") or p.default_branch
    sha = p.repo.resolve(ref) if p.repo.exists() else None
    path = (first(ctx.query, "path") or "").strip("/")
    entries = p.repo.tree(sha, path, bool_param(ctx.query, "recursive")) if sha else None
    if entries is None:
        raise not_found("Tree")
    rows = [
        {
            "id": e.sha,
            "name": e.path.rpartition("/")[2],
            "type": e.type,
            "path": e.path,
            "mode": e.mode,
        }
        for e in entries
    ]
    if first(ctx.query, "pagination") == "keyset":
        chunk, headers = keyset(rows, ctx.query, ctx.link_base, lambda r: str(r["path"]))
        return Response.json(chunk, headers=headers)
    return _page(ctx, rows)


def _file(ctx: Context, p: ProjectInfo, path: str, raw: bool) -> Response:
    ref = first(ctx.query, "ref")
    if ref is None and raw:
        ref = p.default_branch
    if not ref:
        raise ApiError(400, "ref is missing, ref is empty", "error")
    sha = p.repo.resolve(ref) if p.repo.exists() else None
    if sha is None:
        raise not_found("Commit")
    found = p.repo.blob(sha, path)
    if found is None:
        raise not_found("File")
    blob_id, mode, content = found
    last = p.repo.last_commit(sha, path)
    digest = hashlib.sha256(content).hexdigest()
    name = path.rpartition("/")[2]
    meta = {
        "file_name": name,
        "file_path": path,
        "size": len(content),
        "encoding": "base64",
        "content_sha256": digest,
        "ref": ref,
        "blob_id": blob_id,
        "commit_id": sha,
        "last_commit_id": last,
        "execute_filemode": mode == "100755",
    }
    headers = {
        "X-Gitlab-" + "-".join(w.capitalize() for w in k.split("_")): str(v).lower()
        if isinstance(v, bool)
        else str(v)
        for k, v in meta.items()
    }
    if raw:
        if bool_param(ctx.query, "lfs") and ctx.estate_root is not None:
            content = lfs_object(ctx.estate_root, content) or content
        return Response(200, content, {"Content-Type": "text/plain; charset=utf-8", **headers})
    if ctx.method == "HEAD":
        return Response(200, b"", headers)
    body = {**meta, "content": base64.b64encode(content).decode("ascii")}
    return Response.json(body)


def _archive(ctx: Context, p: ProjectInfo, gzipped: bool) -> Response:
    ref = first(ctx.query, "sha") or p.default_branch
    sha = p.repo.resolve(ref) if p.repo.exists() else None
    if sha is None:
        raise not_found("Commit")
    stem = f"{p.name}-{ref.replace('/', '-')}-{sha}"
    if p.path in ctx.archives:
        body = ctx.archives[p.path]
    else:
        tar = p.repo.archive(sha, f"{stem}/")
        if ctx.estate_root is not None:
            tar = archive_with_lfs(ctx.estate_root, tar)  # include_lfs_blobs defaults to true
        body = gzip.compress(tar, mtime=0) if gzipped else tar
    suffix = "tar.gz" if gzipped else "tar"
    return Response(
        200,
        body,
        {
            "Content-Type": "application/octet-stream",
            "Content-Disposition": f'attachment; filename="{stem}.{suffix}"',
            "Content-Transfer-Encoding": "binary",
        },
    )


def _merge_base(ctx: Context, p: ProjectInfo) -> Response:
    refs = ctx.query.get("refs[]") or ctx.query.get("refs") or []
    if len(refs) < 2:
        raise ApiError(400, "Provide at least 2 refs")
    shas = [(ref, p.repo.resolve(ref)) for ref in refs]
    unknown = [ref for ref, sha in shas if sha is None]
    if unknown:
        noun = "refs" if len(unknown) > 1 else "ref"
        raise ApiError(400, f"Could not find {noun}: {', '.join(unknown)}")
    base = p.repo.merge_base(*[s for _, s in shas if s])
    if base is None:
        raise not_found("Merge Base")
    return Response.json(shapes.commit(p, p.repo.commit(base)))


def _compare(ctx: Context, p: ProjectInfo) -> Response:
    source, target = first(ctx.query, "from"), first(ctx.query, "to")
    if not source or not target:
        raise ApiError(400, "from is missing, to is missing", "error")
    old, new = _commit(p, source), _commit(p, target)
    base = old if bool_param(ctx.query, "straight") else p.repo.merge_base(old, new) or old
    commits = [shapes.commit(p, p.repo.commit(s)) for s in p.repo.rev_list(old, new)]
    diffs, overflow = _limited(ctx, p.repo.diff(base, new))
    return Response.json(
        {
            "commit": shapes.commit(p, p.repo.commit(new)) if commits else None,
            "commits": commits,
            "diffs": diffs,
            "compare_timeout": overflow,
            "compare_same_ref": source == target,
            "web_url": f"{p.web_url}/-/compare/{source}...{target}",
        }
    )


def _mr_record(ctx: Context, p: ProjectInfo, iid: str) -> dict[str, Any]:
    for record in ctx.data.merge_requests:
        if record.get("project") == p.path and str(record.get("iid")) == iid:
            return record
    raise ApiError(404, "404 Not found")


def _mr_head(p: ProjectInfo, record: dict[str, Any]) -> str | None:
    if record.get("sha"):
        return p.repo.resolve(str(record["sha"]))
    source = p.repo.resolve(str(record.get("source_branch", "")))
    if source:
        return source
    merge = record.get("merge_commit_sha")
    if merge and p.repo.resolve(str(merge)):
        parents = p.repo.commit(str(merge)).parents
        if len(parents) > 1:
            return parents[1]
    landed = record.get("squash_commit_sha") or merge
    return p.repo.resolve(str(landed)) if landed else None


def _mr_changes(p: ProjectInfo, record: dict[str, Any]) -> list[Any]:
    merge, squash = record.get("merge_commit_sha"), record.get("squash_commit_sha")
    if merge and p.repo.resolve(str(merge)):
        info = p.repo.commit(str(merge))
        if len(info.parents) > 1:
            base = p.repo.merge_base(info.parents[0], info.parents[1])
            return p.repo.diff(base, info.parents[1])
        return p.repo.diff(info.parents[0] if info.parents else None, info.sha)
    if squash and p.repo.resolve(str(squash)):
        info = p.repo.commit(str(squash))
        return p.repo.diff(info.parents[0] if info.parents else None, info.sha)
    head = _mr_head(p, record)
    target = p.repo.resolve(str(record.get("target_branch", p.default_branch)))
    if head is None:
        return []
    base = p.repo.merge_base(target, head) if target else None
    if base == head:
        parents = p.repo.commit(head).parents
        base = parents[0] if parents else None
    return p.repo.diff(base, head)


def _merge_request(ctx: Context, p: ProjectInfo, record: dict[str, Any]) -> dict[str, Any]:
    iid = int(record["iid"])
    state = str(record.get("state", "opened"))
    merge, squash = record.get("merge_commit_sha"), record.get("squash_commit_sha")
    head = _mr_head(p, record)
    landed = squash or merge or head
    landed_sha = p.repo.resolve(str(landed)) if landed else None
    landed_at = shapes.utc(p.repo.commit(landed_sha).committed_date) if landed_sha else None
    created = landed_at or "2026-01-01T00:00:00.000Z"
    author = shapes.user(ctx.data.url)
    return {
        "id": p.id * 1_000_000 + iid,
        "iid": iid,
        "project_id": p.id,
        "title": str(record.get("title", f"Merge request !{iid}")),
        "description": str(record.get("description", "")),
        "state": state,
        "created_at": created,
        "updated_at": created,
        "merged_by": author if state == "merged" else None,
        "merge_user": author if state == "merged" else None,
        "merged_at": landed_at if state == "merged" else None,
        "closed_by": None,
        "closed_at": landed_at if state == "closed" else None,
        "target_branch": str(record.get("target_branch", p.default_branch)),
        "source_branch": str(record.get("source_branch", "")),
        "user_notes_count": 0,
        "upvotes": 0,
        "downvotes": 0,
        "author": author,
        "assignees": [],
        "assignee": None,
        "reviewers": [],
        "source_project_id": p.id,
        "target_project_id": p.id,
        "labels": [],
        "draft": False,
        "work_in_progress": False,
        "milestone": None,
        "merge_when_pipeline_succeeds": False,
        "merge_status": "can_be_merged",
        "detailed_merge_status": "mergeable" if state == "opened" else "not_open",
        "sha": head,
        "merge_commit_sha": merge or None,
        "squash_commit_sha": squash or None,
        "discussion_locked": None,
        "should_remove_source_branch": None,
        "force_remove_source_branch": None,
        "squash": bool(squash),
        "squash_on_merge": bool(squash),
        "web_url": f"{p.web_url}/-/merge_requests/{iid}",
        "references": {"short": f"!{iid}", "relative": f"!{iid}", "full": f"{p.path}!{iid}"},
        "time_stats": {
            "time_estimate": 0,
            "total_time_spent": 0,
            "human_time_estimate": None,
            "human_total_time_spent": None,
        },
    }


def _when(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ApiError(400, f"{name} is invalid", "error") from None
    if moment.tzinfo is None:
        raise ApiError(400, f"{name} is invalid", "error")
    return moment


def _issues(ctx: Context, projects: list[ProjectInfo]) -> Response:
    after = _when(first(ctx.query, "updated_after"), "updated_after")
    before = _when(first(ctx.query, "updated_before"), "updated_before")
    state = first(ctx.query, "state") or "all"
    order = first(ctx.query, "order_by") or "created_at"
    if order not in ("created_at", "updated_at"):
        raise ApiError(400, "order_by does not have a valid value", "error")
    query = first(ctx.query, "search")
    columns = set((first(ctx.query, "in") or "title,description").split(","))
    if not columns <= {"title", "description"}:
        raise ApiError(400, "in does not have a valid value", "error")
    rows = []
    for p in projects:
        for record in ctx.data.issues(p.path):
            title, text = str(record.get("title") or ""), str(record.get("description") or "")
            if query and not search.matches(query, title, text, columns):
                continue  # GitLab's matching: see search.py
            row = shapes.issue(ctx.data, p, record)
            # GitLab stores microseconds and shows milliseconds: filters and order use what it
            # stores (doc/api/issues.md; timestamps as in doc/api/rest/index.md "Data validation
            # and error reporting"), so an issue may be later than the time it shows.
            stored = datetime.fromisoformat(str(record.get(order) or record.get("updated_at")))
            moment = datetime.fromisoformat(str(record.get("updated_at") or row["updated_at"]))
            if after and moment < after or before and moment > before:
                continue
            if state != "all" and row["state"] != state:
                continue
            rows.append((stored, row))
    # Ties on the sort key come newest id first (GitLab's sort adds "id DESC").
    rows.sort(key=lambda r: r[1]["id"], reverse=True)
    rows.sort(key=lambda r: r[0], reverse=(first(ctx.query, "sort") or "desc") == "desc")
    return _page(ctx, [row for _, row in rows])


def _issue_record(ctx: Context, p: ProjectInfo, iid: str) -> dict[str, Any]:
    for record in ctx.data.issues(p.path):
        if str(record.get("iid")) == iid:
            return record
    raise ApiError(404, "404 Issue Not Found")


def _issue_notes(ctx: Context, p: ProjectInfo, iid: str) -> Response:
    record = _issue_record(ctx, p, iid)
    rows = [shapes.note(ctx.data, p, int(iid), n) for n in record.get("notes") or []]
    # activity_filter: all_notes (default), only_comments, only_activity (doc/api/notes.md).
    activity = first(ctx.query, "activity_filter") or "all_notes"
    if activity not in ("all_notes", "only_comments", "only_activity"):
        raise ApiError(400, "activity_filter does not have a valid value", "error")
    if activity != "all_notes":
        rows = [r for r in rows if r["system"] == (activity == "only_activity")]
    order = first(ctx.query, "order_by") or "created_at"
    if order not in ("created_at", "updated_at"):
        raise ApiError(400, "order_by does not have a valid value", "error")
    rows.sort(
        key=lambda r: (r[order], r["id"]), reverse=(first(ctx.query, "sort") or "desc") == "desc"
    )
    return _page(ctx, rows)
