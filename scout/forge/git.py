"""Reading git repositories with the ``git`` binary: the local forge's engine.

Why subprocess git rather than a library: git is already required (the estate *is* git
repositories), it handles every object format, pack and ref layout, and a single long-lived
``git cat-file --batch`` process reads thousands of blobs without a process per file. No extra
dependency to install, pin or trust.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from scout.errors import ForgeError
from scout.forge.base import FileDiff

_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
GIT_TIMEOUT = 60


class GitRepo:
    """One repository (bare or with a work tree), read-only."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._batch: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                ["git", "-c", "core.quotepath=off", "-C", str(self.dir), *args],
                capture_output=True,
                env=_ENV,
                timeout=GIT_TIMEOUT,
            )
        except FileNotFoundError as exc:
            raise ForgeError("unreachable", "git is not installed or not on PATH") from exc
        except subprocess.TimeoutExpired as exc:
            raise ForgeError("unreachable", f"git {args[0]} timed out in {self.dir}") from exc
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ForgeError("server error", f"git {args[0]} failed in {self.dir}: {message[:1]}")
        return done

    def text(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace")

    def rev(self, ref: str) -> str | None:
        """The commit a ref or sha prefix names, or None (unknown or ambiguous)."""
        if ref.startswith("-"):
            return None
        done = self.run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False
        )
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    def cat(self, sha: str, path: str) -> bytes | None:
        """A blob's bytes at ``sha:path`` from one ``cat-file --batch`` process; None if absent."""
        if "\n" in path:
            return None
        with self._lock:
            if self._batch is None or self._batch.poll() is not None:
                self._batch = subprocess.Popen(
                    ["git", "-C", str(self.dir), "cat-file", "--batch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=_ENV,
                )
            assert self._batch.stdin and self._batch.stdout
            self._batch.stdin.write(f"{sha}:{path}\n".encode())
            self._batch.stdin.flush()
            header = self._batch.stdout.readline().decode().split()
            if len(header) != 3:
                return None
            size = int(header[2])
            data = self._batch.stdout.read(size)
            self._batch.stdout.read(1)
            return data if header[1] == "blob" else None

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin:
                self._batch.stdin.close()
            self._batch.wait(timeout=5)
            if self._batch.stdout:
                self._batch.stdout.close()
            self._batch = None

    def diff(self, old: str | None, new: str) -> list[FileDiff]:
        """The diff from ``old`` (None: the empty tree) to ``new``, in GitLab's per-file shape."""
        base = old or self.text("hash-object", "-t", "tree", "/dev/null").strip()
        raw = self.run(
            "diff", "--no-color", "--no-ext-diff", "-M", "--full-index", base, new
        ).stdout
        return parse_diff(raw.decode("utf-8", "replace"))


def parse_diff(text: str) -> list[FileDiff]:
    """Split ``git diff`` output into files: paths, flags, and the hunks from the first ``@@``."""
    files: list[FileDiff] = []
    for chunk in ("\n" + text).split("\ndiff --git "):
        if not chunk.strip():
            continue
        lines = chunk.split("\n")
        old_path = new_path = ""
        new_file = deleted = renamed = False
        body_at = len(lines)
        for i, line in enumerate(lines[1:], start=1):
            if line.startswith("@@"):
                body_at = i
                break
            if line.startswith("new file mode"):
                new_file = True
            elif line.startswith("deleted file mode"):
                deleted = True
            elif line.startswith("rename from "):
                renamed, old_path = True, line[len("rename from ") :]
            elif line.startswith("rename to "):
                new_path = line[len("rename to ") :]
            elif line.startswith("--- "):
                old_path = old_path or _strip_prefix(line[4:], "a/")
            elif line.startswith("+++ "):
                new_path = new_path or _strip_prefix(line[4:], "b/")
        if not old_path or not new_path:
            head = lines[0]
            half = head.split(" b/", 1)
            guess_old = _strip_prefix(half[0], "a/")
            guess_new = half[1] if len(half) > 1 else guess_old
            old_path, new_path = old_path or guess_old, new_path or guess_new
        if old_path == "/dev/null":
            old_path = new_path
        if new_path == "/dev/null":
            new_path = old_path
        body = "\n".join(lines[body_at:])
        if body and not body.endswith("\n"):
            body += "\n"
        files.append(FileDiff(old_path, new_path, body, new_file, renamed, deleted))
    return files


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path
