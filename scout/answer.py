"""The answer path: question -> query -> passages -> provider -> citation check -> result -> log.

Rules held here: nothing retrieved is a decline ("nothing matched") without constructing or calling
a provider (docs/design.md, invariant 7); a checked citation or a decline, never a trusted one
(docs/design.md, invariant 6); each question is answered from its own passages only (docs/design.md,
invariant 10); every answered or declined question is logged with its latency, never with passage or
answer text. A provider failure raises ProviderError and logs nothing: it is an incident, not an
outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from scout.compose import answer_task, check
from scout.compose.prompt import CONTROL_CHARACTERS
from scout.providers.base import Provider
from scout.retrieve import check_passages, check_question, retrieve
from scout.store import PassageHit, Store

NOTHING_MATCHED = "nothing matched"
MAX_LOGGED_REASON = 200


@dataclass(frozen=True)
class Citation:
    """A cited passage, pinned to the sha it was read at."""

    n: int
    project: str
    path: str
    sha: str
    lines: tuple[int, int]
    url: str
    source: str

    @classmethod
    def of(cls, n: int, hit: PassageHit) -> Citation:
        return cls(
            n, hit.project, hit.path, hit.sha, (hit.line_start, hit.line_end), hit.url, hit.source
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "project": self.project,
            "path": self.path,
            "sha": self.sha,
            "lines": list(self.lines),
            "url": self.url,
            "source": self.source,
        }


@dataclass(frozen=True)
class AnswerResult:
    """Answered (answer and citations) or declined (reason); ``passages`` is how many were given."""

    outcome: str  # answered | declined
    answer: str | None
    reason: str | None
    citations: tuple[Citation, ...]
    passages: int

    def to_json(self) -> dict[str, Any]:
        """Exactly docs/design.md's ``scout ask --json`` document."""
        return {
            "outcome": self.outcome,
            "answer": self.answer,
            "reason": self.reason,
            "citations": [c.to_json() for c in self.citations],
            "passages": self.passages,
        }

    @classmethod
    def declined(cls, reason: str, passages: int) -> AnswerResult:
        return cls("declined", None, reason, (), passages)


def ask(
    question: str,
    *,
    store: Store,
    provider: Provider | Callable[[], Provider],
    passages: int = 8,
    provider_name: str,
) -> AnswerResult:
    """Answer ``question`` from the store's passages, or decline; log the outcome.

    ``provider`` may be a factory, called only when there are passages to give it.
    Raises UsageError for an unacceptable question, ProviderError when the provider fails.
    """
    started = time.monotonic()
    check_question(question)
    check_passages(passages)
    hits = retrieve(store, question, passages)
    if not hits:
        result = AnswerResult.declined(NOTHING_MATCHED, 0)
    else:
        output = _resolve(provider).run(answer_task(question, hits))
        verdict = check(output, len(hits))
        if verdict.answered:
            citations = tuple(Citation.of(n, hits[n - 1]) for n in verdict.cited)
            answer = _printable(output.answer)
            result = AnswerResult("answered", answer, None, citations, len(hits))
        else:
            result = AnswerResult.declined(_printable(verdict.reason or "declined"), len(hits))
    store.log_question(
        question=question,
        outcome=result.outcome,
        reason=result.reason[:MAX_LOGGED_REASON] if result.reason else None,
        provider=provider_name,
        passages=result.passages,
        latency_ms=round((time.monotonic() - started) * 1000),
    )
    return result


def _printable(text: str) -> str:
    # Model output is printed to terminals: no control characters but newline and tab survive.
    return CONTROL_CHARACTERS.sub("", text).strip()


def _resolve(provider: Provider | Callable[[], Provider]) -> Provider:
    if hasattr(provider, "run"):
        return cast(Provider, provider)
    return cast(Callable[[], Provider], provider)()


def render(result: AnswerResult) -> str:
    """The human rendering: the answer and its sources, or the decline and its reason."""
    if result.outcome != "answered":
        return f"Declined: {result.reason}"
    lines = [result.answer or "", "", "Sources:"]
    for c in result.citations:
        lines.append(f"  [{c.n}] {c.project} {c.path} L{c.lines[0]}-{c.lines[1]}  {c.url}")
    return "\n".join(lines)
