"""Hostile repository archives: decompressed bytes are bounded, headers included, and long names
are refused before they are buffered.

The archives are real tar.gz files crafted with ``tarfile`` the way an attacker would: a GNU
long-name header or a pax header declaring megabytes of name, a name just over 4 KiB, a gzip
bomb, and 2,100 empty members whose headers alone (1.1 MB) outweigh a 1 MiB limit. Memory is
bounded by bytes (tracemalloc's peak), never by time. The last test serves such an archive from
the GitLab test server: GitLab's archive endpoint is untrusted input like any other (a
compromised or buggy instance), and Scout falls back to reading the project file by file.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from scout.forge.gitlab import GitLabForge
from scout.forge.gitlab_archive import MAX_NAME_BYTES, BadArchive, parse_archive
from scout.forge.gitlab_http import TooLarge
from tests.gitlab_server.server import GitLabServer

MiB = 1 << 20
TOP = "ledger-main-0123456789abcdef0123456789abcdef01234567"
TOKEN = "glpat-archive-test"


def _tar(members: list[tuple[str, bytes]], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for name, body in members:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return gzip.compress(out.getvalue(), compresslevel=9, mtime=0)


def _many_empty_members(count: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for k in range(count):
            info = tarfile.TarInfo(f"{TOP}/e{k}")
            tar.addfile(info, io.BytesIO(b""))
    return gzip.compress(out.getvalue(), mtime=0)


def _peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
    except (BadArchive, TooLarge):
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


LIMIT = 8 * MiB

# name -> (archive, the error, the limit it is parsed with)
HOSTILE: dict[str, tuple[Callable[[], bytes], type[Exception], int]] = {
    "a 16 MiB GNU long name": (
        lambda: _tar([(f"{TOP}/" + "a" * (16 * MiB), b"x")], tarfile.GNU_FORMAT),
        BadArchive,
        LIMIT,
    ),
    "a 16 MiB pax path": (
        lambda: _tar([(f"{TOP}/" + "a" * (16 * MiB), b"x")], tarfile.PAX_FORMAT),
        BadArchive,
        LIMIT,
    ),
    "a name just over 4 KiB": (
        lambda: _tar([(f"{TOP}/" + "a" * MAX_NAME_BYTES, b"x")], tarfile.PAX_FORMAT),
        BadArchive,
        LIMIT,
    ),
    "a 64 MiB gzip bomb": (lambda: _tar([(f"{TOP}/zeros", bytes(64 * MiB))]), TooLarge, LIMIT),
    # Headers past the limit (2,048 would fill 1 MiB), against a limit small enough that
    # tarfile builds and reads a few thousand members, not 20,000 against 8 MiB (7 s): the peak
    # scales with the limit (0.41 of it at 8 MiB, 0.51 at 1 MiB; 1.37 and 1.47 when the parser
    # keeps tarfile's list of every header it read).
    "2,100 empty members": (lambda: _many_empty_members(2_100), TooLarge, 1 * MiB),
}


@pytest.mark.parametrize(("make", "error", "limit"), HOSTILE.values(), ids=HOSTILE)
def test_a_hostile_archive_is_refused_within_bounded_memory(
    make: Callable[[], bytes], error: type[Exception], limit: int
) -> None:
    data = make()
    assert len(data) < 1 * MiB  # small on the wire
    with pytest.raises(error):
        parse_archive(data, limit)
    # The peak is what the parser held: under the limit, whatever the archive inflates to.
    assert _peak(lambda: parse_archive(data, limit)) < limit


def test_a_name_of_4_kib_and_an_archive_at_the_limit_are_read() -> None:
    name = f"{TOP}/" + "d/" * ((MAX_NAME_BYTES - len(TOP) - 8) // 2) + "a.md"
    assert len(name) <= MAX_NAME_BYTES
    data = _tar([(name, b"# A\n"), (f"{TOP}/big.md", b"x" * (3 * MiB))], tarfile.PAX_FORMAT)
    snapshot = parse_archive(data, 4 * MiB)
    assert snapshot.content[name.split("/", 1)[1]] == b"# A\n"
    assert len(snapshot.content["big.md"]) == 3 * MiB
    with pytest.raises(TooLarge):  # the headers and padding count too
        parse_archive(data, 3 * MiB)


def test_a_hostile_archive_from_the_server_falls_back_to_file_by_file(tmp_path: Path) -> None:
    builder = EstateBuilder(tmp_path / "estate", url="http://127.0.0.1")
    builder.project("acme/ledger").commit({"docs/a.md": "# A\n\nPostings balance.\n"}, "Start")
    builder.write()
    with GitLabServer(tmp_path / "estate", token=TOKEN) as server:
        server.archives["acme/ledger"] = _tar(
            [(f"{TOP}/" + "a" * (16 * MiB), b"x")], tarfile.GNU_FORMAT
        )
        forge = GitLabForge(server.url, TOKEN, ["acme"], backoff=0.01)
        try:
            project = forge.project("acme/ledger")
            sha = forge.head(project)
            assert sha is not None
            files: list[str] = []
            peak = _peak(lambda: files.extend(e.path for e in forge.files(project, sha)))
            assert files == ["docs/a.md"]
            assert forge.read(project, sha, "docs/a.md") == b"# A\n\nPostings balance.\n"
            assert forge.requests["archive"] == 1 and forge.requests["tree"] == 1
        finally:
            forge.close()
    assert peak < 8 * MiB
