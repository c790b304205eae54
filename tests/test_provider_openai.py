"""The openai provider against a loopback Chat Completions server (tests/fakes/openai_api.py).

What goes on the wire (structured output, no Authorization header without a key), how each
server's dialect is met (the json_object fallback), faults (429 with and without Retry-After,
5xx, slow replies, invalid JSON, replies cut at the token limit), usage and cost, and the key
kept out of every message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from scout.config import Endpoint
from scout.errors import ProviderError
from scout.providers import REGISTRY, make_provider
from scout.providers.base import Task, run_metered
from scout.providers.schema import AddressesOutput, AnswerOutput
from tests.fakes.openai_api import DEFAULT_ADDRESSES, DEFAULT_ANSWER, USAGE, FakeOpenAI
from tests.helpers.growth import assert_linear
from tests.helpers.samples import ANSWER_TASK
from tests.helpers.sdk import ONE_WORKER, Lazy, preloaded

pytestmark = ONE_WORKER
openai_provider = Lazy("scout.providers.openai")
# Imported before any test, not by the first one: the SDK's import, inside a growth check, made
# a copy of 200,000 characters read 11x one of 50,000 (its memory, not the function's growth).
_imported = preloaded(openai_provider)

KEY_ENV = "SCOUT_TEST_OPENAI_KEY"
CANARY_KEY = "sk-proj-CANARY0c4f9e2b7a1d5e8f3a6b9c2d"
ADDRESSES_TASK = Task(
    kind="addresses",
    system="You judge a passage.",
    user="Question: rotating keys fails\n\nPassage: ...",
    output=AddressesOutput,
    question="rotating keys fails",
    passages=(),
)


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv("OPENAI_LOG", raising=False)
    yield


def provider(api: FakeOpenAI, **kwargs: Any) -> openai_provider.OpenAIProvider:
    endpoint = Endpoint(
        base_url=api.url,
        api_key_env=KEY_ENV,
        price_in=kwargs.pop("price_in", None),
        price_out=kwargs.pop("price_out", None),
    )
    return openai_provider.OpenAIProvider(model="test-model", endpoint=endpoint, **kwargs)


def formats(api: FakeOpenAI) -> list[tuple[int, str]]:
    return [(e["status"], e["body"]["response_format"]["type"]) for e in api.log]


# --- the request -------------------------------------------------------------------------------


def test_the_registry_makes_an_openai_provider_with_its_endpoint() -> None:
    assert "openai" in REGISTRY
    made = make_provider(
        "openai", model="llama3.1:8b", timeout=5, endpoint=Endpoint("http://127.0.0.1:9/v1")
    )
    assert isinstance(made, openai_provider.OpenAIProvider)
    assert (made.model, made.timeout, made.endpoint.base_url) == (
        "llama3.1:8b",
        5,
        "http://127.0.0.1:9/v1",
    )


def test_the_strict_schema_closes_every_object_and_requires_every_property() -> None:
    assert openai_provider.strict_schema(AddressesOutput) == {
        "additionalProperties": False,
        "description": "Whether a passage addresses a question, with a one-line reason.",
        "properties": {
            "addresses": {
                "description": "True when the passage answers or directly addresses it.",
                "type": "boolean",
            },
            "reason": {"description": "One sentence saying why.", "type": "string"},
        },
        "required": ["addresses", "reason"],
        "type": "object",
    }
    answer = openai_provider.strict_schema(AnswerOutput)
    assert answer["required"] == ["answer", "cited", "declined", "reason"]
    assert "maxLength" not in str(answer) and "maxItems" not in str(answer)


def test_a_request_asks_for_strict_json_schema_without_streaming_or_a_key() -> None:
    with FakeOpenAI() as api:
        assert provider(api).run(ANSWER_TASK) == AnswerOutput(**DEFAULT_ANSWER)
    (entry,) = api.log
    body = entry["body"]
    assert entry["path"] == "/v1/chat/completions"
    assert body["model"] == "test-model" and body["stream"] is False
    assert body["max_tokens"] == 2048
    instruction = openai_provider.schema_instruction(openai_provider.strict_schema(AnswerOutput))
    assert body["messages"] == [
        {
            "role": "system",
            "content": f"{ANSWER_TASK.system}\n\n{instruction}",
        },
        {"role": "user", "content": ANSWER_TASK.user},
    ]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "AnswerOutput",
            "schema": openai_provider.strict_schema(AnswerOutput),
            "strict": True,
        },
    }
    # No key configured: no Authorization header at all (a local server needs none).
    assert "authorization" not in entry["headers"]


def test_a_configured_key_is_sent_as_a_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    with FakeOpenAI(api_key=CANARY_KEY) as api:
        provider(api).run(ANSWER_TASK)
    assert api.log[0]["headers"]["authorization"] == f"Bearer {CANARY_KEY}"


def test_the_addresses_task_runs_through_the_same_call() -> None:
    with FakeOpenAI() as api:
        assert provider(api).run(ADDRESSES_TASK) == AddressesOutput(**DEFAULT_ADDRESSES)
    assert api.log[0]["body"]["response_format"]["json_schema"]["name"] == "AddressesOutput"


# --- each server's dialect ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flavour", "schema_error", "sent"),
    [
        ("openai", False, [(200, "json_schema")]),
        ("ollama", False, [(200, "json_schema")]),
        # an Ollama that does not know json_schema answers in prose: the fenced JSON is read
        ("ollama-old", False, [(200, "json_schema")]),
        ("vllm", False, [(200, "json_schema")]),
        ("llamacpp", False, [(200, "json_schema")]),
        ("lmstudio", False, [(200, "json_schema")]),
        # a schema llama.cpp cannot turn into a grammar: 400, then JSON mode
        ("llamacpp", True, [(400, "json_schema"), (200, "json_object")]),
        # llama.cpp before json_schema support: a 500 naming response_format, then JSON mode
        ("llamacpp-old", False, [(500, "json_schema"), (200, "json_object")]),
    ],
)
def test_each_server_answers_in_the_shape_it_accepts(
    flavour: str, schema_error: bool, sent: list[tuple[int, str]]
) -> None:
    with FakeOpenAI(flavour=flavour, schema_error=schema_error) as api:
        made = provider(api, max_retries=0)
        assert made.run(ANSWER_TASK) == AnswerOutput(**DEFAULT_ANSWER)
        assert formats(api) == sent
        # what the server refused is remembered: the next task goes straight to what works
        assert made.run(ADDRESSES_TASK) == AddressesOutput(**DEFAULT_ADDRESSES)
        assert formats(api)[len(sent)] == (200, sent[-1][1])


def test_a_model_that_wants_max_completion_tokens_gets_it() -> None:
    with FakeOpenAI(reasoning=True) as api:
        made = provider(api, max_retries=0)
        made.run(ANSWER_TASK)
        made.run(ANSWER_TASK)
    sent = [sorted(k for k in e["body"] if k.startswith("max_")) for e in api.log]
    assert sent == [["max_tokens"], ["max_completion_tokens"], ["max_completion_tokens"]]
    assert [e["body"]["response_format"]["type"] for e in api.log] == ["json_schema"] * 3


def test_the_schema_is_in_the_system_prompt_in_json_mode_too() -> None:
    with FakeOpenAI(flavour="llamacpp", schema_error=True) as api:
        provider(api, max_retries=0).run(ADDRESSES_TASK)
    fallback = api.log[1]["body"]
    assert fallback["response_format"] == {"type": "json_object"}
    system = fallback["messages"][0]["content"]
    assert system.startswith(ADDRESSES_TASK.system)
    assert '"required":["addresses","reason"]' in system and "JSON" in system


def test_a_400_in_json_mode_too_is_a_provider_error() -> None:
    with FakeOpenAI(["echo_key"], flavour="lmstudio") as api:
        with pytest.raises(ProviderError, match=r"failed with HTTP 400: Bad request from nobody"):
            provider(api, max_retries=0).run(ANSWER_TASK)
    assert formats(api) == [(400, "json_schema"), (400, "json_object")]


@pytest.mark.parametrize("flavour", ["openai", "ollama", "vllm", "llamacpp", "lmstudio"])
def test_each_server_s_error_shape_gives_its_message(flavour: str) -> None:
    with FakeOpenAI(flavour=flavour) as api:
        made = openai_provider.OpenAIProvider(
            model="m", endpoint=Endpoint(api.url.replace("/v1", "/v2"), KEY_ENV), max_retries=0
        )
        with pytest.raises(ProviderError, match=r"\(404\): no route /v2/chat/completions$"):
            made.run(ANSWER_TASK)


def test_unfenced_replies_from_unconstrained_json_are_read() -> None:
    with FakeOpenAI(["fenced"]) as api:
        assert provider(api).run(ANSWER_TASK) == AnswerOutput(**DEFAULT_ANSWER)


# --- faults -----------------------------------------------------------------------------------


def test_a_429_is_retried_after_the_retry_after_it_names() -> None:
    with FakeOpenAI(["429", "success"]) as api:
        assert provider(api).run(ANSWER_TASK) == AnswerOutput(**DEFAULT_ANSWER)
    assert [e["status"] for e in api.log] == [429, 200]
    # Retry-After: 1 was honoured (a lower bound, which load cannot make flaky)
    assert api.log[1]["time"] - api.log[0]["time"] >= 0.95


@pytest.mark.parametrize("fault", ["429-bare", "500", "503"])
def test_429_without_retry_after_and_5xx_are_retried(fault: str) -> None:
    with FakeOpenAI([fault, "success"]) as api:
        assert provider(api).run(ANSWER_TASK) == AnswerOutput(**DEFAULT_ANSWER)
    assert len(api.log) == 2


@pytest.mark.parametrize(
    ("fault", "message", "requests"),
    [
        ("429-bare", r"rate limited by .* \(429\) after 2 retries: try later", 3),
        ("500", r"failed with HTTP 500 after 2 retries: The server had an error", 3),
        ("invalid_json", r"unusable twice: the reply is not valid JSON", 2),
        ("schema_invalid", r"unusable twice: the reply does not match the schema", 2),
        ("length", r"unusable twice: the reply was cut at the token limit \(2048 tokens\)", 2),
        ("malformed", r"replied with a body that is not JSON", 1),
        ("huge", r"sent a reply over 4000000 bytes, which Scout does not read", 1),
        ("gzip", r"sent a reply compressed with 'gzip', which Scout does not read", 1),
        ("redirect", r"failed with HTTP 307$", 1),
        ("nested_body", r"replied with a body that is not JSON", 1),
        ("nested_content", r"unusable twice: the reply is not valid JSON", 2),
        ("wrong_types", r"unusable twice: the reply is not a chat completion with a choice", 2),
    ],
)
def test_persistent_faults_are_provider_errors_never_declines(
    fault: str, message: str, requests: int
) -> None:
    with FakeOpenAI([fault]) as api:
        with pytest.raises(ProviderError, match=message):
            provider(api).run(ANSWER_TASK)
    assert len(api.log) == requests


def test_every_request_asks_for_an_uncompressed_reply() -> None:
    with FakeOpenAI() as api:
        provider(api).run(ANSWER_TASK)
    assert api.log[0]["headers"]["accept-encoding"] == "identity"


def test_a_persistent_429_says_how_long_the_server_asks_to_wait() -> None:
    with FakeOpenAI(["429"]) as api:
        with pytest.raises(ProviderError, match=r"after 0 retries; it asks to wait 1 s: try"):
            provider(api, max_retries=0).run(ANSWER_TASK)


@pytest.mark.parametrize("fault", ["invalid_json", "length", "schema_invalid"])
def test_one_unusable_reply_is_asked_for_once_more(fault: str) -> None:
    with FakeOpenAI([fault, "success"], flavour="ollama") as api:
        metered = run_metered(provider(api), ANSWER_TASK)
    assert metered.output == AnswerOutput(**DEFAULT_ANSWER)
    # both calls were paid for
    assert (metered.usage.input_tokens, metered.usage.output_tokens) == (240, 60)


def test_a_slow_reply_is_cut_off_by_the_timeout() -> None:
    with FakeOpenAI(["slow"], slow_seconds=3) as api:
        with pytest.raises(ProviderError, match=r"gave no reply within 0.3 s"):
            provider(api, timeout=0.3, max_retries=0).run(ANSWER_TASK)


def test_an_unreachable_server_and_a_missing_key() -> None:
    down = openai_provider.OpenAIProvider(
        model="m", endpoint=Endpoint("http://127.0.0.1:9/v1", KEY_ENV)
    )
    with pytest.raises(ProviderError, match=r"cannot reach http://127.0.0.1:9/v1: is the server"):
        openai_provider.OpenAIProvider(model="m", endpoint=down.endpoint, max_retries=0).run(
            ANSWER_TASK
        )
    with FakeOpenAI(api_key="needed") as api:
        with pytest.raises(ProviderError, match=rf"wants a key \(401\): set {KEY_ENV}$"):
            provider(api).run(ANSWER_TASK)


def test_a_missing_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "scout.providers.openai", raising=False)
    monkeypatch.setitem(sys.modules, "openai", None)  # what an environment without it gives
    with pytest.raises(ProviderError, match=r"pip install 'scout\[openai\]'"):
        make_provider("openai", model="m")


# --- usage and cost ---------------------------------------------------------------------------


def test_usage_is_the_server_s_and_cost_needs_both_prices() -> None:
    with FakeOpenAI() as api:
        unpriced = run_metered(provider(api), ANSWER_TASK).usage
        priced = run_metered(provider(api, price_in=2.0, price_out=8.0), ANSWER_TASK).usage
    assert (unpriced.input_tokens, unpriced.output_tokens, unpriced.usd) == (
        USAGE["prompt_tokens"],
        USAGE["completion_tokens"],
        None,
    )
    assert priced.usd == pytest.approx((120 * 2.0 + 30 * 8.0) / 1_000_000)
    for fault in ("no_usage", "bad_usage"):
        with FakeOpenAI([fault]) as api:
            usage = run_metered(provider(api), ANSWER_TASK).usage
        assert (usage.input_tokens, usage.output_tokens) == (0, 0)


# --- the key is never shown -------------------------------------------------------------------


def test_a_server_quoting_the_key_never_gets_it_into_a_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    with FakeOpenAI(["echo_key"]) as api:
        with pytest.raises(ProviderError) as raised:
            provider(api, max_retries=0).run(ANSWER_TASK)
    assert str(raised.value).endswith(f"Bad request from Bearer {openai_provider.REDACTED}")
    with FakeOpenAI(api_key="sk-proj-other-key-entirely") as api:
        with pytest.raises(ProviderError, match="rejected the key in") as raised:
            provider(api).run(ANSWER_TASK)
    assert "CANARY" not in str(raised.value) and CANARY_KEY[-4:] not in str(raised.value)


@pytest.mark.parametrize("value", ["sk-CANARY\nInjected: header", "sk-CANARY ü", "sk-\x1bCANARY"])
def test_a_key_http_cannot_carry_is_refused_without_showing_it(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(KEY_ENV, value)
    with FakeOpenAI() as api:
        with pytest.raises(
            ProviderError, match=rf"^{KEY_ENV} holds characters no key has"
        ) as raised:
            provider(api).run(ANSWER_TASK)
    assert "CANARY" not in str(raised.value) and api.log == []


def test_whitespace_around_a_key_is_taken_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, f"  {CANARY_KEY}\n")
    with FakeOpenAI(api_key=CANARY_KEY) as api:
        provider(api).run(ANSWER_TASK)
    monkeypatch.setenv(KEY_ENV, "   ")
    with FakeOpenAI() as api:
        provider(api).run(ANSWER_TASK)
    assert "authorization" not in api.log[0]["headers"]


def test_an_addresses_task_never_quotes_the_server() -> None:
    with FakeOpenAI(["echo_key"]) as api:
        with pytest.raises(ProviderError, match=r"failed with HTTP 400$"):
            provider(api, max_retries=0).run(ADDRESSES_TASK)


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("Bearer sk-abcdefghijkl", "sk-abcdefghijkl", "Bearer {redacted}"),
        ("key sk-abcd****ijkl here", "sk-abcdefghijkl", "key sk-abcd****ijkl here"),
        ("partial sk-abcdefgh… cut", "sk-abcdefghijkl", "partial {redacted}… cut"),
        ("tail …defghijkl end", "sk-abcdefghijkl", "tail …{redacted} end"),
        ("no key here", None, "no key here"),
        ("short abc key", "abc", "short {redacted} key"),
        ("multi\nline\x1b[31m", None, "multi line\x1b[31m"),
        ("", "sk-abcdefghijkl", ""),
    ],
)
def test_scrub_replaces_the_key_and_its_long_pieces(
    text: str, key: str | None, expected: str
) -> None:
    # "{redacted}" stands for the marker: a parameter naming it would import the SDK at collection
    redacted = expected.replace("{redacted}", openai_provider.REDACTED)
    assert openai_provider.scrub(text, key) == redacted


def test_scrub_is_bounded_on_huge_text_and_grows_linearly_with_the_key() -> None:
    assert len(openai_provider.scrub("x" * 10_000_000, "k" * 64)) == 300

    def make(n: int) -> Callable[[], object]:
        # the worst case: a key of few distinct pieces, the text a near-copy of it
        key = "ab" * n
        text = ("ab" * n)[:-1] + " " + "ba" * 150
        return lambda: [openai_provider.scrub(text, key) for _ in range(20)]

    assert_linear(make, 200)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": {"message": "m", "type": "t", "param": None, "code": None}}, "m"),
        ({"object": "error", "message": "flat", "type": "BadRequestError", "code": 400}, "flat"),
        ({"error": "bare"}, "bare"),
        ("text", "text"),
        ({"error": {"message": 5}}, ""),
        (None, ""),
        ([1, 2], ""),
    ],
)
def test_server_message_reads_every_error_shape(body: object, message: str) -> None:
    assert openai_provider.server_message(body) == message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('```\n{"a": 1}```', '{"a": 1}'),
        ('  {"a": 1}  ', '{"a": 1}'),
        ("```", "```"),
        ("``````", "``````"),
        ('```{"a": 1}```', '```{"a": 1}```'),
    ],
)
def test_unfence_takes_off_one_surrounding_fence(content: str, expected: str) -> None:
    assert openai_provider.unfence(content) == expected


@pytest.mark.parametrize(
    "worst",
    [
        lambda n: "```json\n" + "`" * n + "\n```",  # fences inside fences
        lambda n: "```" + "\n" * n + "```",  # nothing but line ends
        lambda n: " " * n + "```json\n{}\n```" + " " * n,  # runs of spaces around it
    ],
)
def test_reading_a_reply_grows_linearly(worst: Callable[[int], str]) -> None:
    def make(n: int) -> Callable[[], object]:
        content = worst(n)
        return lambda: [openai_provider.unfence(content) for _ in range(20)]

    assert_linear(make, 50_000)
