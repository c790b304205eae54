"""Builds estate directories (docs/design.md, "Estate directory") with real git, deterministic
history.

Used by ``scout demo`` and by the tests: every repository is a real git repository whose commits
have fixed authors and dates, so the same build gives the same shas on every machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_EPOCH = 1767225600  # 2026-01-01T00:00:00Z: commit dates count up from here, one minute a commit


@dataclass(frozen=True)
class Symlink:
    """A file content that makes the path a symbolic link to ``target``."""

    target: str


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))


def pinned_git(cwd: Path, args: Sequence[str], identity: tuple[str, str], stamp: str) -> str:
    """Run git in ``cwd`` as ``identity`` (name, email) at time ``stamp``, with no user or system
    config, so the commits it makes have the same shas on every machine; its output, stripped."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": identity[0],
        "GIT_AUTHOR_EMAIL": identity[1],
        "GIT_COMMITTER_NAME": identity[0],
        "GIT_COMMITTER_EMAIL": identity[1],
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()}")
    return done.stdout.strip()


class Repo:
    """One project's git repository, with a work tree, built commit by commit."""

    def __init__(self, estate: EstateBuilder, path: str, directory: Path, default_branch: str):
        self.estate = estate
        self.path = path
        self.dir = directory
        self.default_branch = default_branch
        directory.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", default_branch)

    def git(self, *args: str) -> str:
        stamp = f"@{_EPOCH + 60 * self.estate.tick()} +0000"
        return pinned_git(self.dir, args, ("Acme Dev", "dev@acme.example"), stamp)

    def commit(self, files: Mapping[str, str | bytes | Symlink | None], message: str) -> str:
        """Write (or, with None, delete) files and commit them on the current branch."""
        for name, content in files.items():
            target = self.dir / name
            if content is None:
                if target.is_symlink() or target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            if isinstance(content, Symlink):
                os.symlink(content.target, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.sha()

    def sha(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", ref)

    def branch(self, name: str, start: str | None = None) -> None:
        """Create a branch and switch to it."""
        self.git("checkout", "-q", "-b", name, *([start] if start else []))

    def checkout(self, name: str) -> None:
        self.git("checkout", "-q", name)

    def merge(self, source: str, message: str) -> str:
        """A merge commit (``--no-ff``) of ``source`` into the current branch."""
        self.git("merge", "-q", "--no-ff", "-m", message, source)
        return self.sha()

    def fast_forward(self, source: str) -> str:
        self.git("merge", "-q", "--ff-only", source)
        return self.sha()

    def squash(self, source: str, message: str) -> str:
        """A squash merge of ``source`` into the current branch, as GitLab makes it."""
        self.git("merge", "-q", "--squash", source)
        self.git("commit", "-q", "-m", message)
        return self.sha()

    def revert(self, sha: str) -> str:
        self.git("revert", "--no-edit", sha)
        return self.sha()

    def tag(self, name: str, ref: str = "HEAD") -> None:
        self.git("tag", name, ref)


@dataclass
class EstateBuilder:
    """Collects projects, merge requests and issues, then writes ``estate.toml`` and issue files."""

    root: Path
    url: str = "https://gitlab.acme.example"
    projects: list[dict[str, Any]] = field(default_factory=list)
    merge_requests: list[dict[str, Any]] = field(default_factory=list)
    issues: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _clock: int = 0

    def tick(self) -> int:
        self._clock += 1
        return self._clock

    def project(
        self,
        path: str,
        *,
        visibility: str = "public",
        archived: bool = False,
        default_branch: str = "main",
    ) -> Repo:
        """Declare a project and create its (empty) repository."""
        self.projects.append(
            {
                "path": path,
                "visibility": visibility,
                "archived": archived,
                "default_branch": default_branch,
            }
        )
        return Repo(self, path, self.root / "repos" / path, default_branch)

    def merge_request(self, project: str, iid: int, **fields: Any) -> None:
        self.merge_requests.append({"project": project, "iid": iid, **fields})

    def issue(
        self,
        project: str,
        iid: int,
        title: str,
        description: str,
        *,
        updated_at: str = "2026-02-01T10:00:00Z",
        notes: Sequence[str | Mapping[str, Any]] | None = None,
        state: str = "opened",
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "iid": iid,
            "title": title,
            "description": description,
            "state": state,
            "created_at": updated_at,
            "updated_at": updated_at,
            "web_url": f"{self.url}/{project}/-/issues/{iid}",
            "notes": [],
        }
        for n, note in enumerate(notes or [], start=1):
            body = {"body": note} if isinstance(note, str) else dict(note)
            record["notes"].append(
                {
                    "id": iid * 1000 + n,
                    "system": False,
                    "created_at": updated_at,
                    "updated_at": updated_at,
                    **body,
                }
            )
        bucket = self.issues.setdefault(project, [])
        bucket[:] = [i for i in bucket if i["iid"] != iid] + [record]
        return record

    def write(self) -> Path:
        """Write estate.toml and the issue files; returns the estate root."""
        self.root.mkdir(parents=True, exist_ok=True)
        lines = [f"url = {_toml_value(self.url)}", ""]
        for table, rows in (("project", self.projects), ("merge_request", self.merge_requests)):
            for row in rows:
                lines.append(f"[[{table}]]")
                lines += [f"{k} = {_toml_value(v)}" for k, v in row.items() if v is not None]
                lines.append("")
        (self.root / "estate.toml").write_text("\n".join(lines), encoding="utf-8")
        issues_dir = self.root / "issues"
        if issues_dir.exists():
            shutil.rmtree(issues_dir)
        for project, records in self.issues.items():
            target = issues_dir / f"{project}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            target.write_text(body, encoding="utf-8")
        return self.root
