"""The per-file splitting budget: a file over it is left out and counted `file_too_slow`, and
indexing goes on with the next file. Work is counted, not timed: the clock here is a counter that
advances one "second" each time the splitter checks its budget, so a file with more stages and
sections than the budget allows is the slow one, whatever the machine."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from scout.config import CorpusConfig
from scout.corpus.budget import SPLIT_BUDGET_SECONDS, SplitTooSlow, split_budget
from scout.corpus.index import project_passages
from scout.corpus.passages import split_document
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.forge.local import LocalForge

SMALL = "# Rotation\n\nKeys rotate weekly.\n"
MANY = "".join(f"## Step {n}\n\nDo step {n}.\n\n" for n in range(40))


class Counting:
    """A clock that moves one second per reading: elapsed "time" is the number of checks."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("path", ["a.md", "a.rst", "a.mdx"])
def test_a_file_past_the_budget_raises_and_one_within_it_splits(path: str) -> None:
    text = (
        MANY
        if not path.endswith(".rst")
        else MANY.replace("## ", "").replace("\n\nDo", "\n=======\n\nDo")
    )
    with pytest.raises(SplitTooSlow), split_budget(SPLIT_BUDGET_SECONDS, Counting()):
        split_document(path, text)
    with split_budget(SPLIT_BUDGET_SECONDS, Counting()):
        assert split_document(path, SMALL)
    assert len(split_document(path, text)) >= 2  # outside a budget nothing is checked


def test_indexing_leaves_out_the_slow_file_and_goes_on(tmp_path: Path) -> None:
    builder = EstateBuilder(tmp_path / "estate")
    builder.project("acme/docs").commit(
        {"docs/a-slow.md": MANY, "docs/b-fine.md": SMALL, "docs/c-fine.md": SMALL}, "Docs"
    )
    builder.write()
    forge = LocalForge(tmp_path / "estate", ["acme"])
    try:
        project = forge.project("acme/docs")
        sha = forge.head(project)
        assert sha is not None
        skipped: Counter[str] = Counter()
        rules = CorpusRules(("acme",), CorpusConfig(visibility=["public", "internal", "private"]))
        clock = Counting()
        passages = list(project_passages(forge, rules, project, sha, skipped, split_clock=clock))
    finally:
        forge.close()
    assert sorted({p.path for p in passages}) == ["docs/b-fine.md", "docs/c-fine.md"]
    assert skipped["file_too_slow"] == 1
