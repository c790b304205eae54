"""The anthropic provider: the Messages API through the anthropic SDK, with structured output.

The only module that imports ``anthropic``. Its exceptions are translated here, most specific
first, chained with ``from exc``. The key comes from ``ANTHROPIC_API_KEY`` only; the timeout and
the retry count are explicit (the SDK's 600 s default timeout is far too long for a question).
``ANTHROPIC_BASE_URL`` is honoured by the SDK, which is how tests reach a loopback server.
"""

from __future__ import annotations

import json
import os

import anthropic
from pydantic import ValidationError

from scout.errors import ProviderError
from scout.providers.base import Metered, T, Task, Usage
from scout.providers.pricing import cost

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
MAX_TOKENS = 2_048
KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider:
    """One ``messages.parse`` call per task."""

    name = "anthropic"

    def __init__(
        self, *, model: str, timeout: float | None = None, max_retries: int = DEFAULT_RETRIES
    ) -> None:
        self.model = model
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_retries = max_retries

    def _client(self) -> anthropic.Anthropic:
        key = os.environ.get(KEY_ENV)
        if not key:
            raise ProviderError(
                f"set {KEY_ENV} to use the anthropic provider, "
                "or set answer.provider = 'claude-local' or 'offline' (or pass --provider)"
            )
        return anthropic.Anthropic(api_key=key, timeout=self.timeout, max_retries=self.max_retries)

    def run(self, task: Task[T]) -> T:
        return self.run_metered(task).output

    def run_metered(self, task: Task[T]) -> Metered[T]:
        with self._client() as client:
            try:
                message = client.messages.parse(
                    model=self.model,
                    max_tokens=MAX_TOKENS,
                    system=task.system,
                    messages=[{"role": "user", "content": task.user}],
                    output_format=task.output,
                )
            except ValidationError as exc:
                raise ProviderError(
                    f"the model's structured output does not match the schema "
                    f"({exc.error_count()} error(s))"
                ) from exc
            except json.JSONDecodeError as exc:
                raise ProviderError("the API replied with malformed JSON") from exc
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
                raise ProviderError(f"the API gave no reply within {self.timeout:g} s") from exc
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
