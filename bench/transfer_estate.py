"""Build an estate of real documentation nobody tuned Scout on, from pinned PyPI source releases.

    .venv/bin/python -m bench.transfer_estate OUT [--downloads DIR]

realdocs-dev is a development set: six stops of retrieval work were measured on it, so its
figures are bound to flatter Scout a little, however carefully its two halves are kept apart.
This estate is the other kind: six projects' docs (Sphinx reST, MyST Markdown, MkDocs) as their
source releases on PyPI ship them, each downloaded at a pinned version and checked against its
sha256, written as one single-commit git repository per project (fixed author and date, so the
shas are the same everywhere) under OUT/estate/repos/transfer/, with OUT/estate/estate.toml and
OUT/scout.toml (local forge, offline provider, store OUT/scout.db). Then::

    scout --config OUT/scout.toml index
    .venv/bin/python -m bench.realdocs_recall OUT/scout.toml --realdocs REALDOCS_DEV \\
        --only bench/questions/transfer.json

The questions (bench/questions/transfer.json) were written by reading these docs, never from
Scout's ranking, and no factor of Scout's was chosen on them. Needs the network (PyPI, through
pip) and git; nothing of the releases is kept in this repository. Each project keeps its
licence file beside its docs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

GROUP = "transfer"
FORGE_URL = "https://gitlab.transfer.example"  # never contacted: permalinks are built on it
STAMP = "2026-12-02T00:00:00+0000"
IDENTITY = ("Transfer Corpus", "transfer@corpus.example")
# name, release, sha256 of the sdist, what of it is kept (folders and top-level files)
RELEASES = [
    ("flask", "3.0.3", "ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842",
     ["docs", "README.md", "CHANGES.rst", "LICENSE.txt"]),
    ("pytest", "8.3.3", "70b98107bd648308a7952b06e6ca9a50bc660be218d53c257cc1fc94fda10181",
     ["doc/en", "README.rst", "CHANGELOG.rst", "LICENSE"]),
    ("click", "8.1.7", "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de",
     ["docs", "README.rst", "CHANGES.rst", "LICENSE.rst"]),
    ("attrs", "24.2.0", "5cfb1b9148b5b086569baec03f20d7b6bf3bcacc9a42bebf87ffaaca362f6346",
     ["docs", "README.md", "CHANGELOG.md", "LICENSE"]),
    ("werkzeug", "3.0.3", "097e5bfda9f0aba8da6b8545146def481d06aa7d3266e7448e2cccf67dd8bd18",
     ["docs", "README.md", "CHANGES.rst", "LICENSE.txt"]),
    ("mkdocstrings", "0.26.1", "bb8b8854d6713d5348ad05b069a09f3b79edbc6a0f33a34c6821141adb03fe33",
     ["docs", "README.md", "CHANGELOG.md", "LICENSE"]),
]  # fmt: skip
MAX_MEMBER_BYTES = 20_000_000


def git(cwd: Path, *args: str) -> str:
    from scout.demo.builder import pinned_git

    return pinned_git(cwd, args, IDENTITY, STAMP)


def download(name: str, release: str, sha256: str, into: Path) -> Path:
    """The sdist of ``name`` ``release`` in ``into`` (downloaded once), its sha256 checked."""
    archive = into / f"{name}-{release}.tar.gz"
    if not archive.exists():
        # pip builds an sdist's metadata to check it, so it fetches the build backend too.
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", "--dest", str(into), f"{name}=={release}"],
            check=True,
        )  # fmt: skip
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{archive}: sha256 {digest}, expected {sha256}")
    return archive


def extract(archive: Path, keep: list[str], repo: Path) -> None:
    """The members of ``archive`` under its top folder that ``keep`` names, into ``repo``."""
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if member.name.startswith("/") or ".." in parts or len(parts) < 2:
                continue
            inner = "/".join(parts[1:])
            if not member.isfile() or member.size > MAX_MEMBER_BYTES:
                continue
            if not any(inner == k or inner.startswith(k + "/") for k in keep):
                continue
            target = repo.joinpath(*parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            with source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
            target.chmod(0o644)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--downloads", type=Path, default=None, help="sdist cache (default OUT/downloads)"
    )
    args = parser.parse_args()
    out: Path = args.out.resolve()
    downloads = (args.downloads or out / "downloads").resolve()
    downloads.mkdir(parents=True, exist_ok=True)
    estate = out / "estate"
    if estate.exists():
        shutil.rmtree(estate)
    lines = [f"url = {json.dumps(FORGE_URL)}", ""]
    for name, release, sha256, keep in RELEASES:
        repo = estate / "repos" / GROUP / name
        repo.mkdir(parents=True)
        extract(download(name, release, sha256, downloads), keep, repo)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"The docs of {name} {release}, from its PyPI sdist")
        lines += [
            "[[project]]",
            f'path = "{GROUP}/{name}"',
            'visibility = "public"',
            "archived = false",
            'default_branch = "main"',
            "",
        ]
    (estate / "estate.toml").write_text("\n".join(lines), encoding="utf-8")
    (out / "scout.toml").write_text(
        "# Written by bench/transfer_estate.py. Relative paths resolve against this folder.\n"
        f'[forge]\nkind = "local"\nurl = "{FORGE_URL}"\npath = "estate"\n'
        f'groups = ["{GROUP}"]\n\n[corpus]\nvisibility = ["public"]\n\n'
        '[store]\npath = "scout.db"\n\n[answer]\nprovider = "offline"\n',
        encoding="utf-8",
    )
    print(f"{len(RELEASES)} projects: {out / 'scout.toml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
