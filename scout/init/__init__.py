"""``scout init``: a working config (and the estate a local forge reads) from what the user has.

Two ways in: ``--gitlab URL --group PATH`` (the token from the variable ``--token-env`` names,
checked with one request a group), or ``--repo PATH`` once per local git repository or plain
folder, any layout. Main rules: nothing is written until everything checked out (the written
files are validated as ``scout index`` will read them first); nothing existing is overwritten;
no secret is written (a config names the token's variable, never the token).
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scout.config import DEFAULT_FILE, ENV_VAR, Config
from scout.errors import ConfigError, ForgeError, GroupNotFound, UsageError
from scout.init.sources import Source, inspect

LOCAL_GROUP = "local"
# The web address of a local estate's projects that have no remote: RFC 6761 reserves .invalid,
# so a link on it is plainly no page anyone can open, until estate.toml names one (web_url).
NO_WEB = "https://local.invalid"
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_GROUP = re.compile(
    r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}(?:/[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}){0,20}"
)


@dataclass(frozen=True)
class Project:
    """A project of the written estate: its path and the source it is read from."""

    path: str
    source: Source

    def to_json(self) -> dict[str, Any]:
        site = self.source.site
        return {
            "path": self.path,
            "place": str(self.source.place),
            "kind": self.source.kind,
            "branch": self.source.branch,
            "web_url": self.source.web_url,
            "docs": self.source.docs,
            "files": self.source.files,
            "generator": site.generator if site else None,
            "site": site.url if site else None,
        }


@dataclass(frozen=True)
class Initialised:
    """What ``scout init`` wrote and what to run next."""

    config: Path
    forge: str  # "local" or "gitlab"
    provider: str
    provider_why: str
    next: str
    estate: Path | None = None
    projects: tuple[Project, ...] = ()
    groups: tuple[str, ...] = ()
    url: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "config": str(self.config),
            "forge": self.forge,
            "estate": str(self.estate) if self.estate else None,
            "url": self.url,
            "groups": list(self.groups),
            "projects": [p.to_json() for p in self.projects],
            "provider": self.provider,
            "next": self.next,
        }


def config_path(explicit: str | None) -> Path:
    """Where the config is written: ``--config``, else ``$SCOUT_CONFIG``, else ./scout.toml
    (where every other command looks for it)."""
    return Path(explicit or os.environ.get(ENV_VAR) or DEFAULT_FILE).absolute()


def default_provider() -> tuple[str, str]:
    """The answer provider a new config names, and why: a model when one is at hand."""
    if shutil.which("claude"):
        return "claude-local", "the claude CLI is on PATH"
    return (
        "offline",
        "no claude CLI on PATH: offline mode shows where to look, no model answers; set "
        "[answer] provider to claude-local, anthropic or openai for answers",
    )


def init_local(
    target: Path,
    repos: list[str],
    *,
    estate: Path | None,
    group: str,
    provider: tuple[str, str],
    next_command: str,
) -> Initialised:
    """Write ``target`` and an estate of ``repos`` (paths); UsageError before writing anything
    when a path is not a usable source, a file exists, or a project name is taken twice."""
    _check_group(group)
    estate = (estate or target.parent / f"{target.stem}-estate").absolute()
    _refuse_existing(target, estate)
    sources = [inspect(repo) for repo in repos]
    projects = _projects(sources, group)
    relative = os.path.relpath(estate, target.parent)
    config_text = local_config(relative, group, projects, provider, store_name(target))
    estate_text = estate_toml(projects)
    _validated(target, config_text)
    tomllib.loads(estate_text)
    estate.mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_new(estate / "estate.toml", estate_text)
    _write_new(target, config_text)
    notes = tuple(
        f"{p.path} has no web page (no origin remote): its links are on {NO_WEB}; give it one "
        f"as web_url in {estate / 'estate.toml'}"
        for p in projects
        if p.source.web_url is None
    )
    return Initialised(
        target, "local", *provider, next_command, estate, tuple(projects), (group,), None, notes
    )


def _projects(sources: list[Source], group: str) -> list[Project]:
    projects: list[Project] = []
    taken: set[str] = set()
    for source in sources:
        if any(p.source.place == source.place for p in projects):
            raise UsageError(f"--repo {source.given}: given twice ({source.place})")
        name, n = source.name, 1
        while f"{group}/{name}".casefold() in taken:
            n += 1
            name = f"{source.name}-{n}"
        taken.add(f"{group}/{name}".casefold())
        projects.append(Project(f"{group}/{name}", source))
    return projects


def init_gitlab(
    target: Path,
    url: str,
    groups: list[str],
    *,
    token_env: str,
    provider: tuple[str, str],
    next_command: str,
) -> Initialised:
    """Check each group with one request under the token, then write ``target``. ConfigError
    (exit 3) for an unset variable, a refused token or a group the token cannot see; ForgeError
    (exit 5) when GitLab cannot be reached; nothing is written then."""
    if not url.startswith(("http://", "https://")) or any(c.isspace() for c in url):
        raise UsageError(f"--gitlab {url!r}: expected an http(s) URL such as https://gitlab.com")
    url = url.rstrip("/")
    if not _VARIABLE.fullmatch(token_env):
        raise UsageError(
            f"--token-env {token_env!r}: expected a variable name such as GITLAB_TOKEN"
        )
    for group in groups:
        _check_group(group)
    _refuse_existing(target, None)
    token = os.environ.get(token_env)
    if not token:
        raise ConfigError(
            f"--token-env: ${token_env} is not set: export it with a GitLab token that can read "
            "the groups (the read_api scope), then run scout init again"
        )
    found = tuple(_checked_group(url, token, token_env, group) for group in groups)
    text = gitlab_config(url, found, token_env, provider, store_name(target))
    _validated(target, text)
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_new(target, text)
    return Initialised(target, "gitlab", *provider, next_command, None, (), found, url)


def _checked_group(url: str, token: str, token_env: str, group: str) -> str:
    from scout.forge.gitlab import GitLabForge

    forge = GitLabForge(url, token, [group], max_retries=0)
    try:
        data = forge.group(group)
    except GroupNotFound:
        raise ConfigError(
            f"--group {group}: GitLab at {url} has no group {group!r} that the token in "
            f"${token_env} can see: check the group's full path (as in its URL) and the "
            "token's access"
        ) from None
    except ForgeError as exc:
        if exc.reason == "unauthorized":
            raise ConfigError(
                f"GitLab at {url} refused the token in ${token_env}: check it is a token of this "
                "instance, not expired, with the read_api scope"
            ) from None
        raise ForgeError(exc.reason, f"cannot check --gitlab {url}: {exc}") from exc
    finally:
        forge.close()
    return str(data["full_path"])


def _check_group(group: str) -> None:
    if not _GROUP.fullmatch(group.strip("/")):
        raise UsageError(f"--group {group!r}: expected a group path such as 'acme' or 'acme/docs'")


def _refuse_existing(target: Path, estate: Path | None) -> None:
    if target.exists():
        raise UsageError(
            f"{target} exists: scout init never overwrites it; move it away or pass "
            "--config OTHER.toml"
        )
    store = target.parent / store_name(target)
    if store.exists():
        raise UsageError(
            f"{store} exists (another estate's index?): scout init would point a new config at "
            "it; move it away or init in another folder"
        )
    if estate is not None and estate.exists() and (not estate.is_dir() or any(estate.iterdir())):
        raise UsageError(
            f"{estate} exists and is not empty: scout init never overwrites it; move it away "
            "or pass --estate DIR"
        )


def store_name(target: Path) -> str:
    """The store beside a config: ``scout.db`` for ``scout.toml``, ``x.db`` for ``x.toml``."""
    return f"{target.stem}.db"


def _validated(target: Path, text: str) -> None:
    """The config as ``scout index`` will read it; a failure here is a bug in scout init."""
    data = tomllib.loads(text)
    try:
        Config.model_validate({**data, "source": target})
    except ValueError as exc:  # pydantic's ValidationError
        raise ConfigError(f"scout init wrote a config it cannot read back: {exc}") from exc


def _write_new(path: Path, text: str) -> None:
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UsageError(f"{path} exists: scout init never overwrites it") from None


# -- the files


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped."""
    import json

    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def local_config(
    estate: str, group: str, projects: list[Project], provider: tuple[str, str], store: str
) -> str:
    lines = [
        "# Written by `scout init`. Every key is in config/scout.example.toml (README,",
        '# "Configuration"); the projects are in the estate folder\'s estate.toml.',
        "",
        "[forge]",
        'kind = "local"                          # repositories and folders on this machine',
        f"url = {toml_string(NO_WEB)}          # projects without web_url link here",
        f"path = {toml_string(estate)}",
        f"groups = [{toml_string(group)}]",
        "",
        "[corpus]",
        'visibility = ["public"]',
    ]
    for project in projects:
        site = project.source.site
        if site is None or site.url is None:
            continue
        lines += [
            "",
            f"[[docs_site]]                           # from {site.config}",
            f"url = {toml_string(site.url)}",
            f"project = {toml_string(project.path)}",
            f"root = {toml_string(site.root)}",
            f"generator = {toml_string(site.generator)}",
        ]
    return "\n".join([*lines, *_answer_and_store(provider, store)]) + "\n"


def gitlab_config(
    url: str, groups: tuple[str, ...], token_env: str, provider: tuple[str, str], store: str
) -> str:
    listed = ", ".join(toml_string(g) for g in groups)
    lines = [
        "# Written by `scout init`. Every key is in config/scout.example.toml (README,",
        '# "Configuration").',
        "",
        "[forge]",
        'kind = "gitlab"',
        f"url = {toml_string(url)}",
        f"token_env = {toml_string(token_env)}         # the variable holding the token",
        f"groups = [{listed}]                   # subgroups included",
        "",
        "[corpus]",
        'visibility = ["public"]                 # add "internal" or "private" to read those',
    ]
    return "\n".join([*lines, *_answer_and_store(provider, store)]) + "\n"


def _answer_and_store(provider: tuple[str, str], store: str) -> list[str]:
    name, why = provider
    return [
        "",
        "[answer]",
        f"# {why}",
        f"provider = {toml_string(name)}",
        "",
        "[store]",
        f"path = {toml_string(store)}",
    ]


def estate_toml(projects: list[Project]) -> str:
    lines = [
        '# Written by `scout init`: the projects Scout reads (README, "Your own docs").',
        "# repo: a git repository, read at default_branch; folder: a plain folder, read through",
        "# snapshots kept in snapshots/; web_url: the page links are built on.",
        f"url = {toml_string(NO_WEB)}",
    ]
    for project in projects:
        source = project.source
        lines += [
            "",
            "[[project]]",
            f"path = {toml_string(project.path)}",
            f"{source.kind} = {toml_string(str(source.place))}",
            f"default_branch = {toml_string(source.branch)}",
            'visibility = "public"',
            "archived = false",
        ]
        if source.web_url:
            lines.append(f"web_url = {toml_string(source.web_url)}")
    return "\n".join(lines) + "\n"
