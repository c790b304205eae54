"""The offline provider: no model, a lexical stand-in so the demo and tests run anywhere.

It is not a model and does not understand anything. For an answer it reads like an extract: from the
one passage that covers most of the question's content words (in its heading or its prose), the
sentences sharing the most of them, markup taken out, cited; it declines when no passage covers
enough of them. For "addresses" it says yes when the passage covers enough of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import cast

from scout.errors import ProviderError
from scout.normalise import disarm_markers
from scout.providers.base import OFFLINE, Metered, PromptPassage, T, Task, Usage
from scout.providers.schema import AddressesOutput, AnswerOutput, ExpansionOutput
from scout.words import query_terms, stem, words

# Share of the question's content words one passage must contain, in its heading or its text,
# to answer. 0.6 let a page sharing 3 of 5 words answer a question it has nothing to say about;
# at 0.75 a five-word question needs four, a four-word one three, a two-word one both.
MIN_COVERAGE = 0.75
# "Addresses": one target passage must share this share of the question's terms, and at least
# MIN_SHARED of them. Issue questions are long and chatty, so the share is low; calibrated on the
# demo estate, where on-topic targets share 16% or more and an off-topic page 8%.
ADDRESSES_COVERAGE = 0.15
MIN_SHARED = 3
MAX_DESCRIPTION_CHARS = 300  # the title plus this much of the description is the question
MAX_SENTENCES = 3
MAX_SENTENCE_CHARS = 400
# Words a question uses to ask rather than to name its topic (and "not", which no passage
# covers or fails to cover): they count for neither side.
ASKING = frozenset(
    """able any anyone anything also get got just know like make need not possible please
    really still thing things use using want way ways work works yet""".split()
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.|#)\s)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _cells(row: re.Match[str]) -> str:
    return "; ".join(cell.strip() for cell in row.group(1).split("|") if cell.strip())


def _target_text(match: re.Match[str]) -> str:
    return match.group(1).rstrip()


# Markup that is not text, in the order it is taken out: generator markup and comments first.
# Linear by construction: every repeated class stops at the character that could end it (the
# next bracket, backtick or brace), so a match attempt scans at most to the next such character,
# and no lazy group sits before a greedy tail (a title's spaces are stripped after matching).
_ROLE_NAME = r":(?:[\w+-]+:){1,3}"
_MARKUP: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL), ""),
    (re.compile(r"\{\{[<%][^{}]*?[%>]\}\}"), ""),  # Hugo shortcodes
    (re.compile(r"\{:?[ \t]*#[\w-][^{}\n]*\}"), ""),  # heading attributes {#id}
    (re.compile(r"!\[([^\[\]]*)\]\([^()]*\)"), r"\1"),  # images: their alt text
    (re.compile(r"\[([^\[\]]+)\]\([^()]*\)"), r"\1"),  # links: their text
    (re.compile(r"\[([^\[\]]+)\]\[[^\[\]]*\]"), r"\1"),  # reference links
    (re.compile(_ROLE_NAME + r"`([^`<]*)<[^`>]*>`"), _target_text),  # reST roles with a target
    (re.compile(_ROLE_NAME + r"`~?([^`]*)`"), r"\1"),  # reST roles
    (re.compile(r"`([^`<]+)<[^`>]+>`_{1,2}"), _target_text),  # reST links
    (re.compile(r"`([^`]+)`_{1,2}"), r"\1"),  # reST named references
    (re.compile(r"^[ \t]*\.\. [\w-]+(?::[\w-]+)*::.*$", re.MULTILINE), ""),  # reST directives
    (re.compile(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]*\w+.*$", re.MULTILINE), ""),  # MkDocs admonitions
    (re.compile(r"^[ \t]*>[ \t]*\[![A-Za-z]+\][ \t]*$", re.MULTILINE), ""),  # GitHub/GLFM alerts
    (re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>"), ""),  # HTML tags
    (re.compile(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__"), lambda m: m.group(1) or m.group(2)),  # bold
    (re.compile(r"(?<![\w*])\*(?!\s)([^*]+?)\*(?!\w)"), r"\1"),  # emphasis
    (re.compile(r"``([^`]+)``"), r"`\1`"),  # reST literals, as Markdown code: a command stays one
    (re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-{3,}.*$", re.MULTILINE), ""),  # table rules
    (re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE), ""),  # quote markers
    (re.compile(r"^[ \t]*\|(.*)$", re.MULTILINE), _cells),  # table rows: cells with ";"
]
_SCRIPT_SAMPLE = 400  # characters of a text looked at to tell its script


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def _question_stems(question: str) -> dict[str, str]:
    """Each content term's stem, mapped to the term as asked (for reasons a person can read)."""
    stems: dict[str, str] = {}
    terms = query_terms(question)
    for term in [t for t in terms if t not in ASKING] or terms:
        stems.setdefault(stem(term), term)
    return stems


def plain(text: str) -> str:
    """A passage's prose: code blocks left out, markup taken out, its words kept.

    Inline code keeps its backticks: in an extract they mark a command as one.
    """
    prose, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not line.startswith(("    ", "\t")):
            prose.append(line)
    out = "\n".join(prose)
    for pattern, replacement in _MARKUP:
        out = pattern.sub(replacement, out)
    return out


def sentences(text: str) -> list[str]:
    """Sentences (and list items) of a passage's prose, whitespace collapsed, markers trimmed."""
    out = []
    for piece in _SENTENCE_END.split(plain(text)):
        # A marker copied from the passage would cite whatever it names: never copied.
        line = disarm_markers(" ".join(piece.split())).lstrip("#*->+|: ").strip()
        if len(line) >= 3 and any(ch.isalpha() for ch in line):
            out.append(line[:MAX_SENTENCE_CHARS])
    return out


def script(text: str) -> str:
    """The writing system most of a text's letters are in ("LATIN", "CJK", "CYRILLIC", ...)."""
    counts: dict[str, int] = {}
    for ch in text[:_SCRIPT_SAMPLE]:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            key = "CJK" if name.startswith(("CJK", "HIRAGANA", "KATAKANA")) else name.split(" ")[0]
            counts[key] = counts.get(key, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else ""


def _passage_coverage(wanted: dict[str, str], passage: PromptPassage) -> set[str]:
    # Code counts here (it is what the passage says), though only prose is quoted.
    return set(wanted) & (_stems(passage.heading) | _stems(passage.text))


def compose_answer(question: str, passages: tuple[PromptPassage, ...]) -> AnswerOutput:
    """Sentences of the passage that covers most of the question, or a decline.

    Coverage is judged per passage, not across all of them: eight passages that each mention one
    question word together "cover" a question none of them answers, which is exactly the
    confident-but-wrong answer Scout must never give. Among passages covering enough, one in the
    question's own script wins over a translation; then the most covered, the most covered by
    its heading, the best ranked.
    """
    wanted = _question_stems(question)
    if not wanted or not passages:
        return AnswerOutput(answer="", cited=[], declined=True, reason="nothing to go on")
    needed = MIN_COVERAGE * len(wanted)
    asked_in = script(question)
    coverage = {p.n: _passage_coverage(wanted, p) for p in passages}

    def preference(p: PromptPassage) -> tuple[bool, bool, int, int, int]:
        covered = coverage[p.n]
        in_heading = len(covered & _stems(p.heading))
        same = script(f"{p.heading} {plain(p.text)}") == asked_in
        return (len(covered) >= needed, same, len(covered), in_heading, -p.n)

    best = max(passages, key=preference)
    covered = coverage[best.n]
    if len(covered) < needed:
        missing = [term for s, term in wanted.items() if s not in covered]
        return AnswerOutput(
            answer="",
            cited=[],
            declined=True,
            reason=f"no passage covers: {', '.join(missing[:8])}"[:200],
        )
    heading = _stems(best.heading) & set(wanted)
    scored = []
    for order, sentence in enumerate(sentences(best.text)):
        own = set(wanted) & _stems(sentence)
        if own:
            scored.append((-len(own | heading), order, sentence))
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

    name = OFFLINE

    def __init__(self, *, model: str = "", timeout: float | None = None) -> None:
        self.model = model

    def run(self, task: Task[T]) -> T:
        result: AnswerOutput | AddressesOutput | ExpansionOutput
        if task.kind == "answer":
            result = compose_answer(task.question, task.passages)
        elif task.kind == "addresses":
            result = judge_addresses(task.question, task.passages)
        elif task.kind == "expand":
            # Not a model: it knows no words the question does not already have.
            result = ExpansionOutput(terms=[])
        else:
            raise ProviderError(f"offline provider cannot do task kind {task.kind!r}")
        if not isinstance(result, task.output):
            raise ProviderError(f"offline provider cannot produce {task.output.__name__}")
        return cast(T, result)

    def run_metered(self, task: Task[T]) -> Metered[T]:
        # No model, no tokens: an offline answer costs nothing, which is a known cost.
        return Metered(self.run(task), Usage())
