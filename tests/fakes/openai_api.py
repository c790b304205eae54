"""A loopback server speaking OpenAI's Chat Completions API, and the dialects of its look-alikes.

``FakeOpenAI(script, flavour=...)`` serves ``POST /v1/chat/completions`` (and ``GET /v1/models``)
on 127.0.0.1. Each completion request takes the next mode from ``script`` (the last one repeats)
and is written to ``log`` (path, lower-cased headers, body, mode, status, time) for tests to read.

What each behaviour follows:

- Requests and replies: the Chat Completions reference (platform.openai.com/docs/api-reference/
  chat/create and .../chat/object): ``choices[0].message.content``, ``finish_reason`` (``stop``,
  ``length``, ``content_filter``), ``usage.prompt_tokens``/``completion_tokens``/``total_tokens``.
- ``response_format``: ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``
  and JSON mode ``{"type": "json_object"}`` (platform.openai.com/docs/guides/structured-outputs;
  openai-python ``types/shared_params/response_format_*.py``). ``name`` must match
  ``[A-Za-z0-9_-]{1,64}``. JSON mode needs the word "JSON" somewhere in the messages (the same
  guide, "JSON mode"); a 400 otherwise.
- Errors: ``{"error": {"message", "type", "param", "code"}}`` with 400, 401, 404, 429, 500
  (platform.openai.com/docs/guides/error-codes). A 429 carries ``Retry-After`` in seconds unless
  ``429-bare`` (RFC 9110 section 10.2.3; the SDK reads it, ``openai/_base_client.py``).
- OpenAI's reasoning models (``reasoning=True``) refuse ``max_tokens`` with a 400 naming
  ``max_completion_tokens``, the parameter the reference lists in its place (api-reference
  chat/create, "max_tokens: Deprecated").
- Keys: ``Authorization: Bearer KEY`` (api-reference "Authentication"); when the server has a
  key, anything else is a 401 that quotes the key it got, masked as OpenAI's does
  ("Incorrect API key provided: sk-p****abcd").

Flavours (``flavour=``), the documented differences of the servers that copy the API:

- ``openai``: all of the above.
- ``ollama``: ``/v1`` compatibility (github.com/ollama/ollama docs/openai.md, ``openai/openai.go``
  since v0.5.0): ``json_object`` becomes ``format: "json"``, ``json_schema`` becomes ``format``
  = the schema with ``name`` and ``strict`` ignored, any other type is plain text; no key is
  checked; errors ``{"error": {"message", "type", "param", "code"}}``.
- ``ollama-old``: Ollama before v0.5.0 (commit 630e7dc added ``json_schema``): ``json_object``
  becomes ``format: "json"``; ``json_schema`` is not read, so the reply is whatever the model
  writes (here: the JSON inside a Markdown fence, as chat models do).
- ``vllm``: docs.vllm.ai "OpenAI-Compatible Server" and "Structured Outputs": ``json_schema`` and
  ``json_object`` are accepted; a key only with ``--api-key``; errors in the flat shape of
  ``vllm/entrypoints/openai/protocol.py`` ``ErrorResponse``: ``{"object": "error", "message",
  "type", "param", "code"}``.
- ``llamacpp``: llama.cpp ``tools/server/README.md`` and ``server-common.cpp``: ``json_object``
  reads ``response_format.schema``, ``json_schema`` reads ``json_schema.schema`` (not ``name`` or
  ``strict``); any other type is a 400 "response_format type must be one of "text" or
  "json_object""; a schema it cannot convert (``schema_error=True``) is a 400 "JSON schema
  conversion failed" (since PR #17572); errors ``{"error": {"code", "message", "type"}}``.
- ``llamacpp-old``: llama.cpp's server before ``json_schema`` support (PR #9527): a
  ``json_schema`` request is a 500 ``server_error`` "response_format type must be one of "text"
  or "json_object", but got: json_schema".
- ``lmstudio``: lmstudio.ai/docs/developer/openai-compat/structured-output: ``json_schema`` only;
  ``json_object`` is a 400 "'response_format.type' must be 'json_schema' or 'text'"
  (lmstudio-bug-tracker #189).

Streaming is off: a request with ``"stream": true`` is a 400 (Scout never streams; a test that
sees one has found a bug).

Modes: ``success``; ``429`` (with ``Retry-After: 1``); ``429-bare`` (none); ``500``; ``503``;
``slow`` (waits ``slow_seconds``, then succeeds); ``invalid_json`` (a 200 whose content is not
JSON); ``schema_invalid`` (JSON of the wrong shape); ``length`` (``finish_reason: "length"``,
content cut off mid-JSON); ``fenced`` (the JSON inside a Markdown code fence); ``malformed`` (a
200 whose body is not JSON); ``huge`` (a 200 of 8 MiB); ``gzip`` (a success compressed although
the client asked for ``identity``); ``redirect`` (a 307 to another port); ``echo_key`` (a 400
whose message quotes the Authorization header whole); ``no_usage`` (a success without
``usage``); the malformed: ``nested_body`` (a 200 nested 200,000 arrays deep),
``nested_content`` (content nested 100,000 deep), ``wrong_types`` (``choices`` a string),
``bad_usage`` (token counts that are not counts).

Hostile modes, the third review's attacks (no real server does these on purpose; a broken proxy
or a hostile one in front of the model can): ``hang`` (reads the request, never answers);
``dribble`` (a 200 with its headers and a long Content-Length, then one byte of body every
``dribble_seconds``, for ever); ``dribble_headers`` (the status line, then one header byte every
``dribble_seconds``); ``bad_utf8`` (a 200 whose body is not UTF-8); ``huge_int`` (a 200 whose
``usage`` holds a 5,000-digit integer); ``leaky_500`` (a 500 whose message quotes ``LEAK`` and
the server's own address, as a server's error text can quote anything). Hangs and dribbles end
when the fake stops or the client goes. ``modes`` picks a request's mode by a word in it (a
question's), for servers asked several questions at once.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.messages_api import DEFAULT_OUTPUT, send_json

DEFAULT_ANSWER = DEFAULT_OUTPUT  # the answer every fake model gives unless told otherwise
DEFAULT_ADDRESSES = {"addresses": True, "reason": "the passage gives the steps"}
DEFAULT_EXPANSION = {"terms": ["vault", "rotation"]}
FLAVOURS = ("openai", "ollama", "ollama-old", "vllm", "llamacpp", "llamacpp-old", "lmstudio")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
HUGE_BYTES = 8 * 1024 * 1024
USAGE = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
LEAK = "internal-model-host.corp secret-text-0x5eed"
HANGS = ("hang", "dribble", "dribble_headers")


class Refused(Exception):
    """A request the emulated server answers with an error."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


class FakeOpenAI:
    def __init__(
        self,
        script: list[str] | None = None,
        *,
        flavour: str = "openai",
        api_key: str | None = None,
        answer: dict[str, Any] | None = None,
        addresses: dict[str, Any] | None = None,
        expansion: dict[str, Any] | None = None,
        by_question: dict[str, dict[str, Any]] | None = None,
        schema_error: bool = False,
        reasoning: bool = False,
        slow_seconds: float = 2.0,
        dribble_seconds: float = 0.2,
        modes: dict[str, str] | None = None,
    ) -> None:
        if flavour not in FLAVOURS:
            raise ValueError(f"unknown flavour {flavour!r}")
        self.script = list(script or ["success"])
        self.flavour = flavour
        self.api_key = api_key
        self.answer = answer if answer is not None else DEFAULT_ANSWER
        self.addresses = addresses if addresses is not None else DEFAULT_ADDRESSES
        self.expansion = expansion if expansion is not None else DEFAULT_EXPANSION
        self.by_question = by_question or {}
        self.schema_error = schema_error
        self.reasoning = reasoning
        self.slow_seconds = slow_seconds
        self.dribble_seconds = dribble_seconds
        self.modes = modes or {}
        self.log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    models = {"object": "list", "data": [{"id": "test-model", "object": "model"}]}
                    api._send(self, 200, json.dumps(models).encode(), {})
                else:
                    api._send(self, *api.error(Refused(404, f"no route {self.path}", "not_found")))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with api._lock:
                    mode = api.script.pop(0) if len(api.script) > 1 else api.script[0]
                    # a mode named by a word of the request (its question) wins over the script
                    text = raw.decode("utf-8", "replace")
                    mode = next((m for k, m in api.modes.items() if k in text), mode)
                    entry: dict[str, Any] = {
                        "path": self.path,
                        "headers": headers,
                        "mode": mode,
                        "time": time.monotonic(),
                    }
                    api.log.append(entry)
                if mode in HANGS:
                    entry["body"] = json.loads(raw or b"{}")
                    entry["status"] = 200 if mode == "dribble" else None
                    api._hang(self, mode, entry)
                    return
                try:
                    entry["body"] = body = json.loads(raw or b"{}")
                    if self.path != "/v1/chat/completions":
                        raise Refused(404, f"no route {self.path}", "not_found_error")
                    status, payload, extra = api.reply(mode, body, headers)
                except Refused as refusal:
                    status, payload, extra = api.error(refusal)
                except json.JSONDecodeError:
                    status, payload, extra = api.error(Refused(400, "We could not parse the JSON"))
                # logged before it is sent: a client that has its reply may read the log at once
                entry["status"] = status
                api._send(self, status, payload, extra)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    # -- what a request gets -------------------------------------------------------------------

    def completions(self) -> list[dict[str, Any]]:
        """The bodies of the completion requests, in order."""
        return [entry.get("body", {}) for entry in self.log]

    def reply(
        self, mode: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        """The status, body and headers this request gets (Refused for an error reply)."""
        self._check_key(headers)
        if self.reasoning and "max_tokens" in body:
            raise Refused(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
            )
        if body.get("stream"):
            raise Refused(400, "this test server does not stream: Scout must not ask it to")
        if mode == "echo_key":
            raise Refused(400, f"Bad request from {headers.get('authorization', 'nobody')}")
        if mode in ("429", "429-bare"):
            status, payload, _ = self.error(
                Refused(429, "Rate limit reached for requests", "rate_limit_error")
            )
            return status, payload, {"retry-after": "1"} if mode == "429" else {}
        if mode in ("500", "503"):
            raise Refused(
                int(mode), "The server had an error processing your request", "server_error"
            )
        if mode == "malformed":
            return 200, b'{"id": "chatcmpl-test", "choices": [', {}
        if mode == "bad_utf8":
            return 200, b'{"id": "chatcmpl-\xff\xfe\xc3(", "choices": []}', {}
        if mode == "huge_int":
            return (
                200,
                b'{"id": "x", "choices": [], "usage": {"prompt_tokens": ' + b"9" * 5000 + b"}}",
                {},
            )
        if mode == "leaky_500":
            where = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
            raise Refused(500, f"upstream {LEAK} failed at {where}", "server_error")
        if mode == "nested_body":
            return 200, b'{"id": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", {}
        if mode == "wrong_types":
            return 200, json.dumps({"id": 5, "choices": "none", "usage": "lots"}).encode(), {}
        if mode == "huge":
            return 200, b'{"id": "' + b"x" * HUGE_BYTES + b'"}', {}
        if mode == "redirect":
            return 307, b"", {"location": "http://127.0.0.1:9/v1/chat/completions"}
        schema, constrained = self._response_format(body)
        if mode == "slow":
            time.sleep(self.slow_seconds)
        output = self._output(schema, body)
        content = json.dumps(output)
        finish = "stop"
        if mode == "invalid_json":
            content = "Sure! Here is the answer you asked for: " + content[:20]
        elif mode == "schema_invalid":
            content = json.dumps({"answer": 42})
        elif mode == "length":
            content, finish = content[: len(content) // 2], "length"
        elif mode == "nested_content":
            content = "[" * 100_000 + "]" * 100_000
        elif mode == "fenced" or not constrained:
            content = f"```json\n{content}\n```"
        reply: dict[str, Any] = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
        }
        if mode == "bad_usage":
            reply["usage"] = {"prompt_tokens": "many", "completion_tokens": -5}
        elif mode != "no_usage":
            reply["usage"] = USAGE
        if mode == "gzip":
            return 200, gzip.compress(json.dumps(reply).encode()), {"content-encoding": "gzip"}
        return 200, json.dumps(reply).encode(), {}

    def _check_key(self, headers: dict[str, str]) -> None:
        if self.api_key is None or self.flavour.startswith("ollama"):
            return
        sent = headers.get("authorization", "")
        if sent == f"Bearer {self.api_key}":
            return
        got = sent.removeprefix("Bearer ")
        masked = f"{got[:4]}****{got[-4:]}" if len(got) > 8 else got
        raise Refused(401, f"Incorrect API key provided: {masked}.", "invalid_request_error")

    def _response_format(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        """The schema the server holds the model to (None: none), and whether output is
        constrained to JSON at all, as this flavour reads ``response_format``."""
        form = body.get("response_format") or {"type": "text"}
        kind = form.get("type")
        messages = json.dumps(body.get("messages", []))
        if kind == "json_schema" and self.flavour == "ollama-old":
            return None, False  # not a type it knew: plain text, whatever the model writes
        if kind == "json_schema":
            if self.flavour == "llamacpp-old":
                raise Refused(
                    500,
                    'response_format type must be one of "text" or "json_object", '
                    "but got: json_schema",
                    "server_error",
                )
            spec = form.get("json_schema") or {}
            if self.flavour in ("openai", "vllm", "lmstudio") and not _NAME.fullmatch(
                str(spec.get("name", ""))
            ):
                raise Refused(400, "Invalid 'response_format.json_schema.name'")
            if self.schema_error and self.flavour == "llamacpp":
                raise Refused(400, "JSON schema conversion failed:\nUnrecognized schema: {}")
            return spec.get("schema"), True
        if kind == "json_object":
            if self.flavour == "lmstudio":
                raise Refused(400, "'response_format.type' must be 'json_schema' or 'text'")
            if self.flavour == "openai" and "json" not in messages.lower():
                raise Refused(
                    400,
                    "'messages' must contain the word 'json' in some form, to use "
                    "'response_format' of type 'json_object'.",
                )
            return (form.get("schema") if self.flavour == "llamacpp" else None), True
        if kind != "text" and self.flavour in ("llamacpp", "llamacpp-old"):
            raise Refused(400, 'response_format type must be one of "text" or "json_object"')
        if kind != "text" and self.flavour == "openai":
            raise Refused(
                400,
                f"Invalid value: '{kind}'. Supported values are: 'json_object', "
                "'json_schema', and 'text'.",
            )
        return None, False

    def _output(self, schema: dict[str, Any] | None, body: dict[str, Any]) -> dict[str, Any]:
        """What the "model" says: an addresses judgement or query expansion terms when the
        schema (held by the server, or written in the prompt in JSON mode) asks for one, else an
        answer."""
        messages = body.get("messages", [])
        text = json.dumps(schema) if schema else json.dumps(messages)
        for field, output in (("addresses", self.addresses), ("terms", self.expansion)):
            if f'"{field}"' in text or f'\\"{field}\\"' in text:
                return output
        prompt = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        for key, output in self.by_question.items():
            if key in prompt:
                return output
        return self.answer

    # -- the wire ------------------------------------------------------------------------------

    def error(self, refusal: Refused) -> tuple[int, bytes, dict[str, str]]:
        """An error reply in this flavour's shape."""
        body: dict[str, Any]
        if self.flavour == "vllm":
            body = {
                "object": "error",
                "message": refusal.message,
                "type": "BadRequestError" if refusal.status == 400 else refusal.kind,
                "param": None,
                "code": refusal.status,
            }
        elif self.flavour in ("llamacpp", "llamacpp-old"):
            body = {
                "error": {"code": refusal.status, "message": refusal.message, "type": refusal.kind}
            }
        else:
            body = {
                "error": {
                    "message": refusal.message,
                    "type": refusal.kind,
                    "param": None,
                    "code": None,
                }
            }
        return refusal.status, json.dumps(body).encode(), {}

    _send = staticmethod(send_json)

    def _hang(self, handler: BaseHTTPRequestHandler, mode: str, entry: dict[str, Any]) -> None:
        """Hold the connection as ``mode`` says, until the fake stops or the client leaves;
        ``entry["sent"]`` counts the bytes dribbled (what a client that gave up in time bounds)."""
        entry["sent"] = 0
        try:
            if mode == "dribble":
                handler.wfile.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: 1000000\r\n\r\n"
                )
            elif mode == "dribble_headers":
                handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
            handler.wfile.flush()
            filler = b'{"id": "' if mode == "dribble" else b"x-slow: " + b"a" * 1000
            sent = 0
            while not self._stopped.wait(self.dribble_seconds if mode != "hang" else 0.05):
                if mode == "hang":
                    continue
                handler.wfile.write(filler[sent % len(filler) : sent % len(filler) + 1])
                handler.wfile.flush()
                sent += 1
                entry["sent"] = sent
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: what a deadline is for

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self.server.shutdown()
        self.server.server_close()
