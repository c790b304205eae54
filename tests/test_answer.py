"""The answer path end to end over a real store: retrieval, provider, citation check, the log."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, astuple
from pathlib import Path
from typing import Any

import pytest

from scout.answer import AnswerResult, ask, render
from scout.compose import AnswerOutput
from scout.errors import ProviderError, UsageError
from scout.providers.base import Provider, T, Task
from scout.providers.offline import OfflineProvider
from scout.store import PassageHit, Store
from tests.fakes.corpus import BACKUPS, CRED_CITATION, CRED_URL, CREDENTIALS, make_store


class Scripted:
    """A provider with a queue of replies and a history of the tasks it was given."""

    name = "scripted"

    def __init__(self, *replies: AnswerOutput | Exception) -> None:
        self.replies = list(replies)
        self.tasks: list[Task[Any]] = []

    def run(self, task: Task[T]) -> T:
        self.tasks.append(task)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply  # type: ignore[return-value]


def reply(answer: str, cited: list[int], declined: bool = False, reason: str = "") -> AnswerOutput:
    return AnswerOutput(answer=answer, cited=cited, declined=declined, reason=reason)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with make_store(tmp_path) as s:
        yield s


def test_answered_result_is_the_designed_json(store: Store) -> None:
    provider = Scripted(reply("Run `vault rotate --all` [1].", [1]))
    result = ask("How do I rotate keys?", store=store, provider=provider, provider_name="scripted")
    assert result.to_json() == {
        "outcome": "answered",
        "answer": "Run `vault rotate --all` [1].",
        "reason": None,
        "citations": [CRED_CITATION],
        "passages": 1,
        "cause": None,
        "where_to_look": [],
        "expanded": [],
        "expansion_error": None,
        "dense_error": None,
    }
    assert render(result) == (
        f"Run `vault rotate --all` [1].\n\nSources:\n"
        f"  [1] acme/config docs/credentials.md L12-30  {CRED_URL}"
    )


def test_nothing_retrieved_declines_without_making_or_calling_a_provider(store: Store) -> None:
    made: list[Provider] = []

    def factory() -> Provider:
        made.append(Scripted())
        return made[-1]

    result = ask("weather in Lisbon", store=store, provider=factory, provider_name="claude-local")
    assert result.to_json() == {
        "outcome": "declined",
        "answer": None,
        "reason": "nothing matched",
        "citations": [],
        "passages": 0,
        "cause": None,
        "where_to_look": [],
        "expanded": [],
        "expansion_error": None,
        "dense_error": None,
    }
    assert made == []
    assert render(result) == "Declined: nothing matched"


def test_provider_factory_is_called_when_there_are_passages(store: Store) -> None:
    made: list[Scripted] = []

    def factory() -> Provider:
        made.append(Scripted(reply("Run it [1].", [1])))
        return made[-1]

    ask("rotate keys", store=store, provider=factory, provider_name="scripted")
    assert len(made) == 1 and len(made[0].tasks) == 1


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (reply("Rotate them.", []), "cited nothing"),
        (reply("Rotate them [9].", [9]), "cited passage 9 of 2"),
        (reply("Rotate them [1] and [3].", [1]), "cited passage 3 of 2"),
        (reply("", [], True, "The passages cover rotation but not tape."), None),
    ],
)
def test_refused_citations_and_model_declines_become_declines(
    store: Store, output: AnswerOutput, reason: str | None
) -> None:
    result = ask("rotate backups", store=store, provider=Scripted(output), provider_name="scripted")
    assert result == AnswerResult(
        "declined", None, reason or "The passages cover rotation but not tape.", (), 2
    )


def test_control_characters_from_the_model_are_not_printed(store: Store) -> None:
    provider = Scripted(
        reply("Run\x1b[2J it\x07 [1].\nDone.", [1]), reply("", [], True, "no\x1b]0;x")
    )
    answered = ask("rotate keys", store=store, provider=provider, provider_name="scripted")
    declined = ask("rotate keys", store=store, provider=provider, provider_name="scripted")
    assert (answered.answer, declined.reason) == ("Run[2J it [1].\nDone.", "no]0;x")


def test_citations_are_the_cited_passages_in_order(store: Store) -> None:
    provider = Scripted(reply("Rotate [2]; back up [1].", [2, 1]))
    result = ask("rotate backups", store=store, provider=provider, provider_name="scripted")
    assert [(c.n, c.path, c.source) for c in result.citations] == [
        (1, BACKUPS.path, "docs"),
        (2, CREDENTIALS.path, "docs"),
    ]
    assert [p.heading for p in provider.tasks[0].passages] == [BACKUPS.heading, CREDENTIALS.heading]


def test_each_question_gets_only_its_own_passages(store: Store) -> None:
    provider = Scripted(reply("a [1]", [1]), reply("b [1]", [1]))
    ask("rotate keys", store=store, provider=provider, provider_name="scripted")
    ask("nightly backups", store=store, provider=provider, provider_name="scripted")
    first, second = provider.tasks
    assert [p.heading for p in first.passages] == ["Rotating credentials"]
    assert [p.heading for p in second.passages] == ["Backups"]
    assert "rotate" not in second.user.casefold()


def test_every_outcome_is_logged_without_passage_or_answer_text(store: Store) -> None:
    provider = Scripted(reply("Run `vault rotate --all` [1].", [1]), reply("x", []))
    ask("rotate keys", store=store, provider=provider, provider_name="scripted")
    ask("rotate backups", store=store, provider=provider, provider_name="scripted")
    ask("weather", store=store, provider=provider, provider_name="scripted")
    rows = store.questions()
    assert [(r.question, r.outcome, r.reason, r.provider, r.passages) for r in rows] == [
        ("rotate keys", "answered", None, "scripted", 1),
        ("rotate backups", "declined", "cited nothing", "scripted", 2),
        ("weather", "declined", "nothing matched", "scripted", 0),
    ]
    assert all(isinstance(r.latency_ms, int) and r.latency_ms >= 0 for r in rows)
    assert not any("vault" in str(value) for r in rows for value in astuple(r))


def test_provider_failure_raises_and_logs_nothing(store: Store) -> None:
    provider = Scripted(ProviderError("the claude CLI reported an error: boom"))
    with pytest.raises(ProviderError, match="boom"):
        ask("rotate keys", store=store, provider=provider, provider_name="scripted")
    assert store.questions() == []


@pytest.mark.parametrize(
    ("question", "passages", "message"),
    [
        ("?!", 8, "no words"),
        ("k" * 4001, 8, "limit is 4000"),
        ("rotate keys", 0, "between 1 and 20"),
        ("rotate keys", 21, "between 1 and 20"),
    ],
)
def test_unacceptable_questions_are_usage_errors_and_not_logged(
    store: Store, question: str, passages: int, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        ask(question, store=store, provider=Scripted(), passages=passages, provider_name="x")
    assert store.questions() == []


def test_offline_provider_answers_and_declines_on_the_store(store: Store) -> None:
    offline = OfflineProvider()
    answered = ask("How do I rotate keys?", store=store, provider=offline, provider_name="offline")
    declined = ask(
        "How do I rotate backups to tape storage?",
        store=store,
        provider=offline,
        provider_name="offline",
    )
    assert (answered.outcome, [c.path for c in answered.citations]) == (
        "answered",
        ["docs/credentials.md"],
    )
    assert (declined.outcome, declined.reason) == (
        "declined",
        "no passage covers: rotate, tape, storage",
    )


def test_offline_mode_shows_where_to_look_and_its_declines_are_no_gaps(store: Store) -> None:
    from scout.gaps import gaps, not_gaps

    offline = OfflineProvider()
    answered = ask("How do I rotate keys?", store=store, provider=offline, provider_name="offline")
    declined = ask("rotate backups to tape", store=store, provider=offline, provider_name="offline")
    unmatched = ask("weather in Lisbon", store=store, provider=offline, provider_name="offline")
    # where to look: the passages in retrieval's order, places only, the quoted one included
    document = answered.to_json()
    assert (document["cause"], document["answer"]) == (None, answered.answer)
    assert document["where_to_look"] == [
        {"n": 1, "project": "acme/config", "path": "docs/credentials.md",
         "heading": "Rotating credentials", "lines": [12, 30], "url": CRED_URL}
    ]  # fmt: skip
    shown = render(answered)
    assert shown.startswith("Offline mode: no model read these passages.")
    assert "Sources:" not in shown and "[1] acme/config docs/credentials.md L12-30" in shown
    assert "matching: To rotate the database keys, run `vault rotate --all`" in shown
    # an offline decline says what it is, lists where to look, and is no gap
    assert (declined.outcome, declined.cause) == ("declined", "offline")
    assert [p.path for p in declined.where_to_look] == ["docs/backups.md", "docs/credentials.md"]
    reason = "no passage covers: rotate, tape"
    assert render(declined).startswith(f"Not answered in offline mode: {reason}.")
    assert "does not mean the documentation lacks the answer" in render(declined)
    # nothing retrieved: retrieval could not help, whoever answers; that stays a gap
    assert (unmatched.reason, unmatched.cause, unmatched.where_to_look) == (
        "nothing matched",
        None,
        (),
    )
    assert [row.cause for row in store.questions()] == [None, "offline", None]
    assert [g.question for g in gaps(store)] == ["weather in Lisbon"]
    assert not_gaps(store) == {"offline": 1}


def test_offline_mode_lists_at_most_five_places_and_every_quoted_one() -> None:
    from scout.answer import Citation, offline
    from tests.fakes.corpus import filler

    hits = [PassageHit(**asdict(record), id=n) for n, record in enumerate(filler(8), start=1)]
    quoted = AnswerResult("answered", "x [7]", None, (Citation.of(7, hits[6]),), 8)
    assert [p.n for p in offline(quoted, hits).where_to_look] == [1, 2, 3, 4, 5, 7]
    declined = offline(AnswerResult.declined("no passage covers: x", 8), hits)
    assert ([p.n for p in declined.where_to_look], declined.cause) == ([1, 2, 3, 4, 5], "offline")


def test_a_decline_logs_its_content_words_and_nearest_passages_places(store: Store) -> None:
    provider = Scripted(reply("x", []), reply("x", []))
    ask("How do I rotate the keys?", store=store, provider=provider, provider_name="scripted")
    # asked with one passage, the gap still gets retrieval's best three places
    ask("rotate backups", store=store, provider=provider, passages=1, provider_name="scripted")
    first, second = store.questions()
    assert first.terms == ("rotate", "keys")
    assert [n["path"] for n in first.nearest] == ["docs/credentials.md"]
    assert [n["path"] for n in second.nearest] == ["docs/backups.md", "docs/credentials.md"]
    assert set(second.nearest[0]) == {"project", "path", "heading", "lines", "url"}
    assert second.nearest[0]["url"] == BACKUPS.url
    assert second.cause is None


def test_provider_outages_and_wordless_questions_stay_off_the_backlog(store: Store) -> None:
    from scout.gaps import gaps

    provider = Scripted(reply("x", []), ProviderError("the claude CLI reported an error: boom"))
    ask("rotate backups", store=store, provider=provider, provider_name="scripted")
    with pytest.raises(ProviderError):
        ask("rotate keys", store=store, provider=provider, provider_name="scripted")
    for wordless in ("How do I?", "What is it?", "why"):
        with pytest.raises(UsageError, match="only words such as 'how' and 'what'"):
            ask(wordless, store=store, provider=provider, provider_name="scripted")
    assert [(g.question, g.asked) for g in gaps(store)] == [("rotate backups", 1)]


def test_an_empty_index_declines_without_a_provider_and_with_its_cause(tmp_path: Path) -> None:
    from scout.gaps import gaps

    with make_store(tmp_path, records=[]) as empty:
        result = ask("rotate keys", store=empty, provider=Scripted(), provider_name="scripted")
        assert (result.outcome, result.passages) == ("declined", 0)
        assert result.reason is not None and "the index holds no passages" in result.reason
        (logged,) = empty.questions()
        assert (logged.cause, logged.nearest) == ("index_empty", ())
        assert gaps(empty) == []
