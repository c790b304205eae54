"""The answer path: question -> query -> passages -> provider -> citation check -> result -> log.

Rules held here: nothing retrieved is a decline ("nothing matched") without constructing or calling
a provider (docs/design.md, invariant 7); a checked citation or a decline, never a trusted one
(invariant 6); each question is answered from its own passages only (invariant 10); every answered
or declined question is logged with its latency, tokens and cost, never with passage or answer text
(``compose`` is the path without the log, for evaluation runs, which are not user questions). A
provider failure raises ProviderError and logs nothing: it is an incident, not an outcome. The
gap loop (docs/design.md): a question with no content words is a usage error and is not logged;
a decline is logged with its content words and its best three passages' places; a decline
because the index holds no passages at all is logged with the cause ``index_empty`` (not a gap).
Offline mode (a provider that is no model) says so: its result lists where to look (the best
passages' places), and its declines carry the cause ``offline``: no model judged the passages,
so they are not documentation gaps either.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from scout.compose import answer_task, check, prose
from scout.providers.base import Provider, T, Task, Usage, is_offline, run_metered
from scout.retrieve import Retrieved, retrieve
from scout.retrieve.expansion import Expander
from scout.retrieve.question import MAX_SEARCH, Question, check_passages
from scout.retrieve.settings import WORDS_ONLY, RetrievalSettings
from scout.safe_text import one_line, printable, printable_block
from scout.store import PassageHit, Store

NOTHING_MATCHED = "nothing matched"
INDEX_EMPTY = "index_empty"
OFFLINE = "offline"  # the cause of a decline offline mode made: no model judged the passages
WHERE_TO_LOOK = 5  # passages an offline result lists as where to look
INDEX_EMPTY_REASON = (
    "the index holds no passages: run `scout index`, and if it stays empty check the "
    "configured groups and [corpus] rules"
)
NEAREST = 3  # passages a declined question keeps the places of: where a writer would add it
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
class Place:
    """Where a passage is, numbered as the provider saw it: a place to look, never its text."""

    n: int
    project: str
    path: str
    heading: str
    lines: tuple[int, int]
    url: str

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, **nearest_place(self)}


Outcome = Literal["answered", "declined"]


@dataclass(frozen=True)
class AnswerResult:
    """Answered (answer and citations) or declined (reason); ``passages`` is how many were given.
    ``cause`` marks a decline that is no documentation gap (``index_empty``, ``offline``);
    ``where_to_look`` is what offline mode shows instead of a model's judgement; ``expanded``
    the model's terms retrieval searched with (None when none were asked for or none came) and
    the errors why a model's list is missing."""

    outcome: Outcome
    answer: str | None
    reason: str | None
    citations: tuple[Citation, ...]
    passages: int
    cause: str | None = None
    where_to_look: tuple[Place, ...] = ()
    expanded: tuple[str, ...] | None = None
    expansion_error: str | None = None
    dense_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """docs/design.md's ``scout ask --json`` document (fields are added to it, never
        renamed or removed)."""
        return {
            "outcome": self.outcome,
            "answer": self.answer,
            "reason": self.reason,
            "citations": [c.to_json() for c in self.citations],
            "passages": self.passages,
            "cause": self.cause,
            "where_to_look": [place.to_json() for place in self.where_to_look],
            # null only when asking failed (expansion_error says why); none when not asked
            "expanded": None if self.expansion_error else list(self.expanded or ()),
            "expansion_error": self.expansion_error,
            "dense_error": self.dense_error,
        }

    @classmethod
    def declined(cls, reason: str, passages: int, cause: str | None = None) -> AnswerResult:
        return cls("declined", None, reason, (), passages, cause)


@dataclass(frozen=True)
class Composed:
    """One question through the answer path, before logging: the result, the passages the
    provider was given (best first), what the provider calls cost (expansion included), how
    long it all took, and what retrieval did (its expansion terms, its errors)."""

    result: AnswerResult
    hits: tuple[PassageHit, ...]
    usage: Usage
    latency_ms: int
    terms: tuple[str, ...] = ()  # the question's content words
    cause: str | None = None  # INDEX_EMPTY, OFFLINE: a decline that is not a documentation gap
    expanded: tuple[str, ...] | None = None
    retrieved: Retrieved | None = None
    nearest: tuple[PassageHit, ...] = ()  # a decline's best three passages (where to add it)


def search(
    question: str | Question,
    *,
    store: Store,
    limit: int,
    projects: Sequence[str] | None = None,
    provider: Provider | Callable[[], Provider] | None = None,
    provider_name: str = "",
    retrieval: RetrievalSettings = WORDS_ONLY,
    deadline: float | None = None,
) -> Retrieved:
    """Retrieval for ``question`` as ``scout search`` and the answer path make it: with
    ``retrieval.expand``, ``provider`` (a provider, or a factory called at most once) is asked
    for search terms first (the question alone is sent; a cached reply is reused); with
    ``retrieval.embeddings``, the dense list joins the lexical one. Raises UsageError for a bad
    question; a failing model only leaves its list out (``Retrieved`` says why)."""
    asked = question if isinstance(question, Question) else Question.of(question)
    expander = None
    if retrieval.expand and provider is not None:
        expander = Expander(
            provider,
            provider_name=provider_name,
            model=retrieval.model,
            timeout=retrieval.expand_timeout,
            store=store,
            cache_days=retrieval.cache_days,
        )
    return retrieve(
        store,
        asked,
        limit,
        projects=projects,
        expand=expander,
        embeddings=retrieval.embeddings,
        deadline=deadline,
    )


def compose(
    question: str,
    *,
    store: Store,
    provider: Provider | Callable[[], Provider],
    passages: int = 8,
    projects: Sequence[str] | None = None,
    provider_name: str = "",
    retrieval: RetrievalSettings = WORDS_ONLY,
    deadline: float | None = None,
) -> Composed:
    """Answer ``question`` from the store's passages, or decline; log nothing.

    ``provider`` may be a factory, called only when there are passages to give it (or, with
    ``retrieval.expand``, to ask it for search terms first), and at most once. ``projects``
    limits retrieval (globs). Raises UsageError for an unacceptable question (one with no
    content words included), ProviderError when the provider fails to answer.
    """
    started = time.monotonic()
    asked = Question.of(question).needs_content()
    check_passages(passages)
    made: list[Provider] = []

    def once() -> Provider:
        # One provider for expansion and answer: a factory is called at most once.
        if not made:
            made.append(_resolve(provider))
        return made[0]

    # Retrieval finds at least a decline's nearest few, so a decline never runs it again.
    found = search(
        asked,
        store=store,
        limit=min(max(passages, NEAREST), MAX_SEARCH),
        projects=projects,
        provider=once,
        provider_name=provider_name,
        retrieval=retrieval,
        deadline=deadline,
    )
    hits, usage = found.hits[:passages], found.usage
    if not hits and not store.passage_count():
        # Not a gap but a config mistake or an index never built: say so, and log the cause.
        result = AnswerResult.declined(INDEX_EMPTY_REASON, 0, INDEX_EMPTY)
    elif not hits:
        result = AnswerResult.declined(NOTHING_MATCHED, 0)
    else:
        metered = run_metered(once(), _with_deadline(answer_task(question, hits), deadline))
        output, usage = metered.output, usage + metered.usage
        verdict = check(output, len(hits))
        if verdict.answered:
            citations = tuple(Citation.of(n, hits[n - 1]) for n in verdict.cited)
            answer = printable_block(prose(output.answer)).strip()
            result = AnswerResult("answered", answer, None, citations, len(hits))
        else:
            result = AnswerResult.declined(
                one_line(printable_block(verdict.reason or "declined"), 1_000),
                len(hits),
            )
        if is_offline(once()):
            result = offline(result, hits)
    latency = round((time.monotonic() - started) * 1000)
    expanded = None if found.expansion is None else found.expansion.terms
    result = dataclasses.replace(
        result,
        expanded=expanded,
        expansion_error=found.expansion_error,
        dense_error=found.dense_error,
    )
    cause = result.cause
    near = tuple(found.hits[:NEAREST]) if result.outcome == "declined" and not cause else ()
    return Composed(
        result, tuple(hits), usage, latency, asked.content, cause, expanded, found, near
    )


def offline(result: AnswerResult, hits: Sequence[PassageHit]) -> AnswerResult:
    """Offline mode's result: where to look (the best passages' places, and every cited one),
    and for a decline the cause ``offline``: a lexical stand-in found no one passage holding
    the question's words, which says nothing about whether the documentation answers."""
    cited = {c.n for c in result.citations}
    places = tuple(
        Place(n, hit.project, hit.path, hit.heading, (hit.line_start, hit.line_end), hit.url)
        for n, hit in enumerate(hits, start=1)
        if n <= WHERE_TO_LOOK or n in cited
    )
    cause = OFFLINE if result.outcome == "declined" else None
    return dataclasses.replace(result, cause=cause, where_to_look=places)


def ask(
    question: str,
    *,
    store: Store,
    provider: Provider | Callable[[], Provider],
    passages: int = 8,
    provider_name: str,
    projects: Sequence[str] | None = None,
    retrieval: RetrievalSettings = WORDS_ONLY,
    deadline: float | None = None,
    asker: str | None = None,
) -> AnswerResult:
    """Answer ``question`` (see :func:`compose`) and log its outcome, tokens, cost, the
    expansion terms retrieval searched with and who asked (``asker``: a server's client
    identity, stored hashed; None: this machine's user, one local asker)."""
    composed = compose(
        question,
        store=store,
        provider=provider,
        passages=passages,
        projects=projects,
        provider_name=provider_name,
        retrieval=retrieval,
        deadline=deadline,
    )
    result = composed.result
    store.log_question(
        question=question,
        outcome=result.outcome,
        reason=result.reason[:MAX_LOGGED_REASON] if result.reason else None,
        provider=provider_name,
        passages=result.passages,
        latency_ms=composed.latency_ms,
        input_tokens=composed.usage.input_tokens,
        output_tokens=composed.usage.output_tokens,
        usd=composed.usage.usd,
        terms=composed.terms,
        nearest=[nearest(hit) for hit in composed.nearest],
        cause=composed.cause,
        expanded=composed.expanded,
        asker=asker,
    )
    return result


def _with_deadline(task: Task[T], deadline: float | None) -> Task[T]:
    return task if deadline is None else dataclasses.replace(task, deadline=deadline)


def nearest(hit: PassageHit) -> dict[str, Any]:
    """Where a passage is (never what it says): the gap backlog's ``nearest`` entry."""
    return nearest_place(
        Place(0, hit.project, hit.path, hit.heading, (hit.line_start, hit.line_end), hit.url)
    )


def nearest_place(place: Place) -> dict[str, Any]:
    return {
        "project": place.project,
        "path": place.path,
        "heading": place.heading,
        "lines": list(place.lines),
        "url": place.url,
    }


def _resolve(provider: Provider | Callable[[], Provider]) -> Provider:
    if hasattr(provider, "run"):
        return cast(Provider, provider)
    return provider()


OFFLINE_NOTE = (
    "Offline mode: no model read these passages. They are where the documentation best "
    "matches your question's words."
)
OFFLINE_DECLINE = (
    "No model read the passages, so this does not mean the documentation lacks the answer: "
    "look in them, or ask with a model."
)
_MARKERS = re.compile(r"\s*\[\d{1,3}\]")


def matching_sentences(result: AnswerResult) -> str:
    """Offline mode's extract without its markers: sentences shown under the passage they are
    from, never as an answer."""
    return _MARKERS.sub("", result.answer or "").strip()


def render(result: AnswerResult) -> str:
    """The human rendering: the answer and its sources, or the decline and its reason; in
    offline mode, where to look (no model's answer), with the matching sentences of the passage
    that holds the question's words, and for a decline what no passage held."""
    if result.where_to_look:
        return _render_offline(result)
    if result.outcome != "answered":
        return f"Declined: {result.reason}"
    lines = [result.answer or "", "", "Sources:"]
    for c in result.citations:
        where = printable(f"{c.project} {c.path}", 1_000)
        lines.append(f"  [{c.n}] {where} L{c.lines[0]}-{c.lines[1]}  {printable(c.url, 2_000)}")
    return "\n".join(lines)


def _render_offline(result: AnswerResult) -> str:
    if result.outcome == "answered":
        lines = [OFFLINE_NOTE]
    else:
        lines = [f"Not answered in offline mode: {result.reason}.", OFFLINE_DECLINE]
    lines += ["", "Where to look:"]
    cited = {c.n for c in result.citations}
    for place in result.where_to_look:
        where = printable(f"{place.project} {place.path}", 1_000)
        start, end = place.lines
        lines.append(f"  [{place.n}] {where} L{start}-{end}  {printable(place.heading, 200)}")
        lines.append(f"      {printable(place.url, 2_000)}")
        if place.n in cited:
            lines.append(f"      matching: {printable(matching_sentences(result), 2_000)}")
    return "\n".join(lines)
