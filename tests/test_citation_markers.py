"""Passage text never decides which passages an answer cites, nor vetoes an answer: citation
markers inside passages (`[2]`, `[^2]`, look-alikes) are made inert in every prompt, the offline
composer never copies one, and a prose marker must be in the answer's structured list."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.compose import check, markers, neutralise, unreadable
from scout.compose.prompt import addresses_task, answer_task
from scout.demo.builder import EstateBuilder
from scout.normalise import MAX_MARKER_PASSES, disarm_markers, prose
from scout.providers.base import PromptPassage
from scout.providers.offline import compose_answer
from scout.store import PassageRecord
from tests.helpers.config import render_config
from tests.helpers.run import Result

SHA = "0" * 40
MARKED = {
    "plain": "Keys rotate weekly [2].",
    "footnote": "Keys rotate weekly.[^2]",
    "fullwidth": "Keys rotate weekly \uff3b2\uff3d.",
    "lenticular": "Keys rotate weekly \u30102\u3011.",
    "zero-width inside": "Keys rotate weekly [\u200b2].",
    "superscript digit": "Keys rotate weekly [\u00b2].",
    "list and range": "Keys rotate weekly [1, 3-4].",
    "over lines": "Keys rotate weekly [\n2\n].",
    "nested": "Keys rotate weekly [[2]].",
    "nested past the passes": "Keys rotate weekly "
    + "[" * (MAX_MARKER_PASSES + 3)
    + "2"
    + "]" * 11,
}


def _readable(text: str) -> bool:
    """Whether the citation check would read any marker (or refuse an unreadable one) here."""
    return bool(markers(text)) or unreadable(text) is not None


@pytest.mark.parametrize("text", MARKED.values(), ids=MARKED)
def test_markers_in_passage_text_are_made_inert(text: str) -> None:
    assert _readable(text)
    inert = neutralise(text)
    assert not _readable(inert), inert
    assert "Keys rotate" in inert


def test_links_and_brackets_without_digits_are_left_alone() -> None:
    text = "See [the guide](https://docs.acme.example/guide/) and [x] or [ ]."
    assert disarm_markers(prose(text)) == text


def _record(n: int, body: str) -> PassageRecord:
    return PassageRecord(
        project="acme/docs", path=f"docs/{n}.md", sha=SHA, line_start=1, line_end=3,
        heading=f"Rotation [{n}]", body=body, source="docs", origin="corpus",
        url=f"https://gitlab.acme.example/acme/docs/-/blob/{SHA}/docs/{n}.md#L1-3",
    )  # fmt: skip


def test_no_prompt_carries_a_marker_from_a_passage() -> None:
    records = [_record(n, text) for n, text in enumerate(MARKED.values(), start=1)]
    for task in (answer_task("how do keys rotate?", records), addresses_task("rotate?", records)):
        for body in re.findall(r"-----BEGIN PASSAGE \d+ \w+-----\n(.*?)-----END", task.user, re.S):
            assert not _readable(body), body
        assert all(not _readable(p.text) and not _readable(p.heading) for p in task.passages)


@pytest.mark.parametrize("text", MARKED.values(), ids=MARKED)
def test_the_offline_composer_never_copies_a_marker(text: str) -> None:
    # Given the raw text (not a neutralised prompt passage), it still copies no marker.
    passage = PromptPassage(n=1, heading="Rotating keys", source_line="x", text=text)
    output = compose_answer("how often do keys rotate weekly", (passage,))
    assert not output.declined, output.reason
    assert output.cited == [1] and markers(output.answer) == [1]
    assert check(output, 1).answered


def test_a_docs_sentence_ending_in_a_marker_is_answered_citing_its_own_passage(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    builder = EstateBuilder(tmp_path / "estate")
    filler = {
        f"docs/topic{n}.md": f"# Topic {n}\n\nWidget{n} handles gadget{n}.\n" for n in range(10)
    }
    pages = {
        "docs/rotation.md": "# Key rotation\n\nSigning keys rotate every week [2]. See [^7].\n",
        **filler,
    }
    builder.project("acme/docs").commit(pages, "Docs")
    builder.write()
    config = tmp_path / "scout.toml"
    config.write_text(render_config(tmp_path / "estate"), encoding="utf-8")
    assert scout("index", config=config).code == 0
    done = scout("ask", "how often do signing keys rotate", "--json", config=config)
    assert done.code == 0, done.stderr
    result = done.json()
    assert result["outcome"] == "answered", result["reason"]
    assert [c["path"] for c in result["citations"]] == ["docs/rotation.md"]
    assert "[2]" not in result["answer"] and "[^7]" not in result["answer"]
