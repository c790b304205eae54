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
from scout.providers.base import Metered, PromptPassage, T, Task, Usage
from scout.retrieve import query_terms, stem, words

MIN_COVERAGE = 0.6  # share of the question's terms one passage must contain to answer
# "Addresses": one target passage must share this share of the question's terms, and at least
# MIN_SHARED of them. Issue questions are long and chatty, so the share is low; calibrated on the
# demo estate, where on-topic targets share 16% or more and an off-topic page 8%.
ADDRESSES_COVERAGE = 0.15
MIN_SHARED = 3
MAX_DESCRIPTION_CHARS = 300  # the title plus this much of the description is the question
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


def _passage_coverage(wanted: dict[str, str], passage: PromptPassage) -> set[str]:
    return set(wanted) & (_stems(passage.heading) | _stems(passage.text))


def compose_answer(question: str, passages: tuple[PromptPassage, ...]) -> AnswerOutput:
    """Sentences of the one passage that covers most of the question, or a decline.

    Coverage is judged per passage, not across all of them: eight passages that each mention one
    question word together "cover" a question none of them answers, which is exactly the
    confident-but-wrong answer Scout must never give.
    """
    wanted = _question_stems(question)
    if not wanted or not passages:
        return AnswerOutput(answer="", cited=[], declined=True, reason="nothing to go on")
    coverage = {p.n: _passage_coverage(wanted, p) for p in passages}
    best = max(passages, key=lambda p: (len(coverage[p.n]), -p.n))
    covered = coverage[best.n]
    if len(covered) < MIN_COVERAGE * len(wanted):
        missing = [term for s, term in wanted.items() if s not in covered]
        return AnswerOutput(
            answer="",
            cited=[],
            declined=True,
            reason=f"no passage covers: {', '.join(missing[:8])}"[:200],
        )
    heading = _stems(best.heading)
    scored = []
    for order, sentence in enumerate(sentences(best.text)):
        own = set(wanted) & _stems(sentence)
        if own:
            scored.append((-len(own | (heading & set(wanted))), order, sentence))
    if not scored:
        return AnswerOutput(
            answer="", cited=[], declined=True, reason="no sentence shares the question's terms"
        )
    # Only the sentences sharing the most terms: one shared common word is not an answer.
    top = min(score for score, _, _ in scored)
    chosen = sorted(item for item in scored if item[0] == top)[:MAX_SENTENCES]
    chosen.sort(key=lambda item: item[1])  # read in passage order
    answer = " ".join(f"{sentence} [{best.n}]" for _, _, sentence in chosen)
    return AnswerOutput(answer=answer, cited=[best.n], declined=False, reason="")


def judge_addresses(question: str, passages: tuple[PromptPassage, ...]) -> AddressesOutput:
    """Whether one target passage shares enough of the issue's question (title and opening).

    Lexical overlap is a weak stand-in for judgement: it keeps off-topic links out, but it is no
    model, and the README says so.
    """
    title, _, rest = question.partition("\n")
    wanted = _question_stems(f"{title} {rest[:MAX_DESCRIPTION_CHARS]}")
    best = max((len(_passage_coverage(wanted, p)) for p in passages), default=0)
    enough = bool(wanted) and best >= max(
        min(MIN_SHARED, len(wanted)), ADDRESSES_COVERAGE * len(wanted)
    )
    return AddressesOutput(
        addresses=enough,
        reason=f"the target shares {best} of {len(wanted)} question terms (lexical check)",
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

    def run_metered(self, task: Task[T]) -> Metered[T]:
        # No model, no tokens: an offline answer costs nothing, which is a known cost.
        return Metered(self.run(task), Usage())
