"""Reading a repository archive (``archive.tar.gz``) in memory: one project at one sha.

Main rule: the archive is untrusted. It is parsed from memory with ``tarfile`` (nothing is ever
extracted to disk), members are bounded in total size, GitLab's top folder
(``<project>-<ref>-<sha>/``, named by the first member) is stripped and members outside it are
dropped, as are paths that are absolute or climb with ``..``; only regular files and symbolic
links become entries. A directory with nothing under it is a submodule (git tracks no empty
directories, and ``git archive`` writes a submodule as one).
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import zlib
from dataclasses import dataclass, field

from scout.forge.base import FileEntry
from scout.forge.gitlab_http import TooLarge


class BadArchive(Exception):
    """Raised when the bytes are not a readable tar (gzip or plain)."""


@dataclass
class Snapshot:
    """One project's files at one sha; ``content`` is None for a file not held in memory."""

    entries: dict[str, FileEntry] = field(default_factory=dict)
    content: dict[str, bytes] = field(default_factory=dict)


def _member_path(name: str, top: str) -> str | None:
    parts = name.split("/", 1)
    if len(parts) < 2 or parts[0] != top or not parts[1].strip("/"):
        return None  # the top folder itself, or a member outside it
    path = posixpath.normpath(parts[1])
    if path.startswith("/") or path == ".." or path.startswith("../") or path == ".":
        return None
    return path


def parse_archive(data: bytes, limit: int) -> Snapshot:
    """The files of a GitLab archive; TooLarge when their total size exceeds ``limit`` bytes."""
    snapshot = Snapshot()
    directories: set[str] = set()
    total = 0
    top: str | None = None
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                if top is None:
                    top = member.name.split("/", 1)[0]  # GitLab's <project>-<ref>-<sha>
                path = _member_path(member.name, top)
                if path is None:
                    continue
                if member.isdir():
                    directories.add(path)
                elif member.isreg():
                    total += member.size
                    if total > limit:
                        raise TooLarge(f"archive members exceed {limit} bytes")
                    handle = tar.extractfile(member)
                    body = handle.read() if handle is not None else b""
                    snapshot.entries[path] = FileEntry(path, len(body), "blob")
                    snapshot.content[path] = body
                elif member.issym():
                    target = member.linkname.encode("utf-8", "surrogateescape")
                    snapshot.entries[path] = FileEntry(path, len(target), "symlink")
                    snapshot.content[path] = target
                # hard links, devices and fifos do not come from git: skipped
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise BadArchive(str(exc)) from exc
    parents: set[str] = set()
    for path in [*snapshot.entries, *directories]:
        while (path := posixpath.dirname(path)) and path not in parents:
            parents.add(path)
    for directory in directories - parents:
        snapshot.entries[directory] = FileEntry(directory, 0, "submodule")
    return snapshot
