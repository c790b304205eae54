"""``scout ask`` and ``scout gaps`` on the command line: output, exit codes, stdout/stderr."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scout.cli.main import cli
from scout.store import Store
from tests.fakes.corpus import CRED_CITATION, CRED_URL, make_store, write_config

SCOUT = Path(sys.executable).parent / "scout"
FAKE_CLAUDE = Path(__file__).parent / "fakes" / "fake_claude.py"
ANSWERED = {
    "outcome": "answered",
    "answer": "To rotate the database keys, run `vault rotate --all` from the admin host. [1] "
    "Rotated keys take effect within five minutes. [1]",
    "reason": None,
    "citations": [CRED_CITATION],
    "passages": 1,
    "cause": None,
    "where_to_look": [
        {
            "n": 1,
            "project": "acme/config",
            "path": "docs/credentials.md",
            "heading": "Rotating credentials",
            "lines": [12, 30],
            "url": CRED_URL,
        }
    ],
    "expanded": [],
    "expansion_error": None,
    "dense_error": None,
}


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    """A config (offline provider) and a populated store in tmp_path; returns the config path."""
    make_store(tmp_path).close()
    return write_config(tmp_path)


def invoke(config: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--config", str(config), *args])


def test_ask_json_answered(estate: Path) -> None:
    result = invoke(estate, "ask", "How do I rotate keys?", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == ANSWERED


def test_ask_human_answered_offline_is_where_to_look(estate: Path) -> None:
    result = invoke(estate, "ask", "How do I rotate keys?")
    assert result.exit_code == 0
    assert result.stdout == (
        "Offline mode: no model read these passages. They are where the documentation best "
        "matches your question's words.\n\nWhere to look:\n"
        "  [1] acme/config docs/credentials.md L12-30  Rotating credentials\n"
        f"      {CRED_URL}\n"
        "      matching: To rotate the database keys, run `vault rotate --all` from the admin "
        "host. Rotated keys take effect within five minutes.\n"
    )


@pytest.mark.parametrize(
    ("question", "reason", "passages", "cause"),
    [
        ("what is the weather in Lisbon", "nothing matched", 0, None),
        (
            "How do I rotate backups to tape storage?",
            "no passage covers: rotate, tape, storage",
            2,
            "offline",
        ),
    ],
)
def test_ask_declines_exit_zero(
    estate: Path, question: str, reason: str, passages: int, cause: str | None
) -> None:
    result = invoke(estate, "ask", question, "--json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document == {
        "outcome": "declined",
        "answer": None,
        "reason": reason,
        "citations": [],
        "passages": passages,
        "cause": cause,
        "where_to_look": document["where_to_look"],
        "expanded": [],
        "expansion_error": None,
        "dense_error": None,
    }
    assert len(document["where_to_look"]) == passages
    shown = invoke(estate, "ask", question).stdout
    if cause is None:
        assert shown == f"Declined: {reason}\n"
    else:
        assert shown.startswith(f"Not answered in offline mode: {reason}.\n")


def test_nothing_matched_never_starts_the_configured_provider(tmp_path: Path) -> None:
    # claude-local is configured but there is no claude on PATH: a decline must not need it.
    make_store(tmp_path).close()
    config = write_config(tmp_path, provider="claude-local")
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    result = CliRunner(env=env).invoke(cli, ["--config", str(config), "ask", "weather", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["reason"] == "nothing matched"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["ask", "?!?"], 2, "scout: question has no words to search for: ask in words\n"),
        (
            ["ask", "k" * 4001],
            2,
            "scout: question is 4001 characters; the limit is 4000: shorten it\n",
        ),
        (["gaps", "--since", "soon"], 2, None),
    ],
)
def test_usage_errors_exit_2_with_nothing_on_stdout(
    estate: Path, args: list[str], code: int, message: str | None
) -> None:
    result = invoke(estate, *args)
    assert (result.exit_code, result.stdout) == (code, "")
    if message:
        assert result.stderr == message


@pytest.mark.parametrize("passages", ["0", "21", "x"])
def test_passages_out_of_range_is_a_usage_error(estate: Path, passages: str) -> None:
    result = invoke(estate, "ask", "rotate keys", "--passages", passages)
    assert (result.exit_code, result.stdout) == (2, "")


def test_passages_option_limits_what_the_provider_sees(estate: Path) -> None:
    result = invoke(estate, "ask", "rotate backups deploys", "--passages", "1", "--json")
    assert json.loads(result.stdout)["passages"] == 1


def test_missing_index_exits_4(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    result = invoke(config, "ask", "rotate keys")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == f"scout: no index at {tmp_path / 'scout.db'}: run `scout index` first\n"


def test_gaps_groups_declined_questions(tmp_path: Path, claude_env: dict[str, str]) -> None:
    # a model (the fake claude) declines the tape questions and answers the keys one
    make_store(tmp_path).close()
    estate = write_config(tmp_path, provider="claude-local")
    answer = {"answer": "Run `vault rotate --all` [1].", "cited": [1], "declined": False}
    env = {
        **claude_env,
        "FAKE_CLAUDE_OUTPUT": json.dumps(
            {"answer": "", "cited": [], "declined": True, "reason": "tape is not covered"}
        ),
        "FAKE_CLAUDE_BY_QUESTION": json.dumps(
            {"Question: How do I rotate keys?": {**answer, "reason": ""}}
        ),
    }
    runner = CliRunner(env=env)
    for question in [
        "How do I rotate backups to tape storage?",
        "Storage: how do i rotate BACKUPS to TAPE",
        "ph",
        "How do I rotate keys?",
    ]:
        assert runner.invoke(cli, ["--config", str(estate), "ask", question]).exit_code == 0
    # offline mode's decline of the same question is no gap: no model judged it
    offline = ["--config", str(estate), "ask", "--provider", "offline", "rotate backups to tape"]
    assert runner.invoke(cli, offline).exit_code == 0
    result = invoke(estate, "gaps", "--json")
    assert result.exit_code == 0
    groups = json.loads(result.stdout)
    assert [(g["question"], g["wordings"], g["asked"], g["reason"]) for g in groups] == [
        (
            "Storage: how do i rotate BACKUPS to TAPE",
            [
                "Storage: how do i rotate BACKUPS to TAPE",
                "How do I rotate backups to tape storage?",
            ],
            2,
            "tape is not covered",
        ),
        ("ph", ["ph"], 1, "nothing matched"),
    ]
    assert groups[0]["first"] <= groups[0]["last"]
    # where a writer would add the answer: the passages retrieval found, best first
    assert [[n["project"], n["path"], n["lines"]] for n in groups[0]["nearest"]] == NEAREST
    assert groups[0]["nearest"][0]["url"].endswith("/docs/backups.md#L1-9")
    assert groups[1]["nearest"] == [] and groups[0]["issues"] == []
    wide = CliRunner().invoke(cli, ["--config", str(estate), "gaps"], env={"COLUMNS": "200"})
    header, first, second, *rest = wide.stdout.splitlines()
    assert header.split()[:2] == ["asked", "question"]
    assert first.startswith("    2  Storage: how do i rotate BACKUPS to TAPE (+1 other wording)  ")
    assert "acme/ops docs/backups.md L1-9" in first  # the nearest passage: where it would go
    assert second.startswith("    1  ph  ")
    assert (
        "Not counted as gaps: 1 declined in offline mode: no model read their passages (ask "
        "with a model to know whether the documentation answers them)."
    ) in rest


NEAREST = [
    ["acme/ops", "docs/backups.md", [1, 9]],
    ["acme/config", "docs/credentials.md", [12, 30]],
]


@pytest.mark.parametrize("question", ["How do I?", "what is it", "Why?! How?", "what's that"])
def test_a_question_without_content_words_is_a_usage_error_and_not_logged(
    estate: Path, question: str
) -> None:
    result = invoke(estate, "ask", question, "--json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "scout: question has only words such as 'how' and 'what' in it: say what it is about\n"
    )
    with Store.open(estate.parent / "scout.db") as store:
        assert store.questions() == []


def test_an_empty_index_is_a_decline_that_says_so_and_is_not_a_gap(tmp_path: Path) -> None:
    make_store(tmp_path, records=[]).close()
    config = write_config(tmp_path)
    result = invoke(config, "ask", "What is the office wifi password?", "--json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert (document["outcome"], document["passages"]) == ("declined", 0)
    assert document["reason"].startswith("the index holds no passages: run `scout index`")
    with Store.open(tmp_path / "scout.db") as store:
        (logged,) = store.questions()
    assert (logged.cause, logged.terms) == ("index_empty", ("office", "wifi", "password"))
    assert json.loads(invoke(config, "gaps", "--json").stdout) == []


@pytest.mark.parametrize("since", ["7d", "24h", "yesterday", "2026-11-01", "2026-11-01T10:00:00Z"])
@pytest.mark.parametrize("command", ["gaps", "signposts"])
def test_since_forms_are_accepted_by_gaps_and_signposts(
    estate: Path, command: str, since: str
) -> None:
    invoke(estate, "ask", "ph")
    result = invoke(estate, command, "--since", since, "--json")
    assert result.exit_code == 0, result.stderr
    assert isinstance(json.loads(result.stdout), list)


@pytest.mark.parametrize("since", ["soon", "0d", "-1d", "7w", "1.5h", "", "yesterday2", "9" * 99])
@pytest.mark.parametrize("command", ["gaps", "signposts"])
def test_malformed_since_exits_2_with_one_line(estate: Path, command: str, since: str) -> None:
    result = invoke(estate, command, "--since", since)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert "is not a date: use YYYY-MM-DD, 7d, 24h or yesterday" in result.stderr


# ---------------------------------------------------------------------- real subprocess
@pytest.fixture
def claude_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "claude"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CLAUDE", "SCOUT_"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["FAKE_CLAUDE_RECORD"] = str(tmp_path / "calls.jsonl")
    return env


def run_scout(config: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCOUT), "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )


def test_subprocess_claude_local_answer(tmp_path: Path, claude_env: dict[str, str]) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path, provider="claude-local")
    done = run_scout(
        config, {**claude_env, "FAKE_CLAUDE_MODE": "success"}, "ask", "rotate keys", "--json"
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["answer"] == "Run `vault rotate` from the admin host [1]."
    # with a model, the search terms first (the question alone), then the answer
    terms, call = [
        json.loads(line) for line in Path(claude_env["FAKE_CLAUDE_RECORD"]).read_text().splitlines()
    ]
    assert "PASSAGE" not in terms["stdin"] and "rotate keys" in terms["stdin"]
    assert call["argv"][call["argv"].index("--model") + 1] == "claude-haiku-4-5"
    assert re.search(r"^-----BEGIN PASSAGE 1 [A-Za-z0-9]{6,}-----$", call["stdin"], re.M)


@pytest.mark.parametrize(
    ("mode", "stderr"),
    [
        (
            "is_error",
            "scout: the claude CLI reported an error: Invalid API key · Please run /login\n",
        ),
        (
            "missing_structured",
            "scout: the claude CLI reply has no structured_output (the model ignored the schema)\n",
        ),
        (
            "nonzero",
            "scout: the claude CLI exited with status 1: error: unknown option '--bogus'\n",
        ),
    ],
)
def test_subprocess_provider_failure_exits_6_and_prints_no_answer(
    tmp_path: Path, claude_env: dict[str, str], mode: str, stderr: str
) -> None:
    make_store(tmp_path).close()
    # the answer call's failure alone (a failing expansion is tests/test_expansion_default.py's)
    config = write_config(tmp_path, provider="claude-local", expand="off")
    done = run_scout(
        config, {**claude_env, "FAKE_CLAUDE_MODE": mode}, "ask", "rotate keys", "--json"
    )
    assert (done.returncode, done.stdout, done.stderr) == (6, "", stderr)
    with Store.open(tmp_path / "scout.db") as store:
        assert store.questions() == []


def test_subprocess_provider_option_overrides_config(
    tmp_path: Path, claude_env: dict[str, str]
) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path, provider="claude-local")
    done = run_scout(
        config,
        {**claude_env, "FAKE_CLAUDE_MODE": "is_error"},
        "ask",
        "rotate keys",
        "--provider",
        "offline",
    )
    assert done.returncode == 0
    assert done.stdout.startswith("Offline mode: no model read these passages.")
    assert not Path(claude_env["FAKE_CLAUDE_RECORD"]).exists()


def test_subprocess_missing_index_exits_4(tmp_path: Path, claude_env: dict[str, str]) -> None:
    config = write_config(tmp_path)
    done = run_scout(config, claude_env, "ask", "rotate keys", "--json")
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr.count("\n") == 1


def test_subprocess_usage_error_exits_2(tmp_path: Path, claude_env: dict[str, str]) -> None:
    make_store(tmp_path).close()
    done = run_scout(write_config(tmp_path), claude_env, "ask", "🔑 ?", "--json")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "scout: question has no words to search for: ask in words\n"


def test_gaps_nl_is_one_line_per_group(estate: Path) -> None:
    for question in ["Paris weather", "Lisbon weather", "Weather, Lisbon?"]:
        invoke(estate, "ask", question)
    listed = json.loads(invoke(estate, "gaps", "--json").stdout)
    lines = invoke(estate, "gaps", "--nl").stdout.splitlines()
    assert len(lines) == len(listed) == 2
    assert [json.loads(line) for line in lines] == listed
