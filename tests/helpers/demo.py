"""The demo estate for tests: built once a process for each (canary, url), then copied.

Building it runs git a few hundred times (0.3 s of CPU); a full run built it 79 times, nearly
always with the same arguments. A copy is the same estate: its git repositories are plain
directories and nothing in them names where they are. ``tests/test_demo_estate.py`` still
builds it from scratch, as ``scout demo`` does.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from scout.demo.estate import URL, DemoEstate, build_demo_estate

_built: dict[tuple[str | None, str], DemoEstate] = {}
_cache: list[Path] = []


def demo_estate(root: Path, *, canary: str | None = None, url: str = URL) -> DemoEstate:
    """``build_demo_estate(root, canary=canary, url=url)``, as a copy of the one built first."""
    built = _built.get((canary, url))
    if built is None:
        built = build_demo_estate(
            _cache_dir() / str(len(_built)) / "estate", canary=canary, url=url
        )
        _built[(canary, url)] = built
    root = Path(root)
    shutil.copytree(built.root, root, symlinks=True, dirs_exist_ok=root.is_dir())
    return replace(
        built,
        root=root,
        shas=dict(built.shas),
        questions=dict(built.questions),
        cases=dict(built.cases),
    )


def _cache_dir() -> Path:
    if not _cache:
        _cache.append(Path(tempfile.mkdtemp(prefix="scout-test-demo-")))
        atexit.register(_remove, os.getpid())
    return _cache[0]


def _remove(owner: int) -> None:
    if os.getpid() == owner:  # a forked child (tests/helpers/run.py) shares the cache: not its own
        shutil.rmtree(_cache[0], ignore_errors=True)
