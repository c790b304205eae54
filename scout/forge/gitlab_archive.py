"""Reading a repository archive (``archive.tar.gz``) in memory: one project at one sha.

Main rule: the archive is untrusted. It is parsed from memory with ``tarfile`` (nothing is ever
extracted to disk), members are bounded in total size, GitLab's top folder
(``<project>-<ref>-<sha>/``, named by the first member) is stripped and members outside it are
dropped, as are paths that are absolute or climb with ``..``; only regular files and symbolic
links become entries. A directory with nothing under it is a submodule (git tracks no empty
directories, and ``git archive`` writes a submodule as one).

The tar stream is decompressed as it is read, through `_Bounded`: every decompressed byte counts
against the limit, headers included, and no single read may ask for more than MAX_READ bytes.
``tarfile`` reads a GNU long-name or pax header whole with one read of its declared size, so a
header over that is refused before it is buffered (NOTES-round3.md, "tarfile"); member names
over MAX_NAME_BYTES are refused too. File contents are read in MAX_READ chunks.
"""

from __future__ import annotations

import gzip
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


# A long name or pax header holding a path of up to 4 KiB (plus its record framing) fits in one
# read of this size; tarfile's own header reads are 512 bytes.
MAX_NAME_BYTES = 4_096
MAX_READ = 64 * 1024


class _Bounded(io.RawIOBase):
    """A forward-only view of a (decompressed) stream for tarfile's "r:" mode: reads past
    ``limit`` bytes in all raise TooLarge, a read of more than MAX_READ bytes raises BadArchive,
    and seeks may only go forward (skipped bytes are read, and count)."""

    def __init__(self, stream: io.BufferedIOBase, limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > MAX_READ:
            raise BadArchive(f"a tar header or read of {size} bytes (the limit is {MAX_READ})")
        data = self._stream.read(size)
        self.position += len(data)
        if self.position > self._limit:
            raise TooLarge(f"archive members exceed {self._limit} bytes")
        return data

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self.position + offset
        if whence not in (io.SEEK_SET, io.SEEK_CUR) or target < self.position:
            raise BadArchive("a tar stream read backwards")
        while self.position < target:
            if not self.read(min(MAX_READ, target - self.position)):
                break
        return self.position


def _stream(data: bytes) -> io.BufferedIOBase:
    """The archive's tar bytes as a stream: gunzipped on the fly when gzip-compressed."""
    raw = io.BytesIO(data)
    return gzip.GzipFile(fileobj=raw, mode="rb") if data[:2] == b"\x1f\x8b" else raw


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = tar.extractfile(member)
    if handle is None:
        return b""
    chunks = []
    while chunk := handle.read(MAX_READ):
        chunks.append(chunk)
    return b"".join(chunks)


def parse_archive(data: bytes, limit: int) -> Snapshot:
    """The files of a GitLab archive; TooLarge when more than ``limit`` bytes decompress (every
    byte of the tar stream, headers included); BadArchive when it is not a readable tar or holds
    a name or long-name header over MAX_NAME_BYTES."""
    snapshot = Snapshot()
    directories: set[str] = set()
    total = 0
    top: str | None = None
    try:
        bounded = _Bounded(_stream(data), limit)
        with tarfile.open(fileobj=bounded, mode="r:") as tar:
            while (member := tar.next()) is not None:
                # tarfile keeps every header it has read; here one at a time is held
                tar.members.clear()  # type: ignore[attr-defined]
                if len(member.name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
                    raise BadArchive(f"a member name over {MAX_NAME_BYTES} bytes")
                if len(member.linkname.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
                    raise BadArchive(f"a link target over {MAX_NAME_BYTES} bytes")
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
                    body = _read_member(tar, member)
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
