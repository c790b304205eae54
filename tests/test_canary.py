"""Issue prose appears nowhere, even when the model quotes it back in every free-text field.

The demo estate with a canary in every issue title, description and note, swept with the
``claude-local`` provider whose fake ``claude`` echoes the question into every string it returns
(the addresses reason, ``result``, and, failing, its error text and stderr). The canary must not
reach the database files, any command's output in any format, the HTML report, or any fenced
passage of any prompt; and the ``claude`` child never sees the forge token's variable.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scout.cli.main import cli
from tests.helpers.calls import recorded, with_passages
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result

CANARY = "CANARY-5e1d0b-issue-prose"
TOKEN_ENV = "SCOUT_CANARY_FORGE_TOKEN"
DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
FENCED = re.compile(
    r"^-----BEGIN PASSAGE (\d+ \w+)-----$.*?^-----END PASSAGE \1-----$", re.M | re.S
)


def config_for(directory: Path, store: str = "scout.db") -> Path:
    text = DEMO_CONFIG.read_text(encoding="utf-8")
    text = text.replace('provider = "offline"', 'provider = "claude-local"')
    text = text.replace('path = "scout.db"', f'path = "{store}"')
    text = text.replace('groups = ["acme"]', f'groups = ["acme"]\ntoken_env = "{TOKEN_ENV}"')
    config = directory / f"{store}.toml"
    config.write_text(text, encoding="utf-8")
    return config


@pytest.mark.slow
def test_the_canary_is_nowhere_though_the_model_echoes_it(
    tmp_path: Path,
    scout: Callable[..., Result],
    claude_bin: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demo_estate(tmp_path / "estate", canary=CANARY)
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "echo")
    monkeypatch.setenv(TOKEN_ENV, "glpat-canary-secret")
    config = config_for(tmp_path)
    outputs: list[Result] = []

    def run(*args: str) -> Result:
        result = scout(*args, config=config)
        assert result.code == 0, (args, result.stderr)
        outputs.append(result)
        return result

    run("index")
    swept = run("sweep", "--json").json()
    assert swept["accepted"] > 5 and swept["rejected"]["corpus_rules"] > 0
    for status in ("rejected", "accepted", "all"):
        run("signposts", "--status", status)
        run("signposts", "--status", status, "--csv")
    ids = [row["id"] for row in run("signposts", "--status", "all", "--json").json()]
    for signpost in ids:  # in-process: one subprocess each would take a minute
        for extra in ([], ["--json"]):
            shown = CliRunner().invoke(
                cli, ["--config", str(config), "signposts", "show", str(signpost), *extra]
            )
            assert shown.exit_code == 0, shown.output
            outputs.append(Result(shown.exit_code, shown.stdout, shown.stderr))
    run("signposts", "summary")
    run("signposts", "summary", "--json")
    run("signposts", "recheck", "--all")
    run("signposts", "recheck", "--all", "--json")
    for question in ("How are FX rates rounded in the ledger?", "How do I bake bread?"):
        run("ask", question)
        run("ask", question, "--json")
    run("gaps")
    run("gaps", "--json")
    run("report", "--html", str(tmp_path / "report.html"))

    reasons = {
        r["reason"]
        for r in run("signposts", "--status", "all", "--json").json()
        if r["check"] in (None, "addresses")
    }
    assert reasons <= {"addresses the issue's question", "does not address the issue's question"}
    for result in outputs:
        assert CANARY not in result.stdout and CANARY not in result.stderr
    assert CANARY not in (tmp_path / "report.html").read_text(encoding="utf-8")
    conn = sqlite3.connect(tmp_path / "scout.db")
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    for path in tmp_path.glob("scout.db*"):
        assert CANARY.encode() not in path.read_bytes(), path.name

    calls = recorded(claude_bin)
    assert len(calls) > 10
    asked_with_canary = 0
    for call in calls:
        assert TOKEN_ENV not in call["env"]
    for call in with_passages(calls):
        assert TOKEN_ENV not in call["env"]
        prompt = call["stdin"]
        fenced = FENCED.findall(prompt)
        assert fenced
        for block in FENCED.finditer(prompt):
            assert CANARY not in block.group(0)
        asked_with_canary += CANARY in prompt  # the issue is the question, outside the fences
    assert asked_with_canary >= 5


@pytest.mark.slow
def test_a_failing_model_does_not_quote_the_issue_in_its_error(
    tmp_path: Path,
    scout: Callable[..., Result],
    claude_bin: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demo_estate(tmp_path / "estate", canary=CANARY)
    config = config_for(tmp_path)
    assert scout("index", config=config).code == 0
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "echo_error")
    failed = scout("sweep", "--json", config=config)
    assert failed.code == 6
    assert failed.stdout == "" and len(failed.stderr.splitlines()) == 1
    assert CANARY not in failed.stderr
    assert CANARY in claude_bin.read_text()  # the fake did see (and echo) the question
