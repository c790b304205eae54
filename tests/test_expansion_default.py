"""Expansion by default (issue 39): a model provider is asked for search terms first, with the
question alone; expansion never turns a question into an error, its replies are cached, and its
terms never push out what the question's own words found first.

The real ``scout`` runs against the fake ``claude`` on PATH, the loopback Messages API and the
loopback OpenAI-compatible server; the cache's bounds are checked on a real store.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from scout import gaps, words
from scout.cli.main import cli
from scout.retrieve import KEEP_OWN, retrieve
from scout.retrieve.expansion import replayed
from scout.store import Store, expansions
from tests.fakes.corpus import (
    BACKUPS,
    CREDENTIALS,
    filler,
    make_store,
    passage,
    write_config,
)
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.openai_api import FakeOpenAI
from tests.helpers.calls import is_expansion, recorded
from tests.helpers.run import Result

QUESTION = "how do I restore a backup?"
TERMS = {"Reply with the terms": {"terms": ["snapshot", "object store"]}}


def run(config: Path, *args: str) -> Result:
    done = CliRunner().invoke(cli, ["--config", str(config), *args])
    return Result(done.exit_code, done.stdout, done.stderr)


@pytest.fixture
def claude_store(tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test store and a claude-local config with no [retrieval] table (the default)."""
    make_store(tmp_path).close()
    monkeypatch.setenv("FAKE_CLAUDE_BY_QUESTION", json.dumps(TERMS))
    return write_config(tmp_path, "claude-local")


# --- the default follows the provider ---------------------------------------------------------


def test_with_claude_local_the_model_is_asked_for_terms_first(
    claude_store: Path, claude_bin: Path
) -> None:
    done = run(claude_store, "ask", QUESTION, "--json")
    assert (done.code, done.stderr) == (0, ""), done.stderr
    assert done.json()["expanded"] == ["snapshot", "object store"]
    first, answer = recorded(claude_bin)
    assert is_expansion(first) and not is_expansion(answer)
    assert QUESTION in first["stdin"] and "PASSAGE" not in first["stdin"]
    found = run(claude_store, "search", QUESTION, "--json")
    assert {tuple(row["expanded"]) for row in found.json()} == {("snapshot", "object store")}


def test_the_offline_provider_is_not_asked(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    done = run(write_config(tmp_path, "offline"), "ask", QUESTION, "--json")
    assert done.code == 0 and done.json()["expanded"] == []
    with Store.open(tmp_path / "scout.db") as store:
        (row,) = store.questions()
    assert row.expanded is None  # expansion was off, not asked and empty


def test_provider_chosen_on_the_command_line_decides_too(
    tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_store(tmp_path).close()
    monkeypatch.setenv("FAKE_CLAUDE_BY_QUESTION", json.dumps(TERMS))
    config = write_config(tmp_path, "offline")
    done = run(config, "ask", QUESTION, "--provider", "claude-local", "--json")
    assert done.code == 0 and done.json()["expanded"] == ["snapshot", "object store"]
    done = run(write_config(tmp_path, "claude-local"), "ask", QUESTION, "--provider", "offline")
    assert len(recorded(claude_bin)) == 2  # the first ask's two calls, none for offline


def test_the_anthropic_api_is_asked_for_terms_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_store(tmp_path).close()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with FakeMessagesAPI(["success"]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        done = run(write_config(tmp_path, "anthropic"), "ask", QUESTION, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["expanded"] == ["zzfaketerm", "qqfaketerm"]
    assert len(api.requests) == 2 and QUESTION in json.dumps(api.requests[0]["messages"])


def test_an_openai_compatible_server_is_asked_for_terms_first(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    with FakeOpenAI(flavour="ollama") as api:
        config = write_config(tmp_path, "openai")
        config.write_text(
            config.read_text().replace(
                'provider = "openai"\n',
                f'provider = "openai"\nmodel = "llama3.1:8b"\nbase_url = "{api.url}"\n',
            ),
            encoding="utf-8",
        )
        done = run(config, "ask", QUESTION, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["expanded"] == ["vault", "rotation"]
    assert "ExpansionOutput" in json.dumps(api.log[0]["body"])


@pytest.mark.parametrize("command", ["ask", "search"])
def test_no_expand_turns_it_off_for_one_call(
    claude_store: Path, claude_bin: Path, command: str
) -> None:
    done = run(claude_store, command, QUESTION, "--no-expand", "--json")
    assert done.code == 0, done.stderr
    assert not any(is_expansion(call) for call in recorded(claude_bin))
    rows = done.json() if command == "search" else [done.json()]
    assert all(row["expanded"] == [] and row["expansion_error"] is None for row in rows)


def test_expand_off_in_the_config_asks_nothing(tmp_path: Path, claude_bin: Path) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path, "claude-local", expand="off")
    assert run(config, "search", QUESTION, "--json").code == 0
    assert recorded(claude_bin) == []


# --- a failing model: the answer still comes, by the question's words --------------------------


@pytest.mark.parametrize(
    "mode", ["is_error", "schema_invalid", "missing_structured", "nonzero", "invalid_json"]
)
def test_a_model_that_fails_at_expansion_only_still_answers_by_the_questions_words(
    claude_store: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_EXPAND_MODE", mode)
    done = run(claude_store, "ask", QUESTION, "--json")
    assert done.code == 0, done.stderr
    document = done.json()
    assert document["outcome"] == "answered"
    assert (document["expanded"], document["expansion_error"]) == (None, "provider_failed")
    assert done.stderr.count("\n") == 1
    assert "no search terms from the model (provider_failed" in done.stderr
    assert "question's own words" in done.stderr
    # nothing was cached: the next question asks again
    assert run(claude_store, "ask", QUESTION, "--json").code == 0
    assert sum(is_expansion(call) for call in recorded(claude_bin)) == 2


def test_garbage_terms_are_cleaned_to_literal_words_or_nothing(
    claude_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    garbage = {"terms": ['NOT "x" NEAR(', "\x1b[31m", "", " ", "a" * 5000, 'body:*"']}
    monkeypatch.setenv("FAKE_CLAUDE_BY_QUESTION", json.dumps({"Reply with the terms": garbage}))
    done = run(claude_store, "search", QUESTION, "--json")
    assert done.code == 0, done.stderr
    expanded = done.json()[0]["expanded"]
    assert all(term.replace(" ", "").replace("-", "").isalnum() for term in expanded)
    assert all(len(term) <= 40 for term in expanded)


# --- the cache ------------------------------------------------------------------------------


def test_a_question_asked_again_costs_no_second_call(claude_store: Path, claude_bin: Path) -> None:
    assert run(claude_store, "ask", QUESTION, "--json").code == 0
    # another wording of the same question, as the gap backlog groups them
    again = run(claude_store, "ask", "How do I restore backups", "--json")
    assert again.code == 0 and again.json()["expanded"] == ["snapshot", "object store"]
    assert sum(is_expansion(call) for call in recorded(claude_bin)) == 1
    with Store.open(claude_store.parent / "scout.db") as store:
        logged = [row.expanded for row in store.questions()]
    assert logged == [("snapshot", "object store")] * 2


def test_the_cache_is_keyed_by_provider_and_model(claude_store: Path, claude_bin: Path) -> None:
    assert run(claude_store, "ask", QUESTION).code == 0
    other = claude_store.read_text().replace(
        'provider = "claude-local"', 'provider = "claude-local"\nmodel = "claude-sonnet-4-5"'
    )
    claude_store.write_text(other)
    assert run(claude_store, "ask", QUESTION).code == 0
    assert sum(is_expansion(call) for call in recorded(claude_bin)) == 2


def test_a_cache_of_zero_days_keeps_nothing(claude_store: Path, claude_bin: Path) -> None:
    claude_store.write_text(
        claude_store.read_text() + "\n[retrieval]\nexpand_cache_days = 0\n", encoding="utf-8"
    )
    for _ in range(2):
        assert run(claude_store, "search", QUESTION).code == 0
    assert sum(is_expansion(call) for call in recorded(claude_bin)) == 2


def test_the_cache_is_bounded_in_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expansions, "MAX_ROWS", 5)
    with make_store(tmp_path) as store:
        for n in range(12):
            store.cache_terms(f"question {n}", "claude-local", "m", [f"t{n}"], 30)
        assert store.expansion_cache_size() == 5
        assert store.cached_terms("question 11", "claude-local", "m", 30) == ["t11"]
        assert store.cached_terms("question 0", "claude-local", "m", 30) is None


def test_the_cache_is_bounded_in_age(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        store.cache_terms("old question", "claude-local", "m", ["stale"], 30)
    conn = sqlite3.connect(tmp_path / "scout.db")
    conn.execute("update expansion_cache set created_at = '2020-01-01T00:00:00Z'")
    conn.commit()
    conn.close()
    with Store.open(tmp_path / "scout.db") as store:
        assert store.cached_terms("old question", "claude-local", "m", 30) is None
        store.cache_terms("new question", "claude-local", "m", ["fresh"], 30)
        assert store.expansion_cache_size() == 1  # the old row went with the next write


@pytest.mark.parametrize(
    "stored",
    ['{"terms": 1}', "[1, 2]", "not json", '["x"' + ', "y"' * 2000 + "]"],
)
def test_a_cache_row_scout_did_not_write_is_not_read(tmp_path: Path, stored: str) -> None:
    with make_store(tmp_path) as store:
        store.cache_terms("q", "claude-local", "m", ["ok"], 30)
    conn = sqlite3.connect(tmp_path / "scout.db")
    conn.execute("update expansion_cache set terms = ?", [stored])
    conn.commit()
    conn.close()
    with Store.open(tmp_path / "scout.db") as store:
        assert store.cached_terms("q", "claude-local", "m", 30) is None


def test_backup_and_rebuild_keep_the_cache(
    claude_store: Path, claude_bin: Path, tmp_path: Path
) -> None:
    assert run(claude_store, "search", QUESTION).code == 0
    assert run(claude_store, "backup", str(tmp_path / "copy.db"), "--json").code == 0
    with Store.open(tmp_path / "copy.db") as copy:
        assert copy.expansion_cache_size() == 1


def test_the_cache_key_is_the_gap_backlogs_grouping(tmp_path: Path) -> None:
    for question in (
        QUESTION,
        "How do I RESTORE backups??",
        "what's the weather in Lisbon",
        "Rotating keys: how?",
        "a b c",
    ):
        assert words.question_key(question) == gaps.normalise(question)


# --- eval reports the calls the cache saved ----------------------------------------------------


def test_eval_reports_expansion_calls_and_what_the_cache_saved(
    claude_store: Path, claude_bin: Path, tmp_path: Path
) -> None:
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(
        '[[question]]\nquestion = "how do I restore a backup?"\nband = "answerable"\n'
        'sources = [{ project = "acme/ops", path = "docs/backups.md" }]\n',
        encoding="utf-8",
    )
    first = run(claude_store, "eval", str(eval_file), "--json")
    assert first.code == 0, first.stderr
    assert first.json()["expand"] == "model"
    made = first.json()["expansion"]
    assert (made["asked"], made["calls"], made["calls_saved_by_cache"]) == (1, 1, 0)
    assert made["input_tokens"] == 10 and made["ms"]["p50"] is not None
    second = run(claude_store, "eval", str(eval_file), "--json").json()["expansion"]
    assert (second["calls"], second["calls_saved_by_cache"], second["input_tokens"]) == (0, 1, 0)
    off = run(claude_store, "eval", str(eval_file), "--expand", "off", "--json").json()
    assert off["expand"] == "off" and off["expansion"]["asked"] == 0


# --- fusion: a model's terms add passages, never lose the own words' first ones -----------------


def _crowded_store(tmp_path: Path) -> Store:
    """The backups page (the answer), and twelve pages that say the bad terms many times."""
    noise = [
        passage(
            "acme/noise",
            f"docs/noise-{i}.md",
            (1, 5),
            f"Vault unseal and rotation, part {i}",
            f"vault unseal rotation vault unseal rotation kubernetes ingress helm chart {i} "
            "vault unseal rotation kubernetes ingress helm chart",
        )
        for i in range(12)
    ]
    return make_store(tmp_path, [BACKUPS, CREDENTIALS, *noise, *filler(200)])


BAD = ["vault unseal", "rotation", "kubernetes ingress", "helm chart", "vault", "unseal"]


def test_bad_terms_never_push_out_the_own_words_first_passage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _crowded_store(tmp_path) as store:
        own = retrieve(store, QUESTION, 8).hits
        assert own[0].path == BACKUPS.path
        found = retrieve(store, QUESTION, 8, expand=replayed(BAD)).hits
        assert BACKUPS.path in [hit.path for hit in found]
        # without keeping the own words' first places, these terms push the answer out
        monkeypatch.setattr("scout.retrieve.KEEP_OWN", 0)
        pushed = retrieve(store, QUESTION, 8, expand=replayed(BAD)).hits
        assert BACKUPS.path not in [hit.path for hit in pushed]
    assert KEEP_OWN >= 1


def test_keep_own_works_on_any_short_list(tmp_path: Path) -> None:
    with _crowded_store(tmp_path) as store:
        for limit in (1, 2, 3):
            hits = retrieve(store, QUESTION, limit, expand=replayed(BAD)).hits
            assert len(hits) == limit and BACKUPS.path in [h.path for h in hits]


def test_a_rebuilt_store_starts_with_the_old_ones_cache(tmp_path: Path) -> None:
    with make_store(tmp_path) as old:
        old.cache_terms("restore backup", "claude-local", "m", ["snapshot"], 30)
    fresh = Store.open(tmp_path / "fresh.db", create=True)
    assert fresh.copy_caches(tmp_path / "scout.db") == {"expansions": 1, "vectors": 0}
    assert fresh.cached_terms("restore backup", "claude-local", "m", 30) == ["snapshot"]
    # a store that is no store (damaged, or some other file) gives nothing, and no error
    (tmp_path / "junk.db").write_bytes(b"not a database" * 100)
    assert fresh.copy_caches(tmp_path / "junk.db") == {"expansions": 0, "vectors": 0}
    fresh.close()
