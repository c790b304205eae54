"""Docs site URLs back to the source files that build them, per site generator.

Pure: no forge here. A page path below a site's URL gives candidate source paths, most likely
first (`source_candidates`); the first that exists at the project's head is the page's source.
When none exists, `find_source` matches the page against the URL every source file under the
root is published at, which needs the file list and (for Hugo's `url`/`slug`/`aliases`, a
Docusaurus `slug`, a MkDocs blog post's `date`/`slug`) the files' front matter.

Generators and what they publish (each rule from the generator's own documentation):
- MkDocs (mkdocs.org, "Configuration: use_directory_urls"): `x.md` at `x/` (or `x.html`),
  `x/index.md` and `x/README.md` at `x/`; Material's blog plugin publishes `posts/p.md` at
  `blog/YYYY/MM/DD/<slug>/`.
- Hugo (gohugo.io, "URL management"): `x.md` at `x/`, a bundle `x/_index.md` or `x/index.md` at
  `x/`, URLs lowercased; front matter `url` replaces the path, `slug` the last segment, and
  `aliases` are old URLs that still lead to the page.
- Sphinx (sphinx-doc.org, "Builders"): `x.rst` (or `.md`, `.txt`) at `x.html`, or at `x/` with
  the dirhtml builder; `index.rst` at the folder.
- Docusaurus (docusaurus.io, "Docs: slug" and "Number prefixes"): front matter `slug` is the URL
  (absolute from the docs root, or relative to the file's folder); otherwise the path with
  number prefixes (`01-`) stripped, a folder's `index.md`, `README.md` or same-named doc at the
  folder; `next/` is the unreleased `docs/` folder when the root is a released version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

GENERATORS = ("mkdocs", "hugo", "sphinx", "docusaurus")
SOURCE_SUFFIXES = (".md", ".rst")
PAGE_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt")
INDEX_NAMES = ("index", "README")

# Config files that name a generator, by file name (at the repository root or above the root).
_CONFIG_FILES = {
    "mkdocs.yml": "mkdocs",
    "mkdocs.yaml": "mkdocs",
    "hugo.toml": "hugo",
    "hugo.yaml": "hugo",
    "hugo.json": "hugo",
    "conf.py": "sphinx",
    "docusaurus.config.js": "docusaurus",
    "docusaurus.config.ts": "docusaurus",
    "docusaurus.config.mjs": "docusaurus",
}

# A source read for its front matter is one forge request (a GitLab file read); a page no
# candidate builds reads at most this many, the likeliest first (see `find_source`).
MAX_SCANNED = 100

_NUMBER_PREFIX = re.compile(r"^\d+[-_.]\s*")
# Front matter lines: each value is matched greedily to the line's end and stripped after, so no
# lazy group sits before a greedy tail of blanks (which tries every split of a run of spaces).
_YAML_ITEM = re.compile(r"^[ \t]*-[ \t]+(\S.*)$")
_YAML_FIELD = re.compile(r"^([A-Za-z_][\w-]*):(.*)$")
_TOML_FIELD = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*=(.*)$")


def detect_generator(paths: Iterable[str], root: str) -> str | None:
    """The generator a repository's config files name: one in the docs root or a folder above
    it (the repository root included) wins over one elsewhere; None when there is none."""
    base = root.strip("/")
    above = {""}
    parts = base.split("/") if base else []
    for depth in range(1, len(parts) + 1):
        above.add("/".join(parts[:depth]))
    found: dict[str, str] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        generator = _CONFIG_FILES.get(name)
        if generator is not None and folder in above:
            found.setdefault(folder, generator)
    if not found:
        return None
    return found[max(found, key=len)]  # the nearest to the root


def source_candidates(page: str, root: str, generator: str = "auto") -> list[str]:
    """Source files that could build ``page`` (a path below the site URL), under ``root``,
    most likely first, for one generator (`auto`: any of them).

    ``""`` and ``guide/`` are folder pages (``index.md``, Hugo's ``_index.md``, ``README.md``) or
    ``guide.md``; ``guide/x.html`` and ``guide/x`` are ``guide/x.md`` or ``guide/x/index.md``; a
    source suffix is taken as written.
    """
    page = page.split("?", 1)[0].split("#", 1)[0]
    folder_page = page.endswith("/") or not page.strip("/")
    parts = [p for p in page.split("/") if p]
    if any(p in (".", "..") for p in parts):
        return []
    base = root.strip("/")
    prefix = f"{base}/" if base else ""
    stem = "/".join(parts)
    indexes = _index_names(generator)
    names: list[str] = []
    suffix = PurePosixPath(stem).suffix if not folder_page else ""
    if suffix in SOURCE_SUFFIXES:
        names.append(stem)
    else:
        if suffix in (".html", ".htm"):
            stem = stem[: -len(suffix)]
            if PurePosixPath(stem).name == "index":  # `x/index.html` is the folder page
                stem = stem[: -len("index")].rstrip("/")
                folder_page = True
        folder = f"{stem}/" if stem else ""
        if stem:
            names += [f"{stem}{s}" for s in SOURCE_SUFFIXES]
        names += [f"{folder}{index}{s}" for s in SOURCE_SUFFIXES for index in indexes]
        if generator in ("auto", "docusaurus") and stem:  # a folder's same-named doc
            last = stem.rsplit("/", 1)[-1]
            names += [f"{folder}{last}{s}" for s in SOURCE_SUFFIXES]
    seen: dict[str, None] = {}
    for name in names:
        seen.setdefault(prefix + name, None)
    return list(seen)


def _index_names(generator: str) -> tuple[str, ...]:
    if generator == "hugo":
        return ("_index", "index")
    if generator == "sphinx":
        return ("index",)
    if generator == "auto":
        return ("index", "_index", "README")
    return INDEX_NAMES


def page_urls(path: str, root: str, generator: str, front: Callable[[str], object]) -> set[str]:
    """The page paths (below the site URL, no leading "/", folders ending in "/") a source file
    under ``root`` is published at, and old ones that still lead to it (Hugo `aliases`).
    ``front(key)`` gives a front matter value of the file: a string, a list or None."""
    base = root.strip("/")
    rel = path[len(base) + 1 :] if base else path
    stem, _, suffix = rel.rpartition(".")
    if not stem or f".{suffix.lower()}" not in PAGE_SUFFIXES:
        return set()
    folder, _, name = stem.rpartition("/")
    urls: set[str] = set()
    if generator == "hugo":
        page = f"{folder}/" if name in ("_index", "index") else f"{stem}/"
        slug = _text(front("slug"))
        if slug and name not in ("_index", "index"):
            page = f"{folder}/{slug}/" if folder else f"{slug}/"
        url = _text(front("url"))
        urls.add(_hugo_path(url) if url else _hugo_path(page))
        for alias in _items(front("aliases")):
            urls.add(_hugo_path(alias))
    elif generator == "docusaurus":
        slug = _text(front("slug"))
        folders = [_NUMBER_PREFIX.sub("", f) for f in folder.split("/") if f]
        if slug:
            if slug.startswith("/"):
                urls.add(slug.strip("/"))
            else:
                urls.add("/".join([*folders, slug.strip("/")]))
        else:
            plain = _NUMBER_PREFIX.sub("", name)
            last = folders[-1] if folders else None
            if plain.lower() in ("index", "readme") or plain == last:
                urls.add("/".join(folders))
            else:
                urls.add("/".join([*folders, plain]))
    elif generator == "mkdocs":
        page = f"{folder}/" if name in INDEX_NAMES else f"{stem}/"
        urls.add(page.lstrip("/"))
        if "/posts/" in f"/{folder}/":  # Material's blog plugin: blog/YYYY/MM/DD/<slug>/
            blog = folder.split("/posts", 1)[0]
            date = _text(front("date"))
            match = re.match(r"(\d{4})-(\d{2})-(\d{2})", date or "")
            slug = _text(front("slug")) or name
            if match:
                urls.add(f"{blog}/{'/'.join(match.groups())}/{slug}/".lstrip("/"))
    else:  # sphinx
        page = f"{folder}/" if name == "index" else f"{stem}.html"
        urls.add(page.lstrip("/"))
        urls.add(f"{folder}/" if name == "index" else f"{stem}/")
    return {u if u != "/" else "" for u in urls}


def _hugo_path(url: str) -> str:
    """A Hugo page path as the site serves it: lowercased, spaces as hyphens, a folder URL."""
    path = url.strip().strip("/").lower().replace(" ", "-")
    if not path:
        return ""
    return path if PurePosixPath(path).suffix else f"{path}/"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _items(value: object) -> list[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return [value] if isinstance(value, str) and value else []


def normalise_page(page: str, generator: str) -> str:
    """A page path as `page_urls` spells it: no query or fragment, Hugo's lowercased, a trailing
    "/index.html" as the folder, Docusaurus' without a trailing slash."""
    page = page.split("?", 1)[0].split("#", 1)[0].lstrip("/")
    if page.endswith("index.html") and generator != "sphinx":
        page = page[: -len("index.html")]
    if generator == "hugo":
        page = page.lower()
        if page and not PurePosixPath(page).suffix and not page.endswith("/"):
            page += "/"
    if generator == "docusaurus":
        page = page.rstrip("/")
    if generator == "mkdocs" and page and not page.endswith("/") and page.endswith(".html"):
        page = page[: -len(".html")] + "/"
    return page


def find_source(
    page: str,
    root: str,
    generator: str,
    paths: list[str],
    read: Callable[[str], str | None],
) -> str | None:
    """The source under ``root`` that ``generator`` publishes at ``page`` (or publishes at a
    URL that still leads to it), matched by each file's published URLs; None when none is.
    Files whose name matches the page's last segment are read first, and at most MAX_SCANNED."""
    if generator not in GENERATORS:  # no config file names one: try each in turn
        for each in GENERATORS:
            found = find_source(page, root, each, paths, read)
            if found is not None:
                return found
        return None
    base = root.strip("/")
    prefix = f"{base}/" if base else ""
    wanted = normalise_page(page, generator)
    sources = [
        p
        for p in paths
        if p.startswith(prefix) and PurePosixPath(p).suffix.lower() in PAGE_SUFFIXES
    ]
    if generator == "docusaurus" and base.startswith("versioned_docs/version-"):
        first, _, rest = wanted.partition("/")
        if first == "next":  # the unreleased version lives in docs/
            return find_source(rest, "docs/", generator, paths, read)
        if any(p.startswith(f"versioned_docs/version-{first}/") for p in paths):
            return find_source(rest, f"versioned_docs/version-{first}/", generator, paths, read)
    last = wanted.rstrip("/").rsplit("/", 1)[-1]
    last = PurePosixPath(last).stem if generator != "docusaurus" else last

    segments = {_NUMBER_PREFIX.sub("", p).lower() for p in wanted.strip("/").split("/") if p}

    def likely(path: str) -> tuple[int, str]:
        """Files named like the page's last segment first, then those with a folder or name
        like any of its segments: front matter moves pages, but rarely far from their names."""
        parts = [_NUMBER_PREFIX.sub("", p).lower() for p in path[len(prefix) :].split("/")]
        name = PurePosixPath(parts[-1]).stem
        if name == last.lower():
            return (0, path)
        return (1 if segments & {*parts[:-1], name} else 2, path)

    for path in sorted(sources, key=likely)[:MAX_SCANNED]:
        needs_front = generator in ("hugo", "docusaurus") or "/posts/" in path
        fields = front_matter(read(path) or "") if needs_front else {}
        if wanted in page_urls(path, root, generator, fields.get):
            return path
    return None


def front_matter(text: str) -> dict[str, object]:
    """The top-level one-line keys of a file's YAML front matter (`key: value`, and `key:`
    followed by `- item` lines, or `[a, b]`), unquoted; {} without front matter. A line scan,
    not a YAML parser: only a few scalars are needed, and YAML parsers are a large attack
    surface for untrusted files."""
    if text.startswith("+++"):
        return _toml_front_matter(text)
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    fields: dict[str, object] = {}
    key: str | None = None
    for line in text[3:end].split("\n"):
        item = _YAML_ITEM.match(line)
        if item is not None and key is not None:
            listed = fields.setdefault(key, [])
            if isinstance(listed, list):
                listed.append(_unquote(item.group(1)))
            continue
        match = _YAML_FIELD.match(line)
        if match is None:
            key = None
            continue
        key, value = match.group(1), match.group(2).strip(" \t")
        if value.startswith("[") and value.endswith("]"):
            fields[key] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            fields[key] = _unquote(value.split(" #", 1)[0])
    return fields


def _toml_front_matter(text: str) -> dict[str, object]:
    """Top-level `key = "value"` and `key = ["a", "b"]` lines of Hugo's TOML front matter."""
    end = text.find("\n+++", 3)
    if end < 0:
        return {}
    fields: dict[str, object] = {}
    for line in text[3:end].split("\n"):
        match = _TOML_FIELD.match(line)
        value = match.group(2).strip() if match is not None else ""
        if match is None or not value:
            continue
        key = match.group(1)
        if value.startswith("[") and value.endswith("]"):
            fields[key] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        elif value[:1] in "'\"":
            fields[key] = _unquote(value)
    return fields


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
