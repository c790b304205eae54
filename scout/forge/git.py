"""Reading git repositories with the ``git`` binary: the local forge's engine.

Why subprocess git rather than a library: git is already required (the estate *is* git
repositories), it handles every object format, pack and ref layout, and a single long-lived
``git cat-file --batch`` process reads thousands of blobs without a process per file. No extra
dependency to install, pin or trust.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO

from scout.environment import child_environment
from scout.errors import CannotCheck, EstateError, ForgeError
from scout.forge.base import FileDiff

_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
GIT_TIMEOUT = 60
# The GitLab forge reads at most this much of one file (its raw endpoint); the local forge keeps
# the same limit so both forges give the same verdict on the same estate.
READ_LIMIT = 32 * 1024 * 1024
_CHUNK = 1 << 20


class GitRepo:
    """One repository (bare or with a work tree), read-only."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._batch: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None
        self._errors_seen = 0
        self._lock = threading.Lock()
        # Without a ceiling, git walks up from a damaged repository (objects folder gone) into
        # whatever repository encloses the estate and would answer from that one.
        self._ceiling = {"GIT_CEILING_DIRECTORIES": str(directory.parent)}

    @property
    def _env(self) -> dict[str, str]:
        # Read at each start, not at import: the secrets to withhold are known once the config
        # is loaded, and git needs none of them.
        return {**child_environment(), **_ENV, **self._ceiling}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(
                ["git", "-c", "core.quotepath=off", "-C", str(self.dir), *args],
                capture_output=True,
                env=self._env,
                timeout=GIT_TIMEOUT,
            )
        except FileNotFoundError as exc:
            raise EstateError(
                "unreachable", "git is not installed or not on PATH: the estate is read with it"
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise EstateError("unreachable", f"git {args[0]} timed out in {self.dir}") from exc
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            self.check_readable()  # a repository git cannot open at all is a fault
            # It opens, yet git fails: an object it cannot read (corrupt, or missing from a
            # damaged pack), which retrying will not mend.
            why = message[0] if message else f"exit {done.returncode}"
            raise CannotCheck(f"git {args[0]} failed in {self.dir.name}: {why}")
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

    def check_readable(self) -> None:
        """EstateError unless git can open this repository (folder, permissions, objects)."""
        if not self.dir.is_dir():
            raise EstateError(
                "server error", f"cannot read the repository at {self.dir}: no folder"
            )
        done = self.run("rev-parse", "--git-dir", check=False)
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = message[-1] if message else f"git exit {done.returncode}"
            raise EstateError("server error", f"cannot read the repository at {self.dir}: {why}")

    def cat(self, sha: str, path: str) -> bytes | None:
        """A blob's bytes at ``sha:path`` from one ``cat-file --batch`` process; None if absent.

        CannotCheck when the blob is over READ_LIMIT or git cannot read the object (corrupt).
        """
        if "\n" in path:
            return None
        with self._lock:
            if self._batch is None or self._batch.poll() is not None:
                # stderr to a file, not a pipe: a long-lived reader must never block on it.
                if self._errors is None:
                    self._errors, self._errors_seen = tempfile.TemporaryFile(), 0
                self._batch = subprocess.Popen(
                    ["git", "-C", str(self.dir), "cat-file", "--batch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=self._errors,
                    env=self._env,
                )
            batch = self._batch
            assert batch.stdin and batch.stdout
            try:
                batch.stdin.write(f"{sha}:{path}\n".encode())
                batch.stdin.flush()
            except BrokenPipeError:
                pass  # it died: the empty read below reports why
            line = batch.stdout.readline()
            if not line:
                raise self._batch_died(sha, path)
            header = line.rstrip(b"\n")
            # "<name> missing" echoes the name asked for, which may hold spaces: judge the
            # line by its end, and a found object by its last two fields.
            if header.endswith((b" missing", b" ambiguous")):
                # git answers "missing" for an object it has but cannot unpack, too: only what
                # it said on stderr meanwhile tells a corrupt object from an absent one.
                complaint = self._new_errors()
                if complaint:
                    raise CannotCheck(f"git cannot read {path} at {sha[:12]}: {complaint}")
                return None
            fields = header.rsplit(b" ", 2)
            if len(fields) != 3 or not fields[2].isdigit():
                raise self._batch_died(sha, path)
            kind, size = fields[1], int(fields[2])
            if size > READ_LIMIT:
                self._skip(batch, size + 1)
                raise CannotCheck(f"{path} is over the {READ_LIMIT >> 20} MiB read limit")
            data = batch.stdout.read(size)
            batch.stdout.read(1)
            return data if kind == b"blob" else None

    def _new_errors(self) -> str:
        """The first line git wrote on the batch reader's stderr since the last call, if any."""
        if self._errors is None:
            return ""
        self._errors.seek(self._errors_seen)
        text = self._errors.read()
        self._errors_seen += len(text)
        lines = text.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else ""

    @staticmethod
    def _skip(batch: subprocess.Popen[bytes], size: int) -> None:
        assert batch.stdout
        while size > 0:
            got = batch.stdout.read(min(size, _CHUNK))
            if not got:
                return
            size -= len(got)

    def _batch_died(self, sha: str, path: str) -> ForgeError:
        """The batch reader stopped mid-answer: git could not read an object it has."""
        batch, self._batch = self._batch, None
        why = ""
        if batch is not None:
            batch.kill()
            batch.communicate(timeout=5)
        if self._errors is not None:
            self._errors.seek(0)
            lines = self._errors.read().decode("utf-8", "replace").strip().splitlines()
            self._errors.close()
            self._errors = None
            why = lines[-1] if lines else ""
        self.check_readable()  # a repository that cannot be opened at all is a fault
        return CannotCheck(f"git cannot read {path} at {sha[:12]}: {why or 'no answer'}")

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin:
                self._batch.stdin.close()
            self._batch.wait(timeout=5)
            if self._batch.stdout:
                self._batch.stdout.close()
            self._batch = None
        if self._errors is not None:
            self._errors.close()
            self._errors = None

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
