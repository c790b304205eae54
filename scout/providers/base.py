"""The provider protocol: one task in (a rendered prompt plus its raw material), one model out.

A provider is generic over the structured output it must return, so the answer path
(``AnswerOutput``) and signpost validation's "addresses the question" check (``AddressesOutput``)
share it. The main rule: every failure, whatever its cause, leaves a provider as
``scout.errors.ProviderError``; a decline is an output, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar, cast

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

# Bounds what a provider reads back from a model: generous for an answer, small for memory.
MAX_REPLY_BYTES = 1_000_000


@dataclass(frozen=True)
class PromptPassage:
    """A passage as the model sees it: its number, heading, where it was read, and its text."""

    n: int
    heading: str
    source_line: str  # e.g. "acme/config docs/x.md L12-30 @ 0123456789ab"
    text: str


TaskKind = Literal["answer", "addresses", "expand"]  # expand: the question alone, no passages


@dataclass(frozen=True)
class Task(Generic[T]):
    """What to ask: the rendered prompt for models, the raw material for the offline composer."""

    kind: TaskKind
    system: str
    user: str
    output: type[T]
    question: str
    passages: tuple[PromptPassage, ...]
    # The time.monotonic() instant by which the whole call must have ended, retries and a slowly
    # sent reply included (None: the provider's own timeout alone); past it, ProviderTimeout.
    deadline: float | None = None


class Provider(Protocol):
    """Something that turns a task into its structured output, or raises ProviderError."""

    name: str

    def run(self, task: Task[T]) -> T: ...


OFFLINE = "offline"  # the one provider that is no model (scout/providers/offline.py)


def is_offline(provider: Provider) -> bool:
    """Whether ``provider`` is offline mode: a lexical stand-in, no model. By name, which every
    wrapper that meters or shows a provider's work keeps."""
    return provider.name == OFFLINE


@dataclass(frozen=True)
class Usage:
    """What one provider call cost, as the provider reported it (``usd`` None: no price known)."""

    input_tokens: int = 0
    output_tokens: int = 0
    usd: float | None = 0.0

    def __add__(self, other: Usage) -> Usage:
        usd = None if self.usd is None or other.usd is None else self.usd + other.usd
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens, usd
        )


@dataclass(frozen=True)
class Metered(Generic[T]):
    """A provider's output with what producing it cost."""

    output: T
    usage: Usage


def run_metered(provider: Provider, task: Task[T]) -> Metered[T]:
    """Run ``task`` and return its output with its usage.

    Providers that report usage define ``run_metered``; any other provider (a third-party one, a
    test's) is run plainly and reported as costing nothing known.
    """
    metered = getattr(provider, "run_metered", None)
    if metered is not None:
        return cast(Metered[T], metered(task))
    return Metered(provider.run(task), Usage(usd=None))
