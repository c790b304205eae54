"""The estate directory as the test server sees it: projects, groups, merge requests and issues.

Numeric ids follow estate.toml order (projects 1..n; groups numbered in order of first appearance
of each namespace prefix), so they are stable for a given estate.toml. Files are re-read when they
change on disk (estate.toml checked on every request, a project's issue file when its issues are
asked for), so a test may rewrite them between requests; ``overrides`` (set by
``GitLabServer.set_visibility``/``set_archived``) are applied on top of every reload.
"""

from __future__ import annotations

import json
import threading
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.gitlab_server.git import GitRepo

_MAX_ISSUE_FILE = 20_000_000  # bytes; bound what a fixture file can make the server hold


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    path: str  # full path, group/subgroup/project
    visibility: str
    archived: bool
    default_branch: str
    repo: GitRepo
    web_url: str
    shared_with: tuple[str, ...] = ()  # groups this project is shared into (estate.toml)

    @property
    def namespace(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]


@dataclass(frozen=True)
class GroupInfo:
    id: int
    full_path: str
    parent: str | None  # full path of the parent group
    web_url: str

    @property
    def name(self) -> str:
        return self.full_path.rpartition("/")[2]


class IssueFiles:
    """Each project's issues/<path>.jsonl, parsed once per version of the file on disk."""

    def __init__(self, root: Path):
        self.root = root
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple[int, int], list[dict[str, Any]]]] = {}

    def of(self, path: str) -> list[dict[str, Any]]:
        issue_file = self.root / "issues" / f"{path}.jsonl"
        try:
            st = issue_file.stat()
        except FileNotFoundError:
            return []
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._cache.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        if st.st_size > _MAX_ISSUE_FILE:
            raise ValueError(f"{issue_file} is larger than {_MAX_ISSUE_FILE} bytes")
        lines = issue_file.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
        with self._lock:
            self._cache[path] = (stamp, records)
        return records


@dataclass
class EstateData:
    url: str
    projects: list[ProjectInfo]
    groups: list[GroupInfo]
    merge_requests: list[dict[str, Any]]
    issue_files: IssueFiles

    def issues(self, project_path: str) -> list[dict[str, Any]]:
        return self.issue_files.of(project_path)

    def project(self, ident: str) -> ProjectInfo | None:
        """A project by numeric id or full path (case-insensitive, like GitLab's lookup)."""
        for p in self.projects:
            if str(p.id) == ident or p.path.lower() == ident.lower():
                return p
        return None

    def group(self, ident: str) -> GroupInfo | None:
        for g in self.groups:
            if str(g.id) == ident or g.full_path.lower() == ident.lower():
                return g
        return None

    def group_by_path(self, full_path: str) -> GroupInfo:
        found = self.group(full_path)
        assert found is not None
        return found


def _names(value: Any) -> tuple[str, ...]:
    """A group path or a list of them."""
    return (value,) if isinstance(value, str) else tuple(str(v) for v in value)


def _load(root: Path, overrides: dict[str, dict[str, Any]], issues: IssueFiles) -> EstateData:
    meta = tomllib.loads((root / "estate.toml").read_text(encoding="utf-8"))
    url = str(meta.get("url", "https://gitlab.example")).rstrip("/")
    projects: list[ProjectInfo] = []
    groups: dict[str, GroupInfo] = {}
    for n, row in enumerate(meta.get("project", []), start=1):
        path = str(row["path"]).strip("/")
        parts = path.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            if prefix not in groups:
                parent = "/".join(parts[: depth - 1]) or None
                groups[prefix] = GroupInfo(
                    len(groups) + 1, prefix, parent, f"{url}/groups/{prefix}"
                )
        project = ProjectInfo(
            id=n,
            path=path,
            visibility=str(row.get("visibility", "public")),
            archived=bool(row.get("archived", False)),
            default_branch=str(row.get("default_branch", "main")),
            repo=GitRepo(root / "repos" / path),
            web_url=f"{url}/{path}",
            shared_with=_names(row.get("shared_with", [])),
        )
        projects.append(replace(project, **overrides.get(path, {})))
    return EstateData(
        url=url,
        projects=projects,
        groups=list(groups.values()),
        merge_requests=[dict(mr) for mr in meta.get("merge_request", [])],
        issue_files=issues,
    )


class Estate:
    """Thread-safe, change-aware view of an estate directory."""

    def __init__(self, root: Path):
        self.root = root
        self.overrides: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._stamp: tuple[Any, ...] | None = None
        self._data: EstateData | None = None
        self._issues = IssueFiles(root)

    def _current_stamp(self) -> tuple[Any, ...]:
        st = (self.root / "estate.toml").stat()
        return (repr(sorted(self.overrides.items())), st.st_mtime_ns, st.st_size)

    def data(self) -> EstateData:
        with self._lock:
            stamp = self._current_stamp()
            if self._data is None or stamp != self._stamp:
                self._data = _load(self.root, self.overrides, self._issues)
                self._stamp = stamp
            return self._data

    def override(self, path: str, **fields: Any) -> None:
        with self._lock:
            self.overrides.setdefault(path, {}).update(fields)

    def clear_overrides(self) -> None:
        with self._lock:
            self.overrides.clear()
