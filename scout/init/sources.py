"""What ``scout init --repo PATH`` finds at a path: a git repository (its top folder, the branch
to read, the web page its origin remote names) or a plain folder, its documentation files, and
the docs site its generator's config file describes.

Main rule: read only. Git is asked with plumbing commands (never one that writes), a plain
folder is walked with the same bounds its snapshots use (``scout.forge.folder``), and a
generator's config file is read as text, never run.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from scout.doc_paths import is_documentation
from scout.environment import child_environment
from scout.errors import UsageError
from scout.forge.folder import BRANCH, folder_files
from scout.init.sites import CONFIG_NAMES, MAX_CONFIG_BYTES, Site, read_site

DOCS_FOLDERS = ("docs/", "doc/", "documentation/", "content/")
# A config file deeper than this below the top is some example's, not the project's site
MAX_CONFIG_DEPTH = 2
# What a remote URL names: scheme://[user@]host[:port]/path, or scp's [user@]host:path.
_URL_REMOTE = re.compile(r"(https?|ssh|git)://(?:[^@/]*@)?([^/:]+)(?::(\d+))?/(.+)")
_SCP_REMOTE = re.compile(r"(?:[^@/:]+@)?([^/:]+):(?!//)(.+)")
_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
GIT_TIMEOUT = 60

Reader = Callable[[str], "str | None"]  # a file's text by its path, None when it cannot be read


@dataclass(frozen=True)
class Source:
    """One ``--repo``: where it is and how it is read, and what its documentation looks like."""

    given: str  # as typed
    place: Path  # the repository's top folder (or its git folder, if bare), or the folder
    kind: Literal["repo", "folder"]
    branch: str  # what is read: the repository's current branch; a folder's snapshots' branch
    web_url: str | None  # the page the origin remote names, https
    docs: str  # the documentation's folder ("docs/"), "" for the whole
    files: int  # documentation files found
    site: Site | None

    @property
    def name(self) -> str:
        """A project name GitLab would accept, from the folder's name."""
        stem = self.place.name.removesuffix(".git")
        return _NAME.sub("-", stem).strip("-._") or "docs"


def inspect(given: str) -> Source:
    """The source at ``given`` (a path); UsageError when it is not a folder, holds a git
    repository with no commits, or holds no documentation."""
    try:
        given.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("--repo: the path is not valid UTF-8: rename the folder") from None
    path = Path(given).expanduser()
    if not path.is_dir():
        raise UsageError(f"--repo {given}: no such folder")
    path = path.resolve()
    top = _git_top(path)
    if top is None:
        files = folder_files(path)
        return _described(given, path, "folder", BRANCH, None, files, _read_file(path))
    branch = _branch(given, top)
    listed = _git(top, "ls-tree", "-r", "--name-only", "-z", branch).split("\0")
    files = [name for name in listed if name]
    return _described(
        given, top, "repo", branch, web_page(_git(top, "remote", "get-url", "origin", check=False)),
        files, lambda name: _read_blob(top, branch, name),
    )  # fmt: skip


def _described(
    given: str,
    place: Path,
    kind: Literal["repo", "folder"],
    branch: str,
    web_url: str | None,
    files: list[str],
    read: Reader,
) -> Source:
    documents = sum(1 for name in files if is_documentation(name))
    if not documents:
        where = f"at its branch {branch}" if kind == "repo" else "in it"
        raise UsageError(
            f"--repo {given}: no Markdown, reStructuredText or README file {where}: "
            "nothing to index"
        )
    site = find_site(files, read)
    docs = site.root if site is not None else _docs_folder(files)
    return Source(given, place, kind, branch, web_url, docs, documents, site)


def find_site(files: list[str], read: Reader) -> Site | None:
    """The docs site of the shallowest generator config file that reads as one."""
    candidates = [
        name
        for name in files
        if PurePosixPath(name).name in CONFIG_NAMES and name.count("/") <= MAX_CONFIG_DEPTH
    ]
    order = list(CONFIG_NAMES)
    candidates.sort(key=lambda n: (n.count("/"), order.index(PurePosixPath(n).name), n))
    present = set(files)
    for name in candidates:
        if PurePosixPath(name).name == "conf.py" and not _sphinx_folder(name, present):
            continue  # a conf.py with no pages beside it is some program's, not Sphinx's
        text = read(name)
        site = read_site(name, text) if text is not None else None
        if site is not None:
            return site
    return None


def _sphinx_folder(conf: str, present: set[str]) -> bool:
    folder = str(PurePosixPath(conf).parent).removeprefix(".").strip("/")
    prefix = f"{folder}/" if folder else ""
    return any(f"{prefix}{index}" in present for index in ("index.rst", "index.md", "contents.rst"))


def _docs_folder(files: list[str]) -> str:
    for folder in DOCS_FOLDERS:
        if any(name.startswith(folder) and is_documentation(name) for name in files):
            return folder
    return ""


def web_page(remote: str) -> str | None:
    """The https page a git remote URL names (``git@gitlab.com:acme/docs.git`` is
    ``https://gitlab.com/acme/docs``), or None for a local path or anything else."""
    remote = remote.strip()
    if len(remote) > 2_000:
        return None
    url = _URL_REMOTE.fullmatch(remote)
    if url is not None:
        scheme, host, port, path = url.groups()
        base = f"{'http' if scheme == 'http' else 'https'}://{host}"
        if port and scheme in ("http", "https"):
            base += f":{port}"
    else:
        scp = _SCP_REMOTE.fullmatch(remote)
        if scp is None or "/" not in scp.group(2) and "." not in scp.group(1):
            return None
        host, path = scp.groups()
        base = f"https://{host}"
    path = path.strip("/").removesuffix(".git").strip("/")
    if not path or any(c.isspace() for c in path) or path.startswith("~"):
        return None
    return f"{base}/{path}"


def _git_top(path: Path) -> Path | None:
    if _git(path, "rev-parse", "--is-bare-repository", check=False) == "true":
        return path
    top = _git(path, "rev-parse", "--show-toplevel", check=False)
    return Path(top) if top else None


def _branch(given: str, top: Path) -> str:
    branch = _git(top, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if branch and _git(
        top, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}", check=False
    ):
        return branch
    if branch:
        raise UsageError(
            f"--repo {given}: the repository has no commits on {branch} yet: commit its docs, "
            "then run scout init again"
        )
    raise UsageError(
        f"--repo {given}: HEAD is detached: check out the branch Scout should read, then run "
        "scout init again"
    )


def _read_blob(top: Path, branch: str, name: str) -> str | None:
    size = _git(top, "cat-file", "-s", f"{branch}:{name}", check=False)
    if not size.isdigit() or int(size) > MAX_CONFIG_BYTES:
        return None
    return _git(top, "cat-file", "blob", f"{branch}:{name}", check=False) or None


def _read_file(folder: Path) -> Reader:
    def read(name: str) -> str | None:
        target = folder / name
        try:
            if target.is_symlink() or target.stat().st_size > MAX_CONFIG_BYTES:
                return None
            return target.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    return read


def _git(where: Path, *args: str, check: bool = True) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(where), *args],
            capture_output=True,
            env={**child_environment(), "GIT_OPTIONAL_LOCKS": "0"},
            timeout=GIT_TIMEOUT,
        )
    except FileNotFoundError:
        raise UsageError("git is not installed or not on PATH: scout init needs it") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"git {args[0]} took over {GIT_TIMEOUT} s in {where}") from None
    if done.returncode != 0:
        if check:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise UsageError(f"git {args[0]} failed in {where}: {why[-1] if why else ''}")
        return ""
    return done.stdout.decode("utf-8", "replace").strip("\n")
