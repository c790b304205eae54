"""A plain folder (no git) as a git history the local forge reads like any repository.

Main rule: the folder is only read. Its documentation files (and the docs generators' config
files) are committed to a bare repository of Scout's own inside the estate, once per run that
opens it and only when they changed, so every passage is still read at a commit and cited at
its sha; the commit's tree is written through an index file of that repository's own, never the
folder's. Walking is bounded: hidden folders and dependency or build folders are not entered,
files over the size limit and symbolic links are left out, and at most ``MAX_FILES`` files are
taken (the rest are logged as left out).
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from scout.doc_paths import is_documentation
from scout.environment import child_environment
from scout.errors import EstateError

log = logging.getLogger(__name__)

BRANCH = "main"
MAX_FILES = 20_000  # documentation files committed from one folder
MAX_WALKED = 200_000  # entries looked at while walking one folder
MAX_FILE_BYTES = 1_048_576  # as the corpus rules: a larger file is never indexed
# Folders that hold dependencies, builds or tool state, never a project's own documentation.
SKIPPED = frozenset(
    """node_modules site-packages __pycache__ venv env target build dist _build
    vendor bower_components""".split()
)
# What the docs-site mapping reads beside the pages (scout.init and signposts.docs_map).
CONFIG_FILES = frozenset(
    """mkdocs.yml mkdocs.yaml conf.py hugo.toml hugo.yaml hugo.json config.toml
    docusaurus.config.js docusaurus.config.ts docusaurus.config.mjs""".split()
)
_IDENTITY = {
    "GIT_AUTHOR_NAME": "scout",
    "GIT_AUTHOR_EMAIL": "scout@localhost",
    "GIT_COMMITTER_NAME": "scout",
    "GIT_COMMITTER_EMAIL": "scout@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def folder_files(folder: Path) -> list[str]:
    """The files of ``folder`` a snapshot holds (paths relative to it, sorted), bounded."""
    found: list[str] = []
    walked = 0
    for top, folders, files in os.walk(folder, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in SKIPPED)
        walked += len(folders) + len(files)
        for name in sorted(files):
            path = Path(top) / name
            relative = path.relative_to(folder).as_posix()
            if not (is_documentation(relative) or name in CONFIG_FILES):
                continue
            try:
                if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            found.append(relative)
        if walked > MAX_WALKED or len(found) >= MAX_FILES:
            log.warning("%s: more than %d files, the rest are left out", folder, len(found))
            break
    return sorted(found[:MAX_FILES])


def snapshot(folder: Path, repository: Path) -> str:
    """Commit what ``folder`` holds now to ``repository`` (a bare repository Scout keeps,
    created on first use) on branch ``main`` when it changed; the branch's head sha."""
    if not folder.is_dir():
        raise EstateError("server error", f"cannot read the folder {folder}: no folder")
    if not (repository / "HEAD").is_file():
        repository.parent.mkdir(parents=True, exist_ok=True)
        _git(repository, None, "init", "--quiet", "--bare", f"--initial-branch={BRANCH}")
    files = folder_files(folder)
    _git(repository, folder, "read-tree", "--empty")
    if files:
        listed = "".join(f"{name}\0" for name in files)
        _git(repository, folder, "update-index", "--add", "-z", "--stdin", stdin=listed)
    tree = _git(repository, folder, "write-tree")
    head = _git(repository, folder, "rev-parse", "--verify", "--quiet", BRANCH, check=False)
    if head and _git(repository, folder, "rev-parse", f"{head}^{{tree}}") == tree:
        return head
    parent = ["-p", head] if head else []
    message = f"snapshot of {folder}"
    commit = _git(repository, folder, "commit-tree", tree, *parent, "-m", message)
    _git(repository, folder, "update-ref", f"refs/heads/{BRANCH}", commit)
    return commit


def _git(
    repository: Path, folder: Path | None, *args: str, stdin: str | None = None, check: bool = True
) -> str:
    # The index is the repository's own file: the folder gets no .git and no index.
    env = {**child_environment(), **_IDENTITY, "GIT_DIR": str(repository)}
    if folder is not None:
        env |= {"GIT_WORK_TREE": str(folder), "GIT_INDEX_FILE": str(repository / "scout-index")}
    try:
        done = subprocess.run(
            ["git", *args],
            input=stdin.encode("utf-8", "surrogateescape") if stdin is not None else None,
            capture_output=True,
            env=env,
            cwd=folder if folder is not None and folder.is_dir() else None,
            timeout=300,
        )
    except FileNotFoundError as exc:
        raise EstateError("unreachable", "git is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise EstateError(
            "unreachable", f"git {args[0]} timed out on {folder or repository}"
        ) from exc
    if check and done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EstateError(
            "server error",
            f"cannot snapshot the folder {folder or repository}: "
            f"{why[-1] if why else done.returncode}",
        )
    return done.stdout.decode("utf-8", "replace").strip()
