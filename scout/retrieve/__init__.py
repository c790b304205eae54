"""Retrieval: from a question to the passages it is answered from, as one pipeline of stages.

    question  (question.py: checked once; its terms, code spans, versions)
      -> candidate lists, each computed once:
           own words        (lexical.py: exact BM25 of the question's words)
           a model's terms  (expansion.py: asked for once, cached; lexical.py ranks them below
                             the question's own words)
           meaning          (dense.py: exact nearest passages by a sentence-embedding model)
      -> fusion             (fuse.py: one ranking of the lists)
      -> re-ranking         (rerank.py: changelogs, named projects, code spans, one file's share)
      -> the own words' first places kept (:func:`keep_own`)
      -> Retrieved          (the passages, with their rank in each list, and what each stage did)

A stage that needs a model (expansion, embeddings) never turns a question into an error by
itself: when its model fails or is slow, retrieval goes on with the other lists and
``Retrieved`` says why (``expansion_error``, ``dense_error``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scout.errors import EmbeddingError, UsageError
from scout.providers.base import Usage
from scout.retrieve import fuse, lexical, rerank
from scout.retrieve.expansion import Expand, Expansion
from scout.retrieve.lexical import literal
from scout.retrieve.question import MAX_SEARCH, Question, check_passages
from scout.safe_text import ONCE
from scout.store import PassageHit, Store

if TYPE_CHECKING:
    from scout.embeddings import Embeddings

log = logging.getLogger("scout.retrieve")
MAX_GLOB_CHARS = 512
# The passages nearest by meaning that join the candidates (the lexical list is the exact BM25
# top ``rerank.POOL``, or as many as asked for: deeper, on tune, it only added noise). Every
# lexical candidate also gets its rank by meaning among all the passages, however far down, so
# fusion weighs both lists for it (on tune: 0.787 -> 0.796 recall@8, 4 -> 1 questions lost).
DENSE_DEPTH = 20
# The question's own words' first places that no other list may push out of the result: a
# model's terms or a vector may add passages, never lose what the question's words found first.
KEEP_OWN = 2


@dataclass(frozen=True)
class Retrieved:
    """The passages retrieval found for a question, best first, and what each stage did."""

    hits: list[PassageHit]
    question: Question
    expansion: Expansion | None = None  # None: expansion was not asked for
    dense_error: str | None = None  # why the dense list is missing ("unavailable")

    @property
    def expanded(self) -> list[str] | None:
        """The model's terms retrieval searched with: none when none were asked for (or the
        model suggested none), None when asking failed (``expansion_error`` says why)."""
        if self.expansion is None:
            return []
        return None if self.expansion.terms is None else list(self.expansion.terms)

    @property
    def expansion_error(self) -> str | None:
        return None if self.expansion is None else self.expansion.error

    @property
    def usage(self) -> Usage:
        return Usage() if self.expansion is None else self.expansion.usage


@dataclass(frozen=True)
class Candidates:
    """The candidate lists for one question, each computed once, best first: the question's own
    words (``own``), the lexical list retrieval fuses (``words``: ``own``, or the ranking with a
    model's terms), and the dense list (``near``); with what the re-ranking reads."""

    question: Question
    own: list[PassageHit]
    words: list[PassageHit]
    near: list[PassageHit]
    named: set[str]
    expansion: Expansion | None = None
    dense_error: str | None = None


def retrieve(
    store: Store,
    question: Question | str,
    limit: int,
    *,
    projects: Sequence[str] | None = None,
    expand: Expand | None = None,
    embeddings: Embeddings | None = None,
    deadline: float | None = None,
    budget: int | None = None,
) -> Retrieved:
    """The top ``limit`` passages for ``question``, best first.

    ``projects`` (globs on full paths) limits retrieval to the projects they match; ``expand``
    is the expansion stage (``expansion.Expander``, or ``expansion.replayed`` terms);
    ``embeddings`` the configured embedding model (None: no dense list); ``deadline`` the
    ``time.monotonic()`` instant the model calls must end by. ``budget`` overrides the lexical
    stage's first-stage budget (``10**9`` ranks every matching row in one query: the reference
    its stages are measured against). UsageError for a question that is too long or has no
    words, a ``limit`` out of range, or a ``projects`` glob that matches nothing.
    """
    found = candidates(
        store,
        question,
        limit,
        projects=projects,
        expand=expand,
        embeddings=embeddings,
        deadline=deadline,
        budget=budget,
    )
    return Retrieved(ranking(found, limit), found.question, found.expansion, found.dense_error)


def candidates(
    store: Store,
    question: Question | str,
    limit: int,
    *,
    projects: Sequence[str] | None = None,
    expand: Expand | None = None,
    embeddings: Embeddings | None = None,
    deadline: float | None = None,
    budget: int | None = None,
    depth: int | None = None,
) -> Candidates:
    """The candidate lists of :func:`retrieve` (``depth``: how deep each list goes)."""
    asked = question if isinstance(question, Question) else Question.of(question)
    check_passages(limit, MAX_SEARCH, "--limit")
    within = scope(store, projects)
    expansion = expand(asked.text, deadline) if expand is not None else None
    terms = lexical.Terms.of(store, asked, (expansion.terms or ()) if expansion else (), budget)
    named = rerank.named_projects(
        list(asked.asked),
        within if within is not None else store.project_names(),
        lambda word, project: _share(store, literal(word), project, terms.count(literal(word))),
    )
    scopes: list[tuple[str, ...] | None] = [within]
    if named and (within is None or not named.issuperset(within)):
        scopes.append(tuple(sorted(named)))
    if depth is None:
        depth = max(limit, rerank.POOL)
    own = lexical.own_words(terms, depth, scopes)
    words = lexical.with_expansion(terms, own, depth, scopes) if terms.extra else own
    also = [hit.id for hit in words]
    near, dense_error = _dense(store, embeddings, asked, within, deadline, also)
    if expansion is not None and expansion.error is not None:
        _say_once(
            ("expansion", expansion.error),
            f"scout: no search terms from the model ({expansion.error}: "
            f"{expansion.detail or 'no detail'}); searching with the question's own words",
        )
    return Candidates(asked, own, words, near, named, expansion, dense_error)


def ranking(found: Candidates, limit: int) -> list[PassageHit]:
    """The candidate lists fused, re-ranked and cut to ``limit``, the own words' first places
    kept (:func:`keep_own`)."""

    def ordered(hits: list[PassageHit]) -> list[PassageHit]:
        return rerank.rerank(
            hits,
            limit,
            named=found.named,
            versions=found.question.versions,
            spans=list(found.question.spans),
        )

    expanded = [h.id for h in found.words] != [h.id for h in found.own]
    hits = ordered(fuse.fuse(found.words, found.near, expanded=expanded))
    if found.near or expanded:
        hits = keep_own(hits, ordered(fuse.ranked(found.own, dense=False))[:KEEP_OWN], limit)
    return hits


def keep_own(hits: list[PassageHit], own: list[PassageHit], limit: int) -> list[PassageHit]:
    """``hits`` (at most ``limit``) with every passage of ``own`` among them: one that other
    lists pushed out takes the place of the last passage that is not one of ``own``."""
    kept = list(hits[:limit])
    held = {hit.id for hit in kept}
    mine = {hit.id for hit in own}
    for hit in own:
        if hit.id in held:
            continue
        for place in range(len(kept) - 1, -1, -1):
            if kept[place].id not in mine:
                del kept[place]
                break
        if len(kept) < limit:
            kept.append(hit)
            held.add(hit.id)
    return kept


def _dense(
    store: Store,
    embeddings: Embeddings | None,
    question: Question,
    within: tuple[str, ...] | None,
    deadline: float | None,
    also: Sequence[int] = (),
) -> tuple[list[PassageHit], str | None]:
    """The dense list, or none and why (the model failed: retrieval goes on by words)."""
    if embeddings is None:
        return [], None
    from scout.retrieve import dense

    try:
        nearest = dense.nearest(
            store, embeddings, question.text, DENSE_DEPTH, within, deadline, also
        )
    except EmbeddingError as exc:
        _say_once(
            ("dense", "unavailable"),
            f"scout: no vector for the question ({exc}); searching by words alone",
        )
        return [], "unavailable"
    return dense.hits(store, nearest), None


def _say_once(what: tuple[str, str], line: str) -> None:
    """A model stage's failure, on stderr once a command (once a process for the server:
    ``scout.safe_text.ONCE``): a server that keeps failing would otherwise write a line per
    question (``/metrics`` counts every one)."""
    log.warning("%s", line, extra={ONCE: what})


def scope(store: Store, projects: Sequence[str] | None) -> tuple[str, ...] | None:
    """The indexed projects ``projects`` (globs) match; None for no limit. A glob that matches
    nothing is a usage error: a typo must not look like "nothing matched"."""
    if not projects:
        return None
    for glob in projects:
        if not glob.strip() or len(glob) > MAX_GLOB_CHARS:
            raise UsageError(
                f"--project must be a glob on project paths of 1 to {MAX_GLOB_CHARS} characters"
            )
    within = store.project_names(projects)
    missing = [glob for glob in projects if not store.project_names([glob])]
    if missing:
        raise UsageError(f"--project {missing[0]!r} matches no indexed project")
    return within


def _share(store: Store, match: str, project: str, total: int) -> float:
    """The share of the rows matching ``match`` that are ``project``'s (for naming)."""
    if not total:
        return 0.0
    return store.count_matches(match, total, projects=(project,)) / total
