"""From a question to the passages it is answered from: tokenising, query building, BM25 retrieval.

The main rule: nothing from the question survives as FTS5 syntax. Every word becomes a double-quoted
literal (embedded ``"`` doubled) and the literals are joined with OR, so ``NOT``, ``NEAR(``, ``*``,
``-``, ``:``, ``^``, quotes, parentheses and column filters are plain words or dropped. There is no
relevance threshold to configure (DESIGN.md invariant 9): an internal floor only drops passages
matched by nothing but terms so common that FTS5 gives them no weight.
"""

from __future__ import annotations

import re
import unicodedata

from scout.errors import UsageError
from scout.store import PassageHit, Store

MAX_QUESTION_CHARS = 4_000
MIN_PASSAGES, MAX_PASSAGES = 1, 20
# Headings name what a section is about; a question term in a heading says more than one in prose.
HEADING_WEIGHT = 5.0
# FTS5 floors the idf of a term found in more than half the rows at 1e-6, so a passage matched by
# such terms alone scores about -1e-6 per occurrence: that is noise, not evidence.
NOISE_FLOOR = -1e-4
# Bounds the MATCH expression: FTS5's cost grows with every OR'd term.
MAX_QUERY_TERMS = 48
MAX_WORD_CHARS = 64

# Unicode-aware: letters, digits and marks of any script; underscores split words.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are as at be by can could did do does for from has have how i if in into is it
    its me my of on or our should so than that the their them then there these this to was we
    were what when where which who why will with would you your""".split()
)


def words(text: str) -> list[str]:
    """The words of ``text``, case-folded and NFKC-normalised, in order (repeats kept)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    return [w[:MAX_WORD_CHARS] for w in _WORD.findall(normal)]


def query_terms(question: str) -> list[str]:
    """Distinct words worth searching for: stop words go unless nothing else is left."""
    distinct = list(dict.fromkeys(words(question)))
    content = [w for w in distinct if w not in STOPWORDS]
    return (content or distinct)[:MAX_QUERY_TERMS]


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "es", "ed", "er", "ly", "s")


def stem(word: str) -> str:
    """A light suffix-stripping stem, enough to make "rotating keys" meet "rotate key"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return base + "y"
            return _drop_e(base)
    return _drop_e(word)


def _drop_e(word: str) -> str:
    # "rotate" and "rotat(ing)" must meet, so a final e goes too.
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def check_question(question: str) -> list[str]:
    """Refuse a question that is too long or has no words; return its query terms."""
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(
            f"question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}: shorten it"
        )
    terms = query_terms(question)
    if not terms:
        raise UsageError("question has no words to search for: ask in words")
    return terms


def check_passages(count: int) -> int:
    if not MIN_PASSAGES <= count <= MAX_PASSAGES:
        raise UsageError(
            f"--passages must be between {MIN_PASSAGES} and {MAX_PASSAGES} (got {count})"
        )
    return count


def literal(term: str) -> str:
    """One FTS5 string literal: double-quoted, embedded quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def build_query(question: str) -> str:
    """The FTS5 MATCH expression for a question: its terms as literals joined with OR."""
    return " OR ".join(literal(term) for term in check_question(question))


def retrieve(store: Store, question: str, limit: int) -> list[PassageHit]:
    """The top ``limit`` passages for ``question``, best first, noise dropped."""
    check_passages(limit)
    hits = store.search(build_query(question), limit, heading_weight=HEADING_WEIGHT)
    return [hit for hit in hits if hit.score < NOISE_FLOOR]
