"""A loopback stand-in for the Anthropic Messages API, for the SDK's ``base_url``.

``FakeMessagesAPI(script)`` serves ``POST /v1/messages``; each request takes the next mode from
``script`` (the last one repeats). Modes: ``success``, ``429``, ``500``, ``529``, ``401``,
``malformed`` (a 200 whose body is not JSON), ``schema_invalid`` (a 200 whose text does not match
the schema), ``slow`` (waits ``slow_seconds`` before a success). Error replies carry
``retry-after-ms: 1`` as the real API's retry hints do, so SDK retries take no time in tests.
Every request body is recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_OUTPUT = {
    "answer": "Run `vault rotate` from the admin host [1].",
    "cited": [1],
    "declined": False,
    "reason": "",
}

# Search terms (``[retrieval] expand``, on by default with a model), for a request whose schema
# asks for ``terms``: words no test corpus uses, so tests about answers rank as they would.
DEFAULT_TERMS = {"terms": ["zzfaketerm", "qqfaketerm"]}

_ERRORS = {
    "429": (429, "rate_limit_error", "Number of request tokens has exceeded your rate limit"),
    "500": (500, "api_error", "Internal server error"),
    "529": (529, "overloaded_error", "Overloaded"),
    "401": (401, "authentication_error", "invalid x-api-key"),
}


def message(text: str, model: str = "claude-haiku-4-5") -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def send_json(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
) -> None:
    """Send one JSON reply (shared by the loopback API fakes)."""
    try:
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a timeout test): nothing to do


def _asks_for_terms(request: dict[str, Any]) -> bool:
    """Whether a request's structured output schema has a ``terms`` property."""

    def walk(node: Any) -> bool:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict) and "terms" in props:
                return True
            return any(walk(value) for value in node.values())
        if isinstance(node, list):
            return any(walk(value) for value in node)
        return False

    return walk({k: v for k, v in request.items() if k != "messages"})


class FakeMessagesAPI:
    def __init__(
        self,
        script: list[str],
        *,
        output: dict[str, Any] | None = None,
        slow_seconds: float = 2.0,
    ) -> None:
        self.script = list(script)
        self.output = output if output is not None else DEFAULT_OUTPUT
        self.slow_seconds = slow_seconds
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with api._lock:
                    api.requests.append(body)
                    api.headers.append({k.lower(): v for k, v in self.headers.items()})
                    mode = api.script.pop(0) if len(api.script) > 1 else api.script[0]
                api.reply(self, mode)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def reply(self, handler: BaseHTTPRequestHandler, mode: str) -> None:
        if mode in _ERRORS:
            status, kind, text = _ERRORS[mode]
            body = {"type": "error", "error": {"type": kind, "message": text}}
            self._send(handler, status, json.dumps(body).encode(), {"retry-after-ms": "1"})
            return
        if mode == "malformed":
            self._send(handler, 200, b'{"id": "msg_test", "content": [', {})
            return
        if mode == "slow":
            time.sleep(self.slow_seconds)
        text = json.dumps(self.output)
        if self.output is DEFAULT_OUTPUT and _asks_for_terms(self.requests[-1]):
            text = json.dumps(DEFAULT_TERMS)
        if mode == "schema_invalid":
            text = json.dumps({"answer": 42})
        self._send(handler, 200, json.dumps(message(text)).encode(), {})

    _send = staticmethod(send_json)

    def __enter__(self) -> FakeMessagesAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
