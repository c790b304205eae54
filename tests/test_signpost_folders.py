"""A link to a folder is no signpost (docs/design.md, "Edges of the forms").

Written as a folder (a tree URL, a blob URL or relative link ending in ``/``), extraction drops it
and says so (``folder``); written like a file (a blob URL or relative link whose path turns out to
be a folder at the head), validation rejects it at ``resolves`` saying it is a folder, never that
it "does not exist". Real git repositories, the real CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from signposts.extract import extract
from tests.helpers.run import Result
from tests.helpers.validator import local_validator

G = "https://gitlab.acme.example"
HANDBOOK = f"{G}/acme/handbook"
QUESTION = "How do I restart the ingest service?"


def _handbook(builder: EstateBuilder) -> str:
    repo = builder.project("acme/handbook")
    head = repo.commit(
        {
            "docs/runbooks/restart.md": "# Restarting ingest\n\nRestart the ingest service.\n",
            "docs/runbooks/index.md": "# Runbooks\n\nHow to restart the ingest service.\n",
        },
        "Add runbooks",
    )
    builder.write()
    return str(head)


@pytest.mark.parametrize(
    "text",
    [
        f"{HANDBOOK}/-/blob/main/docs/runbooks",
        f"{HANDBOOK}/-/blob/main/docs/runbooks#L3",
        "[the runbooks](docs/runbooks)",
        "[the runbooks](/acme/handbook/-/blob/main/docs/runbooks)",
    ],
)
def test_a_file_link_to_what_is_a_folder_is_rejected_as_a_folder(
    tmp_path: Path, estate_builder: EstateBuilder, text: str
) -> None:
    head = _handbook(estate_builder)
    validator, forge, context = local_validator(tmp_path, estate_builder)
    (reference,) = extract(text, context).references
    verdict = validator.validate(reference, QUESTION)
    assert (verdict.status, verdict.check) == ("rejected", "resolves")
    assert verdict.reason == f"docs/runbooks is a folder at {head[:12]}, not a file"
    assert verdict.passages == ()
    forge.close()


def test_a_file_in_the_folder_is_a_signpost_and_a_missing_path_says_it_is_missing(
    tmp_path: Path, estate_builder: EstateBuilder
) -> None:
    head = _handbook(estate_builder)
    validator, forge, context = local_validator(tmp_path, estate_builder)
    text = f"{HANDBOOK}/-/blob/main/docs/runbooks/restart.md and [x](docs/runbook)"
    found, missing = extract(text, context).references
    assert validator.validate(found, QUESTION).status == "accepted"
    verdict = validator.validate(missing, QUESTION)
    assert verdict.reason == f"docs/runbook does not exist at the head {head[:12]}"
    forge.close()


@pytest.mark.slow
def test_extract_dropped_names_the_folders(
    tmp_path: Path,
    estate_builder: EstateBuilder,
    write_config: Callable[..., Path],
    scout: Callable[..., Result],
) -> None:
    _handbook(estate_builder)
    config = write_config(estate_builder.root)
    tree = f"{HANDBOOK}/-/tree/main/docs/runbooks"
    issue = tmp_path / "issue.txt"
    issue.write_text(
        f"See {tree} and [ops](docs/runbooks/) and {HANDBOOK}/-/blob/main/docs/runbooks/restart.md",
        encoding="utf-8",
    )
    plain = scout("signposts", "extract", "--project", "acme/handbook", str(issue), config=config)
    assert plain.code == 0, plain.stderr
    assert "2 link(s) to a folder were dropped" in plain.stderr
    done = scout(
        "signposts",
        "extract",
        "--project",
        "acme/handbook",
        "--dropped",
        "--json",
        str(issue),
        config=config,
    )
    assert done.code == 0, done.stderr
    doc = done.json()
    assert [r["kind"] for r in doc["references"]] == ["file"]
    assert doc["dropped"] == [
        {"reference": tree, "reason": "folder"},
        {"reference": "docs/runbooks/", "reason": "folder"},
    ]
