"""Provider faults through the real CLI (``scout ask`` in a subprocess): errors are incidents.

Every failure of ``claude-local`` (a fake ``claude`` on PATH) or ``anthropic`` (a loopback
Messages API behind ``ANTHROPIC_BASE_URL``) exits 6 with one line on stderr and nothing on stdout,
and logs no outcome: it is never a decline and never an answer. The one exception is a reply
that is valid against the schema but fails the citation check: that is a decline (exit 0).
Timeouts run in-process with a provider whose timeout is short enough for a test (the CLI's are
60 s and more).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from scout.answer import ask
from scout.errors import ProviderError
from scout.providers.claude_local import ClaudeLocalProvider
from scout.store import Store
from tests.fakes.corpus import make_store, write_config
from tests.fakes.messages_api import FakeMessagesAPI, message
from tests.helpers.run import run_completed
from tests.helpers.sdk import ONE_WORKER, Lazy, preloaded

pytestmark = [pytest.mark.faults, ONE_WORKER]

anthropic_api = Lazy("scout.providers.anthropic_api")
_imported = preloaded(anthropic_api)

FAKE_CLAUDE = Path(__file__).parent / "fakes" / "fake_claude.py"
QUESTION = "How do I rotate keys?"
KEY = "ANTHROPIC_API_KEY"


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FAKE_CLAUDE", "SCOUT_", "ANTHROPIC_"))
    }
    return {**env, **extra}


def _ask(config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_completed(["--config", str(config), "ask", QUESTION, "--json"], env=env, timeout=60)


def _logged(directory: Path) -> list[str]:
    with Store.open(directory / "scout.db") as store:
        return [q.outcome for q in store.questions()]


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    """A store, a claude-local config, and bin/ with a fake ``claude`` and an empty-reply one.
    Search terms are not asked for: these are the answer call's failures, one line each (a
    failing expansion is tests/test_expansion_default.py's)."""
    make_store(tmp_path).close()
    write_config(tmp_path, provider="claude-local", expand="off")
    for name, body in (
        ("claude", f'exec "{sys.executable}" "{FAKE_CLAUDE}" "$@"'),
        ("claude-empty", "cat >/dev/null; exit 0"),
    ):
        script = tmp_path / "bin" / name / "claude"
        script.parent.mkdir(parents=True)
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    return tmp_path


def _claude_env(directory: Path, binary: str = "claude", **extra: str) -> dict[str, str]:
    path = f"{directory / 'bin' / binary}{os.pathsep}{os.environ['PATH']}"
    return _env(PATH=path, **extra)


CLAUDE_FAILURES = {
    "auth_or_api_error": (
        {"FAKE_CLAUDE_MODE": "is_error"},
        "scout: the claude CLI reported an error: Invalid API key · Please run /login\n",
    ),
    "bad_arguments": (
        {"FAKE_CLAUDE_MODE": "nonzero"},
        "scout: the claude CLI exited with status 1: error: unknown option '--bogus'\n",
    ),
    "invalid_json": (
        {"FAKE_CLAUDE_MODE": "invalid_json"},
        "scout: the claude CLI replied with something other than a JSON object\n",
    ),
    "schema_invalid_json": (
        {"FAKE_CLAUDE_MODE": "schema_invalid"},
        "scout: the claude CLI's structured_output does not match the schema: "
        "4 error(s), first at answer\n",
    ),
    "no_structured_output": (
        {"FAKE_CLAUDE_MODE": "missing_structured"},
        "scout: the claude CLI reply has no structured_output (the model ignored the schema)\n",
    ),
    "extra_field": (
        {"FAKE_CLAUDE_OUTPUT": json.dumps({"answer": "a [1]", "cited": [1], "declined": False,
                                           "reason": "", "tool": "rm -rf /"})},
        "scout: the claude CLI's structured_output does not match the schema: "
        "1 error(s), first at tool\n",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("env", "stderr"), CLAUDE_FAILURES.values(), ids=CLAUDE_FAILURES)
def test_claude_local_failures_exit_6_never_a_decline(
    claude_dir: Path, env: dict[str, str], stderr: str
) -> None:
    done = _ask(claude_dir / "scout.toml", _claude_env(claude_dir, **env))
    assert (done.returncode, done.stdout, done.stderr) == (6, "", stderr)
    assert _logged(claude_dir) == []


def test_claude_local_empty_reply_exits_6(claude_dir: Path) -> None:
    done = _ask(claude_dir / "scout.toml", _claude_env(claude_dir, "claude-empty"))
    assert (done.returncode, done.stdout) == (6, "")
    assert done.stderr == "scout: the claude CLI replied with something other than a JSON object\n"
    assert _logged(claude_dir) == []


def _output(answer: str, cited: list[int], declined: bool = False, reason: str = "") -> str:
    return json.dumps({"answer": answer, "cited": cited, "declined": declined, "reason": reason})


# Schema-valid replies whose citations do not hold: declines with the reason, exit 0.
CITATION_FAILURES = {
    "cites_a_passage_it_was_not_given": (_output("Run it [1].", [9]), "cited passage 9 of 1"),
    "marker_in_prose_out_of_range": (_output("Run it [7].", [1]), "cited passage 7 of 1"),
    "cites_nothing": (_output("Run vault rotate.", []), "cited nothing"),
    "cites_passage_zero": (_output("Run it [0].", [0]), "cited passage 0 of 1"),
    "empty_answer": (_output("  ", [1]), "empty answer"),
    "declines_itself": (_output("", [], True, "not covered"), "not covered"),
}


@pytest.mark.parametrize(("output", "reason"), CITATION_FAILURES.values(), ids=CITATION_FAILURES)
def test_schema_valid_replies_failing_the_citation_check_are_declines(
    claude_dir: Path, output: str, reason: str
) -> None:
    done = _ask(claude_dir / "scout.toml", _claude_env(claude_dir, FAKE_CLAUDE_OUTPUT=output))
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert (result["outcome"], result["answer"], result["reason"]) == ("declined", None, reason)
    assert result["citations"] == []
    assert _logged(claude_dir) == ["declined"]


def test_claude_local_hang_is_a_provider_error_not_a_decline(
    claude_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{claude_dir / 'bin' / 'claude'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    with Store.open(claude_dir / "scout.db") as store, pytest.raises(ProviderError) as caught:
        ask(
            QUESTION,
            store=store,
            provider=ClaudeLocalProvider(model="m", timeout=0.5),
            provider_name="claude-local",
        )
    assert str(caught.value).startswith("the claude CLI gave no reply within 0.5 s")
    assert _logged(claude_dir) == []


# ---------------------------------------------------------------------------------- anthropic


class _MessagesAPI(FakeMessagesAPI):
    """The loopback Messages API plus replies it lacks: empty content, an empty text."""

    def reply(self, handler: BaseHTTPRequestHandler, mode: str) -> None:
        if mode == "no_content":
            body = {**message(""), "content": []}
            self._send(handler, 200, json.dumps(body).encode(), {})
        elif mode == "empty_text":
            self._send(handler, 200, json.dumps(message("")).encode(), {})
        else:
            super().reply(handler, mode)


@pytest.fixture
def api_dir(tmp_path: Path) -> Iterator[Path]:
    make_store(tmp_path).close()
    # The answer call's failures, one line each: search terms are not asked for (a failing
    # expansion is tested in tests/test_expansion_default.py).
    write_config(tmp_path, provider="anthropic", expand="off")
    yield tmp_path


ANTHROPIC_FAILURES = {
    "server_error_5xx": (["500"], "scout: the API failed with HTTP 500 after 2 retries\n"),
    "overloaded_529": (["529"], "scout: the API failed with HTTP 529 after 2 retries\n"),
    "unauthorized_401": (["401"], f"scout: the API rejected {KEY} (401): check the key\n"),
    "rate_limited_429": (["429"], "scout: rate limited by the API (429) after 2 retries: try "
                                  "later\n"),
    "invalid_json": (["malformed"], None),
    "schema_invalid_json": (["schema_invalid"], None),
    "no_content": (["no_content"], None),
    "empty_text": (["empty_text"], None),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("script", "stderr"), ANTHROPIC_FAILURES.values(), ids=ANTHROPIC_FAILURES)
def test_anthropic_failures_exit_6_never_a_decline(
    api_dir: Path, script: list[str], stderr: str | None
) -> None:
    with _MessagesAPI(script) as api:
        env = _env(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-test-key-never-printed")
        done = _ask(api_dir / "scout.toml", env)
    assert (done.returncode, done.stdout) == (6, ""), done.stderr
    assert done.stderr.startswith("scout: ") and done.stderr.count("\n") == 1, done.stderr
    assert "sk-test-key-never-printed" not in done.stderr
    if stderr is not None:
        assert done.stderr == stderr
    assert _logged(api_dir) == []


@pytest.mark.slow
def test_anthropic_transient_errors_then_success_answers(api_dir: Path) -> None:
    with _MessagesAPI(["529", "500", "success"]) as api:
        env = _env(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-test")
        done = _ask(api_dir / "scout.toml", env)
        assert len(api.requests) == 3
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["outcome"] == "answered"


@pytest.mark.slow
def test_anthropic_reply_failing_the_citation_check_is_a_decline(api_dir: Path) -> None:
    output: dict[str, Any] = {
        "answer": "Run it [4].",
        "cited": [4],
        "declined": False,
        "reason": "",
    }
    with _MessagesAPI(["success"], output=output) as api:
        env = _env(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-test")
        done = _ask(api_dir / "scout.toml", env)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["reason"] == "cited passage 4 of 1"


def test_anthropic_timeout_is_a_provider_error_not_a_decline(
    api_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _MessagesAPI(["slow"], slow_seconds=3) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        with Store.open(api_dir / "scout.db") as store, pytest.raises(ProviderError) as caught:
            ask(
                QUESTION,
                store=store,
                provider=anthropic_api.AnthropicProvider(model="m", timeout=0.3, max_retries=0),
                provider_name="anthropic",
            )
    assert str(caught.value) == "the API gave no reply within 0.3 s"
    assert _logged(api_dir) == []
