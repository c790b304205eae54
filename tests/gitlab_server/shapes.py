"""GitLab v4 JSON shapes built from estate records and git objects.

Field names and types follow GitLab's entities and its published schemas
(spec/fixtures/api/schemas/public_api/v4/); fields Scout has no source for carry GitLab's
neutral values (empty lists, null, false, 0) rather than being left out.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.gitlab_server.estate import EstateData, GroupInfo, ProjectInfo
from tests.gitlab_server.git import CommitInfo, FileChange

_PROJECT_EPOCH = 1735689600  # 2025-01-01T00:00:00Z; project n was created n minutes later


def utc(stamp: str | None) -> str | None:
    """An ISO 8601 time as GitLab prints record times: UTC, milliseconds, ``Z``."""
    if stamp is None:
        return None
    moment = datetime.fromisoformat(stamp).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def git_time(stamp: str) -> str:
    """A git date as GitLab prints commit dates: milliseconds and the commit's own offset."""
    return datetime.fromisoformat(stamp).isoformat(timespec="milliseconds")


def user(
    url: str, uid: int = 1, username: str = "acme-dev", name: str = "Acme Dev"
) -> dict[str, Any]:
    return {
        "id": uid,
        "username": username,
        "name": name,
        "state": "active",
        "locked": False,
        "avatar_url": f"{url}/uploads/-/system/user/avatar/{uid}/avatar.png",
        "web_url": f"{url}/{username}",
    }


def current_user(url: str) -> dict[str, Any]:
    return {
        **user(url, 2, "scout-bot", "Scout Bot"),
        "bot": False,
        "created_at": "2025-01-01T00:00:00.000Z",
        "is_admin": False,
        "email": "scout-bot@example.invalid",
    }


def group(data: EstateData, g: GroupInfo) -> dict[str, Any]:
    parent = data.group(g.parent) if g.parent else None
    return {
        "id": g.id,
        "web_url": g.web_url,
        "name": g.name,
        "path": g.name,
        "description": "",
        "visibility": "public",
        "full_name": " / ".join(g.full_path.split("/")),
        "full_path": g.full_path,
        "parent_id": parent.id if parent else None,
        "created_at": "2025-01-01T00:00:00.000Z",
        "avatar_url": None,
    }


def project(data: EstateData, p: ProjectInfo, api_url: str) -> dict[str, Any]:
    head, last_activity = p.repo.summary(p.default_branch)
    ns = data.group_by_path(p.namespace)
    created = utc(datetime.fromtimestamp(_PROJECT_EPOCH + 60 * p.id, UTC).isoformat())
    host = data.url.split("://", 1)[-1].split("/", 1)[0]
    self_url = f"{api_url}/projects/{p.id}"
    return {
        "id": p.id,
        "description": None,
        "name": p.name,
        "name_with_namespace": " / ".join(p.path.split("/")),
        "path": p.name,
        "path_with_namespace": p.path,
        "created_at": created,
        "default_branch": p.default_branch if head else None,
        "tag_list": [],
        "topics": [],
        "ssh_url_to_repo": f"git@{host}:{p.path}.git",
        "http_url_to_repo": f"{p.web_url}.git",
        "web_url": p.web_url,
        "readme_url": None,
        "avatar_url": None,
        "forks_count": 0,
        "star_count": 0,
        "last_activity_at": utc(last_activity) or created,
        "namespace": {
            "id": ns.id,
            "name": ns.name,
            "path": ns.name,
            "kind": "group",
            "full_path": ns.full_path,
            "parent_id": data.group_by_path(ns.parent).id if ns.parent else None,
            "avatar_url": None,
            "web_url": ns.web_url,
        },
        "visibility": p.visibility,
        "archived": p.archived,
        "empty_repo": head is None,
        "issues_enabled": True,
        "merge_requests_enabled": True,
        "repository_access_level": "enabled",
        "_links": {
            "self": self_url,
            "issues": f"{self_url}/issues",
            "merge_requests": f"{self_url}/merge_requests",
            "repo_branches": f"{self_url}/repository/branches",
        },
    }


def commit(p: ProjectInfo, c: CommitInfo) -> dict[str, Any]:
    """A commit as GitLab's ``Commit`` entity (the basic schema's required fields and more)."""
    title = c.message.split("\n", 1)[0]
    return {
        "id": c.sha,
        "short_id": c.sha[:8],
        "created_at": git_time(c.committed_date),
        "parent_ids": list(c.parents),
        "title": title,
        "message": c.message,
        "author_name": c.author_name,
        "author_email": c.author_email,
        "authored_date": git_time(c.authored_date),
        "committer_name": c.committer_name,
        "committer_email": c.committer_email,
        "committed_date": git_time(c.committed_date),
        "trailers": {},
        "extended_trailers": {},
        "web_url": f"{p.web_url}/-/commit/{c.sha}",
    }


def commit_detail(p: ProjectInfo, c: CommitInfo) -> dict[str, Any]:
    return {**commit(p, c), "project_id": p.id, "status": None, "last_pipeline": None}


def branch(p: ProjectInfo, name: str, c: CommitInfo, merged: bool) -> dict[str, Any]:
    default = name == p.default_branch
    return {
        "name": name,
        "commit": commit(p, c),
        "merged": merged,
        "protected": default,
        "default": default,
        "developers_can_push": False,
        "developers_can_merge": False,
        "can_push": True,
        "web_url": f"{p.web_url}/-/tree/{name}",
    }


def tag(p: ProjectInfo, name: str, c: CommitInfo, message: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "message": message,
        "target": c.sha,
        "commit": commit(p, c),
        "release": None,
        "protected": False,
        "created_at": None,
    }


def diff(change: FileChange) -> dict[str, Any]:
    return {
        "diff": change.diff,
        "new_path": change.new_path,
        "old_path": change.old_path,
        "a_mode": change.a_mode,
        "b_mode": change.b_mode,
        "new_file": change.new_file,
        "renamed_file": change.renamed_file,
        "deleted_file": change.deleted_file,
        "generated_file": False,
    }


def issue(data: EstateData, p: ProjectInfo, record: dict[str, Any]) -> dict[str, Any]:
    iid = int(record["iid"])
    notes = record.get("notes") or []
    state = str(record.get("state", "opened"))
    updated = utc(str(record.get("updated_at") or record.get("created_at")))
    return {
        "id": issue_id(p, iid),
        "iid": iid,
        "project_id": p.id,
        "title": str(record.get("title", "")),
        "description": record.get("description"),
        "state": state,
        "created_at": utc(str(record.get("created_at") or record.get("updated_at"))),
        "updated_at": updated,
        "closed_at": updated if state == "closed" else None,
        "closed_by": None,
        "labels": list(record.get("labels", [])),
        "milestone": None,
        "assignees": [],
        "assignee": None,
        "author": record.get("author") or user(data.url),
        "type": "ISSUE",
        "issue_type": "issue",
        "user_notes_count": sum(1 for n in notes if not n.get("system")),
        "merge_requests_count": 0,
        "upvotes": 0,
        "downvotes": 0,
        "due_date": None,
        # doc/api/issues.md: ``confidential`` issues are visible to project members only.
        "confidential": bool(record.get("confidential", False)),
        "discussion_locked": None,
        "web_url": str(record.get("web_url") or f"{p.web_url}/-/issues/{iid}"),
        "time_stats": {
            "time_estimate": 0,
            "total_time_spent": 0,
            "human_time_estimate": None,
            "human_total_time_spent": None,
        },
        "task_completion_status": {"count": 0, "completed_count": 0},
        "has_tasks": False,
        "references": {"short": f"#{iid}", "relative": f"#{iid}", "full": f"{p.path}#{iid}"},
        "severity": "UNKNOWN",
    }


def issue_id(p: ProjectInfo, iid: int) -> int:
    return p.id * 1_000_000 + iid


def note(data: EstateData, p: ProjectInfo, iid: int, record: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": int(record["id"]),
        "type": None,
        "body": str(record.get("body", "")),
        "attachment": None,
        "author": record.get("author") or user(data.url),
        "created_at": utc(str(record.get("created_at") or record.get("updated_at"))),
        "updated_at": utc(str(record.get("updated_at") or record.get("created_at"))),
        "system": bool(record.get("system", False)),
        "noteable_id": issue_id(p, iid),
        "noteable_type": "Issue",
        "noteable_iid": iid,
        "project_id": p.id,
        "resolvable": False,
        # doc/api/notes.md: ``internal`` marks a note only project members see; ``confidential``
        # is the deprecated name GitLab still sends with the same value.
        "confidential": bool(record.get("internal", False)),
        "internal": bool(record.get("internal", False)),
        "imported": False,
        "commands_changes": {},
    }
