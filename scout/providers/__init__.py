"""Providers by name: ``claude-local`` (the default), ``anthropic`` and ``offline``.

Built-in providers go through the same registry as any other. Implementations are imported when
made, so asking with the offline provider never imports the anthropic SDK. Constructing a provider
is cheap and checks nothing; a missing binary or key surfaces as ProviderError from ``run``.
"""

from __future__ import annotations

from collections.abc import Callable

from scout.config import ProviderName
from scout.errors import UsageError
from scout.providers.base import PromptPassage, Provider, Task


def _claude_local(model: str, timeout: float | None) -> Provider:
    from scout.providers.claude_local import ClaudeLocalProvider

    return ClaudeLocalProvider(model=model, timeout=timeout)


def _anthropic(model: str, timeout: float | None) -> Provider:
    from scout.providers.anthropic_api import AnthropicProvider

    return AnthropicProvider(model=model, timeout=timeout)


def _offline(model: str, timeout: float | None) -> Provider:
    from scout.providers.offline import OfflineProvider

    return OfflineProvider(model=model, timeout=timeout)


REGISTRY: dict[ProviderName, Callable[[str, float | None], Provider]] = {
    "claude-local": _claude_local,
    "anthropic": _anthropic,
    "offline": _offline,
}


def make_provider(name: str, *, model: str, timeout: float | None = None) -> Provider:
    """The provider registered as ``name``; UsageError naming the choices for anything else."""
    try:
        factory = REGISTRY[name]  # type: ignore[index]  # any text may be asked for: KeyError
    except KeyError:
        raise UsageError(
            f"unknown provider {name!r}: choose one of {', '.join(REGISTRY)}"
        ) from None
    return factory(model, timeout)


__all__ = ["REGISTRY", "PromptPassage", "Provider", "ProviderName", "Task", "make_provider"]
