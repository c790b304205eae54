"""The ``local`` forge: an estate directory of git repositories (docs/design.md, "Estate
directory").

It answers every forge operation the way the GitLab forge does, from ``estate.toml``, the
repositories under ``repos/`` and the issue files under ``issues/``, and counts each operation as
the request it would be on GitLab. ``estate.toml`` is re-read on each project listing, so a project
made private or archived between two runs is seen as such.

A ``[[project]]`` may also name where it lives (``scout init`` writes these): ``repo``, a git
repository anywhere, or ``folder``, a plain folder read through snapshots the estate keeps
(``scout.forge.folder``); and ``web_url``, the page its permalinks are built on (GitHub's
permalink form on github.com, GitLab's anywhere else).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from scout import timefmt
from scout.errors import EstateError, ForgeError, GroupNotFound, NotFound
from scout.forge.base import (
    Commit,
    FileDiff,
    FileEntry,
    Issue,
    IssueLink,
    MergeRequest,
    Note,
    Project,
    RefPath,
    count_lines,
    in_groups,
    merge_state,
    permalink,
    visibility,
)
from scout.forge.folder import snapshot
from scout.forge.git import GitRepo
from scout.toml_input import TomlProblem, read_toml

log = logging.getLogger(__name__)
_FULL_SHA = {40, 64}


class LocalForge:
    kind = "local"

    def __init__(self, estate: Path, groups: list[str], url: str | None = None) -> None:
        self.estate = Path(estate)
        self.groups = [g.strip("/") for g in groups]
        self.requests: Counter[str] = Counter()
        self._repos: dict[str, GitRepo] = {}
        # project path -> ("repo" | "folder", where), for projects estate.toml places themselves
        self._places: dict[str, tuple[str, Path]] = {}
        self.url = (url or self._metadata().get("url") or "").rstrip("/")

    # ------------------------------------------------------------------ metadata
    def _metadata(self) -> dict[str, Any]:
        target = self.estate / "estate.toml"
        try:
            data = read_toml(target)
        except FileNotFoundError as exc:
            raise EstateError(
                "unreachable",
                f"no estate.toml in {self.estate}: check forge.path in the config "
                "(`scout init` writes both)",
            ) from exc
        except (OSError, TomlProblem) as exc:
            raise EstateError("bad data", f"{target}: {exc}") from exc
        problem = _estate_problem(data)
        if problem is not None:
            raise EstateError("bad data", f"{target}: {problem}")
        return data

    def _project(self, row: dict[str, Any], base: str) -> Project:
        path = str(row["path"]).strip("/")
        base = base.rstrip("/")
        for kind in ("repo", "folder"):
            if row.get(kind):
                place = Path(str(row[kind])).expanduser()
                self._places[path] = (kind, place if place.is_absolute() else self.estate / place)
        branch = row.get("default_branch")
        # GitLab reports no default branch for a repository without commits; so do we.
        if branch and not self._has_branch(path, str(branch)):
            branch = None
        return Project(
            path=path,
            visibility=visibility(row.get("visibility", "private")),
            archived=bool(row.get("archived", False)),
            default_branch=branch,
            web_url=str(row.get("web_url") or f"{base}/{path}").rstrip("/"),
            last_activity_at=row.get("last_activity_at"),
            id=path,
        )

    def projects(self) -> Iterator[Project]:
        self.requests["projects"] += 1
        meta = self._metadata()
        rows = meta.get("project", [])
        self._check_groups(rows)
        for row in rows:
            project = self._project(row, meta.get("url", self.url))
            if in_groups(project.path, self.groups):
                yield project

    def _check_groups(self, rows: list[dict[str, Any]], groups: list[str] | None = None) -> None:
        """An estate has no group records: a group that holds no project is not there."""
        paths = [str(row.get("path", "")).strip("/") for row in rows]
        for group in groups or self.groups:
            if not any(in_groups(path, [group]) for path in paths):
                raise GroupNotFound(group, str(self.estate / "estate.toml"), estate=True)

    def project(self, path: str) -> Project:
        self.requests["project"] += 1
        meta = self._metadata()
        for row in meta.get("project", []):
            if str(row.get("path", "")).strip("/") == path.strip("/"):
                return self._project(row, meta.get("url", self.url))
        raise NotFound(f"project {path}")

    def _has_branch(self, path: str, branch: str) -> bool:
        try:
            repo = self._repo(path)
        except NotFound:
            return False
        except ForgeError:
            return True  # a folder that cannot be read now: head() reports the fault
        if repo.rev(f"refs/heads/{branch}") is not None:
            return True
        try:
            repo.check_readable()
        except ForgeError:
            return True  # unreadable is not empty: head() reports the fault
        return False

    def _repo(self, project: Project | str) -> GitRepo:
        # A project estate.toml lists whose folder is missing or unreadable is a read fault
        # (GitRepo says so), never a project that is gone: only estate.toml can say that.
        path = project if isinstance(project, str) else project.path
        if path not in self._repos:
            if ".." in Path(path).parts:
                raise NotFound(f"repository of {path}")
            kind, place = self._places.get(path, ("repo", self.estate / "repos" / path))
            if kind == "folder":
                # once a run: what the folder holds now, committed when it changed
                shadow = self.estate / "snapshots" / f"{path}.git"
                snapshot(place, shadow)
                place = shadow
            self._repos[path] = GitRepo(place)
        return self._repos[path]

    def close(self) -> None:
        for repo in self._repos.values():
            repo.close()

    # ------------------------------------------------------------------ content
    def head(self, project: Project) -> str | None:
        self.requests["head"] += 1
        if not project.default_branch:
            return None
        try:
            repo = self._repo(project)
        except NotFound:
            return None
        sha = repo.rev(f"refs/heads/{project.default_branch}")
        if sha is None:
            repo.check_readable()
        return sha

    def files(self, project: Project, sha: str) -> list[FileEntry]:
        self.requests["tree"] += 1
        repo = self._repo(project)
        raw = repo.run("ls-tree", "-r", "-l", "-z", "--full-tree", sha, check=False)
        if raw.returncode != 0:
            repo.check_readable()
            raise NotFound(f"tree {sha[:12]} of {project.path}")
        entries = []
        for record in raw.stdout.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, _kind, _obj, size = meta.split()
            kind = {b"120000": "symlink", b"160000": "submodule"}.get(mode, "blob")
            entries.append(
                FileEntry(
                    path=name.decode("utf-8", "surrogateescape"),
                    size=int(size) if size != b"-" else 0,
                    kind=kind,  # type: ignore[arg-type]
                )
            )
        return entries

    def read(self, project: Project, sha: str, path: str) -> bytes:
        self.requests["files"] += 1
        data = self._repo(project).cat(sha, path)
        if data is None:
            raise NotFound(f"file {path} at {sha[:12]} in {project.path}")
        return data

    def is_folder(self, project: Project, sha: str, path: str) -> bool:
        self.requests["tree"] += 1
        if "\n" in path or not path.strip("/"):
            return False
        found = self._repo(project).run("cat-file", "-t", f"{sha}:{path.strip('/')}", check=False)
        return found.returncode == 0 and found.stdout.strip() == b"tree"

    def line_count(self, project: Project, sha: str, path: str) -> int | None:
        try:
            data = self.read(project, sha, path)
        except NotFound:
            return None
        return count_lines(data)

    def permalink(
        self, project: Project, sha: str, path: str, lines: tuple[int, int] | None
    ) -> str:
        if urlsplit(project.web_url).hostname == "github.com":
            # GitHub has no /-/ in its blob URLs and spells a range #L12-L30
            start, end = lines or (0, 0)
            anchor = "" if not lines else f"#L{start}" if start == end else f"#L{start}-L{end}"
            return f"{project.web_url}/blob/{sha}/{quote(path)}{anchor}"
        return permalink(project.web_url, sha, path, lines)

    # ------------------------------------------------------------------ history
    def commit(self, project: Project, sha: str) -> Commit:
        self.requests["commits"] += 1
        repo = self._repo(project)
        full = repo.rev(sha) if _is_hex(sha) else None
        if full is None:
            raise NotFound(f"commit {sha} in {project.path}")
        out = repo.text("show", "-s", "--format=%H%x00%P%x00%s%x00%aI", full).rstrip("\n")
        commit_sha, parents, title, date = out.split("\0")
        return Commit(commit_sha, tuple(parents.split()), title, timefmt.from_forge(date) or date)

    def is_ancestor(self, project: Project, ancestor: str, descendant: str) -> bool:
        self.requests["commits"] += 1
        done = self._repo(project).run(
            "merge-base", "--is-ancestor", ancestor, descendant, check=False
        )
        if done.returncode not in (0, 1):
            raise NotFound(f"commit {ancestor} or {descendant} in {project.path}")
        return done.returncode == 0

    def commit_diff(self, project: Project, sha: str) -> list[FileDiff]:
        commit = self.commit(project, sha)
        self.requests["diff"] += 1
        parent = commit.parents[0] if commit.parents else None
        return self._repo(project).diff(parent, commit.sha)

    def compare(self, project: Project, old: str, new: str) -> list[FileDiff]:
        self.requests["diff"] += 1
        repo = self._repo(project)
        # As GitLab's compare answers 404 for an unknown sha (git diff would fail outright).
        for sha in (old, new):
            if not _is_hex(sha) or repo.rev(sha) is None:
                raise NotFound(f"commit {sha} in {project.path}")
        return repo.diff(old, new)

    def _mr_row(self, project: Project, iid: int) -> dict[str, Any]:
        for row in self._metadata().get("merge_request", []):
            if str(row.get("project", "")).strip("/") == project.path and int(row["iid"]) == iid:
                return dict(row)
        raise NotFound(f"merge request !{iid} in {project.path}")

    def merge_request(self, project: Project, iid: int) -> MergeRequest:
        self.requests["mrs"] += 1
        row = self._mr_row(project, iid)
        return MergeRequest(
            project=project.path,
            iid=iid,
            state=merge_state(row.get("state", "opened")),
            target_branch=str(row.get("target_branch", project.default_branch or "main")),
            source_branch=row.get("source_branch"),
            sha=row.get("sha") or self._branch_sha(project, row.get("source_branch")),
            merge_commit_sha=row.get("merge_commit_sha"),
            squash_commit_sha=row.get("squash_commit_sha"),
        )

    def _branch_sha(self, project: Project, branch: str | None) -> str | None:
        if not branch:
            return None
        try:
            return self._repo(project).rev(f"refs/heads/{branch}")
        except NotFound:
            return None

    def merge_request_diffs(self, project: Project, iid: int) -> list[FileDiff]:
        mr = self.merge_request(project, iid)
        self.requests["diff"] += 1
        repo = self._repo(project)
        if mr.merge_commit_sha:
            parents = repo.text("show", "-s", "--format=%P", mr.merge_commit_sha).split()
            return repo.diff(parents[0] if parents else None, mr.merge_commit_sha)
        if mr.squash_commit_sha:
            parents = repo.text("show", "-s", "--format=%P", mr.squash_commit_sha).split()
            return repo.diff(parents[0] if parents else None, mr.squash_commit_sha)
        if mr.sha:
            target = repo.rev(f"refs/heads/{mr.target_branch}")
            base = repo.text("merge-base", target, mr.sha).strip() if target else None
            return repo.diff(base or None, mr.sha)
        return []

    def resolve_ref_path(self, project: Project, ref_and_path: str) -> RefPath | None:
        self.requests["refs"] += 1
        repo = self._repo(project)
        parts = ref_and_path.strip("/").split("/")
        if len(parts) >= 2 and len(parts[0]) in _FULL_SHA and _is_hex(parts[0]):
            sha = repo.rev(parts[0])
            return RefPath(parts[0], "/".join(parts[1:]), sha) if sha else None
        refs = {}
        listing = repo.text(
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(*objectname)",
            "refs/heads",
            "refs/tags",
        )
        for line in listing.splitlines():
            name, obj, peeled = line.split("\0")
            short = name.removeprefix("refs/heads/").removeprefix("refs/tags/")
            # a branch wins over a tag of the same name, as in GitLab
            if name.startswith("refs/heads/") or short not in refs:
                refs[short] = peeled or obj
        for cut in range(len(parts) - 1, 0, -1):
            ref = "/".join(parts[:cut])
            if ref in refs:
                return RefPath(ref, "/".join(parts[cut:]), refs[ref])
        return None

    # ------------------------------------------------------------------ issues
    def _issue_files(self, group: str) -> Iterator[tuple[str, Path]]:
        root = self.estate / "issues"
        rows = self._metadata().get("project", [])
        self._check_groups(rows, [group])
        for row in rows:
            path = str(row["path"]).strip("/")
            if in_groups(path, [group]):
                target = root / f"{path}.jsonl"
                if target.is_file():
                    yield path, target

    def _read_issues(self, path: str, target: Path) -> Iterator[dict[str, Any]]:
        with target.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    int(record["iid"])
                    str(record["updated_at"])
                except (ValueError, KeyError, TypeError, RecursionError):
                    log.warning("%s line %d: not an issue record, skipped", target, number)
                    continue
                problem = _notes_problem(record.get("notes"))
                if problem is not None:
                    raise EstateError("bad data", f"{target} line {number}: {problem}")
                yield record

    def issues_updated_after(self, group: str, after: str | None) -> Iterator[Issue]:
        self.requests["issues"] += 1
        found = []
        for path, target in self._issue_files(group):
            for record in self._read_issues(path, target):
                if after is None or _at_or_after(record["updated_at"], after):
                    notes = [n for n in record.get("notes") or [] if not n.get("system")]
                    found.append(
                        Issue(
                            project=path,
                            iid=int(record["iid"]),
                            title=str(record.get("title") or ""),
                            description=str(record.get("description") or ""),
                            state=str(record.get("state", "opened")),
                            updated_at=timefmt.from_forge(record["updated_at"]) or "",
                            web_url=str(
                                record.get("web_url")
                                or f"{self.url}/{path}/-/issues/{record['iid']}"
                            ),
                            user_notes_count=len(notes),
                            project_id=path,
                            confidential=bool(record.get("confidential", False)),
                        )
                    )
        found.sort(key=lambda i: (i.updated_at, i.project, i.iid))
        yield from found

    def issue_notes(self, issue: Issue) -> Iterator[Note]:
        self.requests["notes"] += 1
        target = self.estate / "issues" / f"{issue.project}.jsonl"
        if not target.is_file():
            return
        for record in self._read_issues(issue.project, target):
            if int(record["iid"]) != issue.iid:
                continue
            for note in record.get("notes") or []:
                if not note.get("system"):
                    yield Note(
                        id=int(note.get("id", 0)),
                        body=str(note.get("body") or ""),
                        system=False,
                        updated_at=timefmt.from_forge(note.get("updated_at")),
                        internal=bool(note.get("internal", False)),
                    )

    def search_issues(self, group: str, words: list[str], limit: int) -> list[IssueLink]:
        """GitLab's issue search over the estate's issue files, newest first (GitLab's default
        order, ``created_at`` descending); see :func:`issue_matches` for the matching."""
        self.requests["search"] += 1
        found = []
        for path, target in self._issue_files(group):
            for record in self._read_issues(path, target):
                text = f"{record.get('title') or ''}\n{record.get('description') or ''}"
                if issue_matches(words, text):
                    url = record.get("web_url") or f"{self.url}/{path}/-/issues/{record['iid']}"
                    link = IssueLink(
                        project=path,
                        iid=int(record["iid"]),
                        url=str(url),
                        state=str(record.get("state", "opened")),
                        confidential=bool(record.get("confidential", False)),
                    )
                    found.append((str(record.get("created_at") or ""), link))
        found.sort(key=lambda f: (f[0], f[1].iid), reverse=True)
        return [link for _, link in found][: max(limit * 4, 20)]


MAX_SEARCHED_CHARS = 1_048_576  # GitLab's limit on a description (and far above a title's 255)


def issue_matches(words: list[str], text: str) -> bool:
    """GitLab's full-text issue search, as far as a local estate needs it: every word of the
    search must begin some word of the title or description (case folded; PostgreSQL's prefix
    match, ``word:*``, joined with ``&``), and a search with no words matches nothing. GitLab
    also stems English words; here a plural's ``s`` is the only ending set aside."""
    wanted = [_singular(w) for w in (w.casefold() for w in words) if w]
    if not wanted:
        return False
    folded = text[:MAX_SEARCHED_CHARS].casefold()
    return all(_begins_a_word(folded, w) for w in wanted)


def _begins_a_word(text: str, word: str) -> bool:
    # Each occurrence is looked at once, by its one preceding character: linear in the text.
    at = text.find(word)
    while at != -1:
        if at == 0 or not text[at - 1].isalnum():
            return True
        at = text.find(word, at + 1)
    return False


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _notes_problem(notes: object) -> str | None:
    """What is wrong with an issue record's `notes` (GitLab's shape: a list of objects with an
    integer `id`), or None. A record that is an issue but whose notes are not is a damaged
    estate, not a line to skip: its notes would be lost without a word."""
    if notes is None:
        return None
    if not isinstance(notes, list):
        return "`notes` must be a list of note objects"
    for k, note in enumerate(notes, start=1):
        if not isinstance(note, dict):
            return f"note {k}: must be an object"
        note_id = note.get("id", 0)
        if isinstance(note_id, bool) or not isinstance(note_id, int):
            return f"note {k}: `id` must be an integer (got {str(note_id)[:40]!r})"
    return None


def _at_or_after(value: object, after: str) -> bool:
    """GitLab's ``updated_after`` test: inclusive, on instants (estate files may hold any
    precision; a time that is not one is compared as text)."""
    try:
        return timefmt.parse(str(value)) >= timefmt.parse(after)
    except ValueError:
        return str(value) >= after


def _is_hex(text: str) -> bool:
    return 4 <= len(text) <= 64 and all(c in "0123456789abcdefABCDEF" for c in text)


def _estate_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with the shape of an estate.toml, or None: the rest of this module reads
    its values as the types checked here, so a wrong one is bad data (exit 5), never a crash."""
    if not isinstance(data.get("url", ""), str):
        return "`url` must be a string"
    for table, key in (("project", "path"), ("merge_request", "project")):
        rows = data.get(table, [])
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            return f"`{table}` must be an array of tables ([[{table}]])"
        for n, row in enumerate(rows, 1):
            if not isinstance(row.get(key), str) or not row[key].strip("/"):
                return f"[[{table}]] {n}: `{key}` must be a non-empty string"
            for optional in ("repo", "folder", "web_url"):
                if optional in row and not isinstance(row[optional], str):
                    return f"[[{table}]] {n}: `{optional}` must be a string"
            if row.get("repo") and row.get("folder"):
                return f"[[{table}]] {n}: give `repo` or `folder`, not both"
            if table == "merge_request" and not isinstance(row.get("iid"), int):
                return f"[[{table}]] {n}: `iid` must be an integer"
    return None
