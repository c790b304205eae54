"""Malformed input files exit with their documented code and one line, never 1 ("internal
error"): the config (3), an estate's estate.toml (5) and issue files (5, naming file and line),
eval files (2). Each loader is fed deep nesting, wrong types and huge values."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.toml_input import MAX_DEPTH, MAX_TOML_BYTES
from tests.fakes.corpus import make_store, write_config
from tests.helpers.config import render_config
from tests.helpers.run import Result

DEEP = 5_000
# TOML nested thousands deep, in each way TOML can nest
DEEP_TOML = {
    "arrays": "x = " + "[" * DEEP + "]" * DEEP + "\n",
    "inline tables": "x = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
    "dotted keys": "x" + ".a" * DEEP + " = 1\n",
    "table headers": "[" + ".".join(["a"] * DEEP) + "]\nb = 1\n",
    "just past the bound": "x = " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",
}
HUGE = "x = '" + "a" * (MAX_TOML_BYTES + 1) + "'\n"


def _config_with(tmp_path: Path, extra: str) -> Path:
    config = tmp_path / "scout.toml"
    config.write_text(render_config(tmp_path / "estate") + extra, encoding="utf-8")
    return config


@pytest.mark.parametrize("text", DEEP_TOML.values(), ids=DEEP_TOML)
def test_a_config_nested_thousands_deep_is_a_config_error(
    tmp_path: Path, scout: Callable[..., Result], text: str
) -> None:
    config = tmp_path / "scout.toml"
    config.write_text(text, encoding="utf-8")
    done = scout("ask", "how are keys rotated", config=config)
    assert (done.code, done.stdout) == (3, ""), done.stderr
    assert done.stderr.startswith(f"scout: {config}: not valid TOML: ")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('\n[ingest]\ninclude_confidential = ["yes"]\n', "ingest.include_confidential"),
        ("\n[ingest]\nschedule = 5\n", "ingest.schedule"),
        ('\n[[docs_site]]\nurl = {a = {b = {c = "x"}}}\nproject = "acme/a"\n', "docs_site.0.url"),
    ],
)
def test_a_config_of_the_wrong_shape_is_a_config_error(
    tmp_path: Path, scout: Callable[..., Result], extra: str, message: str
) -> None:
    done = scout("ask", "how are keys rotated", config=_config_with(tmp_path, extra))
    assert (done.code, done.stdout) == (3, ""), done.stderr
    assert message in done.stderr and done.stderr.count("\n") == 1


def test_a_huge_config_is_refused_unread(tmp_path: Path, scout: Callable[..., Result]) -> None:
    config = tmp_path / "scout.toml"
    config.write_text(HUGE, encoding="utf-8")
    done = scout("ask", "how are keys rotated", config=config)
    assert (done.code, done.stderr) == (3, f"scout: {config}: larger than 8 MiB\n")


def _local(tmp_path: Path, estate_toml: str) -> Path:
    root = tmp_path / "estate"
    root.mkdir(exist_ok=True)
    (root / "estate.toml").write_text(estate_toml, encoding="utf-8")
    config = tmp_path / "scout.toml"
    config.write_text(render_config(root), encoding="utf-8")
    return config


@pytest.mark.parametrize("text", [*DEEP_TOML.values(), HUGE], ids=[*DEEP_TOML, "huge"])
def test_an_estate_toml_nested_deep_or_huge_is_bad_data(
    tmp_path: Path, scout: Callable[..., Result], text: str
) -> None:
    done = scout("index", config=_local(tmp_path, text))
    assert (done.code, done.stdout) == (5, ""), done.stderr
    assert done.stderr.startswith(f"scout: estate: {tmp_path / 'estate' / 'estate.toml'}: ")
    assert done.stderr.count("\n") == 1


def _issue_estate(tmp_path: Path) -> tuple[Path, Path]:
    """A config over an estate of one project, and the path of that project's issue file."""
    config = _local(
        tmp_path,
        '[[project]]\npath = "acme/a"\nvisibility = "public"\ndefault_branch = "main"\n',
    )
    issues = tmp_path / "estate" / "issues" / "acme" / "a.jsonl"
    issues.parent.mkdir(parents=True)
    return config, issues


ISSUE = {"iid": 1, "title": "t", "description": "d", "updated_at": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("notes", "problem"),
    [
        ([{"id": "twelve", "body": "b"}], "note 1: `id` must be an integer (got 'twelve')"),
        ([{"id": 1.5, "body": "b"}], "note 1: `id` must be an integer (got '1.5')"),
        ([{"id": True, "body": "b"}], "note 1: `id` must be an integer (got 'True')"),
        ([{"id": 1}, "a note"], "note 2: must be an object"),
        ({"id": 1}, "`notes` must be a list of note objects"),
    ],
)
def test_an_estate_issue_with_malformed_notes_is_bad_data_naming_file_and_line(
    tmp_path: Path, scout: Callable[..., Result], notes: object, problem: str
) -> None:
    config, issues = _issue_estate(tmp_path)
    good = json.dumps({**ISSUE, "iid": 2})
    issues.write_text(f"{good}\n{json.dumps({**ISSUE, 'notes': notes})}\n", encoding="utf-8")
    done = scout("sweep", config=config)
    assert (done.code, done.stdout) == (5, ""), done.stderr
    assert done.stderr == f"scout: estate: {issues} line 2: {problem}\n"


def test_an_issue_line_nested_thousands_deep_is_skipped_with_a_warning(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config, issues = _issue_estate(tmp_path)
    issues.write_text("[" * 100_000 + "]" * 100_000 + "\n" + json.dumps(ISSUE) + "\n")
    done = scout("sweep", "--json", config=config)
    assert done.code == 0, done.stderr
    assert done.json()["issues_read"] == 1
    assert f"{issues} line 1: not an issue record, skipped" in done.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        *((t, "not valid TOML: ") for t in DEEP_TOML.values()),
        (HUGE, "larger than 8 MiB"),
        ("question = 5\n", "no questions"),
        ("[[question]]\nquestion = ['a']\nband = 'unanswerable'\n", "`question` must be"),
        ("[[question]]\nquestion = 'rotate keys'\nband = 7\n", "unknown band 7"),
        (
            "[[question]]\nquestion = 'rotate keys'\nband = 'answerable'\nsources = 'a.md'\n",
            "`sources` must be a list",
        ),
        ("[[question]]\nquestion = '" + "rotate " * 2_000 + "'\nband = 'unanswerable'\n", "limit"),
    ],
)
def test_a_malformed_eval_file_is_a_usage_error(
    tmp_path: Path, scout: Callable[..., Result], text: str, message: str
) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    done = scout("eval", str(bad), config=config)
    assert (done.code, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith(f"scout: {bad}: ") and message in done.stderr
    assert done.stderr.count("\n") == 1
