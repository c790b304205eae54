"""A task's deadline bounds the whole provider call: hostile servers that hang, dribble and lie.

Each provider against a loopback server that never answers, sends its reply a byte at a time,
keeps asking to be retried, or replies with bytes no JSON reader should take (not UTF-8, an
integer of 5,000 digits). The SDKs' own timeouts are per read and they retry timeouts, so without
the deadline each of these held a call for minutes. Bounds are counted, not timed: the bytes the
server managed to dribble before the client gave up, the requests it received.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest

from scout.errors import ProviderError, ProviderTimeout
from scout.providers.base import Task
from scout.providers.claude_local import ClaudeLocalProvider
from scout.providers.schema import AnswerOutput
from scout.providers.transport import Retryable, retry_after, retry_wait
from tests.fakes.openai_api import DEFAULT_ANSWER, FakeOpenAI
from tests.helpers.samples import ANSWER_TASK as TASK
from tests.helpers.sdk import Lazy, preloaded

# A group of its own, not the SDK suites' (tests/helpers/sdk.py): its tests wait on deadlines
# (about 14 s in all), which beside the others' would lengthen the one worker that runs them.
pytestmark = pytest.mark.xdist_group("provider_deadline")
openai_provider = Lazy("scout.providers.openai")
anthropic_api = Lazy("scout.providers.anthropic_api")
_imported = preloaded(openai_provider, anthropic_api)

FAKE_CLAUDE = Path(__file__).parent / "fakes" / "fake_claude.py"
DEADLINE = 1.0  # seconds from now
DRIBBLE = 0.1  # seconds a byte: in DEADLINE, about ten bytes


def due(seconds: float = DEADLINE) -> Task[AnswerOutput]:
    return dataclasses.replace(TASK, deadline=time.monotonic() + seconds)


def openai_run(api: FakeOpenAI, task: Task[AnswerOutput], **options: Any) -> AnswerOutput:
    endpoint = openai_provider.Endpoint(base_url=api.url, api_key_env="SCOUT_TEST_NO_KEY")
    provider = openai_provider.OpenAIProvider(model="m", endpoint=endpoint, **options)
    return provider.run(task)  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["hang", "dribble", "dribble_headers"])
def test_a_server_that_hangs_or_dribbles_is_given_up_at_the_deadline(mode: str) -> None:
    # a 60 s timeout a read and 5 retries: the SDK alone would wait minutes, or for ever
    with FakeOpenAI([mode], dribble_seconds=DRIBBLE) as api:
        with pytest.raises(ProviderTimeout, match="before the answer's deadline"):
            openai_run(api, due(), timeout=60, max_retries=5)
        dribbled = [entry.get("sent", 0) for entry in api.log]
    # no retry once the deadline has passed, and the client left as it passed
    assert len(dribbled) == 1
    assert dribbled[0] <= 3 * DEADLINE / DRIBBLE


def test_without_a_deadline_each_attempt_still_ends_within_the_timeout() -> None:
    # the CLI's case: no deadline, and a per-read timeout a dribble never trips
    with FakeOpenAI(["dribble"], dribble_seconds=DRIBBLE) as api:
        with pytest.raises(ProviderTimeout, match="gave no reply within 1 s"):
            openai_run(api, TASK, timeout=1, max_retries=0)
        assert api.log[0]["sent"] <= 3 / DRIBBLE


def test_retries_stop_when_their_wait_would_pass_the_deadline() -> None:
    # every reply a 429 asking for a second: ten retries allowed, the deadline allows two
    with FakeOpenAI(["429"]) as api:
        with pytest.raises(ProviderError, match=r"rate limited .* \(429\)"):
            openai_run(api, due(2.5), max_retries=10)
        assert 2 <= len(api.log) <= 3


def test_a_deadline_already_passed_sends_nothing() -> None:
    with FakeOpenAI() as api:
        with pytest.raises(ProviderTimeout):
            openai_run(api, due(-1))
        assert api.log == []


@pytest.mark.parametrize(
    "mode", ["bad_utf8", "huge_int", "malformed", "nested_body"], ids=lambda m: m
)
def test_replies_no_json_reader_should_take_are_provider_errors(mode: str) -> None:
    with FakeOpenAI([mode]) as api:
        with pytest.raises(ProviderError, match="replied with a body that is not JSON"):
            openai_run(api, due(30), max_retries=0)


def test_a_good_reply_within_the_deadline_is_read() -> None:
    with FakeOpenAI() as api:
        assert openai_run(api, due(30)) == AnswerOutput(**DEFAULT_ANSWER)


# -- anthropic: the same transport and retry policy under the Anthropic SDK


@pytest.mark.parametrize("mode", ["hang", "dribble"])
def test_anthropic_is_given_up_at_the_deadline(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    # the hostile server hangs whatever the path: the Messages API's /v1/messages included
    with FakeOpenAI([mode], dribble_seconds=DRIBBLE) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url.removesuffix("/v1"))
        provider = anthropic_api.AnthropicProvider(model="m", timeout=60, max_retries=5)
        with pytest.raises(ProviderTimeout, match="before the answer's deadline"):
            provider.run(due())
        assert len(api.log) == 1 and api.log[0]["sent"] <= 3 * DEADLINE / DRIBBLE


# -- claude-local: the child's timeout is the time left, and it is killed at it


def test_claude_local_is_killed_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, claude_bin: Path
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    monkeypatch.setenv("FAKE_CLAUDE_PIDS", str(pids))
    with pytest.raises(ProviderTimeout, match="before the answer's deadline"):
        ClaudeLocalProvider(model="m", timeout=600).run(due())
    (pid,) = (int(p) for p in pids.read_text().split())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    with pytest.raises(ProviderTimeout, match="deadline passed before the claude CLI started"):
        ClaudeLocalProvider(model="m").run(due(-1))
    assert len(pids.read_text().split()) == 1  # nothing started for a task already late


# -- the retry policy, as a table


@pytest.mark.parametrize(
    ("attempt", "failure", "wait"),
    [
        (0, Retryable(429, {"retry-after": "3"}), 3.0),
        (0, Retryable(503, {"retry-after-ms": "250"}), 0.25),
        (0, Retryable(429, {"retry-after": "121"}), None),  # more than two minutes: not waited
        (0, Retryable(429, {"retry-after": "1e999"}), None),
        (0, Retryable(400, {}), None),
        (0, Retryable(404, {"x-should-retry": "true"}), "backoff"),
        (0, Retryable(500, {"x-should-retry": "false"}), None),
        (0, Retryable(409, {}), "backoff"),
        (0, Retryable(None, None), "backoff"),  # no reply at all
        (40, Retryable(500, {"retry-after": "nan"}), "backoff"),
    ],
)
def test_retry_wait(attempt: int, failure: Retryable, wait: object) -> None:
    got = retry_wait(attempt, failure)
    if wait == "backoff":
        assert got is not None and 0 < got <= 8.0
    else:
        assert got == wait


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({}, None),
        ({"retry-after": "x" * 10_000}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, "past"),
        ({"retry-after": "Wed, 21 Oct 9999 07:28:00 GMT"}, "far"),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ],
)
def test_retry_after_reads_every_form_and_nothing_else(
    headers: dict[str, str], seconds: object
) -> None:
    got = retry_after(headers)
    if seconds == "past":
        assert got is not None and got < 0
    elif seconds == "far":
        assert got is not None and got > 120
    else:
        assert got == seconds
