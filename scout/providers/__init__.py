"""Providers by name: ``claude-local`` (the default), ``anthropic``, ``openai`` and ``offline``.

Built-in providers go through the same registry as any other. Implementations are imported when
made, so asking with the offline provider never imports the anthropic or openai SDK. Constructing a
provider is cheap and checks nothing; a missing binary or key surfaces as ProviderError from
``run``, a missing optional SDK as ProviderError from ``make_provider``.
"""

from __future__ import annotations

from collections.abc import Callable

from scout.errors import ProviderError, UsageError
from scout.providers.base import Endpoint, PromptPassage, Provider, ProviderName, Task

Factory = Callable[[str, float | None, Endpoint], Provider]


def _claude_local(model: str, timeout: float | None, _endpoint: Endpoint) -> Provider:
    from scout.providers.claude_local import ClaudeLocalProvider

    return ClaudeLocalProvider(model=model, timeout=timeout)


def _anthropic(model: str, timeout: float | None, _endpoint: Endpoint) -> Provider:
    from scout.providers.anthropic_api import AnthropicProvider

    return AnthropicProvider(model=model, timeout=timeout)


def _openai(model: str, timeout: float | None, endpoint: Endpoint) -> Provider:
    try:
        from scout.providers.openai import OpenAIProvider
    except ModuleNotFoundError as exc:
        if exc.name not in ("openai", "httpx2"):
            raise
        raise ProviderError(
            "the openai provider needs the openai SDK: pip install 'scout[openai]' "
            "(or pip install 'openai>=3')"
        ) from exc
    return OpenAIProvider(model=model, timeout=timeout, endpoint=endpoint)


def _offline(model: str, timeout: float | None, _endpoint: Endpoint) -> Provider:
    from scout.providers.offline import OfflineProvider

    return OfflineProvider(model=model, timeout=timeout)


REGISTRY: dict[ProviderName, Factory] = {
    "claude-local": _claude_local,
    "anthropic": _anthropic,
    "openai": _openai,
    "offline": _offline,
}


def make_provider(
    name: str, *, model: str, timeout: float | None = None, endpoint: Endpoint | None = None
) -> Provider:
    """The provider registered as ``name``; UsageError naming the choices for anything else.

    ``endpoint`` is where an HTTP provider other than Anthropic's calls (default: OpenAI's API).
    """
    try:
        factory = REGISTRY[name]  # type: ignore[index]  # any text may be asked for: KeyError
    except KeyError:
        raise UsageError(
            f"unknown provider {name!r}: choose one of {', '.join(REGISTRY)}"
        ) from None
    return factory(model, timeout, endpoint or Endpoint())


__all__ = [
    "REGISTRY",
    "Endpoint",
    "PromptPassage",
    "Provider",
    "ProviderName",
    "Task",
    "make_provider",
]
