"""The openai provider: any server speaking OpenAI's Chat Completions, through the openai SDK.

OpenAI, Azure's OpenAI-compatible endpoint, Ollama, vLLM, llama.cpp's server and LM Studio serve
the same API at their own ``base_url``. The only module that imports ``openai``; its exceptions
are translated here, most specific first, chained with ``from exc``.

Rules:
- Structured output is asked for as a strict ``json_schema``, and the schema is written into the
  system prompt too (a server may ignore ``response_format`` and answer 200). A server that
  answers 400 to it (or, as llama.cpp's server did before it knew ``json_schema``, a 5xx naming
  it) is asked in JSON mode (``json_object``) from then on for this provider.
- The reply is validated by the task's own pydantic model. A reply that is not valid JSON for it,
  or that was cut at the token limit, is asked for once more; then ProviderError, never a decline.
- 429, 5xx, timeouts and lost connections are retried as the SDK would (``Retry-After`` honoured
  up to two minutes), by :mod:`scout.providers.transport`, which also ends every socket operation
  by the task's deadline: the whole call, retries and a dribbled reply included, ends by it
  (ProviderTimeout), and each attempt within ``timeout`` seconds.
- The key is read from the variable ``api_key_env`` names, at call time, and sent only as the
  ``Authorization`` header; with no key, no such header is sent (a local server needs none). It is
  scrubbed from every error message, even when the server's own text quotes it, and the config
  withholds its variable from every child process (``scout.environment``).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

import openai
from pydantic import BaseModel, ValidationError

from scout.config import Endpoint
from scout.errors import ProviderError, ProviderTimeout
from scout.providers.base import MAX_REPLY_BYTES, Metered, T, Task, Usage
from scout.providers.transport import (
    BoundedTransport,
    ReplyRefused,
    Retryable,
    call_with_retries,
    remaining,
)

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
MAX_TOKENS = 2_048
# one call, then one more when the reply is not valid JSON for the schema or was cut short
ATTEMPTS = 2
MAX_SERVER_TEXT = 300  # characters of a server's error message quoted in ours
MAX_SCHEMA_DEPTH = 32
MAX_TOKEN_COUNT = 100_000_000  # a count above this in one reply is a server's bug, not usage
# JSON Schema keywords servers disagree on (OpenAI's strict mode lists few string and array
# bounds as supported); the pydantic model checks them on the reply anyway.
_UNPORTABLE = frozenset({"title", "default", "maxLength", "minLength", "maxItems", "minItems"})
# Bytes of one HTTP reply read at most: the content's own bound, JSON escaping and the envelope.
MAX_BODY_BYTES = 4 * MAX_REPLY_BYTES
# A key is shown as this wherever text that may hold it is printed.
REDACTED = "[key withheld]"
# Pieces of the key this long or longer are scrubbed too: servers quote keys partly masked
# ("Incorrect API key provided: sk-proj-****abcd").
MIN_KEY_PIECE = 8


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema as strict structured output wants it: every object closed
    (``additionalProperties: false``) with every property required, unportable keywords out."""
    schema: dict[str, Any] = _strict(model.model_json_schema(), 0)
    return schema


def _strict(node: Any, depth: int) -> Any:
    if depth > MAX_SCHEMA_DEPTH:
        raise ProviderError("the output schema is nested too deeply for structured output")
    if isinstance(node, list):
        return [_strict(item, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs"):
            # names of properties and definitions are data, not keywords: keep every one
            out[key] = {name: _strict(sub, depth + 1) for name, sub in value.items()}
        elif key not in _UNPORTABLE:
            out[key] = _strict(value, depth + 1)
    if out.get("type") == "object" and "properties" in out:
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out


def schema_instruction(schema: dict[str, Any]) -> str:
    """What every system prompt gains: the schema in words. In JSON mode the server does not
    hold the schema, and a server may ignore ``response_format`` altogether (Ollama before
    v0.5.0; llama.cpp's server when its grammar fails, issue #19051) and answer 200 anyway."""
    return (
        "Reply with one JSON object and nothing else (no prose, no code fence), "
        "matching this JSON schema:\n" + json.dumps(schema, separators=(",", ":"))
    )


def scrub(text: str, key: str | None, limit: int = MAX_SERVER_TEXT) -> str:
    """``text`` cut to one line of ``limit`` characters, with the key and every piece of it of
    MIN_KEY_PIECE characters or more replaced by REDACTED.

    The text is cut first (a server may send megabytes), so the work is bounded by ``limit``
    times the key's length.
    """
    line = " ".join(text[: limit * 4].split())[:limit]
    if not key:
        return line
    line = line.replace(key, REDACTED)
    if len(key) < MIN_KEY_PIECE:
        return line
    pieces = {key[i : i + MIN_KEY_PIECE] for i in range(len(key) - MIN_KEY_PIECE + 1)}
    hits = [False] * len(line)
    for start in range(len(line) - MIN_KEY_PIECE + 1):
        if line[start : start + MIN_KEY_PIECE] in pieces:
            hits[start : start + MIN_KEY_PIECE] = [True] * MIN_KEY_PIECE
    if not any(hits):
        return line
    out: list[str] = []
    for char, hit in zip(line, hits, strict=True):
        if not hit:
            out.append(char)
        elif not out or not out[-1].endswith(REDACTED):
            out.append(REDACTED)
    return "".join(out)


def server_message(body: object) -> str:
    """The message in an error body, whichever shape the server uses: OpenAI's, Ollama's and
    llama.cpp's ``{"error": {"message"}}``, vLLM's flat ``{"object": "error", "message"}``, or
    a bare ``{"error": "..."}``."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            body = inner
        elif isinstance(inner, str):
            return inner
        message = body.get("message") if isinstance(body, dict) else None
        if isinstance(message, str):
            return message
    return body if isinstance(body, str) else ""


def unfence(content: str) -> str:
    """A reply with one surrounding Markdown code fence (```json ... ```) taken off: models in
    JSON mode without a grammar add one."""
    text = content.strip()
    if not (text.startswith("```") and text.endswith("```") and len(text) >= 6):
        return text
    first_line_end = text.find("\n")
    if first_line_end < 0:
        return text
    return text[first_line_end + 1 : -3].strip()


def _count(value: object) -> int:
    """A token count as a server reports it; anything that is not a count is 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return min(max(value, 0), MAX_TOKEN_COUNT)


def retryable(exc: Exception) -> Retryable | None:
    """What the retry policy needs of an SDK failure (None: not an HTTP failure)."""
    if isinstance(exc, openai.APIStatusError):
        return Retryable(exc.status_code, exc.response.headers)
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError is one
        return Retryable()
    return None


def server_name(base_url: str) -> str:
    """The server as an error message names it: scheme, host and path, never a userinfo part."""
    parts = urlsplit(base_url)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def read_key(variable: str | None, error: type[ProviderError]) -> str | None:
    """The key from ``variable``, surrounding whitespace off; None when unset or empty; ``error``
    when it holds what no key holds (HTTP cannot carry it, and the error the HTTP library raises
    would quote it)."""
    if variable is None:
        return None
    key = os.environ.get(variable, "").strip()
    if not key:
        return None
    if not (key.isascii() and key.isprintable()) or any(c.isspace() for c in key):
        raise error(
            f"{variable} holds characters no key has (spaces, control or non-ASCII "
            "characters): check its value"
        )
    return key


def sdk_client(
    base_url: str, key: str | None, timeout: float, transport: BoundedTransport
) -> openai.OpenAI:
    """An SDK client for one server. The SDK refuses an empty key ("Missing credentials"): with
    none, a placeholder satisfies it, and each request omits the Authorization header (an
    ``openai.Omit()`` in its ``extra_headers``). No redirects: the key is for the configured
    server, and only it is contacted. No SDK retries: ``call_with_retries`` retries, and only
    while the call's deadline allows."""
    http = openai.DefaultHttpxClient(
        transport=transport,
        follow_redirects=False,
        headers={"Accept-Encoding": "identity"},
    )
    return openai.OpenAI(
        api_key=key or "unused",
        base_url=base_url,
        timeout=timeout,
        max_retries=0,
        http_client=http,
    )


class OpenAIProvider:
    """One Chat Completions call per task (two when the first reply is unusable)."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        timeout: float | None = None,
        endpoint: Endpoint | None = None,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        self.model = model
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.endpoint = endpoint or Endpoint()
        self.max_retries = max_retries
        # learnt from the server's refusals, kept for every later task of this provider
        self.json_mode = False
        self.token_limit_field = "max_tokens"

    def run(self, task: Task[T]) -> T:
        return self.run_metered(task).output

    def _key(self) -> str | None:
        return read_key(self.endpoint.api_key_env, ProviderError)

    def run_metered(self, task: Task[T]) -> Metered[T]:
        key = self._key()
        usage = Usage(usd=self._cost(0, 0))
        problem = ""
        transport = BoundedTransport(MAX_BODY_BYTES)
        with self._client(key, transport) as client:
            for _ in range(ATTEMPTS):
                completion = self._complete(client, transport, task, key)
                usage += self._usage(completion)
                output, problem = self._parse(completion, task.output)
                if output is not None:
                    return Metered(output, usage)
        raise ProviderError(f"the model's reply was unusable twice: {problem}")

    def _client(self, key: str | None, transport: BoundedTransport) -> openai.OpenAI:
        return sdk_client(self.endpoint.base_url, key, self.timeout, transport)

    def _request(self, task: Task[Any], key: str | None) -> dict[str, Any]:
        schema = strict_schema(task.output)
        system = f"{task.system}\n\n{schema_instruction(schema)}"
        if self.json_mode:
            response_format: dict[str, Any] = {"type": "json_object"}
        else:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": task.output.__name__, "schema": schema, "strict": True},
            }
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": task.user},
            ],
            "response_format": response_format,
            "stream": False,
            self.token_limit_field: MAX_TOKENS,
            # Only a per-request Omit takes the header off the wire: one in the client's default
            # headers is merged away and the SDK then refuses to send the request at all.
            "extra_headers": {} if key else {"Authorization": openai.Omit()},
        }

    def _complete(
        self, client: openai.OpenAI, transport: BoundedTransport, task: Task[Any], key: str | None
    ) -> Any:
        """One completion (retried as :func:`call_with_retries` allows), adapting once to each
        documented refusal of a request's shape; ProviderTimeout past the task's deadline."""

        def attempt() -> Any:
            # each attempt ends by the task's deadline and within the provider's own timeout
            end = time.monotonic() + self.timeout
            transport.deadline = end if task.deadline is None else min(end, task.deadline)
            if remaining(transport.deadline) <= 0:
                raise ProviderTimeout(self._late(task))
            return client.chat.completions.create(**self._request(task, key))

        while True:
            try:
                return call_with_retries(
                    attempt, retries=self.max_retries, deadline=task.deadline, classify=retryable
                )
            except openai.APIStatusError as exc:
                if not self._adapt(exc):
                    raise self._translate(exc, task, key) from exc
            except openai.OpenAIError as exc:
                raise self._translate(exc, task, key) from exc
            except ReplyRefused as exc:
                where = server_name(self.endpoint.base_url)
                raise ProviderError(f"{where} sent {exc}, which Scout does not read") from exc
            except (ValueError, RecursionError) as exc:
                # the SDK parses a 200's body itself, and lets a broken one through as is: not
                # JSON, absurdly nested, not UTF-8 (UnicodeDecodeError) or an integer past
                # Python's 4,300 digits (ValueError)
                where = server_name(self.endpoint.base_url)
                raise ProviderError(f"{where} replied with a body that is not JSON") from exc

    def _late(self, task: Task[Any]) -> str:
        where = server_name(self.endpoint.base_url)
        if task.deadline is not None and remaining(task.deadline) <= 0:
            return f"{where} gave no complete reply before the answer's deadline"
        return f"{where} gave no reply within {self.timeout:g} s"

    def _adapt(self, exc: openai.APIStatusError) -> bool:
        """Change the request to what the server asks for, once per kind; False when nothing
        is left to change."""
        said = server_message(exc.body)[: MAX_SERVER_TEXT * 10].lower()
        if exc.status_code == 400 and "max_completion_tokens" in said:
            # OpenAI's reasoning models take only the newer name of the same limit
            if self.token_limit_field == "max_completion_tokens":
                return False
            self.token_limit_field = "max_completion_tokens"
            return True
        schema_complaint = "response_format" in said or "schema" in said
        if exc.status_code == 400 or (exc.status_code >= 500 and schema_complaint):
            if self.json_mode:
                return False
            self.json_mode = True
            return True
        return False

    def _translate(self, exc: openai.OpenAIError, task: Task[Any], key: str | None) -> Exception:
        where = server_name(self.endpoint.base_url)
        variable = self.endpoint.api_key_env
        if isinstance(exc, openai.APIStatusError):
            # An addresses task's question is issue prose: a server's echo of the request never
            # reaches a message there (it would be printed and logged).
            said = "" if task.kind == "addresses" else scrub(server_message(exc.body), key)
            detail = f": {said}" if said else ""
            status = exc.status_code
            if isinstance(exc, openai.AuthenticationError):
                if key is None:
                    return ProviderError(f"{where} wants a key (401): set {variable}")
                return ProviderError(f"{where} rejected the key in {variable} (401): check it")
            if isinstance(exc, openai.RateLimitError):
                wait = exc.response.headers.get("retry-after")
                asks = f"; it asks to wait {scrub(wait, key, 40)} s" if wait else ""
                return ProviderError(
                    f"rate limited by {where} (429) after {self.max_retries} retries{asks}: "
                    "try later"
                )
            if isinstance(exc, openai.NotFoundError):
                return ProviderError(
                    f"{where} has no model {self.model!r} or no Chat Completions (404){detail}"
                )
            retried = f" after {self.max_retries} retries" if status >= 500 else ""
            return ProviderError(f"{where} failed with HTTP {status}{retried}{detail}")
        if isinstance(exc, openai.APITimeoutError):
            return ProviderTimeout(self._late(task))
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(f"cannot reach {where}: is the server running?")
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(f"{where} replied with something other than a chat completion")
        return ProviderError(f"the openai SDK failed: {scrub(str(exc), key)}")

    def _parse(self, completion: Any, output: type[T]) -> tuple[T | None, str]:
        """The validated output, or None with what was wrong (worth asking once more)."""
        try:
            # The SDK builds the reply without checking its types: anything may be anything.
            choice = completion.choices[0]
            finish, message = choice.finish_reason, choice.message
            content, refusal = message.content, getattr(message, "refusal", None)
        except (AttributeError, IndexError, KeyError, TypeError):
            return None, "the reply is not a chat completion with a choice"
        if finish == "content_filter":
            raise ProviderError("the server's content filter stopped the reply")
        if refusal:
            raise ProviderError("the model refused to reply")
        if finish == "length":
            return None, f"the reply was cut at the token limit ({MAX_TOKENS} tokens)"
        if not isinstance(content, str) or not content.strip():
            return None, "the reply has no content"
        if len(content) > MAX_REPLY_BYTES:
            return None, f"the reply is over {MAX_REPLY_BYTES} characters"
        try:
            return output.model_validate_json(unfence(content)), ""
        except ValidationError as exc:
            if any(error["type"] == "json_invalid" for error in exc.errors()):
                return None, "the reply is not valid JSON"
            return None, (
                f"the reply does not match the schema ({exc.error_count()} error(s), "
                f"first at {'.'.join(str(p) for p in exc.errors()[0]['loc']) or 'the top'})"
            )

    def _usage(self, completion: Any) -> Usage:
        """Tokens as the server reports them (``usage``), priced from the config's prices."""
        usage = getattr(completion, "usage", None)
        prompt = _count(getattr(usage, "prompt_tokens", 0))
        written = _count(getattr(usage, "completion_tokens", 0))
        return Usage(input_tokens=prompt, output_tokens=written, usd=self._cost(prompt, written))

    def _cost(self, prompt: int, written: int) -> float | None:
        price_in, price_out = self.endpoint.price_in, self.endpoint.price_out
        if price_in is None or price_out is None:
            return None
        return (prompt * price_in + written * price_out) / 1_000_000
