"""The words of a question or a passage, as retrieval, the gap backlog and the offline provider
read them: case-folded, NFKC-normalised, stop words and contraction tails set apart, and one
light stemmer.

Here, among the foundations, because three floors read text the same way: retrieval (the
question's search terms), the offline provider (what an answer is built from) and the gap
backlog and expansion cache (which questions are the same question).
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Bounds the MATCH expression: FTS5's cost grows with every OR'd term.
MAX_QUERY_TERMS = 48
MAX_WORD_CHARS = 64

# Unicode-aware: letters, digits and marks of any script; underscores split words.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are aren as at be by can could did didn do does doesn don for from has have how i
    if in into is isn it its me my of on or our should so than that the their them then there
    these they this to was we were what when where which who why will with would you your""".split()
)


def words(text: str) -> list[str]:
    """The words of ``text``, case-folded and NFKC-normalised, in order (repeats kept)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    return [w[:MAX_WORD_CHARS] for w in _WORD.findall(normal)]


# The tail of "component's", "don't", "we'll": FTS5 splits it off as a word of its own ("s",
# "t"), which every passage with a possessive matches.
CONTRACTION = re.compile(r"['\u2019](?:s|t|re|ve|ll|d|m)\b", re.IGNORECASE)


def content_words(question: str) -> list[str]:
    """The question's distinct words that say what it is about, in order: no stop words, no
    contraction tails ("what's" is "what", a stop word). The gap backlog groups by these."""
    return [w for w in _distinct_words(question) if w not in STOPWORDS]


def query_terms(question: str) -> list[str]:
    """Distinct words worth searching for: stop words go unless nothing else is left."""
    return (content_words(question) or _distinct_words(question))[:MAX_QUERY_TERMS]


def _distinct_words(question: str) -> list[str]:
    return list(dict.fromkeys(words(CONTRACTION.sub("", question))))


def question_key(question: str) -> str:
    """Which question this is, whatever its wording's case, word order, punctuation and word
    endings: its distinct content-word stems, sorted. The gap backlog groups declines by it and
    the expansion cache keys replies by it."""
    return " ".join(sorted({stem(w) for w in content_words(question)}))


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "es", "ed", "er", "ly", "s")


# The offline provider stems every word of every passage it reads; most words repeat.
@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light suffix-stripping stem, enough to make "rotating keys" meet "rotate key".

    Why a second stemmer beside FTS5's porter (which BM25 matches on): this one keys what is
    kept, gap groups and their stored issue links (``gap_issues.gap`` is ``gaps.normalise``), and
    what the offline provider's answers are built from; moving them to porter re-keys every
    stored gap, which wants a migration of its own. Measured with ``bench/stemmers.py`` (CPU,
    this machine under load): porter, reached through an FTS5 table, costs 3x this per word
    (4.2 against 1.4 us) and groups more word pairs correctly on the test realdocs (389 pairs
    against 331, 286 in common), so it is the one to move to with that migration.
    """
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
