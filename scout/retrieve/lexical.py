"""The lexical stage: BM25 over the full-text index, exact, for a question's own words and for
the terms a model suggested.

The main rule: nothing from the question survives as FTS5 syntax. Every word becomes a double-quoted
literal (embedded ``"`` doubled) and the literals are joined with OR, so ``NOT``, ``NEAR(``, ``*``,
``-``, ``:``, ``^``, quotes, parentheses and column filters are plain words or dropped. There is no
relevance threshold to configure (docs/design.md, invariant 9): an internal floor only drops
passages matched by nothing but terms so common that FTS5 gives them no weight.

Speed: FTS5's cost is bm25 evaluated on every row any term matches, so one common word makes a
question slow. Retrieval therefore ranks in stages (:func:`_exact_top`): the rarest terms' rows
first, then the rows of the terms that could still outrank the rows kept, and never the rows
that provably cannot. The result is exact, the full ranking's top rows, not an approximation:
on real documentation common words in headings and code do outrank rows of rare terms, and a
fast path that assumed otherwise missed the full ranking's top 8 on one question in twenty.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scout.retrieve.question import Question
from scout.store import PassageHit, Store
from scout.words import CONTRACTION, MAX_QUERY_TERMS, MAX_WORD_CHARS, STOPWORDS, words

# Headings name what a section is about; a question term in a heading says more than one in prose.
# But a heading is the section's whole path ("Page > Part > Section"), so a page title's words are
# in every section's heading: at 5 (chosen on generated pages) they drowned the sections' own
# words, and recall@8 on real documentation (realdocs-dev) was 26/32 against 28/32 at 1 to 3.
HEADING_WEIGHT = 2.0
# FTS5 floors the idf of a term found in more than half the rows at 1e-6, so a passage matched by
# such terms alone scores about -1e-6 per occurrence: that is noise, not evidence.
NOISE_FLOOR = -1e-4
# Staged ranking: the first stage's rarest terms may match this share of the passages (and at
# least MIN_RARE_ROWS, below which one full query is as cheap); see ``_exact_top``.
RARE_SHARE = 0.05
MIN_RARE_ROWS = 2_000
# Rows fetched per passage wanted, so that copies of one section can be dropped (see _distinct).
DUPLICATE_ROOM = 2
MAX_FETCH = 640  # a section copied more often than this leaves the list short
# A model's suggested terms count this share of what the question's own words count (contract:
# "ranked below the question's own words").
EXPANSION_WEIGHT = 0.5


@dataclass
class Terms:
    """A question's search terms in one store, and how many rows each matches (counted once).

    ``own`` are the question's words and the spellings of them the corpus uses
    (:func:`variants`); ``extra`` the model's suggested terms that are not among them.
    """

    store: Store
    question: Question
    budget: int | None = None  # rows the first stage may rank (None: ``rare_budget``)
    total: int = 0
    own: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    _indexed: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        store: Store,
        question: Question,
        expanded: Sequence[str] = (),
        budget: int | None = None,
    ) -> Terms:
        terms = cls(store, question, budget, store.passage_count())
        own = list(question.terms)
        terms.own = [*own, *variants(question.text, own, terms.count, terms.present)][
            :MAX_QUERY_TERMS
        ]
        extra = [t for t in expansion_terms(expanded) if t not in terms.own]
        terms.extra = extra[: MAX_QUERY_TERMS - len(terms.own)]
        for term in [*terms.own, *terms.extra]:
            terms.count(literal(term))
        return terms

    def count(self, match: str) -> int:
        """Rows matching an FTS5 literal; a term in more than half the rows has FTS5's floor
        idf, so no count needs to go further."""
        if match not in self.counts:
            self.counts[match] = self.store.count_matches(match, self.total // 2 + 1)
        return self.counts[match]

    def present(self, match: str) -> bool:
        """Whether a word is indexed at all: one row answers it, however common the word."""
        if match in self.counts:
            return self.counts[match] > 0
        if match not in self._indexed:
            self._indexed[match] = self.store.count_matches(match, 1) > 0
        return self._indexed[match]

    def live(self, terms: Sequence[str]) -> list[str]:
        """``terms`` that match something (the others add nothing to any score)."""
        return [term for term in terms if self.counts[literal(term)]]

    def ranked(
        self, terms: list[str], depth: int, within: tuple[str, ...] | None
    ) -> list[PassageHit]:
        """The exact BM25 top ``depth`` distinct passages of ``terms`` (in ``within``)."""
        total = self.total
        budget = self.budget
        if budget is None:
            budget = rare_budget(total) if total > MIN_RARE_ROWS else total
        counts = {term: self.counts[literal(term)] for term in terms}
        return _pool(self.store, terms, counts, total, budget, depth, within)


def own_words(
    terms: Terms, depth: int, scopes: Sequence[tuple[str, ...] | None]
) -> list[PassageHit]:
    """The question's own words' BM25 ranking: the exact top ``depth`` distinct passages in
    each of ``scopes`` (the asked-for projects, then those the question names), joined."""
    return _ranked(terms, terms.live(terms.own), depth, scopes)


def with_expansion(
    terms: Terms,
    own: list[PassageHit],
    depth: int,
    scopes: Sequence[tuple[str, ...] | None],
) -> list[PassageHit]:
    """The ranking with the model's terms: the own words' ranking ``own`` and the model's terms'
    own top ``depth`` (in each of ``scopes``), every passage of both scored so that the model's
    terms count ``EXPANSION_WEIGHT`` of what the question's own words count.

    Why two pools and not one query of all the terms: a weak model's terms that many passages
    use could fill one pool, where what the own words find alone keeps its place in its own; and
    each passage is scored by every term, whichever pool found it (measured on tune against the
    one pool of all the terms: 54 questions gained against 53, none lost against one with half
    the terms another question's).
    """
    own_live = terms.live(terms.own)
    live = terms.live([*terms.own, *terms.extra])
    if len(live) == len(own_live):
        return own
    extra_live = [term for term in live if term not in own_live]
    theirs = _ranked(terms, extra_live, depth, scopes)
    # BM25 is a sum over the query's phrases, so a passage's score by every term is its own
    # words' score plus the terms' score. Each pool holds one part of its passages' scores
    # already; only the other part is asked for (scoring every passage by all the terms again,
    # as first built, read the own words' rows twice: a fifth of an expanded question's time).
    mine = {hit.id: hit.score for hit in own}
    extra = {hit.id: hit.score for hit in theirs}
    hits = _joined(own, theirs)
    mine.update(_scores(terms.store, own_live, [h.id for h in hits if h.id not in mine]))
    extra.update(_scores(terms.store, extra_live, [h.id for h in hits if h.id not in extra]))
    weighed = [
        dataclasses.replace(h, score=mine.get(h.id, 0.0) + EXPANSION_WEIGHT * extra.get(h.id, 0.0))
        for h in hits
    ]
    return sorted(weighed, key=_order)


def _scores(store: Store, terms: list[str], ids: list[int]) -> dict[int, float]:
    """The BM25 scores of the rows ``ids`` by ``terms`` (those they match)."""
    if not terms or not ids:
        return {}
    return store.scores(_any(terms), ids, heading_weight=HEADING_WEIGHT)


def _ranked(
    terms: Terms, live: list[str], depth: int, scopes: Sequence[tuple[str, ...] | None]
) -> list[PassageHit]:
    hits: list[PassageHit] = []
    first: list[PassageHit] = []
    for n, within in enumerate(scopes if live else ()):
        if n and _holds(first, depth, scopes[0], within):
            continue
        found = terms.ranked(live, depth, within)
        if n == 0:
            first = found
        hits = _joined(hits, found)
    return hits


def _holds(
    first: list[PassageHit],
    depth: int,
    outer: tuple[str, ...] | None,
    within: tuple[str, ...] | None,
) -> bool:
    """Whether the ranking in ``outer`` already is the ranking in ``within``, a part of it.

    A part's ranking is the whole's with the other projects' passages left out (the scores
    are the whole index's either way), so when the whole's exact top ``depth`` all lie in the
    part, they are the part's top ``depth`` too, and ranking the part again adds nothing. Most
    questions that name a project are such (69 of 81 at 95k passages of realdocs-dev): it
    spares them a second ranking.
    """
    if within is None or len(first) < depth:
        return False
    if outer is not None and not set(within) <= set(outer):
        return False
    return all(hit.project in within for hit in first)


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
    sequence = words(CONTRACTION.sub("", question))
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
        # (A joined word the corpus lacks needs no count of the pair: that is a phrase query.)
        joined = count(literal(first + second))
        if joined and joined > count(literal(f"{first} {second}")):
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


# Starts only where a word starts (the look-behind) and never gives back a word's letters (the
# possessive runs): each word is scanned once, where an unanchored start inside a long word would
# rescan the rest of it from every letter.
_COMPOUND = re.compile(r"(?<![^\W_])[^\W_]++(?:[-_.:/][^\W_]++)+", re.UNICODE)
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


def literal(term: str) -> str:
    """One FTS5 string literal: double-quoted, embedded quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def build_query(question: str) -> str:
    """The FTS5 MATCH expression for a question: its terms as literals joined with OR."""
    return _any(list(Question.of(question).terms))


def rare_budget(passages: int) -> int:
    """How many rows the first stage may rank (see :func:`_exact_top`)."""
    return max(MIN_RARE_ROWS, int(passages * RARE_SHARE))


def _pool(
    store: Store,
    live: list[str],
    counts: dict[str, int],
    total: int,
    budget: int,
    pool: int,
    within: tuple[str, ...] | None,
) -> list[PassageHit]:
    """The exact BM25 top ``pool`` distinct passages of ``live`` terms (in ``within``)."""

    def ranked(match: str, fetch: int) -> list[PassageHit]:
        return store.search(match, fetch, heading_weight=HEADING_WEIGHT, projects=within)

    fetch = pool * DUPLICATE_ROOM
    while True:
        rows = _exact_top(ranked, live, counts, total, budget, pool, fetch)
        hits = _distinct(rows, pool)
        # Copies of one section fill the first rows (see _distinct): fetch deeper, unless the
        # rows fetched already reach the noise floor, where every row ranked after them is too
        # (a question of common words had fetched 1,024 rows of 704 to find no more).
        if len(hits) == pool or len(rows) < fetch or fetch >= MAX_FETCH:
            return hits
        if rows[-1].score >= NOISE_FLOOR:
            return hits
        fetch *= 4


def _joined(hits: list[PassageHit], more: list[PassageHit]) -> list[PassageHit]:
    """``hits`` and then those of ``more`` it does not hold."""
    seen = {hit.id for hit in hits}
    return [*hits, *(hit for hit in more if hit.id not in seen)]


def expansion_terms(expanded: Sequence[str]) -> list[str]:
    """The search terms of a model's suggested terms: their content words, and each
    suggestion of several words as a phrase as well (literals both, like the question's)."""
    out: list[str] = []
    for suggestion in expanded:
        parts = [w for w in words(suggestion) if w not in STOPWORDS]
        for term in [" ".join(parts)] if len(parts) > 1 else []:
            if term not in out:
                out.append(term)
        for part in parts:
            if part not in out:
                out.append(part)
    return out


def _exact_top(
    ranked: Callable[[str, int], list[PassageHit]],
    terms: list[str],
    counts: dict[str, int],
    total: int,
    budget: int,
    limit: int,
    fetch: int,
) -> list[PassageHit]:
    """Up to ``fetch`` rows of the full BM25 ranking of ``terms``, best first, with the exact
    scores, and the same as the full ranking's as far as its first ``limit`` distinct passages.

    FTS5 evaluates bm25() on every row any term matches (about a microsecond a row; finding the
    rows costs a twentieth of that), so a question whose common words match half of 100k
    passages costs 50 ms ranked in one query. Ranked in stages instead (MaxScore, Turtle and
    Flood 1995), most of those rows are never scored: the rarest terms' rows are ranked first
    (at most ``budget`` of them), each with its full-query score. A row not ranked yet matches
    only the other terms, so it can score at most the sum of their largest contributions
    (:func:`max_score`). The terms whose bounds together cannot reach the last passage kept
    are left out; the rows of the rest that no ranked term matched are ranked next. A row is never
    scored twice, and what is left out provably ranks below every row kept: the result is the
    full ranking's, not an approximation of it (bench/ measures both, on real documentation).
    """
    first = _rarest(terms, counts, budget)
    if len(first) == len(terms):
        return ranked(_any(terms), fetch)
    bound = {term: max_score(total, counts[term]) for term in terms}
    done: list[str] = []
    rows: list[PassageHit] = []
    stage, needed = first, 0.0
    while stage:
        # Rows with the stage's terms and no other can score no more than those terms' bounds.
        alone = sum(bound[term] for term in stage) >= needed
        found = _rows_of(ranked, terms, stage, done, fetch, alone=alone)
        rows = sorted([*rows, *found], key=_order)[:fetch]
        done += stage
        needed = -_needed(rows, limit, fetch)
        # All the terms still in play go next (one at a time, rarest first, was slower: bench/).
        stage = essential([t for t in terms if t not in done], bound, needed)
    return rows


def _rarest(terms: list[str], counts: dict[str, int], budget: int) -> list[str]:
    """The rarest of ``terms`` (at least one) whose rows together stay within ``budget``."""
    taken: list[str] = []
    rows = 0
    for term in sorted(terms, key=lambda t: counts[t]):
        if taken and rows + counts[term] > budget:
            break
        taken.append(term)
        rows += counts[term]
    return taken


def _needed(rows: list[PassageHit], limit: int, fetch: int) -> float:
    """The score a row not ranked yet would have to beat to change the result.

    The result is the first ``limit`` distinct passages, so once ``rows`` hold that many, only
    the last of them has to be beaten, not the worst row fetched. Fewer rows than asked for:
    any row may still join them (0, since BM25 scores are negative here).
    """
    kept = _distinct(rows, limit)
    if len(kept) == limit:
        return kept[-1].score
    return rows[-1].score if len(rows) == fetch else 0.0


def essential(terms: list[str], bound: dict[str, float], needed: float) -> list[str]:
    """The terms whose rows may still rank: all but the weakest ones, whose bounds together
    stay under ``needed`` (a row matched by those alone cannot reach the last passage kept)."""
    weakest = sorted(terms, key=lambda t: bound[t])
    reach = 0.0
    left_out = set()
    for term in weakest:
        if reach + bound[term] >= needed:
            break
        reach += bound[term]
        left_out.add(term)
    return [term for term in terms if term not in left_out]


def _rows_of(
    search: Callable[[str, int], list[PassageHit]],
    terms: list[str],
    stage: list[str],
    ranked: list[str],
    fetch: int,
    *,
    alone: bool,
) -> list[PassageHit]:
    """The top rows that match a ``stage`` term and no ``ranked`` one, scored over all ``terms``
    (without the rows that have no other term, unless ``alone``: they cannot rank).

    FTS5's bm25 is a sum of per-phrase contributions, and a phrase a row does not contain adds
    nothing. So the rows are split in two, each scored once and exactly: ``(others) AND
    (rows)``, the rows with one of the other terms, names every phrase once; ``(rows) NOT
    (others)``, the rows without, holds none of the others' phrases. (Scoring the stage's rows
    alone and subtracting, as the first fast path did, scored every row twice.)
    """
    others = [t for t in terms if t not in stage and t not in ranked]
    rows = f"({_any(stage)}) NOT ({_any(ranked)})" if ranked else _any(stage)
    if not others:
        return search(rows, fetch)
    with_others = search(f"({_any(others)}) AND ({rows})", fetch)
    if not alone:
        return with_others
    without = search(f"({rows}) NOT ({_any(others)})", fetch)
    return sorted([*with_others, *without], key=_order)[:fetch]


def _any(terms: list[str]) -> str:
    return " OR ".join(literal(term) for term in terms)


def _order(hit: PassageHit) -> tuple[float, int]:
    # The store's own order: score, then row (ties must break the same way in every stage).
    return hit.score, hit.id


# FTS5's bm25 (fts5_aux.c): k1 = 1.2 and b = 0.75, fixed; a phrase's idf is
# ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6; its term-frequency factor
# f * (k1 + 1) / (f + k1 * (1 - b + b * len / avglen)) stays below k1 + 1 whatever the column
# weights, frequency or length.
BM25_K1 = 1.2


def max_score(passages: int, matching: int) -> float:
    """The most one query term (or phrase) can add to any row's BM25 score, as a magnitude.

    ``matching`` may be a count that stopped early: a larger true count only lowers the idf,
    so the bound still holds.
    """
    idf = math.log((passages - matching + 0.5) / (matching + 0.5))
    return max(idf, 1e-6) * (BM25_K1 + 1.0)


def _distinct(hits: list[PassageHit], limit: int) -> list[PassageHit]:
    """The first ``limit`` hits above the noise floor, one of each copy of a section.

    Copies of one section (versioned docs, a README included in two places) rank together;
    each copy after the first would take a slot without telling the model anything new.
    """
    kept: list[PassageHit] = []
    seen: set[tuple[str, str]] = set()
    for hit in hits:
        if len(kept) >= limit:
            break
        key = (" ".join(hit.heading.split()), " ".join(hit.body.split()))
        if hit.score < NOISE_FLOOR and key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept
