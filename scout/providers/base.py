"""The provider protocol: one task in (a rendered prompt plus its raw material), one model out.

A provider is generic over the structured output it must return, so the answer path
(``AnswerOutput``) and signpost validation's "addresses the question" check (``AddressesOutput``)
share it. The main rule: every failure, whatever its cause, leaves a provider as
``scout.errors.ProviderError``; a decline is an output, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

# The one list of provider names: the registry is keyed by it and the config validates against it.
ProviderName = Literal["claude-local", "anthropic", "offline"]

# Bounds what a provider reads back from a model: generous for an answer, small for memory.
MAX_REPLY_BYTES = 1_000_000


@dataclass(frozen=True)
class PromptPassage:
    """A passage as the model sees it: its number, heading, where it was read, and its text."""

    n: int
    heading: str
    source_line: str  # e.g. "acme/config docs/x.md L12-30 @ 0123456789ab"
    text: str


@dataclass(frozen=True)
class Task(Generic[T]):
    """What to ask: the rendered prompt for models, the raw material for the offline composer."""

    kind: str  # "answer" | "addresses"
    system: str
    user: str
    output: type[T]
    question: str
    passages: tuple[PromptPassage, ...]


class Provider(Protocol):
    """Something that turns a task into its structured output, or raises ProviderError."""

    name: str

    def run(self, task: Task[T]) -> T: ...
