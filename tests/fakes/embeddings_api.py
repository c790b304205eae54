"""A loopback server speaking OpenAI's embeddings API, for ``[retrieval.embeddings] kind =
"openai"``.

``FakeEmbeddings(script, dimension=...)`` serves ``POST /v1/embeddings`` on 127.0.0.1; each
request takes the next mode from ``script`` (the last one repeats) and is written to ``log``
(lower-cased headers, body, mode, status).

What each behaviour follows:

- Request and reply: the embeddings reference (platform.openai.com/docs/api-reference/
  embeddings/create and .../embeddings/object): ``{"model", "input": str | [str],
  "encoding_format": "float" | "base64"}``; the reply ``{"object": "list", "data": [{"object":
  "embedding", "index", "embedding"}], "model", "usage": {"prompt_tokens", "total_tokens"}}``.
  With ``encoding_format: "base64"`` (what openai-python asks for unless told otherwise:
  ``openai/lib/_parsing/_embeddings.py``) each embedding is the base64 of little-endian float32.
  An empty string in ``input`` is a 400 (the reference: "cannot be an empty string").
- Errors: ``{"error": {"message", "type", "param", "code"}}`` (platform.openai.com/docs/guides/
  error-codes); a 429 carries ``retry-after-ms`` (read by openai-python's ``_base_client.py``,
  as OpenAI's own replies carry it) so the SDK's retry takes no time in tests.
- Keys: ``Authorization: Bearer KEY``; when the server has a key, anything else is a 401 that
  quotes the key it got (as OpenAI's does, masked; here whole, the worst case).

The vectors are a model of meaning small enough to reason about: each word of the text (lower
case, a crude stem) adds one to the dimension its *concept* hashes to, so words of one concept
(``CONCEPTS``: "evicted" and "kicked", "schedule" and "nightly") land together and texts that say
the same thing in other words are near, as a sentence-embedding model's are.

Modes: ``success``; ``429`` then whatever follows; ``500``; ``unauthorized``; ``die`` (the
connection is closed with no reply, as a server that crashed); ``short`` (one vector fewer than
asked); ``mixed`` (the second vector one dimension longer); ``nan`` (a vector with NaN, which
JSON cannot carry: sent as the literal ``NaN`` Python's json writes); ``strings`` (numbers as
strings); ``huge`` (a 200 of 64 MiB); ``gzip`` (compressed though ``identity`` was asked);
``redirect`` (a 307 to another port); ``slow`` (waits ``slow_seconds``); ``echo_key`` (a 400
quoting the Authorization header whole).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.messages_api import send_json

# Words that mean one thing, in the fake's model of meaning.
CONCEPTS = {
    "evict": ("evicted", "eviction", "evicts", "kicked", "killed", "thrown"),
    "schedule": ("schedule", "scheduled", "nightly", "cron", "timer", "periodically"),
    "credential": ("credentials", "keys", "secret", "secrets", "password", "token"),
    "backup": ("backup", "backups", "snapshot", "restore", "archive"),
}
_CONCEPT_OF = {word: concept for concept, words in CONCEPTS.items() for word in words}
_WORD = re.compile(r"[a-z0-9]+")
# Words that say little, which a sentence-embedding model weighs little too.
_LIGHT = frozenset(
    "a an and are at by do does for got how i in is it my of on or the to why".split()
)


def concept_vector(text: str, dimension: int) -> list[float]:
    """The fake model's vector for ``text`` (not normalised: Scout normalises)."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        if word in _LIGHT:
            continue
        concept = _CONCEPT_OF.get(word, word.rstrip("s"))
        slot = int.from_bytes(hashlib.sha256(concept.encode()).digest()[:4], "big") % dimension
        vector[slot] += 1.0
    vector[0] += 0.01  # no text is the zero vector
    return vector


class FakeEmbeddings:
    def __init__(
        self,
        script: list[str] | None = None,
        *,
        dimension: int = 256,
        api_key: str | None = None,
        slow_seconds: float = 2.0,
    ) -> None:
        self.script = list(script or ["success"])
        self.dimension = dimension
        self.api_key = api_key
        self.slow_seconds = slow_seconds
        self.log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with api._lock:
                    mode = api.script.pop(0) if len(api.script) > 1 else api.script[0]
                    entry = {"headers": headers, "body": body, "mode": mode, "path": self.path}
                    api.log.append(entry)
                api.reply(self, mode, headers, body, entry)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def texts(self) -> list[str]:
        """Every text the server was asked to embed, in order."""
        out: list[str] = []
        for entry in self.log:
            given = entry["body"].get("input", [])
            out += [given] if isinstance(given, str) else list(given)
        return out

    def reply(
        self,
        handler: BaseHTTPRequestHandler,
        mode: str,
        headers: dict[str, str],
        body: dict[str, Any],
        entry: dict[str, Any],
    ) -> None:
        def send(status: int, data: bytes, extra: dict[str, str] | None = None) -> None:
            entry["status"] = status
            send_json(handler, status, data, extra or {})

        def fail(status: int, message: str, kind: str, extra: dict[str, str] | None = None) -> None:
            error = {"error": {"message": message, "type": kind, "param": None, "code": None}}
            send(status, json.dumps(error).encode(), extra)

        given = headers.get("authorization", "")
        if self.api_key is not None and given != f"Bearer {self.api_key}":
            fail(401, f"Incorrect API key provided: {given}", "invalid_request_error")
            return
        if mode == "429":
            fail(429, "Rate limit reached", "requests", {"retry-after-ms": "10"})
            return
        if mode == "500":
            fail(500, "The server had an error", "server_error")
            return
        if mode == "unauthorized":
            fail(401, "Incorrect API key provided", "invalid_request_error")
            return
        if mode == "echo_key":
            fail(400, f"Bad request from {given}", "invalid_request_error")
            return
        if mode == "die":
            entry["status"] = None
            handler.close_connection = True
            handler.connection.close()
            return
        if mode == "redirect":
            entry["status"] = 307
            handler.send_response(307)
            handler.send_header("location", "http://127.0.0.1:9/v1/embeddings")
            handler.send_header("content-length", "0")
            handler.end_headers()
            return
        if mode == "slow":
            time.sleep(self.slow_seconds)
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else inputs
        if (
            not isinstance(texts, list)
            or not texts
            or not all(isinstance(t, str) and t for t in texts)
        ):
            fail(400, "input must be a non-empty string or list of them", "invalid_request_error")
            return
        vectors = [concept_vector(text, self.dimension) for text in texts]
        if mode == "short":
            vectors = vectors[:-1]
        if mode == "mixed" and len(vectors) > 1:
            vectors[1] = [*vectors[1], 1.0]
        encoded: list[Any]
        if body.get("encoding_format") == "base64" and mode not in ("nan", "strings"):
            encoded = [base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() for v in vectors]
        else:
            encoded = list(vectors)
        if mode == "nan":
            encoded = [[float("nan"), *v[1:]] for v in vectors]
        if mode == "strings":
            encoded = [[str(x) for x in v] for v in vectors]
        reply = {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)
            ],
            "model": body.get("model"),
            "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
        }
        data = json.dumps(reply).encode()
        if mode == "huge":
            data = b'{"object": "list", "data": [' + b" " * (64 << 20) + b"]}"
        if mode == "gzip":
            send(200, gzip.compress(data), {"content-encoding": "gzip"})
            return
        send(200, data)

    def __enter__(self) -> FakeEmbeddings:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
