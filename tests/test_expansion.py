"""Model-assisted expansion ([retrieval] expand = "model"): the provider sees the question
alone, and whatever it replies becomes at most 12 literal terms of at most 40 characters,
ranked below the question's own words, shown by ``scout search --json`` and logged with the
question. Providers are the real ones against the fake ``claude`` and the fake Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scout.cli.main import cli
from scout.providers.offline import OfflineProvider
from scout.retrieve import lexical, retrieve
from scout.retrieve.expansion import (
    MAX_TERM_CHARS,
    MAX_TERMS,
    Expander,
    clean_terms,
    expansion_task,
    replayed,
)
from scout.retrieve.question import Question
from scout.store import Store
from tests.fakes.corpus import BACKUPS, CREDENTIALS, filler, make_store, passage, write_config
from tests.fakes.messages_api import FakeMessagesAPI
from tests.helpers.growth import assert_linear
from tests.helpers.sdk import ONE_WORKER, Lazy, preloaded

pytestmark = ONE_WORKER
anthropic_api = Lazy("scout.providers.anthropic_api")
_imported = preloaded(anthropic_api)

QUESTION = "how do I restore a backup?"
HOSTILE = [
    'NOT "rotate" NEAR(keys, 2) OR body:*',
    "\x1b[31mred\x1b[0m \x07bell\x00nul",
    "heading : {secret} ^ (x) AND y",
    "a" * 500,
    CREDENTIALS.body,  # a passage's text, as if the model had seen one
    "restore backup",  # the question's own words: nothing new
    "",
]


def invoke(config: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--config", str(config), *args])


def expanding_config(directory: Path, provider: str) -> Path:
    return write_config(directory, provider, expand="model")


def test_clean_terms_bounds_and_strips() -> None:
    terms = clean_terms(HOSTILE + [f"term{i}" for i in range(10_000)], QUESTION)
    assert len(terms) == MAX_TERMS
    assert all(0 < len(t) <= MAX_TERM_CHARS for t in terms)
    for term in terms:
        assert not set(term) & set('"*:^(){}\x1b\x07\x00'), term
    assert terms[0] == "NOT rotate NEAR keys 2 OR body"  # words kept, syntax gone
    assert terms[1] == "31mred 0m bell nul"
    assert "restore backup" not in terms
    assert terms[4].startswith("To rotate the database keys")  # cut, at a word boundary
    assert clean_terms([], QUESTION) == []
    assert clean_terms(["", "   ", "\x00\x01"], QUESTION) == []


def test_clean_terms_grows_linearly_and_reads_a_bounded_prefix() -> None:
    # 10,000 terms (or a million) cost what the first few dozen do; each is cut before matching.
    assert_linear(lambda n: lambda: clean_terms(["\x00" * 50] * n, QUESTION), 10_000)
    assert_linear(lambda n: lambda: clean_terms(["a-" * n, "(" * n, " " * n], QUESTION), 2_000)


def test_the_task_holds_the_question_alone() -> None:
    task = expansion_task(QUESTION)
    assert (task.kind, task.passages, task.question) == ("expand", (), QUESTION)
    assert QUESTION in task.user and "PASSAGE" not in task.user


def test_offline_suggests_nothing() -> None:
    assert OfflineProvider().run(expansion_task(QUESTION)).terms == []


def test_terms_rank_below_the_questions_own_words(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plain = retrieve(store, QUESTION, 8).hits
    assert [h.path for h in plain] == [BACKUPS.path]
    hits = retrieve(store, QUESTION, 8, expand=replayed(["rotate database keys", "vault"])).hits
    assert [h.path for h in hits] == [BACKUPS.path, CREDENTIALS.path]
    # With the same terms as the question's own words, credentials would come first.
    own = retrieve(store, f"{QUESTION} rotate database keys vault", 8).hits
    assert own[0].path == CREDENTIALS.path
    store.close()


def test_terms_that_match_many_passages_do_not_push_the_own_words_answer_out(
    tmp_path: Path,
) -> None:
    # A weak model's terms: a word that a dozen pages use heavily. Ranked with equal weight they
    # fill the whole pool, so weighting them below the question's words inside that pool could
    # not bring back the one passage the question's own words find.
    noise = [
        passage("acme/misc", f"docs/v{i}.md", (1, 4), "Vault rotation", f"Unseal keys {i}. " * 3)
        for i in range(12)
    ]
    store = make_store(tmp_path, [BACKUPS, *noise, *filler(200)])
    terms = ["vault rotation", "unseal keys"]
    equal = retrieve(store, f"{QUESTION} {' '.join(terms)}", 8).hits
    assert BACKUPS.path not in [h.path for h in equal]  # equal weight: the answer is out
    hits = retrieve(store, QUESTION, 1, expand=replayed(terms)).hits
    assert [h.path for h in hits] == [BACKUPS.path]
    store.close()


def test_every_pooled_passage_is_scored_by_every_term(tmp_path: Path) -> None:
    # The own words' pool and the terms' pool each know one part of their passages' scores;
    # the other part is asked for. The sum must be what the store gives for all the terms.
    both = passage("acme/misc", "docs/both.md", (1, 4), "Vault backup", "Restore the vault.")
    keys = passage("acme/misc", "docs/keys.md", (1, 4), "Unseal keys", "Rotate unseal keys.")
    store = make_store(tmp_path, [BACKUPS, CREDENTIALS, both, keys, *filler(200)])
    terms = lexical.Terms.of(store, Question.of(QUESTION), ["vault", "unseal keys", "rotate"])
    own = lexical.own_words(terms, 8, [None])
    hits = lexical.with_expansion(terms, own, 8, [None])
    ids = [hit.id for hit in hits]
    assert {hit.path for hit in hits} - {hit.path for hit in own}  # the terms' pool added some
    assert both.path in {hit.path for hit in own}  # and an own-words passage the terms match

    def scored(live: list[str]) -> dict[int, float]:
        match = " OR ".join(lexical.literal(term) for term in live)
        return store.scores(match, ids, heading_weight=lexical.HEADING_WEIGHT)

    mine = scored(terms.live(terms.own))
    whole = scored(terms.live([*terms.own, *terms.extra]))
    for hit in hits:
        base = mine.get(hit.id, 0.0)
        expected = base + lexical.EXPANSION_WEIGHT * (whole[hit.id] - base)
        assert hit.score == pytest.approx(expected, rel=1e-9), hit.path
    assert [hit.score for hit in hits] == sorted(hit.score for hit in hits)
    store.close()


@pytest.fixture
def claude_estate(tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test store, with expansion on through claude-local (the fake ``claude``)."""
    make_store(tmp_path).close()
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "success")
    return expanding_config(tmp_path, "claude-local")


def test_search_through_claude_local_shows_bounded_terms_and_sends_no_passage(
    claude_estate: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = claude_estate
    reply = {"terms": HOSTILE + [f"word{i}" for i in range(10_000)]}
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(reply))
    result = invoke(config, "search", QUESTION, "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    rows = json.loads(result.stdout)
    expanded = rows[0]["expanded"]
    assert expanded == clean_terms(reply["terms"], QUESTION)
    assert all(row["expanded"] == expanded for row in rows)
    (call,) = [json.loads(line) for line in claude_bin.read_text().splitlines()]
    assert QUESTION in call["stdin"]
    for record in (CREDENTIALS, BACKUPS):
        assert record.body not in call["stdin"] and record.body not in " ".join(call["argv"])
    assert (
        "terms" in json.loads(call["argv"][call["argv"].index("--json-schema") + 1])["properties"]
    )


def test_ask_logs_the_terms_with_the_question(
    tmp_path: Path, claude_estate: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = claude_estate
    monkeypatch.setenv(
        "FAKE_CLAUDE_BY_QUESTION",
        json.dumps({"Reply with the terms": {"terms": ["acme-restore", "nightly"]}}),
    )
    result = invoke(config, "ask", QUESTION, "--json")
    assert result.exit_code == 0, result.stderr
    assert len(claude_bin.read_text().splitlines()) == 2  # the terms, then the answer
    with Store.open(tmp_path / "scout.db") as store:
        (row,) = store.questions()
    assert row.expanded == ("acme-restore", "nightly")


def test_search_without_expansion_calls_no_provider(tmp_path: Path, claude_bin: Path) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path, "claude-local", expand="off")
    result = invoke(config, "search", QUESTION, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)[0]["expanded"] == []
    assert not claude_bin.exists()


def test_offline_expansion_logs_an_empty_list(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    result = invoke(expanding_config(tmp_path, "offline"), "ask", QUESTION, "--json")
    assert result.exit_code == 0
    with Store.open(tmp_path / "scout.db") as store:
        (row,) = store.questions()
    assert row.expanded == ()


def test_anthropic_gets_the_question_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    output = {"terms": [CREDENTIALS.body, "vault rotate --all", "x" * 100]}
    with FakeMessagesAPI(["success"], output=output) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        provider = anthropic_api.AnthropicProvider(model="claude-haiku-4-5", timeout=5)

        found = Expander(provider, provider_name="anthropic", model="m", timeout=30)(QUESTION)
    (request,) = api.requests
    assert QUESTION in json.dumps(request)
    assert CREDENTIALS.body not in json.dumps(request)
    assert found.terms == ("To rotate the database keys run vault", "vault rotate --all", "x" * 40)
    assert found.usage.input_tokens > 0 and found.error is None


def test_eval_compare_sets_expansion_off_beside_on(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path)
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(
        "[[question]]\nquestion = 'how do I restore a backup?'\nband = 'answerable'\n"
        "sources = [{ project = 'acme/ops', path = 'docs/backups.md' }]\n",
        encoding="utf-8",
    )
    runs = []
    for setting in ("off", "model"):
        result = invoke(config, "eval", str(eval_file), "--expand", setting, "--json")
        assert result.exit_code == 0, result.stderr
        out = tmp_path / f"{setting}.json"
        out.write_text(result.stdout, encoding="utf-8")
        runs.append(str(out))
    result = invoke(config, "eval", "--compare", *runs, "--json")
    assert result.exit_code == 0, result.stderr
    figures = {f["figure"]: (f["a"], f["b"]) for f in json.loads(result.stdout)["figures"]}
    assert figures["expand"] == ("off", "model")
    assert any(name.startswith("retrieval.") for name in figures)
    assert any(name.startswith("cost.") for name in figures)
    # what expansion cost, beside the run without it (offline: asked, no tokens)
    assert figures["expansion.asked"] == (0, 1)
    assert figures["expansion.calls"] == (0, 1)
    assert figures["expansion.input_tokens_per_call"] == (None, 0.0)
