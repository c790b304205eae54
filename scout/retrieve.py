"""From a question to the passages it is answered from: tokenising, query building, BM25 retrieval.

The main rule: nothing from the question survives as FTS5 syntax. Every word becomes a double-quoted
literal (embedded ``"`` doubled) and the literals are joined with OR, so ``NOT``, ``NEAR(``, ``*``,
``-``, ``:``, ``^``, quotes, parentheses and column filters are plain words or dropped. There is no
relevance threshold to configure (docs/design.md, invariant 9): an internal floor only drops
passages matched by nothing but terms so common that FTS5 gives them no weight.

Speed: FTS5's cost is bm25 evaluated on every row any term matches, so one common word makes a
question slow (bench/ measured 90% of latency going there). Retrieval therefore ranks in two
stages when the corpus is large: the rarest terms (together matching at most a small share of
the corpus) pick the rows to rank, and those rows get their exact full-query score. Only rows
matched by common terms alone are left out; they are the ones BM25 ranks last.
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
# Two-stage ranking: the rare terms may match this share of the passages (and at least
# MIN_RARE_ROWS, below which one full query is as cheap); see ``plan``.
RARE_SHARE = 0.05
MIN_RARE_ROWS = 2_000
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


def rare_budget(passages: int) -> int:
    """How many rows the rare terms of a question may match together."""
    return max(MIN_RARE_ROWS, int(passages * RARE_SHARE))


def plan(terms: list[str], counts: list[int], budget: int) -> tuple[list[str], list[str]]:
    """Split terms into those to score and the rare ones whose rows are ranked.

    ``counts`` are the terms' document frequencies (a count above ``budget`` may be capped).
    Terms that match nothing go: they add nothing to any score. The rare terms are the rarest,
    taken while their counts together stay within ``budget``. An empty rare list means "rank
    every matching row": when every term is rare (nothing to save) or none is (no safe filter).
    """
    live = [(count, n, term) for n, (term, count) in enumerate(zip(terms, counts, strict=True))]
    live = [item for item in live if item[0] > 0]
    rare: list[tuple[int, int, str]] = []
    total = 0
    for item in sorted(live):
        if total + item[0] > budget:
            break
        rare.append(item)
        total += item[0]
    scored = [term for _, _, term in sorted(live, key=lambda item: item[1])]
    if len(rare) == len(live):
        return scored, []
    return scored, [term for _, _, term in sorted(rare, key=lambda item: item[1])]


def retrieve(
    store: Store, question: str, limit: int, *, budget: int | None = None
) -> list[PassageHit]:
    """The top ``limit`` passages for ``question``, best first, noise dropped.

    ``budget`` overrides :func:`rare_budget` (for tests and benchmarks of the two stages).
    """
    check_passages(limit)
    terms = check_question(question)
    if budget is None:
        total = store.passage_count()
        if total <= MIN_RARE_ROWS:
            return _ranked(store, terms, [], limit)
        budget = rare_budget(total)
    counts = [store.count_matches(literal(term), budget + 1) for term in terms]
    scored, rare = plan(terms, counts, budget)
    if not scored:
        return []
    hits = _ranked(store, scored, rare, limit)
    if rare and len(hits) < limit:
        # The rare terms' rows ran out before ``limit``: rank every row instead.
        hits = _ranked(store, scored, [], limit)
    return hits


def _ranked(store: Store, terms: list[str], rare: list[str], limit: int) -> list[PassageHit]:
    match = " OR ".join(literal(term) for term in terms)
    within = " OR ".join(literal(term) for term in rare) if rare else None
    hits = store.search(match, limit, heading_weight=HEADING_WEIGHT, within=within)
    return [hit for hit in hits if hit.score < NOISE_FLOOR]
