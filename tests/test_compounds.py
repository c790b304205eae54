"""Keyword matching that survives spacing: "back up" finds "backup", "logfile" finds "log file".

The corpus's own usage decides every variant, and every variant is still a literal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scout.retrieve import retrieve
from scout.retrieve.lexical import (
    MAX_VARIANT_PROBES,
    compounds,
    joins,
    literal,
    split,
    variants,
)
from scout.store import PassageRecord, Store
from scout.words import query_terms
from tests.fakes.corpus import filler, make_store, passage


def usage(counts: dict[str, int]) -> dict[str, int]:
    """Counts keyed the way ``variants`` asks for them: FTS5 literals."""
    return {literal(term): n for term, n in counts.items()}


@pytest.mark.parametrize(
    ("question", "pairs"),
    [
        ("how do I back up the wiki?", [("back", "up")]),
        ("where do I log in", [("log", "in")]),
        ("set up a runner", [("set", "up")]),
        ("the data set is big", [("data", "set")]),
        # a stop word never starts a pair, and only particles may end one
        ("is it my title", []),
        ("the vault is sealed", []),
        ("keys in the vault", [("keys", "in")]),  # a candidate: the corpus decides
        ("c++ and a-b 2 factor", []),
    ],
)
def test_join_candidates(question: str, pairs: list[tuple[str, str]]) -> None:
    assert joins(question, query_terms(question)) == pairs


@pytest.mark.parametrize(
    ("word", "counts", "phrase"),
    [
        ("logfile", {"log": 9, "file": 40, "log file": 6}, "log file"),
        ("setup", {"set": 30, "up": 50, "set up": 3, "setup": 1}, "set up"),
        # the corpus writes it as one word more often than as two: no split
        ("database", {"database": 50, "data": 20, "base": 9, "data base": 1}, None),
        ("another", {"another": 12, "an": 90, "other": 40, "an other": 2}, None),
        # parts that are not indexed words are never tried as a phrase
        ("logfile", {"logf": 0, "log file": 0}, None),
        ("abcd", {"ab": 5, "cd": 5, "ab cd": 5}, None),
        ("log4file", {"log": 1, "file": 1, "log file": 1}, None),
    ],
)
def test_split_follows_the_corpus_usage(
    word: str, counts: dict[str, int], phrase: str | None
) -> None:
    known = usage(counts)
    assert split(word, lambda match: known.get(match, 0)) == phrase


def test_variants_are_literals_joined_or_split_as_the_corpus_writes() -> None:
    known = usage({"backup": 30, "back up": 2, "logfile": 0, "log": 5, "file": 9, "log file": 4})
    question = "back up the logfile"
    assert variants(question, query_terms(question), lambda m: known.get(m, 0)) == [
        "backup",
        "log file",
    ]
    # "log in" is rarer as "login" here: the question's own spelling stands
    known = usage({"login": 1, "log in": 8})
    assert variants("log in", ["log"], lambda m: known.get(m, 0)) == []


@pytest.mark.parametrize(
    ("question", "phrases"),
    [
        ("does python-gitlab support it?", ["python gitlab"]),
        ("gl.projects.list() gives 20", ["gl projects list"]),
        (
            "CERTIFICATE_VERIFY_FAILED on a self-hosted box",
            ["certificate verify failed", "self hosted"],
        ),
        ("chart for GitLab 18.8.2 or v1.2", []),  # numbers are words already
        ("a-b-c-d-e is too long to be one thing", []),
        ("plain words only", []),
    ],
)
def test_words_joined_by_punctuation_become_phrases(question: str, phrases: list[str]) -> None:
    assert compounds(question) == phrases


def test_variant_probes_are_bounded_for_long_questions() -> None:
    def word(i: int) -> str:
        return "".join(chr(ord("a") + int(d)) for d in f"{i:03d}")

    question = " ".join(f"{word(i)}x-{word(i)}y {word(i)}z up" for i in range(500))
    assert len(joins(question, query_terms(question))) == MAX_VARIANT_PROBES
    assert len(compounds(question)) == MAX_VARIANT_PROBES


def test_a_compound_phrase_is_kept_only_where_the_corpus_has_it() -> None:
    known = usage({"python gitlab": 7})
    question = "python-gitlab on a self-hosted box"
    assert variants(question, query_terms(question), lambda m: known.get(m, 0)) == ["python gitlab"]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    records: list[PassageRecord] = [
        passage("acme/ops", "docs/backup.md", (1, 4), "Backup", "Run the backup job nightly."),
        passage("acme/ops", "docs/logs.md", (1, 4), "Logs", "The log file lives in /var/log."),
        passage("acme/ops", "docs/login.md", (1, 4), "Login", "Use SSO for the login page."),
        passage("acme/ops", "docs/login2.md", (1, 4), "SSO", "The login form takes a token."),
        *filler(),
    ]
    return make_store(tmp_path, records)


@pytest.mark.parametrize(
    ("question", "path"),
    [
        # none of these shares a word, as asked, with the passage it finds
        ("how do I back up?", "docs/backup.md"),
        ("where is the logfile?", "docs/logs.md"),
        ("I cannot log in", "docs/login.md"),
    ],
)
def test_retrieval_finds_the_other_spelling(store: Store, question: str, path: str) -> None:
    assert path in [hit.path for hit in retrieve(store, question, 2).hits]


def test_a_split_is_a_phrase_not_two_words(store: Store) -> None:
    # "file" alone would match, but "logfile" asks for the phrase "log file"
    hits = retrieve(store, "logfile", 8).hits
    assert [h.path for h in hits] == ["docs/logs.md"]


def test_the_two_stage_path_uses_the_variants_too(store: Store) -> None:
    assert retrieve(store, "how do I back up?", 1, budget=1).hits[0].path == "docs/backup.md"
