"""Read-only access to one estate repository through subprocess git.

Every call runs git with a timeout, no user or system config, and refuses refs that git could
read as options, so request parameters (refs, paths) never become git flags.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

_TIMEOUT = 30.0
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_BAD_REF = re.compile(r"(^-)|[\x00-\x20~^:?*\[\\]|\.\.|@\{")
_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
    "GIT_LITERAL_PATHSPECS": "1",
}


class GitError(Exception):
    """Raised when git fails for a reason other than a missing object."""


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    authored_date: str  # git's strict ISO 8601, e.g. 2026-01-01T00:01:00+00:00
    committer_name: str
    committer_email: str
    committed_date: str
    message: str


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str  # blob | tree | commit
    sha: str
    size: int | None
    path: str


@dataclass(frozen=True)
class FileChange:
    """One file of a diff between two trees, with the patch cut to start at the first ``@@``."""

    old_path: str
    new_path: str
    a_mode: str
    b_mode: str
    diff: str
    new_file: bool
    renamed_file: bool
    deleted_file: bool


class GitRepo:
    """One repository directory (bare or with a work tree), read with git plumbing."""

    def __init__(self, directory: Path):
        dot_git = directory / ".git"
        self.git_dir = dot_git if dot_git.exists() else directory

    def _run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        done = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "-c", "core.quotepath=false", *args],
            input=input,
            capture_output=True,
            env=_ENV,
            timeout=_TIMEOUT,
        )
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()[:500]
            raise GitError(f"git {args[0]} failed: {message}")
        return done.stdout if done.returncode == 0 else b""

    def exists(self) -> bool:
        return self.git_dir.is_dir()

    def resolve(self, ref: str) -> str | None:
        """The commit a branch, tag, full sha or unique prefix names; None when it names none."""
        if not ref or len(ref) > 255 or _BAD_REF.search(ref):
            return None
        out = self._run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        sha = out.decode().strip()
        return sha or None

    def refs(self, kind: str) -> list[tuple[str, str]]:
        """(short name, commit sha) of every branch (``heads``) or tag (``tags``), by name."""
        out = self._run(
            "for-each-ref",
            "--format=%(refname)%00%(*objectname)%00%(objectname)",
            f"refs/{kind}/",
        )
        prefix = f"refs/{kind}/"
        result = []
        for line in out.decode().splitlines():
            name, peeled, target = line.split("\0")
            result.append((name[len(prefix) :], peeled or target))
        return sorted(result)

    def tag_message(self, name: str) -> str | None:
        out = self._run("for-each-ref", "--format=%(contents)", f"refs/tags/{name}", check=False)
        text = out.decode("utf-8", "replace")
        return text.rstrip("\n") or None

    def refs_containing(self, sha: str) -> list[tuple[str, str]]:
        """("branch"|"tag", short name) of every ref whose history holds ``sha``."""
        out = self._run(
            "for-each-ref", "--format=%(refname)", "--contains", sha, "refs/heads/", "refs/tags/"
        )
        result = []
        for name in out.decode().splitlines():
            if name.startswith("refs/heads/"):
                result.append(("branch", name[len("refs/heads/") :]))
            else:
                result.append(("tag", name[len("refs/tags/") :]))
        return result

    def commit(self, sha: str) -> CommitInfo:
        fmt = "%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"
        out = self._run("show", "-s", f"--format={fmt}", sha, "--")
        fields = out.decode("utf-8", "replace").split("\0", 8)
        return CommitInfo(
            sha=fields[0],
            parents=tuple(fields[1].split()),
            author_name=fields[2],
            author_email=fields[3],
            authored_date=fields[4],
            committer_name=fields[5],
            committer_email=fields[6],
            committed_date=fields[7],
            message=fields[8].rstrip("\n") + "\n" if fields[8].strip() else "",
        )

    def summary(self, branch: str) -> tuple[str | None, str | None]:
        """(head sha of ``branch``, newest committer date of any ref) in one git call."""
        if not self.exists():
            return None, None
        out = self._run(
            "for-each-ref",
            "--sort=-committerdate",
            "--format=%(refname)%00%(objectname)%00%(committerdate:iso-strict)",
            "refs/heads/",
            "refs/tags/",
        )
        head = newest = None
        for line in out.decode().splitlines():
            name, sha, date = line.split("\0")
            newest = newest or date or None
            if name == f"refs/heads/{branch}":
                head = sha
        return head, newest

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        done = subprocess.run(
            [
                "git",
                "--git-dir",
                str(self.git_dir),
                "merge-base",
                "--is-ancestor",
                ancestor,
                descendant,
            ],
            capture_output=True,
            env=_ENV,
            timeout=_TIMEOUT,
        )
        return done.returncode == 0

    def merge_base(self, *shas: str) -> str | None:
        out = self._run("merge-base", *shas, check=False)
        return out.decode().strip() or None

    def tree(self, sha: str, path: str, recursive: bool) -> list[TreeEntry] | None:
        """Entries under ``path`` at ``sha`` (directories too, like GitLab); None if no tree."""
        spec = f"{sha}:{path}" if path else sha
        kind = self._run("cat-file", "-t", spec, check=False).decode().strip()
        if kind not in ("tree", "commit"):
            return None
        args = ["ls-tree", "-l", "-z", "--full-tree"]
        if recursive:
            args += ["-r", "-t"]
        args.append(f"{sha}:{path}" if path else sha)
        out = self._run(*args)
        prefix = f"{path.rstrip('/')}/" if path else ""
        entries = []
        for record in out.decode("utf-8", "replace").split("\0"):
            if not record:
                continue
            meta, name = record.split("\t", 1)
            mode, type_, object_sha, size = meta.split()
            entries.append(
                TreeEntry(
                    mode, type_, object_sha, None if size == "-" else int(size), prefix + name
                )
            )
        return entries

    def blob(self, sha: str, path: str) -> tuple[str, str, bytes] | None:
        """(blob sha, mode, bytes) of the file at ``path`` in ``sha``; None for no file there."""
        if not path or "\n" in path:
            return None
        listing = self._run("ls-tree", "-z", "--full-name", sha, "--", path, check=False).decode(
            "utf-8", "replace"
        )
        record = listing.split("\0")[0]
        if not record or record.split("\t", 1)[1] != path:
            return None
        mode, type_, object_sha = record.split("\t", 1)[0].split()
        if type_ != "blob":
            return None
        out = self._run("cat-file", "--batch", input=f"{object_sha}\n".encode())
        header, _, rest = out.partition(b"\n")
        size = int(header.split()[2])
        return object_sha, mode, rest[:size]

    def last_commit(self, sha: str, path: str) -> str:
        out = self._run("log", "-1", "--format=%H", sha, "--", path)
        return out.decode().strip() or sha

    def archive(self, sha: str, prefix: str) -> bytes:
        return self._run("archive", "--format=tar", f"--prefix={prefix}", sha)

    def rev_list(self, exclude: str, include: str, limit: int = 100) -> list[str]:
        out = self._run("rev-list", "--reverse", f"--max-count={limit}", include, f"^{exclude}")
        return out.decode().split()

    def diff(self, old: str | None, new: str) -> list[FileChange]:
        """Per-file changes from ``old`` (None: the empty tree) to ``new``, renames detected."""
        base = old or _EMPTY_TREE
        common = ["diff-tree", "-r", "-M", "--no-ext-diff", "--no-textconv", "--full-index"]
        raw = self._run(*common, "--raw", "-z", base, new).decode("utf-8", "replace")
        patch = self._run(*common, "-p", "--no-color", base, new).decode("utf-8", "replace")
        sections = re.split(r"^(?=diff --git )", patch, flags=re.M)
        sections = [s for s in sections if s.startswith("diff --git ")]
        fields = raw.split("\0")
        changes: list[FileChange] = []
        i = 0
        while i < len(fields) and fields[i].startswith(":"):
            a_mode, b_mode, _, _, status = fields[i][1:].split()
            if status[0] in "RC":
                old_path, new_path = fields[i + 1], fields[i + 2]
                i += 3
            else:
                old_path = new_path = fields[i + 1]
                i += 2
            section = sections[len(changes)] if len(changes) < len(sections) else ""
            hunk = section.find("\n@@")
            changes.append(
                FileChange(
                    old_path=old_path,
                    new_path=new_path,
                    a_mode="0" if status == "A" else a_mode,
                    b_mode="0" if status == "D" else b_mode,
                    diff=section[hunk + 1 :] if hunk >= 0 else "",
                    new_file=status == "A",
                    renamed_file=status[0] == "R",
                    deleted_file=status == "D",
                )
            )
        return changes
