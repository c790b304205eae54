"""The question, checked once: the first stage of retrieval.

Everything later stages read from the question itself is worked out here, once, with no store:
its search terms, the words it is asked in, the code-like spans it writes, whether it asks about
a version. A question that is too long or has no words is refused here (UsageError), and nowhere
else: the answer path, ``scout search``, the server and the evaluation all build one
:class:`Question` and hand it on.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from scout.errors import UsageError
from scout.words import content_words, query_terms, words

MAX_QUESTION_CHARS = 4_000
MIN_PASSAGES, MAX_PASSAGES = 1, 20
MAX_SEARCH = 100  # `scout search --limit`: deeper lists, for diagnosis
MAX_SPANS = 8
MAX_SPAN_CHARS = 64

# A version ("18.8", "v2", "9.x") or a word about releases makes changelogs fair game.
_VERSION = re.compile(r"\bv?\d+\.(?:\d+|x)\b|\bv\d+\b", re.IGNORECASE)
RELEASE_WORDS = frozenset(
    """changelog changelogs release releases released version versions deprecated deprecation
    removed breaking""".split()
)

# Code as the question writes it: a `backticked` span, an option (--force, -n), a dotted or
# snake_case name with letters (gl.projects.list, exclude_patterns; not 18.8.2), an operator.
_BACKTICKED = re.compile(r"`([^`\n]{1,64})`")
_CODE_TOKEN = re.compile(
    r"(?<![\w-])--?[A-Za-z][\w-]{0,62}"
    r"|[A-Za-z_][\w]{0,62}(?:[.][A-Za-z_][\w]{0,62})+(?:\(\))?"
    r"|[A-Za-z][A-Za-z0-9]{0,62}(?:_[A-Za-z0-9]{1,62})+"
    r"|(?<![=!<>:|&])(?:!=|==|>=|<=|:=|&&|\|\||=>|->)(?![=!<>:|&])"
)


@dataclass(frozen=True)
class Question:
    """A question retrieval can search for: its text and what every stage reads from it."""

    text: str
    terms: tuple[str, ...]  # distinct words worth searching for, in order
    content: tuple[str, ...]  # its content words (the gap backlog's, and the log's)
    asked: tuple[str, ...]  # every word as asked, in order (project names are read from these)
    spans: tuple[str, ...]  # code-like spans, case-folded, longest first
    versions: bool  # asks about a version or a release

    @classmethod
    def of(cls, text: str) -> Question:
        """The question ``text``, or UsageError when it is too long or has no words."""
        if len(text) > MAX_QUESTION_CHARS:
            raise UsageError(
                f"question is {len(text)} characters; the limit is {MAX_QUESTION_CHARS}: shorten it"
            )
        terms = query_terms(text)
        if not terms:
            raise UsageError("question has no words to search for: ask in words")
        asked = words(text)
        return cls(
            text=text,
            terms=tuple(terms),
            content=tuple(content_words(text)),
            asked=tuple(asked),
            spans=tuple(code_spans(text)),
            versions=about_versions(text, asked),
        )

    def needs_content(self) -> Question:
        """The question, or UsageError when it has only words such as "how" and "what" (an
        answer needs to know what it is about; a search of those words is allowed)."""
        if not self.content:
            raise UsageError(
                "question has only words such as 'how' and 'what' in it: say what it is about"
            )
        return self


def check_passages(count: int, most: int = MAX_PASSAGES, option: str = "--passages") -> int:
    if not MIN_PASSAGES <= count <= most:
        raise UsageError(f"{option} must be between {MIN_PASSAGES} and {most} (got {count})")
    return count


def about_versions(question: str, asked: Iterable[str]) -> bool:
    """Whether the question asks about a version or a release (then changelogs rank as docs)."""
    return bool(_VERSION.search(question)) or not RELEASE_WORDS.isdisjoint(asked)


def code_spans(question: str) -> list[str]:
    """The code-like spans of ``question``, case-folded, longest first (at most ``MAX_SPANS``)."""
    normal = unicodedata.normalize("NFKC", question[:MAX_QUESTION_CHARS])
    found = itertools.chain(
        (m.group(1) for m in _BACKTICKED.finditer(normal)),
        (m.group() for m in _CODE_TOKEN.finditer(normal)),
    )
    spans: dict[str, None] = {}
    for span in found:
        span = span.strip().casefold()[:MAX_SPAN_CHARS]
        if len(span) >= 2:
            spans[span] = None
            if len(spans) == MAX_SPANS * 4:
                break
    return sorted(spans, key=len, reverse=True)[:MAX_SPANS]
