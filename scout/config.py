"""Scout's TOML configuration (docs/design.md, "Config"), validated by pydantic.

Rules: unknown keys are errors (a typo must not silently fall back to a default); every error names
the file, the dotted key and what was expected; secrets are never read from the file, only from the
environment variable the file names; relative paths resolve against the config file's folder.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scout.doc_paths import language_tag
from scout.errors import ConfigError
from scout.schedule import parse_schedule
from scout.toml_input import TomlProblem, read_toml

DEFAULT_FILE = "scout.toml"
ENV_VAR = "SCOUT_CONFIG"
# The one list of provider names: the config validates against it and the registry in
# scout/providers/ is keyed by it (it lives here, below the providers, which read the config).
ProviderName = Literal["claude-local", "anthropic", "openai", "offline"]
# retrieval.expand: "auto" expands when the answer provider is a model (not offline), "model"
# always asks the provider, "off" never does
Expand = Literal["auto", "model", "off"]
EmbeddingsKind = Literal["openai", "fastembed"]
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# Providers that serve whatever model the server has: the file must name it.
_MODEL_REQUIRED = ("openai",)
MAX_KEY_CHARS = 64  # a longer unknown key is no typo of a known one: no suggestion looked for


@dataclass(frozen=True)
class Endpoint:
    """Where an HTTP provider that is not Anthropic's sends its calls, and what they cost.

    ``api_key_env`` names the variable holding the key (never the key itself); the prices are US
    dollars per million tokens, None when unknown (the cost is then reported as unknown).
    """

    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    price_in: float | None = None
    price_out: float | None = None


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ForgeConfig(_Section):
    kind: Literal["gitlab", "local"]
    url: str = Field(description="the GitLab URL Scout calls the API on")
    # The public name issues and docs link to, when it is not the API's address (an internal
    # address behind a proxy); references on it are the instance's own.
    web_url: str | None = None
    # More names of the same instance (an old host name, a second proxy): references on them
    # are read as on web_url; a GitLab-shaped URL on any other host is counted other_host.
    aliases: list[str] = []
    token_env: str = "GITLAB_TOKEN"
    path: Path | None = None
    groups: list[str] = Field(min_length=1)
    # The sweep's issue listing: GraphQL reads issues with their notes, about a tenth of REST's
    # requests; auto falls back to REST where the instance does not answer GraphQL.
    api: Literal["auto", "graphql", "rest"] = "auto"

    @field_validator("url", "web_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("expected an http(s) URL such as https://gitlab.example.com")
        return value.rstrip("/")

    @field_validator("aliases")
    @classmethod
    def _alias_urls(cls, value: list[str]) -> list[str]:
        bad = [item for item in value if not item.startswith(("http://", "https://"))]
        if bad:
            raise ValueError(f"expected http(s) URLs such as https://git.example.com: {bad}")
        return [item.rstrip("/") for item in value]

    @property
    def public_url(self) -> str:
        """The URL issues, docs and people use for this GitLab (``web_url``, else ``url``)."""
        return self.web_url or self.url

    @property
    def other_names(self) -> tuple[str, ...]:
        """Every other URL that means this instance: the API's, when it differs, and aliases."""
        names = [self.url] if self.web_url and self.web_url != self.url else []
        return tuple(dict.fromkeys([*names, *self.aliases]))

    @field_validator("path")
    @classmethod
    def _no_nul(cls, value: Path | None) -> Path | None:
        _refuse_nul(value)
        return value

    @field_validator("groups")
    @classmethod
    def _clean_groups(cls, value: list[str]) -> list[str]:
        cleaned = [g.strip("/") for g in value]
        if any(not g for g in cleaned):
            raise ValueError("expected non-empty group paths such as 'acme'")
        return cleaned

    @model_validator(mode="after")
    def _local_needs_path(self) -> ForgeConfig:
        if self.kind == "local" and self.path is None:
            raise ValueError("kind = 'local' needs path = '<estate directory>'")
        return self


class CorpusConfig(_Section):
    visibility: list[Literal["public", "internal", "private"]] = ["public"]
    exclude_projects: list[str] = []
    exclude_paths: list[str] = []
    include_archived: bool = False
    # Translated copies of pages (locale folders, `page.ja.md`) in other languages are left out.
    languages: list[str] = Field(default=["en"], min_length=1)

    @field_validator("languages")
    @classmethod
    def _language_tags(cls, value: list[str]) -> list[str]:
        bad = [item for item in value if language_tag(item) is None]
        if bad:
            raise ValueError(f"expected ISO 639-1 language codes such as 'en' or 'pt-br': {bad}")
        return [item.lower() for item in value]


class DocsSiteConfig(_Section):
    url: str
    project: str
    root: str = "docs/"
    check_live: bool = False
    # How page URLs map to sources; "auto" reads which generator the repository's config file
    # (mkdocs.yml, hugo.toml, conf.py, docusaurus.config.js) names, and tries each when none.
    generator: Literal["auto", "mkdocs", "hugo", "sphinx", "docusaurus"] = "auto"

    @field_validator("url")
    @classmethod
    def _site_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("expected an http(s) URL such as https://docs.example.com/project/")
        return value if value.endswith("/") else value + "/"


class AnswerConfig(_Section):
    provider: ProviderName = "claude-local"
    model: str = "claude-haiku-4-5"
    passages: int = Field(default=8, ge=1, le=20)
    # seconds a provider may take for one reply (an answer or one addresses judgement)
    timeout: float = Field(default=120.0, gt=0, le=3600)
    # The openai provider: any server speaking OpenAI's Chat Completions (Ollama, vLLM,
    # llama.cpp's server, LM Studio, OpenAI itself). The key is read from the variable named here;
    # a local server needs none, and then no Authorization header is sent.
    base_url: str = Endpoint.base_url
    api_key_env: str = Endpoint.api_key_env
    # US dollars per million input and output tokens; unset: the cost is reported as unknown
    price_in: float | None = Field(default=None, ge=0, le=10_000)
    price_out: float | None = Field(default=None, ge=0, le=10_000)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        return _http_base_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _variable_name(cls, value: str) -> str:
        return _variable(value)

    @model_validator(mode="after")
    def _prices_together(self) -> AnswerConfig:
        if (self.price_in is None) != (self.price_out is None):
            raise ValueError("set both price_in and price_out (USD per million tokens), or neither")
        return self

    def endpoint(self) -> Endpoint:
        """Where the openai provider calls, and the prices its tokens cost."""
        return Endpoint(self.base_url, self.api_key_env, self.price_in, self.price_out)

    def model_is_set(self) -> bool:
        """Whether the file names a model (the default names a Claude model, which no
        OpenAI-compatible server serves)."""
        return "model" in self.model_fields_set and bool(self.model.strip())


def _http_base_url(value: str) -> str:
    """An http(s) base URL with no credentials in it, without its trailing slash."""
    example = "such as http://127.0.0.1:11434/v1"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  # raises ValueError for a port that is not one
    except ValueError:
        raise ValueError(f"expected an http(s) URL {example}") from None
    unsafe = not value.isprintable() or any(c.isspace() for c in value)
    if unsafe or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http(s) URL {example}")
    if parts.username is not None or parts.password is not None:
        raise ValueError("no credentials in the URL: the key goes in the api_key_env variable")
    return value.rstrip("/")


def _variable(value: str) -> str:
    if not _VARIABLE.fullmatch(value):
        raise ValueError("expected the name of an environment variable such as OPENAI_API_KEY")
    return value


class EmbeddingsConfig(_Section):
    """``[retrieval.embeddings]``: a sentence-embedding model beside BM25 (absent: none)."""

    kind: EmbeddingsKind
    # The name the server (openai) or fastembed knows the model by; for fastembed also a local
    # folder holding an ONNX model (an air-gapped machine).
    model: str = Field(min_length=1, max_length=512)
    base_url: str | None = None  # openai: the server's /v1 URL (required for that kind)
    api_key_env: str | None = None  # openai: the variable holding a key; unset: no header
    cache_dir: Path | None = None  # fastembed: where models are downloaded to and read from
    batch: int = Field(default=64, ge=1, le=1024)  # passages a request (index time)
    timeout: float = Field(default=30.0, gt=0, le=3600)  # seconds a request may take
    # Text some models want before a query or a passage (nomic-embed-text: "search_query: " and
    # "search_document: "; e5: "query: " and "passage: "); changing either re-embeds everything.
    query_prefix: str = Field(default="", max_length=200)
    passage_prefix: str = Field(default="", max_length=200)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else _http_base_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _variable_name(cls, value: str | None) -> str | None:
        return None if value is None else _variable(value)

    @field_validator("model", "query_prefix", "passage_prefix")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.isprintable():
            raise ValueError("expected printable text on one line")
        return value

    @model_validator(mode="after")
    def _kind_needs(self) -> EmbeddingsConfig:
        if self.kind == "openai" and self.base_url is None:
            raise ValueError(
                "kind 'openai' needs base_url, the server's /v1 URL such as "
                "http://127.0.0.1:11434/v1 (Ollama)"
            )
        if self.kind == "fastembed" and (self.base_url or self.api_key_env):
            raise ValueError("kind 'fastembed' runs the model in-process: no base_url, no key")
        if self.kind == "openai" and self.cache_dir is not None:
            raise ValueError("cache_dir is for kind 'fastembed' (a server keeps its own models)")
        return self


class RetrievalConfig(_Section):
    # "auto": with a model provider, the provider suggests docs words for each question before
    # retrieval (scout.retrieve.expansion); "model": always ask; "off": the question's own words.
    expand: Expand = "auto"
    # seconds expansion may take, inside the answer's own time: past it, the question's words
    expand_timeout: float = Field(default=20.0, gt=0, le=600)
    # a reply is reused for the same question (as the gap backlog groups them) this long
    expand_cache_days: int = Field(default=30, ge=0, le=3650)
    embeddings: EmbeddingsConfig | None = None

    def expands(self, provider: str) -> bool:
        """Whether a question answered by ``provider`` has its terms expanded first."""
        if self.expand == "auto":
            return provider != "offline"
        return self.expand == "model"


class IngestConfig(_Section):
    schedule: str = "*/30 * * * *"
    # addresses judgements (model calls) in flight at once during a sweep
    concurrency: int = Field(default=4, ge=1, le=32)
    # Confidential issues and internal notes are for project members: unread unless asked for.
    include_confidential: bool = False

    @field_validator("schedule")
    @classmethod
    def _valid_schedule(cls, value: str) -> str:
        # Checked here, not when the worker starts: a typo must fail every command, naming the key.
        parse_schedule(value)
        return value


class StoreConfig(_Section):
    path: Path = Path("scout.db")
    # seconds a command waits for another process's write lock before exit 7 naming it
    busy_timeout: float = Field(default=10.0, gt=0, le=3600)
    # The question log (the gap backlog's source) keeps this many days and rows at most: older
    # rows go as new ones are logged, so askers cannot grow it without bound.
    question_log_days: int = Field(default=180, ge=1, le=36_600)
    question_log_rows: int = Field(default=100_000, ge=100, le=10_000_000)

    @field_validator("path")
    @classmethod
    def _no_nul(cls, value: Path) -> Path:
        _refuse_nul(value)
        return value


def _refuse_nul(value: Path | None) -> None:
    """ValueError for a path no file can have: NUL ends a C string."""
    if value is not None and "\0" in str(value):
        raise ValueError("a path cannot hold a NUL character")


RATE_UNITS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}


def parse_rate(value: str) -> tuple[int, float]:
    """``"30/minute"`` as (30 requests, 60.0 seconds); ValueError naming the form otherwise."""
    count, _, unit = value.strip().partition("/")
    if not count.strip().isdigit() or unit.strip() not in RATE_UNITS or int(count) < 1:
        raise ValueError("expected a rate such as '30/minute' (per second, minute or hour)")
    return int(count), RATE_UNITS[unit.strip()]


# A host name (letters, digits, hyphens, dots) or an IP address, as allowed_hosts lists them.
_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?"
)


def host_name(value: str) -> str | None:
    """``value`` as a host is compared: lower case, an IPv6 address without brackets; None when
    it is no host name or IP address."""
    text = value.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    return text.rstrip(".") if _HOST_NAME.fullmatch(text) else None


class ServeConfig(_Section):
    """``scout serve`` and ``scout mcp``: every limit a public channel needs, safe by default."""

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    # names of variables holding comma-separated keys (unset: no key needed / maintainer routes off)
    api_keys_env: str | None = None
    maintainer_keys_env: str | None = None
    # The server is meant to need no key: without it, an api_keys_env variable that is unset or
    # empty, or no keys on an address other than loopback, stops `scout serve` from starting.
    # (a TOML boolean only: a string such as "no" must not open a server)
    open: bool = Field(default=False, strict=True)
    # Addresses or networks of the reverse proxies whose X-Forwarded-For names the client; any
    # other peer is the client itself, whatever it sends.
    trusted_proxies: list[str] = []
    # Host header values served besides the listening host and loopback names (421 otherwise).
    allowed_hosts: list[str] = []
    # seconds a connection may take to send a whole request (or stay idle) before it is closed
    header_timeout: float = Field(default=10.0, gt=0, le=300)
    max_concurrent_answers_per_client: int = Field(default=1, ge=1, le=64)
    rate_limit: str = "30/minute"
    max_concurrent_answers: int = Field(default=4, ge=1, le=64)
    # how long a question may wait for an answer slot before a 503
    queue_timeout: float = Field(default=30.0, gt=0, le=600)
    max_question_chars: int = Field(default=2000, ge=1, le=4000)
    max_body_bytes: int = Field(default=65_536, ge=1_024, le=4_194_304)
    # seconds one answer may take end to end before a 504 (the provider is stopped at it too)
    answer_timeout: float = Field(default=60.0, gt=0, le=3600)
    cors_origins: list[str] = []

    @field_validator("rate_limit")
    @classmethod
    def _valid_rate(cls, value: str) -> str:
        parse_rate(value)
        return value

    @field_validator("api_keys_env", "maintainer_keys_env")
    @classmethod
    def _key_variable(cls, value: str | None) -> str | None:
        if value is not None and not _VARIABLE.fullmatch(value):
            raise ValueError("expected the name of an environment variable such as SCOUT_API_KEYS")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        networks = []
        for item in value:
            try:
                networks.append(str(ipaddress.ip_network(item.strip(), strict=False)))
            except ValueError:
                raise ValueError(
                    f"expected IP addresses or networks such as '127.0.0.1' or '10.0.0.0/8': "
                    f"{item!r}"
                ) from None
        return networks

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        hosts = [host_name(item) for item in value]
        bad = [item for item, host in zip(value, hosts, strict=True) if host is None]
        if bad:
            raise ValueError(
                f"expected host names or IP addresses such as 'scout.example.com' (no scheme, "
                f"port or wildcard): {bad}"
            )
        return [host for host in hosts if host is not None]

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        bad = [o for o in value if o == "*" or not o.startswith(("http://", "https://"))]
        if bad:
            raise ValueError(f"expected origins such as 'https://chat.example.com', no '*': {bad}")
        return [o.rstrip("/") for o in value]

    def rate(self) -> tuple[int, float]:
        return parse_rate(self.rate_limit)

    def keys(self, which: str) -> frozenset[str] | None:
        """The keys in the variable ``which`` names (``api_keys_env`` or ``maintainer_keys_env``);
        None when the key is not configured or its variable is unset or empty."""
        name = getattr(self, which)
        raw = os.environ.get(name, "") if name else ""
        keys = frozenset(k.strip() for k in raw.split(",") if k.strip())
        return keys or None


class Config(_Section):
    forge: ForgeConfig
    corpus: CorpusConfig = CorpusConfig()
    docs_site: list[DocsSiteConfig] = []
    answer: AnswerConfig = AnswerConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    ingest: IngestConfig = IngestConfig()
    store: StoreConfig = StoreConfig()
    serve: ServeConfig = ServeConfig()
    source: Path = Path(DEFAULT_FILE)

    def token(self) -> str | None:
        """The forge token, read from the environment only (never from the file)."""
        return os.environ.get(self.forge.token_env) or None


def check_model(source: Path, answer: AnswerConfig, provider: str) -> None:
    """ConfigError when ``provider`` needs ``answer.model`` set and the file does not set it."""
    if provider in _MODEL_REQUIRED and not answer.model_is_set():
        raise ConfigError(
            f"{source}: answer.model: required key is missing for provider {provider!r} "
            "(the name the server knows the model by, such as 'llama3.1:8b' or 'gpt-4.1-mini')"
        )


def _candidates(explicit: str | os.PathLike[str] | None) -> list[Path]:
    if explicit:
        return [Path(explicit)]
    if os.environ.get(ENV_VAR):
        return [Path(os.environ[ENV_VAR])]
    return [Path(DEFAULT_FILE)]


def _describe(error: Any, hint: str = "") -> str:
    where = _dotted(error) or "(top level)"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{where}: unknown key{hint}"
    if kind == "missing":
        return f"{where}: required key is missing"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message} (got {error.get('input')!r})"


def _dotted(error: Any) -> str:
    return ".".join(str(p) for p in error["loc"])


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the table at ``loc`` (a config location, list indexes included) may hold."""
    model: Any = Config
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if _is_table(model) else None
        if field is None:
            return []
        annotation = field.annotation
        inner = [a for a in getattr(annotation, "__args__", ()) if isinstance(a, type)]
        model = next((a for a in [annotation, *inner] if _is_table(a)), None)
    if not _is_table(model):
        return []
    return [name for name in model.model_fields if name != "source"]


def _is_table(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _first_problem(errors: list[Any]) -> tuple[str, int]:
    """The problem to name, and how many others there are. An unknown key comes first, with the
    key it may be a typo of; the missing key it was meant to be is the same mistake, not
    another (``kinds = "local"``: "forge.kinds: unknown key (did you mean 'kind'?)")."""
    meant: dict[int, str] = {}  # an unknown key's error -> the key it may be a typo of
    for n, error in enumerate(errors):
        name = str(error["loc"][-1]) if error["loc"] else ""
        if error["type"] == "extra_forbidden" and len(name) <= MAX_KEY_CHARS:
            parent = tuple(error["loc"][:-1])
            close = get_close_matches(name, _keys_at(parent), n=1, cutoff=0.6)
            if close:
                meant[n] = ".".join(str(p) for p in (*parent, close[0]))
    typos = set(meant.values())
    missing = [e for e in errors if e["type"] == "missing" and _dotted(e) in typos]
    unknown = [n for n, e in enumerate(errors) if e["type"] == "extra_forbidden"]
    first = unknown[0] if unknown else 0
    hint = f" (did you mean {meant[first].rpartition('.')[2]!r}?)" if first in meant else ""
    return _describe(errors[first], hint), len(errors) - 1 - len(missing)


def load_config(explicit: str | os.PathLike[str] | None = None) -> Config:
    """Find, parse and validate the config; raise ConfigError naming the file and the key."""
    paths = _candidates(explicit)
    found = next((p for p in paths if p.is_file()), None)
    if found is None:
        looked = ", ".join(str(p.absolute()) for p in paths)
        raise ConfigError(
            f"no config file found (looked at {looked}); pass --config PATH or set {ENV_VAR}"
        )
    try:
        data = read_toml(found)
    except (OSError, TomlProblem) as exc:  # OSError: gone between the look and the read
        raise ConfigError(f"{found}: {exc}") from exc
    if "source" in data:
        raise ConfigError(f"{found}: source: unknown key")
    try:
        config = Config.model_validate({**data, "source": found.absolute()})
    except ValidationError as exc:
        first, others = _first_problem(exc.errors())
        more = f" (and {others} more)" if others else ""
        raise ConfigError(f"{found}: {first}{more}") from exc
    check_model(found, config.answer, config.answer.provider)
    return _resolve_paths(config)


def _resolve_paths(config: Config) -> Config:
    base = config.source.parent
    forge = config.forge
    if forge.path is not None and not forge.path.is_absolute():
        forge = forge.model_copy(update={"path": (base / forge.path).resolve()})
    store = config.store
    if not store.path.is_absolute():
        store = store.model_copy(update={"path": (base / store.path).resolve()})
    retrieval = config.retrieval
    embeddings = retrieval.embeddings
    if embeddings is not None and embeddings.cache_dir and not embeddings.cache_dir.is_absolute():
        embeddings = embeddings.model_copy(update={"cache_dir": (base / embeddings.cache_dir)})
        retrieval = retrieval.model_copy(update={"embeddings": embeddings})
    if embeddings is not None and embeddings.kind == "fastembed":
        # model is a name fastembed lists or a folder: a relative folder is the config's
        model = Path(embeddings.model).expanduser()
        if not model.is_absolute() and (base / model).is_dir():
            embeddings = embeddings.model_copy(update={"model": str((base / model).resolve())})
            retrieval = retrieval.model_copy(update={"embeddings": embeddings})
    return config.model_copy(update={"forge": forge, "store": store, "retrieval": retrieval})
