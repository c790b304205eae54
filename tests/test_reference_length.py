"""A reference string over 512 characters is not a reference: extraction drops it and counts it,
and the sweep reports it as `skipped.reference_too_long` (an issue author cannot store a
sentence of prose as a "path" that is kept and shown in the audit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from signposts.extract import extract_issue
from signposts.references import MAX_REFERENCE_CHARS, DocsSite, ExtractContext
from tests.conftest import Result, render_config

G = "https://gitlab.acme.example"
CTX = ExtractContext(G, (DocsSite("https://docs.acme.example/h/", "acme/h", "docs/"),), "acme/app")
PROSE_PATH = "docs/" + "/".join(["a-sentence-of-prose-kept"] * 25) + ".md"
BLOB = "acme/app/-/blob/main/"


def _path_of(reference_chars: int) -> str:
    # a blob URL's reference string is the project, /-/blob/, the ref and the path
    return "docs/" + "a" * (reference_chars - len(BLOB) - len("docs/") - 3) + ".md"


@pytest.mark.parametrize(
    ("text", "kept", "skipped"),
    [
        (f"{G}/{BLOB}{_path_of(MAX_REFERENCE_CHARS)}", 1, {}),
        (
            f"{G}/{BLOB}{_path_of(MAX_REFERENCE_CHARS + 1)}",
            0,
            {"reference_too_long": 1},
        ),
        (f"see {PROSE_PATH} and {PROSE_PATH} and !12", 1, {"reference_too_long": 1}),
        (f"[x]({PROSE_PATH})", 0, {"reference_too_long": 1}),
    ],
    ids=["512 kept", "513 dropped", "a prose path twice, counted once", "a relative link"],
)
def test_a_reference_over_512_characters_is_dropped_and_counted(
    text: str, kept: int, skipped: dict[str, int]
) -> None:
    found = extract_issue("", text, (), CTX)
    assert len(found.references) == kept
    assert all(len(r.reference) <= MAX_REFERENCE_CHARS for r in found.references)
    assert dict(found.skipped) == skipped


def test_the_sweep_counts_references_too_long(tmp_path: Path, scout: Callable[..., Result]) -> None:
    builder = EstateBuilder(tmp_path / "estate")
    builder.project("acme/app").commit({"README.md": "# App\n\nKeys rotate weekly.\n"}, "Start")
    builder.issue("acme/app", 1, "How do keys rotate?", f"See {PROSE_PATH} and README.md")
    builder.write()
    config = tmp_path / "scout.toml"
    config.write_text(render_config(tmp_path / "estate"), encoding="utf-8")
    done = scout("sweep", "--json", config=config)
    assert done.code == 0, done.stderr
    summary = done.json()
    assert summary["skipped"]["reference_too_long"] == 1
    assert summary["references"] == 1  # README.md
    audit = scout("signposts", "--status", "all", "--json", config=config)
    assert PROSE_PATH not in audit.stdout
