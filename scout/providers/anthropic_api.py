"""The anthropic provider: the Messages API through the anthropic SDK, with structured output.

The only module that imports ``anthropic``. Its exceptions are translated here, most specific
first, chained with ``from exc``. The key comes from ``ANTHROPIC_API_KEY`` only; the timeout and
the retry count are explicit (the SDK's 600 s default timeout is far too long for a question).
``ANTHROPIC_BASE_URL`` is honoured by the SDK, which is how tests reach a loopback server.
Retries and the reply's bounds are :mod:`scout.providers.transport`'s: the whole call, retries
and a slowly sent reply included, ends by the task's deadline (ProviderTimeout past it).
"""

from __future__ import annotations

import os
import time
from typing import Any

import anthropic
from pydantic import ValidationError

from scout.errors import ProviderError, ProviderTimeout
from scout.providers.base import MAX_REPLY_BYTES, Metered, T, Task, Usage
from scout.providers.pricing import cost
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
KEY_ENV = "ANTHROPIC_API_KEY"
# Bytes of one HTTP reply read at most: the content's own bound, JSON escaping and the envelope.
MAX_BODY_BYTES = 4 * MAX_REPLY_BYTES


class AnthropicProvider:
    """One ``messages.parse`` call per task."""

    name = "anthropic"

    def __init__(
        self, *, model: str, timeout: float | None = None, max_retries: int = DEFAULT_RETRIES
    ) -> None:
        self.model = model
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_retries = max_retries

    def _client(self, transport: BoundedTransport) -> anthropic.Anthropic:
        key = os.environ.get(KEY_ENV)
        if not key:
            raise ProviderError(
                f"set {KEY_ENV} to use the anthropic provider, "
                "or set answer.provider = 'claude-local' or 'offline' (or pass --provider)"
            )
        # No SDK retries: call_with_retries retries, and only while the task's deadline allows.
        http = anthropic.DefaultHttpxClient(
            transport=transport,
            follow_redirects=False,
            headers={"Accept-Encoding": "identity"},  # the transport refuses compressed replies
        )
        return anthropic.Anthropic(
            api_key=key, timeout=self.timeout, max_retries=0, http_client=http
        )

    def run(self, task: Task[T]) -> T:
        return self.run_metered(task).output

    def run_metered(self, task: Task[T]) -> Metered[T]:
        transport = BoundedTransport(MAX_BODY_BYTES)

        def attempt() -> Any:
            end = time.monotonic() + self.timeout
            transport.deadline = end if task.deadline is None else min(end, task.deadline)
            if remaining(transport.deadline) <= 0:
                raise ProviderTimeout(self._late(task))
            return client.messages.parse(
                model=self.model,
                max_tokens=MAX_TOKENS,
                system=task.system,
                messages=[{"role": "user", "content": task.user}],
                output_format=task.output,
            )

        with self._client(transport) as client:
            try:
                message = call_with_retries(
                    attempt, retries=self.max_retries, deadline=task.deadline, classify=_retryable
                )
            except ValidationError as exc:
                raise ProviderError(
                    f"the model's structured output does not match the schema "
                    f"({exc.error_count()} error(s))"
                ) from exc
            except (ValueError, RecursionError) as exc:
                # not JSON, nested too deeply, not UTF-8, or an integer past 4,300 digits
                raise ProviderError("the API replied with malformed JSON") from exc
            except ReplyRefused as exc:
                raise ProviderError(f"the API sent {exc}, which Scout does not read") from exc
            except anthropic.AuthenticationError as exc:
                raise ProviderError(f"the API rejected {KEY_ENV} (401): check the key") from exc
            except anthropic.RateLimitError as exc:
                raise ProviderError(
                    f"rate limited by the API (429) after {self.max_retries} retries: try later"
                ) from exc
            except anthropic.APIStatusError as exc:
                raise ProviderError(
                    f"the API failed with HTTP {exc.status_code} after {self.max_retries} retries"
                ) from exc
            except anthropic.APITimeoutError as exc:
                raise ProviderTimeout(self._late(task)) from exc
            except anthropic.APIConnectionError as exc:
                raise ProviderError(f"cannot reach the API: {exc}") from exc
            except anthropic.APIResponseValidationError as exc:
                raise ProviderError("the API replied with an unexpected response") from exc
            except anthropic.AnthropicError as exc:
                raise ProviderError(f"the anthropic SDK failed: {exc}") from exc
        if message.stop_reason == "refusal":
            raise ProviderError("the model refused to reply")
        parsed = message.parsed_output
        if parsed is None:
            raise ProviderError("the API reply has no structured output")
        return Metered(parsed, self._usage(message.usage))

    def _late(self, task: Task[Any]) -> str:
        if task.deadline is not None and remaining(task.deadline) <= 0:
            return "the API gave no complete reply before the answer's deadline"
        return f"the API gave no reply within {self.timeout:g} s"

    def _usage(self, usage: anthropic.types.Usage) -> Usage:
        """Tokens as the API reports them, priced from the table (the API reports no cost)."""
        written = usage.cache_creation_input_tokens or 0
        read = usage.cache_read_input_tokens or 0
        return Usage(
            input_tokens=usage.input_tokens + written + read,
            output_tokens=usage.output_tokens,
            usd=cost(
                self.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_write_tokens=written,
                cache_read_tokens=read,
            ),
        )


def _retryable(exc: Exception) -> Retryable | None:
    """What the retry policy needs of an SDK failure (None: not an HTTP failure)."""
    if isinstance(exc, anthropic.APIStatusError):
        return Retryable(exc.status_code, exc.response.headers)
    if isinstance(exc, anthropic.APIConnectionError):  # APITimeoutError is one
        return Retryable()
    return None
