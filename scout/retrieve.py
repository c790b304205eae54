"""From a question to the passages it is answered from: tokenising, query building, BM25 retrieval.

The main rule: nothing from the question survives as FTS5 syntax. Every word becomes a double-quoted
literal (embedded ``"`` doubled) and the literals are joined with OR, so ``NOT``, ``NEAR(``, ``*``,
``-``, ``:``, ``^``, quotes, parentheses and column filters are plain words or dropped. There is no
relevance threshold to configure (docs/design.md, invariant 9): an internal floor only drops
passages matched by nothing but terms so common that FTS5 gives them no weight.

Speed: FTS5's cost is bm25 evaluated on every row any term matches, so one common word makes a
question slow (bench/ measured 90% of latency going there). Retrieval therefore ranks in two
stages when the corpus is large: the rarest terms (together matching at most a small share of
the corpus) pick the rows to rank, and those rows get their exact full-query score. The result is
exact, not approximate: a row matched by common terms alone can score at most the sum of those
terms' largest possible BM25 contributions, and the stage is widened (or the full ranking run)
unless that bound cannot reach the rows kept. On real documentation, common words in headings
and code do outrank rows of rare terms; without that check the top 8 differed from the full
ranking's on one question in twenty.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable

from scout.errors import UsageError
from scout.store import PassageHit, Store

MAX_QUESTION_CHARS = 4_000
MIN_PASSAGES, MAX_PASSAGES = 1, 20
# Headings name what a section is about; a question term in a heading says more than one in prose.
# But a heading is the section's whole path ("Page > Part > Section"), so a page title's words are
# in every section's heading: at 5 (chosen on generated pages) they drowned the sections' own
# words, and recall@8 on real documentation (realdocs-dev) was 26/32 against 28/32 at 1 to 3.
HEADING_WEIGHT = 2.0
# FTS5 floors the idf of a term found in more than half the rows at 1e-6, so a passage matched by
# such terms alone scores about -1e-6 per occurrence: that is noise, not evidence.
NOISE_FLOOR = -1e-4
# Two-stage ranking: the rare terms may match this share of the passages (and at least
# MIN_RARE_ROWS, below which one full query is as cheap); see ``plan``.
RARE_SHARE = 0.05
MIN_RARE_ROWS = 2_000
# Rows fetched per passage wanted, so that copies of one section can be dropped (see _ranked).
DUPLICATE_ROOM = 2
MAX_FETCH = 640  # a section copied more often than this leaves the list short
# Bounds the MATCH expression: FTS5's cost grows with every OR'd term.
MAX_QUERY_TERMS = 48
MAX_WORD_CHARS = 64

# Unicode-aware: letters, digits and marks of any script; underscores split words.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """a an and are aren as at be by can could did didn do does doesn don for from has have how i
    if in into is isn it its me my of on or our should so than that the their them then there
    these this to was we were what when where which who why will with would you your""".split()
)


def words(text: str) -> list[str]:
    """The words of ``text``, case-folded and NFKC-normalised, in order (repeats kept)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    return [w[:MAX_WORD_CHARS] for w in _WORD.findall(normal)]


# The tail of "component's", "don't", "we'll": FTS5 splits it off as a word of its own ("s",
# "t"), which every passage with a possessive matches.
_CONTRACTION = re.compile(r"['\u2019](?:s|t|re|ve|ll|d|m)\b", re.IGNORECASE)


def query_terms(question: str) -> list[str]:
    """Distinct words worth searching for: stop words go unless nothing else is left."""
    distinct = list(dict.fromkeys(words(_CONTRACTION.sub("", question))))
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


# A second word that makes a verb into the noun written as one word ("log in" -> "login",
# "set up" -> "setup", "back up" -> "backup"): the only stop words a joined pair may end with.
PARTICLES = frozenset({"in", "on", "up", "out", "off", "down", "over"})
MIN_SPLIT_CHARS = 5  # shorter words are not worth splitting ("setup" is the shortest kind)
MIN_PART_CHARS = 2  # "up" in "set up"
MAX_SPLIT_WORDS = 12  # each split probes a few terms: bound the probes per question
MAX_VARIANT_PROBES = 16  # joined pairs, and punctuated compounds, tried per question


def joins(question: str, terms: list[str]) -> list[tuple[str, str]]:
    """Adjacent question words that may be one word: ("back", "up"), ("log", "in").

    The first word must be a content word and the second a content word or a particle, so "is
    it" or "my title" are never candidates. Whether the corpus writes them as one word is for
    :func:`variants` to ask.
    """
    seen = set(terms)
    out = []
    sequence = words(_CONTRACTION.sub("", question))
    for first, second in zip(sequence, sequence[1:], strict=False):
        if not (first.isalpha() and second.isalpha()) or first in STOPWORDS:
            continue
        if second in STOPWORDS and second not in PARTICLES:
            continue
        joined = first + second
        if len(joined) <= MAX_WORD_CHARS and joined not in seen:
            seen.add(joined)
            out.append((first, second))
            if len(out) == MAX_VARIANT_PROBES:
                break
    return out


def split(
    word: str, count: Callable[[str], int], present: Callable[[str], bool] | None = None
) -> str | None:
    """``word`` as two words ("logfile" -> "log file") when the corpus writes it that way.

    The corpus's own usage decides, through ``count`` (rows matching an FTS5 literal): of the
    splits whose parts are both indexed words, the phrase the corpus uses most wins, and only
    when it uses that phrase more often than the word itself. So "another" never becomes
    "an other", nor "database" "data base", in a corpus that writes them as one word.
    """
    if len(word) < MIN_SPLIT_CHARS or not word.isalpha():
        return None
    known = present or (lambda match: count(match) > 0)
    best, best_count = None, count(literal(word))
    for cut in range(MIN_PART_CHARS, len(word) - MIN_PART_CHARS + 1):
        left, right = word[:cut], word[cut:]
        if not known(literal(left)) or not known(literal(right)):
            continue
        phrase = f"{left} {right}"
        used = count(literal(phrase))
        if used > best_count:
            best, best_count = phrase, used
    return best


def variants(
    question: str,
    terms: list[str],
    count: Callable[[str], int],
    present: Callable[[str], bool] | None = None,
) -> list[str]:
    """Spellings of the question's words the corpus uses: joined pairs, split words, and words
    written with punctuation between them as phrases.

    Every variant is still a literal (a word, or a phrase), never query syntax; ``count`` says
    how many rows an FTS5 literal matches, ``present`` (cheaper, optional) whether any does.
    """
    out = []
    for first, second in joins(question, terms):
        # As for splits, the corpus's usage decides: "back up" becomes "backup" where the
        # corpus writes "backup" more often than "back up", and "custom event" stays as it is.
        if count(literal(first + second)) > count(literal(f"{first} {second}")):
            out.append(first + second)
    for term in terms[:MAX_SPLIT_WORDS]:
        phrase = split(term, count, present)
        if phrase is not None:
            out.append(phrase)
    for phrase in compounds(question):
        # "python-gitlab", "self-hosted", "gl.projects.list": the words belong together, and a
        # passage that has them together is about that thing, not about its parts.
        if phrase not in out and count(literal(phrase)):
            out.append(phrase)
    return out


_COMPOUND = re.compile(r"[^\W_]+(?:[-_.:/][^\W_]+)+", re.UNICODE)
MAX_COMPOUND_WORDS = 4


def compounds(question: str) -> list[str]:
    """Words the question writes joined by punctuation, as phrases: "python-gitlab" -> "python
    gitlab". Versions ("18.8.2", "v1.2") are left to the words themselves."""
    out = []
    normal = unicodedata.normalize("NFKC", question).casefold()
    for match in _COMPOUND.finditer(normal):
        parts = words(match.group())
        lettered = all(any(ch.isalpha() for ch in part) for part in parts)
        if 2 <= len(parts) <= MAX_COMPOUND_WORDS and lettered:
            phrase = " ".join(parts)
            if phrase not in out:
                out.append(phrase)
                if len(out) == MAX_VARIANT_PROBES:
                    break
    return out


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

    The question's terms, and the spellings of them the corpus uses (:func:`variants`), are
    ranked by BM25. ``budget`` overrides :func:`rare_budget` (for tests and benchmarks of the
    two stages).
    """
    check_passages(limit)
    terms = check_question(question)
    two_stage = budget is not None
    if budget is None:
        total = store.passage_count()
        two_stage = total > MIN_RARE_ROWS
        budget = rare_budget(total)
    counted: dict[str, int] = {}

    def count(match: str) -> int:
        if match not in counted:
            counted[match] = store.count_matches(match, budget + 1)
        return counted[match]

    def present(match: str) -> bool:
        # Whether a word is indexed at all: one row answers it, however common the word.
        if match in counted:
            return counted[match] > 0
        return store.count_matches(match, 1) > 0

    terms = [*terms, *variants(question, terms, count, present)][:MAX_QUERY_TERMS]
    if not two_stage:
        return _ranked(store, terms, [], limit)
    counts = [count(literal(term)) for term in terms]
    scored, rare = plan(terms, counts, budget)
    if not scored:
        return []
    if not rare:
        return _ranked(store, scored, [], limit)
    total = store.passage_count()
    capped = dict(zip(terms, counts, strict=True))
    common = [t for t in scored if t not in rare]
    # Counts capped at the budget overstate a common term's bound: a question they send to the
    # full ranking might have been proven by a first stage, at no cost to exactness.
    if sum(max_score(total, capped[t]) for t in common) > sum(
        max_score(total, capped[t]) for t in rare
    ):
        # The common terms could outscore the rare ones: the first stage would rarely prove
        # its rows (measured on realdocs-dev at 100k: two thirds of chatty questions failed),
        # and a failed proof costs more than the full ranking it then runs anyway.
        return _ranked(store, scored, [], limit)
    # The proof needs the common terms' real counts (theirs were capped at the budget).
    hits_of = {
        term: n if n <= budget else store.count_matches(literal(term), total + 1)
        for term, n in capped.items()
    }
    bound = {term: max_score(total, hits_of[term]) for term in scored}
    common.sort(key=lambda t: -bound[t])
    hits, worst = _fetch(store, scored, rare, limit)
    # A row matched by common terms alone scores at best -sum(their bounds). While that cannot
    # reach the worst row kept, the top rows are exactly the full ranking's. Otherwise the
    # common terms with the highest bounds join the rare ones until it cannot: the worst row
    # kept only gets better as rows are added, so one more stage is certain to be exact.
    unsure = sum(bound[t] for t in common)
    if worst is not None and -unsure > worst:
        return hits
    widened = list(rare)
    for term in common:
        if worst is not None and -unsure > worst:
            break
        widened.append(term)
        unsure -= bound[term]
    # A widened stage runs two queries over its rows, the full ranking one over all of them.
    if 2 * sum(hits_of[t] for t in widened) >= sum(hits_of[t] for t in scored):
        return _ranked(store, scored, [], limit)
    hits, worst = _fetch(store, scored, widened, limit)
    if worst is None or -unsure <= worst:
        return _ranked(store, scored, [], limit)
    return hits


# FTS5's bm25 (fts5_aux.c): k1 = 1.2 and b = 0.75, fixed; a phrase's idf is
# ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6; its term-frequency factor
# f * (k1 + 1) / (f + k1 * (1 - b + b * len / avglen)) stays below k1 + 1 whatever the column
# weights, frequency or length.
BM25_K1 = 1.2


def max_score(passages: int, matching: int) -> float:
    """The most one query term (or phrase) can add to any row's BM25 score, as a magnitude."""
    idf = math.log((passages - matching + 0.5) / (matching + 0.5))
    return max(idf, 1e-6) * (BM25_K1 + 1.0)


def _ranked(store: Store, terms: list[str], rare: list[str], limit: int) -> list[PassageHit]:
    return _fetch(store, terms, rare, limit)[0]


def _fetch(
    store: Store, terms: list[str], rare: list[str], limit: int
) -> tuple[list[PassageHit], float | None]:
    """Distinct top passages among the rows of ``rare`` (all rows if none), and the score of the
    worst row fetched: ``None`` when the rows ran out before the fetch was full, since rows of
    the other terms could then fill the gap. Fetches deeper while copies fill the first rows."""
    match = " OR ".join(literal(term) for term in terms)
    within = " OR ".join(literal(term) for term in rare) if rare else None
    fetch = limit * DUPLICATE_ROOM
    while True:
        rows = store.search(match, fetch, heading_weight=HEADING_WEIGHT, within=within)
        hits = _distinct(rows, limit)
        full = len(rows) == fetch
        if len(hits) == limit or not full or fetch >= MAX_FETCH:
            return hits, rows[-1].score if full else None
        fetch *= 4


def _distinct(hits: list[PassageHit], limit: int) -> list[PassageHit]:
    """The first ``limit`` hits above the noise floor, one of each copy of a section.

    Copies of one section (versioned docs, a README included in two places) rank together;
    each copy after the first would take a slot without telling the model anything new.
    """
    kept: list[PassageHit] = []
    seen: set[tuple[str, str]] = set()
    for hit in hits:
        key = (" ".join(hit.heading.split()), " ".join(hit.body.split()))
        if hit.score < NOISE_FLOOR and key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept[:limit]
