"""Config loading: where it is found, what it must contain, and how errors read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scout.config import load_config
from scout.errors import ConfigError

GOOD = """
[forge]
kind = "local"
url = "https://gitlab.acme.example/"
path = "estate"
groups = ["acme"]

[[docs_site]]
url = "https://docs.acme.example/handbook"
project = "acme/handbook"

[store]
path = "data/scout.db"
"""


@pytest.mark.parametrize("key", ["[forge]\n", "[store]\n"])
def test_a_path_with_a_nul_names_the_key(tmp_path: Path, key: str) -> None:
    # NUL ends a C string: no file has one, and opening one raised ValueError (exit 1)
    target = tmp_path / "scout.toml"
    table = GOOD.index(key) + len(key)
    start = GOOD.index("path = ", table)
    end = GOOD.index("\n", start)
    target.write_text(GOOD[:start] + 'path = "x\\u0000y"' + GOOD[end:])
    with pytest.raises(ConfigError, match=r"path: a path cannot hold a NUL character"):
        load_config(target)


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    target = tmp_path / "conf" / "scout.toml"
    target.write_text(GOOD)
    config = load_config(target)
    assert config.forge.path == (tmp_path / "conf" / "estate").resolve()
    assert config.store.path == (tmp_path / "conf" / "data" / "scout.db").resolve()
    assert config.forge.url == "https://gitlab.acme.example"
    assert config.docs_site[0].url == "https://docs.acme.example/handbook/"
    assert config.docs_site[0].root == "docs/"
    assert config.answer.provider == "claude-local" and config.answer.passages == 8


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[answer]\npasages = 3\n", "answer.pasages: unknown key"),
        ("[answer]\npassages = 'eight'\n", "answer.passages: Input should be a valid integer"),
        ("[answer]\npassages = 50\n", "answer.passages: Input should be less than or equal to 20"),
        (
            "[answer]\nprovider = 'gpt'\n",
            "answer.provider: Input should be 'claude-local', 'anthropic', 'openai' or 'offline'",
        ),
        (
            "[corpus]\nvisibility = ['secret']\n",
            "corpus.visibility.0: Input should be 'public', 'internal' or 'private'",
        ),
        (
            "[corpus]\ninclude_archived = 'maybe'\n",
            "corpus.include_archived: Input should be a valid boolean",
        ),
        ("[surprise]\nx = 1\n", "surprise: unknown key"),
        ("[ingest]\nschedule = 'every tuesday'\n", "ingest.schedule: 'every tuesday' is neither"),
        ("[ingest]\nschedule = '0m'\n", "ingest.schedule: '0m': the interval must be positive"),
        ("[ingest]\nschedule = '61 * * * *'\n", "ingest.schedule: minute 61 is outside 0-59"),
        ("[ingest]\nschedule = '0 9 * * 8'\n", "ingest.schedule: day of week 8 is outside 0-7"),
        ("source = 'x'\n", "source: unknown key"),
        ("question_log_days = 0\n", "store.question_log_days: Input should be greater than"),
        ("question_log_rows = 10\n", "store.question_log_rows: Input should be greater than"),
        ("question_log_rows = 'many'\n", "store.question_log_rows: Input should be a valid int"),
        ("[serve]\nopen = 'yes'\n", "serve.open: Input should be a valid boolean"),
        ("[serve]\ntrusted_proxies = ['nope']\n", "serve.trusted_proxies: expected IP addresses"),
        ("[serve]\ntrusted_proxies = ['10.0.0.0/33']\n", "serve.trusted_proxies: expected IP"),
        ("[serve]\ntrusted_proxies = '127.0.0.1'\n", "serve.trusted_proxies: Input should be"),
        ("[serve]\nallowed_hosts = ['https://x']\n", "serve.allowed_hosts: expected host names"),
        ("[serve]\nallowed_hosts = ['*.acme.example']\n", "serve.allowed_hosts: expected host"),
        ("[serve]\nallowed_hosts = ['x:443']\n", "serve.allowed_hosts: expected host names"),
        ("[serve]\nallowed_hosts = ['']\n", "serve.allowed_hosts: expected host names"),
        ("[serve]\nallowed_hosts = [1]\n", "serve.allowed_hosts.0: Input should be a valid str"),
        ("[serve]\nheader_timeout = 0\n", "serve.header_timeout: Input should be greater than"),
        ("[serve]\nheader_timeout = 'x'\n", "serve.header_timeout: Input should be a valid num"),
        (
            "[serve]\nmax_concurrent_answers_per_client = 0\n",
            "serve.max_concurrent_answers_per_client: Input should be greater than",
        ),
        (
            "[serve]\nmax_concurrent_answers_per_client = 65\n",
            "serve.max_concurrent_answers_per_client: Input should be less than",
        ),
        ("[serve]\napi_keys_env = 'MY KEYS'\n", "serve.api_keys_env: expected the name of an"),
    ],
)
def test_a_wrong_key_or_type_names_the_key(tmp_path: Path, extra: str, message: str) -> None:
    target = tmp_path / "scout.toml"
    target.write_text(extra + GOOD if extra.startswith("source") else GOOD + extra)
    with pytest.raises(ConfigError) as caught:
        load_config(target)
    assert str(caught.value).startswith(f"{target}: ")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[forge]\nkind = 'local'\nurl = 'https://g.example'\ngroups = ['acme']\n", "needs path"),
        (
            "[forge]\nkind = 'gitlab'\nurl = 'g.example'\ngroups = ['acme']\n",
            "forge.url: expected an http(s) URL",
        ),
        ("[forge]\nkind = 'gitlab'\nurl = 'https://g.example'\ngroups = []\n", "forge.groups"),
        (
            "[forge]\nkind = 'gitlab'\nurl = 'https://g.example'\ngroups = ['a']\napi = 'soap'\n",
            "forge.api: Input should be 'auto', 'graphql' or 'rest'",
        ),
        ("[answer]\nprovider = 'offline'\n", "forge: required key is missing"),
        ("[forge\n", "not valid TOML"),
    ],
)
def test_invalid_config_files(tmp_path: Path, body: str, message: str) -> None:
    target = tmp_path / "scout.toml"
    target.write_text(body)
    with pytest.raises(ConfigError, match=None) as caught:
        load_config(target)
    assert message in str(caught.value)


def test_a_missing_config_names_every_path_it_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCOUT_CONFIG", raising=False)
    with pytest.raises(ConfigError) as caught:
        load_config(None)
    assert str(tmp_path / "scout.toml") in str(caught.value)
    monkeypatch.setenv("SCOUT_CONFIG", str(tmp_path / "elsewhere.toml"))
    with pytest.raises(ConfigError) as caught:
        load_config(None)
    assert str(tmp_path / "elsewhere.toml") in str(caught.value)


def test_the_environment_variable_is_used_when_no_path_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "other.toml"
    target.write_text(GOOD)
    monkeypatch.setenv("SCOUT_CONFIG", str(target))
    assert load_config(None).source == target.absolute()


def test_the_token_comes_only_from_the_named_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "scout.toml"
    target.write_text(
        GOOD.replace('groups = ["acme"]', 'groups = ["acme"]\ntoken_env = "ACME_TOKEN"')
    )
    monkeypatch.delenv("ACME_TOKEN", raising=False)
    config = load_config(target)
    assert config.token() is None
    monkeypatch.setenv("ACME_TOKEN", "glpat-secret")
    assert config.token() == "glpat-secret"
    target.write_text(GOOD.replace('groups = ["acme"]', 'groups = ["acme"]\ntoken = "inline"'))
    with pytest.raises(ConfigError, match="forge.token: unknown key"):
        load_config(target)


ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "name", ["config/scout.example.toml", "config/demo.toml", "scout/demo/demo.toml"]
)
def test_the_example_and_demo_configs_are_valid(name: str) -> None:
    # A missing file is a ConfigError too, so this fails if one is moved without updating it.
    config = load_config(ROOT / name)
    assert config.source == (ROOT / name).absolute()
    assert config.forge.groups and config.ingest.schedule


def test_every_key_of_every_section_is_in_the_example_config() -> None:
    # docs/design.md: "every key is in config/scout.example.toml" (set, or shown commented).
    from pydantic import BaseModel

    from scout.config import Config

    text = (ROOT / "config" / "scout.example.toml").read_text(encoding="utf-8")
    missing = []

    def walk(model: type[BaseModel], where: str) -> None:
        for name, field in model.model_fields.items():
            if name == "source":
                continue
            kinds = [a for a in getattr(field.annotation, "__args__", ()) if isinstance(a, type)]
            inner = next((k for k in [field.annotation, *kinds] if _is_section(k)), None)
            if inner is not None:
                walk(inner, f"{where}{name}.")
            elif not re.search(rf"(?m)^\s*#?\s*{name}\s*=", text):
                missing.append(where + name)

    walk(Config, "")
    assert missing == []


def _is_section(kind: object) -> bool:
    from pydantic import BaseModel

    return isinstance(kind, type) and issubclass(kind, BaseModel)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # a misspelt required key: the unknown key is named, with the key it may be a typo of,
        # and the missing key it was meant to be is not counted as another problem
        (
            GOOD.replace('kind = "local"', 'kinds = "local"'),
            "forge.kinds: unknown key (did you mean 'kind'?)",
        ),
        (GOOD.replace("[forge]", "[froge]"), "froge: unknown key (did you mean 'forge'?)"),
        (
            GOOD.replace('url = "https://docs', 'urll = "https://docs'),
            "docs_site.0.urll: unknown key (did you mean 'url'?)",
        ),
        (
            GOOD + "[answer]\nprovder = 'offline'\n",
            "answer.provder: unknown key (did you mean 'provider'?)",
        ),
        # two mistakes: both counted, the unknown key first
        (
            GOOD.replace('kind = "local"', 'kinds = "local"') + "[corpus]\nlanguages = []\n",
            "forge.kinds: unknown key (did you mean 'kind'?) (and 1 more)",
        ),
        # nothing close: no guess
        (GOOD + "[answer]\nflavour = 'x'\n", "answer.flavour: unknown key"),
        (GOOD + "[answer]\n" + "k" * 200 + " = 1\n", "answer." + "k" * 200 + ": unknown key"),
    ],
)
def test_a_misspelt_key_is_named_with_the_key_it_may_mean(
    tmp_path: Path, body: str, message: str
) -> None:
    target = tmp_path / "scout.toml"
    target.write_text(body)
    with pytest.raises(ConfigError) as caught:
        load_config(target)
    assert str(caught.value) == f"{target}: {message}"
