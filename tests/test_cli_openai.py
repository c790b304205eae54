"""The openai provider end to end: ``scout ask``, ``scout sweep`` and ``scout eval`` through the
real CLI against the loopback Chat Completions server, with a canary key that must appear nowhere
but in the Authorization header: not in output, logs (the SDK's debug log on), error messages,
the store, or the environment of any child process (``git`` and ``claude`` included)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scout.cli.main import cli
from scout.config import Endpoint, load_config
from scout.providers import configured_provider
from scout.store import Store
from tests.fakes.corpus import make_store
from tests.fakes.openai_api import USAGE, FakeOpenAI
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result
from tests.helpers.sdk import ONE_WORKER, Lazy, preloaded
from tests.helpers.wrapped import wrapped_command

pytestmark = ONE_WORKER
openai_provider = Lazy("scout.providers.openai")
_imported = preloaded(openai_provider)

KEY_ENV = "SCOUT_CANARY_OPENAI_KEY"
CANARY_KEY = "sk-proj-CANARY7d21a9e4f0b3c6d8e1f2a5b7"
DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
QUESTION = "How do I rotate the database keys?"


def openai_config(directory: Path, url: str, **answer: object) -> Path:
    values: dict[str, object] = {
        "provider": "openai",
        "model": "llama3.1:8b",
        "base_url": url,
        "api_key_env": KEY_ENV,
        **answer,
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in values.items() if value is not None]
    config = directory / "scout.toml"
    config.write_text(
        '[forge]\nkind = "local"\nurl = "https://gitlab.acme.example"\npath = "estate"\n'
        'groups = ["acme"]\n\n[answer]\n' + "\n".join(lines) + '\n\n[store]\npath = "scout.db"\n',
        encoding="utf-8",
    )
    return config


def store_bytes(directory: Path) -> bytes:
    conn = sqlite3.connect(directory / "scout.db")
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    return b"".join(path.read_bytes() for path in directory.glob("scout.db*"))


def recording_git(directory: Path) -> tuple[Path, Path]:
    """A ``git`` first on PATH that writes the names of the variables it got, then runs git."""
    record = directory / "git-env.txt"
    return wrapped_command(directory, "git", f'env | cut -d= -f1 >> "{record}"\n'), record


def test_ask_answers_through_the_server_and_the_key_is_only_on_the_wire(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    make_store(tmp_path).close()
    with FakeOpenAI(api_key=CANARY_KEY, flavour="vllm") as api:
        config = openai_config(tmp_path, api.url, price_in=0.5, price_out=1.5)
        env = {KEY_ENV: CANARY_KEY, "OPENAI_LOG": "debug"}
        asked = scout("ask", QUESTION, "--json", config=config, env=env)
        shown = scout("ask", QUESTION, config=config, env=env)
    assert asked.code == 0, asked.stderr
    document = asked.json()
    assert document["outcome"] == "answered"
    assert [c["path"] for c in document["citations"]] == ["docs/credentials.md"]
    assert shown.code == 0 and "vault rotate" in shown.stdout
    # the key went where it belongs, and nowhere else: search terms and an answer for the first
    # question, an answer alone for the second (its terms came from the store's cache)
    assert [e["headers"]["authorization"] for e in api.log] == [f"Bearer {CANARY_KEY}"] * 3
    assert "llama3.1:8b" == api.log[0]["body"]["model"]
    for result in (asked, shown):
        assert "CANARY" not in result.stdout + result.stderr
    assert b"CANARY" not in store_bytes(tmp_path)
    with Store.open(tmp_path / "scout.db") as store:
        logged = [(q.provider, q.input_tokens, q.output_tokens, q.usd) for q in store.questions()]
    usd = (USAGE["prompt_tokens"] * 0.5 + USAGE["completion_tokens"] * 1.5) / 1_000_000
    assert logged == [
        ("openai", 240, 60, pytest.approx(2 * usd)),
        ("openai", 120, 30, pytest.approx(usd)),
    ]


def test_a_local_server_needs_no_key_and_gets_no_authorization_header(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    make_store(tmp_path).close()
    with FakeOpenAI(flavour="ollama") as api:
        config = openai_config(tmp_path, api.url)
        asked = scout("ask", QUESTION, "--json", config=config)
    assert asked.code == 0, asked.stderr
    assert "authorization" not in api.log[0]["headers"]
    with Store.open(tmp_path / "scout.db") as store:
        assert [q.usd for q in store.questions()] == [None]  # no prices set: cost unknown


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("echo_key", "failed with HTTP 400: Bad request from Bearer [key withheld]"),
        ("500", "failed with HTTP 500 after 2 retries"),
        ("invalid_json", "the model's reply was unusable twice: the reply is not valid JSON"),
        ("bad_utf8", "replied with a body that is not JSON"),
        ("huge_int", "replied with a body that is not JSON"),
    ],
)
def test_a_failing_server_is_exit_6_never_a_decline_and_never_shows_the_key(
    tmp_path: Path, scout: Callable[..., Result], fault: str, message: str
) -> None:
    make_store(tmp_path).close()
    with FakeOpenAI([fault], api_key=CANARY_KEY) as api:
        config = openai_config(tmp_path, api.url)
        failed = scout(
            "ask",
            QUESTION,
            "--json",
            config=config,
            env={KEY_ENV: CANARY_KEY, "OPENAI_LOG": "debug"},
        )
    assert (failed.code, failed.stdout) == (6, "")
    assert message in failed.stderr.splitlines()[-1], failed.stderr
    assert "CANARY" not in failed.stderr
    with Store.open(tmp_path / "scout.db") as store:
        assert store.questions() == []  # an incident, not an outcome


@pytest.mark.parametrize(
    ("answer", "args"),
    [
        ({"model": None}, ("ask", QUESTION)),
        ({"model": None}, ("index",)),
        ({"model": "  "}, ("ask", QUESTION)),
        ({"provider": "offline", "model": None}, ("ask", "--provider", "openai", QUESTION)),
        ({"provider": "offline", "model": None}, ("eval", "eval.toml", "--provider", "openai")),
    ],
)
def test_the_openai_provider_without_a_model_is_exit_3_naming_the_key(
    tmp_path: Path, scout: Callable[..., Result], answer: dict[str, object], args: tuple[str, ...]
) -> None:
    make_store(tmp_path).close()
    (tmp_path / "eval.toml").write_text('[[question]]\nquestion = "q"\nband = "unanswerable"\n')
    config = openai_config(tmp_path, "http://127.0.0.1:9/v1", **answer)
    failed = scout(*args, config=config)
    assert failed.code == 3, failed.stderr
    assert "answer.model: required key is missing for provider 'openai'" in failed.stderr


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"base_url": "localhost:11434"}, "answer.base_url: expected an http(s) URL"),
        ({"base_url": "http://"}, "answer.base_url: expected an http(s) URL"),
        ({"base_url": "http://h:99999/v1"}, "answer.base_url: expected an http(s) URL"),
        ({"base_url": "ftp://h/v1"}, "answer.base_url: expected an http(s) URL"),
        ({"base_url": "http://u:pw@h/v1"}, "answer.base_url: no credentials in the URL"),
        ({"base_url": "http://127.0.0.1:9/\u001b[31m"}, "answer.base_url: expected an http(s)"),
        ({"base_url": "http://127.0.0.1:9/v 1"}, "answer.base_url: expected an http(s) URL"),
        ({"base_url": "http://127.0.0.1:9/v1"}, None),
        ({"api_key_env": "OPENAI KEY"}, "answer.api_key_env: expected the name of an environment"),
        ({"api_key_env": ""}, "answer.api_key_env: expected the name of an environment"),
        ({"price_in": 1.0}, "answer: set both price_in and price_out"),
        ({"price_in": -1, "price_out": 1}, "answer.price_in: Input should be greater than"),
        ({"price_in": "cheap", "price_out": 1}, "answer.price_in: Input should be a valid number"),
        ({"base_url": ["http://x"]}, "answer.base_url: Input should be a valid string"),
    ],
)
def test_malformed_openai_settings_are_exit_3_naming_the_key(
    tmp_path: Path, answer: dict[str, object], message: str | None
) -> None:
    make_store(tmp_path).close()
    config = openai_config(tmp_path, "http://127.0.0.1:9/v1", **answer)
    done = CliRunner().invoke(cli, ["--config", str(config), "ask", QUESTION])
    if message is None:  # valid: the server is down, which is the provider's failure
        assert done.exit_code == 6 and "cannot reach http://127.0.0.1:9/v1" in done.stderr
        return
    assert done.exit_code == 3, done.output
    assert message in done.stderr


def test_eval_measures_a_model_behind_the_server(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(
        '[[question]]\nquestion = "How do I rotate the database keys?"\nband = "answerable"\n'
        'sources = [{ project = "acme/config", path = "docs/credentials.md" }]\n\n'
        '[[question]]\nquestion = "When do backups run nightly?"\nband = "answerable"\n'
        'sources = [{ project = "acme/ops", path = "docs/backups.md" }]\n\n'
        '[[question]]\nquestion = "Who restores a backup on weekends?"\nband = "unanswerable"\n',
        encoding="utf-8",
    )
    decline = {"answer": "", "cited": [], "declined": True, "reason": "the passages do not say"}
    questions = {"weekends": decline, "backups run": decline}
    with FakeOpenAI(by_question=questions, flavour="llamacpp") as api:
        config = openai_config(tmp_path, api.url, provider="offline", model="claude-haiku-4-5")
        done = CliRunner().invoke(
            cli,
            ["--config", str(config), "eval", str(eval_file), "--json"]
            + ["--provider", "openai", "--model", "qwen2.5:7b"],
        )
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["provider"], report["model"], report["questions"]) == ("openai", "qwen2.5:7b", 3)
    assert {band: figures["correct"] for band, figures in report["bands"].items()} == {
        "answerable": 1,  # the "model" declines the backups question the page answers
        "contradicts": 0,
        "covered": 0,
        "unanswerable": 1,
    }
    # with a model, each question's search terms are asked for first: a call each
    assert report["cost"] == {
        "input_tokens": 720,
        "output_tokens": 180,
        "usd": None,
        "usd_per_question": None,
    }
    expansion = report["expansion"]
    assert (expansion["calls"], expansion["calls_saved_by_cache"], expansion["errors"]) == (3, 0, 0)
    assert (expansion["input_tokens"], expansion["input_tokens_per_call"]) == (360, 120.0)
    assert {e["body"]["model"] for e in api.log} == {"qwen2.5:7b"}
    with Store.open(tmp_path / "scout.db") as store:
        assert store.questions() == []  # eval runs are not logged


@pytest.mark.slow
def test_a_sweep_judges_addresses_through_the_server_and_no_child_sees_the_key(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    demo_estate(tmp_path / "estate")
    bin_dir, git_env = recording_git(tmp_path)
    with FakeOpenAI(api_key=CANARY_KEY, flavour="ollama") as api:
        config = tmp_path / "scout.toml"
        openai_answer = f'model = "llama3.1:8b"\nbase_url = "{api.url}"\napi_key_env = "{KEY_ENV}"'
        config.write_text(
            DEMO_CONFIG.read_text(encoding="utf-8")
            .replace('provider = "offline"', 'provider = "openai"')
            .replace('model = "claude-haiku-4-5"', openai_answer),
            encoding="utf-8",
        )
        env = {
            KEY_ENV: CANARY_KEY,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "OPENAI_LOG": "debug",
        }
        results = [scout("index", "--json", config=config, env=env)]
        results.append(scout("sweep", "--json", config=config, env=env))
        results.append(
            scout("ask", "How are FX rates rounded in the ledger?", config=config, env=env)
        )
    for result in results:
        assert result.code == 0, result.stderr
        assert "CANARY" not in result.stdout + result.stderr
    swept = results[1].json()
    judged = [e for e in api.log if "AddressesOutput" in json.dumps(e["body"])]
    assert judged and swept["accepted"] > 0
    assert all(e["headers"]["authorization"] == f"Bearer {CANARY_KEY}" for e in api.log)
    assert b"CANARY" not in store_bytes(tmp_path)
    names = set(git_env.read_text().split())
    assert "GIT_CEILING_DIRECTORIES" in names  # the recording git did run for Scout
    assert KEY_ENV not in names


def test_the_claude_child_never_gets_the_openai_key(
    tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_store(tmp_path).close()
    config = openai_config(tmp_path, "http://127.0.0.1:9/v1", provider="claude-local")
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    done = CliRunner().invoke(cli, ["--config", str(config), "ask", QUESTION, "--json"])
    assert done.exit_code == 0, done.stderr
    calls = [json.loads(line) for line in claude_bin.read_text().splitlines()]
    assert len(calls) == 2  # search terms, then the answer
    for call in calls:
        assert KEY_ENV not in call["env"] and "PATH" in call["env"]


def test_the_config_makes_the_provider_with_its_endpoint(tmp_path: Path) -> None:
    path = openai_config(
        tmp_path, "http://127.0.0.1:11434/v1/", timeout=300, price_in=0.1, price_out=0.2
    )
    made = configured_provider(load_config(path))
    assert isinstance(made, openai_provider.OpenAIProvider)
    assert (made.model, made.timeout) == ("llama3.1:8b", 300)
    assert made.endpoint == Endpoint("http://127.0.0.1:11434/v1", KEY_ENV, 0.1, 0.2)
    other = configured_provider(load_config(path), "openai", model="qwen2.5:7b", timeout=5)
    assert isinstance(other, openai_provider.OpenAIProvider) and (other.model, other.timeout) == (
        "qwen2.5:7b",
        5,
    )


def test_query_expansion_asks_the_server_with_the_question_alone(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    make_store(tmp_path).close()
    with FakeOpenAI(flavour="ollama", expansion={"terms": ["vault", "rotation", "rotate"]}) as api:
        config = openai_config(tmp_path, api.url)
        config.write_text(
            config.read_text(encoding="utf-8") + '\n[retrieval]\nexpand = "model"\n',
            encoding="utf-8",
        )
        found = scout("search", QUESTION, "--json", config=config)
        asked = scout("ask", QUESTION, "--json", config=config)
    assert found.code == 0, found.stderr
    assert asked.code == 0 and asked.json()["outcome"] == "answered", asked.stderr
    # the question's own word ("rotate") is dropped; the model's other terms are searched
    assert found.json()[0]["expanded"] == ["vault", "rotation"]
    expansions = [e for e in api.log if "ExpansionOutput" in json.dumps(e["body"])]
    assert len(expansions) == 1  # for search; ask found the reply in the store's cache
    for entry in expansions:
        user = entry["body"]["messages"][1]["content"]
        assert QUESTION in user and "PASSAGE" not in user  # the question alone
