"""Staged ranking agrees with full BM25 on real documentation (Stencil's docs, MIT).

On generated text the rows matched by common terms alone always ranked last; on real docs they do
not (a page's title words repeat in every section's heading, code samples repeat identifiers), so
the stages must prove their top rows, not assume them. The budget here is 5% of the passages,
the share production uses at 100k passages.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scout.retrieve import retrieve
from scout.retrieve.lexical import HEADING_WEIGHT, literal
from scout.retrieve.question import Question
from scout.store import Store
from tests.helpers.stencil import records

TOP = 8
# One worker runs the module, so the store and the full rankings are built once a run, not once
# for each worker that a parameter lands on (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("stencil-docs")
# Chatty questions a Stencil user might ask, besides those made from the docs' own headings.
ASKED = [
    "how do I emit a custom event from my stencil component so the parent page can listen to it?",
    "how do I run some code every time one of my component's props changes?",
    "the stencil dev server runs on port 3333, how do I change that?",
    "can I use stencil components in a react app?",
    "how do I write an end to end test that clicks a button in my component?",
    "what is the difference between state and props in a stencil component?",
    "how do I generate a readme for each component automatically?",
    "why does my component not re-render when I push to an array?",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store.open(tmp_path_factory.mktemp("realdocs") / "scout.db", create=True) as s:
        s.insert_passages(list(records()))
        yield s


@pytest.fixture(scope="module")
def questions(store: Store) -> list[str]:
    headings = [p.heading.split(" > ")[-1] for p in store.passages() if p.heading][::9]
    return ASKED + [f"how do I use {h} in my stencil component?" for h in headings]


@pytest.fixture(scope="module")
def full_rankings() -> dict[tuple[str, int], list[tuple[int, float]]]:
    """The full ranking of a (question, top), kept for the module: two budgets share a top."""
    return {}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("share", "top"),
    [(0.05, TOP), (0.0, TOP), (0.05, 1), (0.05, 20)],
    ids=["5%", "one_term_a_stage", "top_1", "top_20"],
)
def test_staged_ranking_equals_the_full_ranking(
    store: Store,
    questions: list[str],
    full_rankings: dict[tuple[str, int], list[tuple[int, float]]],
    share: float,
    top: int,
) -> None:
    # A budget of 0 still takes the rarest term first: the most stages a question can have.
    budget = int(store.passage_count() * share)
    assert len(questions) > 60
    staged_questions = 0  # questions ranked in stages rather than in one query
    statements: list[str] = []
    store.trace(statements.append)
    for question in questions:
        if (question, top) not in full_rankings:
            full = retrieve(store, question, top, budget=10**9).hits
            full_rankings[question, top] = [(h.id, round(h.score, 9)) for h in full]
        statements.clear()
        staged = retrieve(store, question, top, budget=budget).hits
        staged_questions += any(" NOT (" in sql for sql in statements)
        # the same rows, in the same order, with the same scores
        assert [(h.id, round(h.score, 9)) for h in staged] == full_rankings[question, top]
    store.trace(None)
    assert staged_questions >= len(questions) // 2


def search(store: Store, match: str) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in store.search(match, 10**6, heading_weight=HEADING_WEIGHT)]


def test_a_stage_scores_its_rows_as_the_full_query_does(store: Store, questions: list[str]) -> None:
    # A stage ranks the rows of some terms in two parts: those with one of the other terms, where
    # every phrase is named once, and those without. Each row's score is its full-query score.
    checked = 0
    for question in questions[:30]:
        terms = [t for t in Question.of(question).terms if store.count_matches(literal(t), 1)]
        if len(terms) < 2:
            continue
        rare = min(terms, key=lambda t: store.count_matches(literal(t), 10**6))
        others = " OR ".join(literal(t) for t in terms if t != rare)
        full = dict(search(store, " OR ".join(literal(t) for t in terms)))
        with_others = search(store, f"({others}) AND ({literal(rare)})")
        without = search(store, f"({literal(rare)}) NOT ({others})")
        assert not {i for i, _ in with_others} & {i for i, _ in without}
        assert len(with_others) + len(without) == store.count_matches(literal(rare), 10**6)
        for rowid, score in [*with_others, *without]:
            assert score == pytest.approx(full[rowid], rel=1e-12, abs=1e-12)
            checked += 1
    assert checked > 100


def test_ranking_the_rare_rows_alone_would_not_be_exact(store: Store, questions: list[str]) -> None:
    # What the bounds guard against, on this corpus: ranking only the rows of the rarest terms
    # (the first fast path) leaves out rows that the full ranking puts in its top 8.
    budget = store.passage_count() // 20
    missed = 0
    for question in questions:
        terms = [t for t in Question.of(question).terms if store.count_matches(literal(t), 1)]
        counts = {t: store.count_matches(literal(t), 10**6) for t in terms}
        rare, rows = [], 0
        for term in sorted(terms, key=counts.__getitem__):
            if rare and rows + counts[term] > budget:
                break
            rare.append(term)
            rows += counts[term]
        if len(rare) == len(terms):
            continue
        every = " OR ".join(literal(t) for t in terms)
        naive = search(store, f"({every}) AND ({' OR '.join(map(literal, rare))})")
        full = search(store, every)
        missed += {i for i, _ in naive[:TOP]} != {i for i, _ in full[:TOP]}
    assert missed >= 3
