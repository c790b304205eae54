"""The ``openai`` kind: any OpenAI-compatible ``/v1/embeddings`` server, through the openai SDK.

Ollama (``nomic-embed-text``, ``all-minilm``), llama.cpp's server started with ``--embeddings``,
vLLM, Text Embeddings Inference, LM Studio and OpenAI itself serve the same request. The rules of
the openai provider hold here too, with the same code: no redirects (only the configured server
is contacted), every reply's body bounded as it is read, compressed replies refused, the key read
from its variable at call time, sent only as the ``Authorization`` header (no header when unset)
and scrubbed from every message, even when the server's own text quotes it.

Replies are checked before a vector is kept: one vector per text, in the order asked (by
``index``), all of one dimension, finite numbers. Time is bounded as the providers bound it
(``scout.providers.transport``): every socket operation ends by the call's deadline, however
slowly a server sends, and the one retry policy (429, 5xx, lost connections, ``Retry-After``)
retries a passage batch while ``timeout`` allows; a question's vector is asked for once, within
its deadline.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import httpx2
import numpy
import numpy.typing
import openai

from scout.config import EmbeddingsConfig
from scout.errors import EmbeddingError
from scout.providers.openai import (
    read_key,
    retryable,
    scrub,
    sdk_client,
    server_message,
    server_name,
)
from scout.providers.transport import BoundedTransport, ReplyRefused, call_with_retries, remaining

# A reply holds at most this many bytes a number (JSON floats: "-0.0123456789012345," is 20);
# base64 float32 (the SDK asks for it) needs 5.4.
BYTES_A_NUMBER = 24
MAX_DIMENSION = 8_192
QUERY_RETRIES = 0  # a question's vector is worth one try: retrieval goes on by words without it
BATCH_RETRIES = 2
_NUMBERS = (float, int)


class ServerEmbedder:
    """Embeddings from an OpenAI-compatible server."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        timeout: float = 30.0,
        batch: int = 64,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.batch = batch
        self.name = f"openai:{model}"
        self.where = server_name(base_url)
        # Bounded per reply: the most a batch of the largest vectors can take, and the envelope.
        self.limit = batch * MAX_DIMENSION * BYTES_A_NUMBER + 1_000_000

    @classmethod
    def of(cls, config: EmbeddingsConfig) -> ServerEmbedder:
        assert config.base_url is not None  # the config requires it for this kind
        return cls(
            base_url=config.base_url,
            model=config.model,
            api_key_env=config.api_key_env,
            timeout=config.timeout,
            batch=config.batch,
        )

    def embed(
        self, texts: Sequence[str], *, deadline: float | None = None
    ) -> numpy.typing.NDArray[numpy.float32]:
        """One request per ``batch`` texts; the vectors, one row per text, in order."""
        if not texts:
            return numpy.zeros((0, 0), dtype=numpy.float32)
        key = self._key()
        rows: list[numpy.typing.NDArray[numpy.float32]] = []
        transport = BoundedTransport(self.limit)
        with self._client(key, transport) as client:
            for start in range(0, len(texts), self.batch):
                part = list(texts[start : start + self.batch])
                rows.append(self._request(client, transport, part, key, deadline))
        dimensions = {row.shape[1] for row in rows}
        if len(dimensions) != 1:
            raise EmbeddingError(f"{self.where} returned vectors of {len(dimensions)} dimensions")
        return numpy.concatenate(rows)

    def _key(self) -> str | None:
        return read_key(self.api_key_env, EmbeddingError)

    def _client(self, key: str | None, transport: BoundedTransport) -> openai.OpenAI:
        return sdk_client(self.base_url, key, self.timeout, transport)

    def _request(
        self,
        client: openai.OpenAI,
        transport: BoundedTransport,
        texts: list[str],
        key: str | None,
        deadline: float | None,
    ) -> numpy.typing.NDArray[numpy.float32]:
        def attempt() -> Any:
            # each attempt ends by the deadline and within the configured timeout
            end = time.monotonic() + self.timeout
            transport.deadline = end if deadline is None else min(end, deadline)
            if remaining(transport.deadline) <= 0:
                raise EmbeddingError(f"no time was left to ask {self.where} for vectors")
            return client.embeddings.create(
                model=self.model,
                input=texts,
                # no header at all without a key (see scout.providers.openai)
                extra_headers={} if key else {"Authorization": openai.Omit()},
            )

        # A question's vector is worth one try: retrieval goes on by words without it.
        retries = QUERY_RETRIES if deadline is not None else BATCH_RETRIES
        try:
            reply = call_with_retries(
                attempt,
                retries=retries,
                deadline=deadline if deadline is not None else time.monotonic() + self.timeout,
                classify=retryable,
            )
        except openai.APIStatusError as exc:
            said = scrub(server_message(exc.body), key)
            detail = f": {said}" if said else ""
            if isinstance(exc, openai.AuthenticationError):
                hint = f"set {self.api_key_env}" if key is None else "check the key"
                raise EmbeddingError(f"{self.where} refused the request (401): {hint}") from exc
            raise EmbeddingError(
                f"{self.where} failed with HTTP {exc.status_code}{detail}"
            ) from exc
        except openai.APITimeoutError as exc:
            raise EmbeddingError(f"{self.where} gave no vectors in time") from exc
        except openai.APIConnectionError as exc:
            raise EmbeddingError(f"cannot reach {self.where}: is the server running?") from exc
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"the embeddings request failed: {scrub(str(exc), key)}") from exc
        except ReplyRefused as exc:
            raise EmbeddingError(f"{self.where} sent {exc}, which Scout does not read") from exc
        except (ValueError, RecursionError, httpx2.HTTPError) as exc:
            # the SDK decodes the body (JSON, then base64) itself
            raise EmbeddingError(f"{self.where} replied with a body Scout cannot read") from exc
        return self._vectors(reply, len(texts))

    def _vectors(self, reply: Any, count: int) -> numpy.typing.NDArray[numpy.float32]:
        """The reply's vectors in input order, or EmbeddingError saying what is wrong."""
        data = getattr(reply, "data", None)
        if not isinstance(data, list) or len(data) != count:
            got = len(data) if isinstance(data, list) else "no"
            raise EmbeddingError(f"{self.where} returned {got} vectors for {count} texts")
        ordered: list[Any] = [None] * count
        for position, item in enumerate(data):
            index = getattr(item, "index", position)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise EmbeddingError(f"{self.where} returned a vector for no text it was sent")
            if ordered[index] is not None:
                raise EmbeddingError(f"{self.where} returned two vectors for one text")
            ordered[index] = getattr(item, "embedding", None)
        lengths = {len(v) if isinstance(v, list) else -1 for v in ordered}
        if len(lengths) != 1 or not 1 <= next(iter(lengths)) <= MAX_DIMENSION:
            raise EmbeddingError(
                f"{self.where} returned vectors of mixed or impossible dimensions "
                f"({sorted(lengths)[:4]})"
            )
        # The SDK builds the reply without checking its types: a string or a bool is no number
        # (numpy would read "0.5" and True as numbers).
        if not all(type(x) in _NUMBERS for vector in ordered for x in vector):
            raise EmbeddingError(f"{self.where} returned a vector that is not numbers")
        try:
            vectors = numpy.array(ordered, dtype=numpy.float32)
        except (TypeError, ValueError, OverflowError) as exc:
            raise EmbeddingError(f"{self.where} returned a vector that is not numbers") from exc
        if vectors.ndim != 2 or not numpy.isfinite(vectors).all():
            raise EmbeddingError(f"{self.where} returned a vector that is not finite numbers")
        return vectors
