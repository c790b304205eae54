"""What a docs generator's config file says about the site: where its pages' sources are and the
URL they are published at. Pure: text in, a ``Site`` out; nothing is run or imported.

Each reading follows the generator's own documentation, for the keys that matter here:
- MkDocs (mkdocs.org, "Configuration"): ``site_url``, ``docs_dir`` (default ``docs``), relative
  to the folder of ``mkdocs.yml``.
- Sphinx (sphinx-doc.org, "Configuration"): ``html_baseurl``; the sources are the folder of
  ``conf.py``. The file is Python: it is parsed, never executed, and only a plain string
  assignment counts.
- Docusaurus (docusaurus.io, "docusaurus.config.js", "Docs: routeBasePath"): ``url`` and
  ``baseUrl`` make the site; the docs plugin's ``path`` (default ``docs``) holds the sources and
  ``routeBasePath`` (default ``docs``) is where they are published under the site.
- Hugo (gohugo.io, "Configure Hugo"): ``baseURL`` and ``contentDir`` (default ``content``), in
  ``hugo.toml``, ``hugo.yaml``, ``hugo.json`` or the older ``config.toml``.

Every pattern is anchored to one line, which is cut to ``MAX_LINE`` first, and its classes stop
at the quote or end of line that closes them: linear in the file by construction.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

MAX_CONFIG_BYTES = 262_144  # a generator's config file read whole; a larger one is not read
MAX_LINE = 2_000

# file name -> generator; the order is the order they are looked for in one folder
CONFIG_NAMES = {
    "mkdocs.yml": "mkdocs",
    "mkdocs.yaml": "mkdocs",
    "conf.py": "sphinx",
    "docusaurus.config.js": "docusaurus",
    "docusaurus.config.ts": "docusaurus",
    "docusaurus.config.mjs": "docusaurus",
    "hugo.toml": "hugo",
    "hugo.yaml": "hugo",
    "hugo.json": "hugo",
    "config.toml": "hugo",
}

_YAML_KEY = re.compile(r"([A-Za-z_]+):(.*)")
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}")
_JS_STRING_KEY = re.compile(r"[ \t]*['\"]?([A-Za-z]+)['\"]?[ \t]*:[ \t]*(['\"`])([^'\"`\n]*)\2")


@dataclass(frozen=True)
class Site:
    """A docs site as its generator's config says: its sources' folder (``root``, relative to
    the repository, ending in ``/``, ``""`` for the top) and its URL, when the file names one."""

    generator: str
    config: str  # the config file's path in the repository
    root: str
    url: str | None


def read_site(path: str, text: str) -> Site | None:
    """The site the config file at ``path`` describes, or None when it is not one (a
    ``config.toml`` that is not Hugo's, a file too large to read)."""
    name = PurePosixPath(path).name
    generator = CONFIG_NAMES.get(name)
    if generator is None or len(text) > MAX_CONFIG_BYTES:
        return None
    folder = str(PurePosixPath(path).parent).removeprefix(".")
    reader = {"mkdocs": _mkdocs, "sphinx": _sphinx, "docusaurus": _docusaurus, "hugo": _hugo}
    found = reader[generator](name, text)
    if found is None:
        return None
    docs, url = found
    return Site(generator, path, _folder(folder, docs), _http(url))


def _mkdocs(_name: str, text: str) -> tuple[str, str | None]:
    values = _top_level_yaml(text)
    return values.get("docs_dir") or "docs", values.get("site_url")


def _sphinx(_name: str, text: str) -> tuple[str, str | None] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "", None  # still Sphinx's conf.py: its folder holds the sources
    url = None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "html_baseurl" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            url = node.value.value
    return "", url


def _docusaurus(_name: str, text: str) -> tuple[str, str | None]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _JS_STRING_KEY.match(line[:MAX_LINE])
        if match:
            values.setdefault(match.group(1), match.group(3).strip())
    site = values.get("url")
    if site:
        base = values.get("baseUrl", "/").strip("/")
        route = values.get("routeBasePath", "docs").strip("/")
        site = "/".join(part for part in (site.rstrip("/"), base, route) if part) + "/"
    return values.get("path", "docs"), site


def _hugo(name: str, text: str) -> tuple[str, str | None] | None:
    values: dict[str, str] = {}
    if name.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            return None
        values = {k.lower(): v for k, v in data.items() if isinstance(v, str)}
    elif name.endswith(".json"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if isinstance(data, dict):
            values = {k.lower(): v for k, v in data.items() if isinstance(v, str)}
    else:
        values = {k.lower(): v for k, v in _top_level_yaml(text).items()}
    if name == "config.toml" and "baseurl" not in values:
        return None  # some other tool's config.toml
    return values.get("contentdir") or "content", values.get("baseurl")


def _top_level_yaml(text: str) -> dict[str, str]:
    """``key: value`` lines at the top level of a YAML file, values unquoted (a full YAML
    parser is not needed for the few plain keys read here, and MkDocs files hold tags such as
    ``!!python/name:`` that a safe loader refuses)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _YAML_KEY.fullmatch(line[:MAX_LINE])
        if match:
            value = match.group(2).split(" #", 1)[0].strip().strip("'\"").strip()
            if value:
                values.setdefault(match.group(1), value)
    return values


def _folder(base: str, docs: str) -> str:
    """The sources' folder relative to the repository, ``""`` or ending in ``/``; a folder
    that climbs out of the repository counts as the config file's own."""
    parts = [p for p in PurePosixPath(base, docs.strip()).parts if p not in ("", ".")]
    if ".." in parts or (parts and parts[0] == "/"):
        parts = [p for p in PurePosixPath(base).parts if p not in ("", ".")]
    return "/".join(parts) + "/" if parts else ""


def _http(url: str | None) -> str | None:
    """A site URL as ``[[docs_site]] url`` takes it (http(s), ending in ``/``), or None; a URL
    the generator fills in at build time (`https://${HOSTNAME}`) is none."""
    if not url:
        return None
    url = url.strip()
    if not url.startswith(("http://", "https://")) or any(c in url for c in " \t\n{}$<>\"'`"):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host or not _HOST.fullmatch(host):
        return None
    return url if url.endswith("/") else url + "/"
