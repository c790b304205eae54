"""bench/transfer_estate.py: what it keeps of a source release, and a release whose sha256 is
not the pinned one is refused (no download here: the archive is made and placed in the cache)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bench.transfer_estate import download, extract


def sdist(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("pkg-1.0/docs/link.rst")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    return path


def test_only_the_named_docs_and_files_are_kept(tmp_path: Path) -> None:
    archive = sdist(
        tmp_path / "pkg-1.0.tar.gz",
        {
            "pkg-1.0/docs/index.rst": b"Index\n=====\n",
            "pkg-1.0/docs/sub/page.md": b"# Page\n",
            "pkg-1.0/docsy/other.md": b"# not docs\n",
            "pkg-1.0/src/pkg/__init__.py": b"",
            "pkg-1.0/README.md": b"# Pkg\n",
            "pkg-1.0/../escape.md": b"# out\n",
            "/abs.md": b"# out\n",
        },
    )
    repo = tmp_path / "repo"
    extract(archive, ["docs", "README.md"], repo)
    kept = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file())
    assert kept == ["README.md", "docs/index.rst", "docs/sub/page.md"]
    assert not (tmp_path / "escape.md").exists()


def test_a_release_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    sdist(tmp_path / "pkg-1.0.tar.gz", {"pkg-1.0/README.md": b"# Pkg\n"})
    with pytest.raises(SystemExit, match="sha256"):
        download("pkg", "1.0", "0" * 64, tmp_path)
