"""Dense retrieval with ``kind = "openai"``: a real ``scout`` against an OpenAI-compatible
embeddings server on loopback (tests.fakes.embeddings_api), through the openai SDK.

What is attacked: indexing (every passage once, in batches, nothing on a second run, what a
dying or lying server leaves behind), the model's identity (a new model or dimension embeds
everything again), the key (only ever on the wire), and question time (a question in other
words found by meaning; an unreachable server means words alone, said once, never an error).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from scout.cli.main import cli
from scout.demo.builder import EstateBuilder
from scout.store import Store
from tests.fakes.embeddings_api import FakeEmbeddings
from tests.helpers.config import render_config
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result

KEY_ENV = "SCOUT_CANARY_EMBED_KEY"
CANARY_KEY = "sk-embed-CANARY4f1e9d2c7b3a"
MODEL = "nomic-embed-text"

DOCS = {
    "docs/eviction.md": "# Eviction\n\nWhen a machine runs low on ephemeral storage, the kubelet "
    "evicts workloads, largest first. Set limits on ephemeral storage to stay within them.\n",
    "docs/backups.md": "# Backups\n\nThe backup job runs every night at 02:00 and keeps 30 "
    "days of snapshots in the object store.\n",
    "docs/credentials.md": "# Rotating keys\n\nDeploy keys are rotated every 90 days from the "
    "admin host with `vault rotate --all`.\n",
    # pages about other things, so that BM25's statistics are a real corpus's
    **{
        f"docs/topic-{n}.md": f"# Topic {n}\n\nNotes on subject {n}: settings, defaults and the "
        f"files the service {n} reads at start.\n"
        for n in range(24)
    },
}
PASSAGES = len(DOCS)


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    """A one-project estate (acme/ops) in tmp_path/estate."""
    builder = EstateBuilder(tmp_path / "estate", url="https://gitlab.acme.example")
    builder.project("acme/ops").commit(DOCS, "Add the ops docs")
    builder.write()
    return tmp_path / "estate"


def configure(directory: Path, estate: Path, url: str | None, **embeddings: object) -> Path:
    """A config for ``estate``; with ``url``, embeddings from the server there."""
    sections: dict[str, dict[str, object]] = {}
    if url is not None:
        sections["retrieval.embeddings"] = {
            "kind": "openai",
            "base_url": url,
            "model": MODEL,
            "api_key_env": KEY_ENV,
            "batch": 8,
            "timeout": 10,
            **embeddings,
        }
    config = directory / "scout.toml"
    config.write_text(render_config(estate, **sections), encoding="utf-8")  # type: ignore[arg-type]
    return config


def run(config: Path, *args: str, key: str | None = CANARY_KEY) -> Result:
    env = {KEY_ENV: key} if key is not None else {}
    done = CliRunner().invoke(cli, ["--config", str(config), *args], env=env)
    return Result(done.exit_code, done.stdout, done.stderr)


def vectors(directory: Path) -> list[tuple[str, int]]:
    """(model, bytes) of every stored vector."""
    conn = sqlite3.connect(directory / "scout.db")
    try:
        return [(m, n) for m, n in conn.execute("select model, length(vector) from vectors")]
    finally:
        conn.close()


@pytest.fixture
def server() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings(api_key=CANARY_KEY) as api:
        yield api


def test_index_embeds_every_passage_once_in_batches_and_a_second_index_sends_nothing(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    config = configure(tmp_path, estate, server.url)
    first = run(config, "index", "--json")
    assert first.code == 0, first.stderr
    embedded = first.json()["embeddings"]
    assert embedded["model"] == f"openai:{MODEL}" and embedded["dimension"] == 256
    assert embedded["embedded"] == PASSAGES
    assert len(server.log) == -(-PASSAGES // 8)  # batches of `batch`
    assert all(len(entry["body"]["input"]) <= 8 for entry in server.log)
    assert sorted(vectors(tmp_path)) == [(f"openai:{MODEL}", 256 * 4)] * PASSAGES
    # each passage is embedded as its heading path and its text
    assert any(t.startswith("Eviction\nWhen a machine runs low") for t in server.texts)
    sent = len(server.log)
    again = run(config, "index", "--json")
    assert again.code == 0 and again.json()["embeddings"]["embedded"] == 0
    assert len(server.log) == sent


def test_the_key_travels_only_in_the_authorization_header(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    config = configure(tmp_path, estate, server.url)
    results = [run(config, "index", "--json"), run(config, "search", "backups", "--json")]
    for result in results:
        assert result.code == 0, result.stderr
        assert CANARY_KEY not in result.stdout + result.stderr
    assert {entry["headers"]["authorization"] for entry in server.log} == {f"Bearer {CANARY_KEY}"}
    for path in tmp_path.glob("scout.db*"):
        assert CANARY_KEY.encode() not in path.read_bytes()


def test_with_no_key_set_no_authorization_header_is_sent(tmp_path: Path, estate: Path) -> None:
    with FakeEmbeddings() as api:  # a local server (Ollama, llama.cpp) checks no key
        done = run(configure(tmp_path, estate, api.url), "index", "--json", key=None)
    assert done.code == 0, done.stderr
    assert all("authorization" not in entry["headers"] for entry in api.log)


def test_a_question_in_other_words_is_found_by_its_meaning(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    question = "my container got kicked, why?"  # no word of it is in the eviction page
    (tmp_path / "words").mkdir()
    words_only = configure(tmp_path / "words", estate, None)
    assert run(words_only, "index").code == 0
    assert run(words_only, "search", question, "--json").json() == []
    config = configure(tmp_path, estate, server.url)
    assert run(config, "index").code == 0
    found = run(config, "search", question, "--json")
    assert found.code == 0, found.stderr
    rows = found.json()
    assert rows[0]["path"] == "docs/eviction.md"
    assert (rows[0]["dense_rank"], rows[0]["lexical_rank"], rows[0]["bm25"]) == (1, None, None)
    assert all(row["dense_error"] is None for row in rows)
    # the question was embedded as asked (no passage prefix, no passage text)
    assert server.texts[-1] == question


def test_both_lists_show_their_ranks_and_the_score_follows_the_order(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    config = configure(tmp_path, estate, server.url)
    assert run(config, "index").code == 0
    rows = run(config, "search", "when does the backup job run each night?", "--json").json()
    top = rows[0]
    assert top["path"] == "docs/backups.md"
    assert top["lexical_rank"] == 1 and top["dense_rank"] == 1 and top["bm25"] < 0
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores)  # lower is better, best first


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (["500"], "failed with HTTP 500"),
        (["unauthorized"], "refused the request (401)"),
        (["die"], "cannot reach"),
        (["short"], "returned 7 vectors for 8 texts"),
        (["mixed"], "mixed or impossible dimensions"),
        (["nan"], "not finite numbers"),
        (["strings"], "not numbers"),
        (["huge"], "which Scout does not read"),
        (["gzip"], "compressed"),
        (["redirect"], "HTTP 307"),
        (["echo_key"], "[key withheld]"),
    ],
)
def test_a_failing_or_lying_server_is_exit_6_naming_it_and_the_passages_stay_searchable(
    tmp_path: Path, estate: Path, script: list[str], said: str
) -> None:
    with FakeEmbeddings(script, api_key=CANARY_KEY) as api:
        config = configure(tmp_path, estate, api.url)
        done = run(config, "index", "--json")
    assert done.code == 6, done.stderr
    assert done.stderr.startswith("scout: ") and done.stderr.count("\n") == 1, done.stderr
    assert said in done.stderr and "127.0.0.1" in done.stderr
    assert CANARY_KEY not in done.stderr + done.stdout
    with Store.open(tmp_path / "scout.db") as store:
        assert store.passage_count() == PASSAGES  # indexed, and kept
    words = configure(tmp_path, estate, None)
    assert run(words, "search", "backup job", "--json").json()[0]["path"] == "docs/backups.md"


def test_a_429_is_waited_out_and_retried(tmp_path: Path, estate: Path) -> None:
    with FakeEmbeddings(["429", "success"], api_key=CANARY_KEY) as api:
        done = run(configure(tmp_path, estate, api.url), "index", "--json")
    assert done.code == 0, done.stderr
    assert [entry["status"] for entry in api.log[:2]] == [429, 200]


def test_a_server_that_dies_mid_index_keeps_what_it_returned_and_the_next_index_goes_on(
    tmp_path: Path, estate: Path
) -> None:
    with FakeEmbeddings(["success", "success", "die"], api_key=CANARY_KEY) as api:
        done = run(configure(tmp_path, estate, api.url), "index", "--json")
    assert done.code == 6
    assert len(vectors(tmp_path)) == 16  # two batches came back and were kept
    with FakeEmbeddings(api_key=CANARY_KEY) as api:
        again = run(configure(tmp_path, estate, api.url), "index", "--json")
    assert again.code == 0, again.stderr
    assert again.json()["embeddings"]["embedded"] == PASSAGES - 16
    assert len(api.texts) == PASSAGES - 16  # nothing embedded twice


def test_another_model_embeds_everything_again_and_drops_the_old_vectors(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    assert run(configure(tmp_path, estate, server.url), "index").code == 0
    sent = len(server.texts)
    other = configure(tmp_path, estate, server.url, model="all-minilm")
    done = run(other, "index", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["embeddings"]["started_over"] is True
    assert len(server.texts) - sent == PASSAGES
    assert {model for model, _ in vectors(tmp_path)} == {"openai:all-minilm"}


def test_a_new_dimension_behind_the_same_name_embeds_everything_again(
    tmp_path: Path, estate: Path
) -> None:
    with FakeEmbeddings(dimension=64) as api:
        assert run(configure(tmp_path, estate, api.url), "index").code == 0
    # the next page embedded comes back in 32 dimensions: every passage is embedded again
    builder = EstateBuilder(tmp_path / "more", url="https://gitlab.acme.example")
    builder.project("acme/ops").commit({**DOCS, "docs/new.md": "# New\n\nA new page.\n"}, "Add")
    builder.write()
    with FakeEmbeddings(dimension=32) as api:
        done = run(configure(tmp_path, tmp_path / "more", api.url), "index", "--json")
        assert done.code == 0, done.stderr
        assert done.json()["embeddings"]["started_over"] is True
        assert len(set(api.texts)) == PASSAGES + 1
    assert {n for _, n in vectors(tmp_path)} == {32 * 4}


def test_reembed_embeds_every_passage_again_when_a_model_changed_in_place(
    tmp_path: Path, estate: Path
) -> None:
    with FakeEmbeddings(dimension=64) as api:
        assert run(configure(tmp_path, estate, api.url), "index").code == 0
    with FakeEmbeddings(dimension=16) as api:
        config = configure(tmp_path, estate, api.url)
        asked = run(config, "search", "backups", "--json")
        assert "scout index --reembed" in asked.stderr  # the question says how to mend it
        done = run(config, "index", "--reembed", "--json")
        assert done.code == 0, done.stderr
        assert done.json()["embeddings"]["embedded"] == PASSAGES
        assert run(config, "search", "backups", "--json").json()[0]["dense_error"] is None
    assert {n for _, n in vectors(tmp_path)} == {16 * 4}


def test_a_passage_prefix_is_part_of_the_model_and_a_query_prefix_is_not(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    config = configure(
        tmp_path,
        estate,
        server.url,
        query_prefix="search_query: ",
        passage_prefix="search_document: ",
    )
    assert run(config, "index").code == 0
    assert all(text.startswith("search_document: ") for text in server.texts)
    assert run(config, "search", "backups", "--json").code == 0
    assert server.texts[-1] == "search_query: backups"
    assert {m for m, _ in vectors(tmp_path)} == {
        f"openai:{MODEL} passage_prefix='search_document: '"
    }


def test_at_question_time_an_unreachable_server_means_words_alone_said_once(
    tmp_path: Path, estate: Path
) -> None:
    with FakeEmbeddings() as api:
        config = configure(tmp_path, estate, api.url)
        assert run(config, "index").code == 0
    # the server is gone now
    done = run(config, "search", "when does the backup job run?", "--json")
    assert done.code == 0, done.stderr
    rows = done.json()
    assert rows[0]["path"] == "docs/backups.md"
    assert {row["dense_error"] for row in rows} == {"unavailable"}
    assert {row["dense_rank"] for row in rows} == {None}
    assert done.stderr.count("\n") == 1 and "searching by words alone" in done.stderr
    asked = run(config, "ask", "when does the backup job run?", "--json")
    assert asked.code == 0 and asked.json()["dense_error"] == "unavailable"


def test_a_question_vector_of_another_dimension_is_words_alone(
    tmp_path: Path, estate: Path
) -> None:
    with FakeEmbeddings(dimension=64) as api:
        assert run(configure(tmp_path, estate, api.url), "index").code == 0
    with FakeEmbeddings(dimension=16) as api:
        done = run(configure(tmp_path, estate, api.url), "search", "backups", "--json")
    assert done.code == 0, done.stderr
    assert done.json()[0]["dense_error"] == "unavailable"
    assert "16 dimensions" in done.stderr and "64" in done.stderr


def test_a_rebuild_keeps_the_vectors_and_sends_nothing(
    tmp_path: Path, estate: Path, server: FakeEmbeddings
) -> None:
    config = configure(tmp_path, estate, server.url)
    assert run(config, "index").code == 0
    sent = len(server.log)
    rebuilt = run(config, "index", "--rebuild", "--json")
    assert rebuilt.code == 0, rebuilt.stderr
    assert rebuilt.json()["kept"]["vectors"] == PASSAGES
    assert rebuilt.json()["embeddings"]["embedded"] == 0
    assert len(server.log) == sent


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"kind": "openai", "model": MODEL}, "needs base_url"),
        ({"kind": "openai", "model": MODEL, "base_url": "ftp://x"}, "http(s) URL"),
        ({"kind": "openai", "model": MODEL, "base_url": "http://u:p@h/v1"}, "no credentials"),
        ({"kind": "openai", "model": "", "base_url": "http://h/v1"}, "retrieval.embeddings.model"),
        ({"kind": "openai", "model": MODEL, "base_url": "http://h/v1", "batch": 0}, "batch"),
        ({"kind": "sentence-transformers", "model": MODEL}, "retrieval.embeddings.kind"),
        ({"kind": "openai", "model": MODEL, "base_url": "http://h/v1", "dims": 3}, "unknown key"),
        ({"kind": "openai", "model": "a\nb", "base_url": "http://h/v1"}, "printable"),
        ({"kind": "fastembed", "model": "x", "base_url": "http://h/v1"}, "no base_url"),
    ],
)
def test_malformed_embeddings_settings_are_exit_3_naming_the_key(
    tmp_path: Path, estate: Path, table: dict[str, object], message: str
) -> None:
    config = tmp_path / "scout.toml"
    text = render_config(estate, **{"retrieval.embeddings": table})  # type: ignore[arg-type]
    config.write_text(text, encoding="utf-8")
    done = run(config, "search", "backups", "--json")
    assert done.code == 3, done.stderr
    assert message in done.stderr and done.stderr.count("\n") == 1


DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"


@pytest.mark.slow
def test_a_sweep_embeds_the_signposted_targets_it_lets_in(tmp_path: Path) -> None:
    demo_estate(tmp_path / "estate")
    with FakeEmbeddings() as api:
        config = tmp_path / "scout.toml"
        config.write_text(
            DEMO_CONFIG.read_text(encoding="utf-8")
            + f'\n[retrieval.embeddings]\nkind = "openai"\nbase_url = "{api.url}"\n'
            'model = "all-minilm"\n',
            encoding="utf-8",
        )
        indexed = run(config, "index", "--json", key=None)
        assert indexed.code == 0, indexed.stderr
        swept = run(config, "sweep", "--json", key=None)
        assert swept.code == 0, swept.stderr
        summary = swept.json()
        assert summary["accepted"] > 0
        assert summary["embeddings"]["embedded"] > 0  # the targets' passages, and no others
        with Store.open(tmp_path / "scout.db") as store:
            assert store.passage_count("signpost") > 0
            assert store.count_unembedded("openai:all-minilm") == 0
        sent = len(api.texts)
        assert run(config, "sweep", "--json", key=None).json()["embeddings"]["embedded"] == 0
        assert len(api.texts) == sent


@pytest.mark.slow
def test_a_sweep_whose_embeddings_fail_keeps_its_verdicts_and_exits_6(tmp_path: Path) -> None:
    demo_estate(tmp_path / "estate")
    with FakeEmbeddings(["500"]) as api:
        config = tmp_path / "scout.toml"
        config.write_text(DEMO_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
        assert run(config, "index", key=None).code == 0
        config.write_text(
            config.read_text(encoding="utf-8")
            + f'\n[retrieval.embeddings]\nkind = "openai"\nbase_url = "{api.url}"\n'
            'model = "all-minilm"\n',
            encoding="utf-8",
        )
        swept = run(config, "sweep", "--json", key=None)
    assert swept.code == 6, swept.stderr
    summary = swept.json()
    assert summary["accepted"] > 0 and "failed with HTTP 500" in summary["embeddings_error"]
    assert "failed with HTTP 500" in swept.stderr


def test_the_fastembed_kind_indexes_and_searches_through_scout(
    tmp_path: Path, estate: Path
) -> None:
    # A model built here, read from a local folder (an air-gapped machine): the real fastembed
    # loading and inference path, through `scout index` and `scout search`.
    from tests.helpers.tiny_model import build

    words = sorted({w.strip(".,`#:").lower() for text in DOCS.values() for w in text.split()})
    model = build(tmp_path / "model", vocabulary=[w for w in words if w.isalnum()])
    config = tmp_path / "scout.toml"
    config.write_text(
        render_config(  # type: ignore[arg-type]
            estate, **{"retrieval.embeddings": {"kind": "fastembed", "model": str(model)}}
        ),
        encoding="utf-8",
    )
    indexed = run(config, "index", "--json", key=None)
    assert indexed.code == 0, indexed.stderr
    embedded = indexed.json()["embeddings"]
    assert embedded["embedded"] == PASSAGES and embedded["model"].startswith("fastembed:model#")
    found = run(config, "search", "backup job snapshots", "--json", key=None)
    assert found.code == 0, found.stderr
    rows = found.json()
    assert rows[0]["path"] == "docs/backups.md" and rows[0]["dense_rank"] is not None
    assert run(config, "index", "--json", key=None).json()["embeddings"]["embedded"] == 0
