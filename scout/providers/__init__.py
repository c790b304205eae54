"""Providers by name: ``claude-local`` (the default), ``anthropic``, ``openai`` and ``offline``.

Built-in providers go through the same registry as any other. Implementations are imported when
made, so asking with the offline provider never imports the anthropic or openai SDK. Constructing a
provider is cheap and checks nothing; a missing binary or key surfaces as ProviderError from
``run``, a missing optional SDK as ProviderError from ``make_provider``.
"""

from __future__ import annotations

from collections.abc import Callable

from scout.config import Config, Endpoint, ProviderName, check_model
from scout.errors import ProviderError, UsageError
from scout.providers.base import PromptPassage, Provider, Task

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


def configured_provider(
    config: Config,
    name: str | None = None,
    *,
    model: str | None = None,
    timeout: float | None = None,
) -> Provider:
    """The provider ``name`` (default: answer.provider) with the model, timeout and endpoint
    ``config`` sets (``model`` and ``timeout`` override them); ConfigError naming
    ``answer.model`` when a provider that needs a model named gets none. (Here, not on
    ``Config``: the config sits below the providers and never imports them.)"""
    answer = config.answer
    name = name or answer.provider
    if model is None:
        check_model(config.source, answer, name)
    return make_provider(
        name,
        model=model or answer.model,
        timeout=answer.timeout if timeout is None else timeout,
        endpoint=answer.endpoint(),
    )


__all__ = [
    "REGISTRY",
    "Endpoint",
    "PromptPassage",
    "Provider",
    "ProviderName",
    "Task",
    "configured_provider",
    "make_provider",
]
