"""The offline provider: no model, a lexical stand-in so the demo and tests run anywhere.

It is not a model and does not understand anything. For an answer it picks the passage sentences
sharing the most question terms and cites them; it declines when the passages cover too few of the
question's terms. For "addresses" it says yes when the passage covers enough of them.
"""

from __future__ import annotations

import re
from typing import cast

from scout.compose.schema import AddressesOutput, AnswerOutput
from scout.errors import ProviderError
from scout.providers.base import PromptPassage, T, Task
from scout.retrieve import query_terms, stem, words

MIN_COVERAGE = 0.6  # share of the question's terms the passages must contain to answer
MAX_SENTENCES = 3
MAX_SENTENCE_CHARS = 400

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.|#)\s)")


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def _question_stems(question: str) -> dict[str, str]:
    """Each question term's stem, mapped to the term as asked (for reasons a person can read)."""
    stems: dict[str, str] = {}
    for term in query_terms(question):
        stems.setdefault(stem(term), term)
    return stems


def sentences(text: str) -> list[str]:
    """Sentences (and list items) of a passage, whitespace collapsed, Markdown markers trimmed."""
    out = []
    for piece in _SENTENCE_END.split(text):
        line = " ".join(piece.split()).lstrip("#*->+ ").strip()
        if len(line) >= 3 and not line.startswith("```"):
            out.append(line[:MAX_SENTENCE_CHARS])
    return out


def _coverage(wanted: dict[str, str], passages: tuple[PromptPassage, ...]) -> list[str]:
    have: set[str] = set()
    for passage in passages:
        have |= _stems(passage.heading) | _stems(passage.text)
    return [s for s in wanted if s in have]


def compose_answer(question: str, passages: tuple[PromptPassage, ...]) -> AnswerOutput:
    wanted = _question_stems(question)
    covered = _coverage(wanted, passages)
    if not wanted or len(covered) < MIN_COVERAGE * len(wanted):
        missing = [term for s, term in wanted.items() if s not in covered]
        return AnswerOutput(
            answer="",
            cited=[],
            declined=True,
            reason=f"the passages do not cover: {', '.join(missing[:8])}"[:200],
        )
    scored = []
    for passage in passages:
        for order, sentence in enumerate(sentences(passage.text)):
            score = len(set(wanted) & _stems(sentence))
            if score:
                scored.append((-score, passage.n, order, sentence))
    if not scored:
        return AnswerOutput(
            answer="", cited=[], declined=True, reason="no sentence shares the question's terms"
        )
    # Only the sentences sharing the most terms: one shared common word is not an answer.
    top = min(score for score, _, _, _ in scored)
    best = sorted(item for item in scored if item[0] == top)[:MAX_SENTENCES]
    best.sort(key=lambda item: (item[1], item[2]))  # read in passage order
    answer = " ".join(f"{sentence} [{n}]" for _, n, _, sentence in best)
    return AnswerOutput(
        answer=answer, cited=sorted({n for _, n, _, _ in best}), declined=False, reason=""
    )


def judge_addresses(question: str, passages: tuple[PromptPassage, ...]) -> AddressesOutput:
    wanted = _question_stems(question)
    covered = _coverage(wanted, passages)
    enough = bool(wanted) and len(covered) >= MIN_COVERAGE * len(wanted)
    return AddressesOutput(
        addresses=enough,
        reason=f"the passage shares {len(covered)} of {len(wanted)} question terms (lexical check)",
    )


class OfflineProvider:
    """Extractive, lexical, deterministic: never a model, never a network call."""

    name = "offline"

    def __init__(self, *, model: str = "", timeout: float | None = None) -> None:
        self.model = model

    def run(self, task: Task[T]) -> T:
        result: AnswerOutput | AddressesOutput
        if task.kind == "answer":
            result = compose_answer(task.question, task.passages)
        elif task.kind == "addresses":
            result = judge_addresses(task.question, task.passages)
        else:
            raise ProviderError(f"offline provider cannot do task kind {task.kind!r}")
        if not isinstance(result, task.output):
            raise ProviderError(f"offline provider cannot produce {task.output.__name__}")
        return cast(T, result)
