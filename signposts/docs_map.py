"""Docs site URLs back to the source files that build them (MkDocs-style sites).

Pure: a page path below a site's root gives candidate source paths, most likely first. The first
candidate that exists at the project's head is the page's source.
"""

from __future__ import annotations

from pathlib import PurePosixPath

SOURCE_SUFFIXES = (".md", ".rst")
INDEX_NAMES = ("index", "README")


def source_candidates(page: str, root: str) -> list[str]:
    """Source files that could build ``page`` (a path below the site URL), under ``root``.

    ``""`` and ``guide/`` are folder pages (``index.md``/``README.md``); ``guide/x.html`` and
    ``guide/x`` are ``guide/x.md`` or ``guide/x/index.md``; a source suffix is taken as written.
    """
    page = page.split("?", 1)[0].split("#", 1)[0].strip("/") if not page.endswith("/") else page
    parts = [p for p in page.split("/") if p]
    if any(p in (".", "..") for p in parts):
        return []
    base = root.strip("/")
    prefix = f"{base}/" if base else ""
    stem = "/".join(parts)
    names: list[str] = []
    if not parts or page.endswith("/"):
        if stem:
            names += [f"{stem}{suffix}" for suffix in SOURCE_SUFFIXES]
        folder = f"{stem}/" if stem else ""
        names += [f"{folder}{index}{suffix}" for suffix in SOURCE_SUFFIXES for index in INDEX_NAMES]
    else:
        suffix = PurePosixPath(stem).suffix
        if suffix in SOURCE_SUFFIXES:
            names.append(stem)
        else:
            if suffix in (".html", ".htm"):
                stem = stem[: -len(suffix)]
            names += [f"{stem}{s}" for s in SOURCE_SUFFIXES]
            names += [f"{stem}/{index}{s}" for s in SOURCE_SUFFIXES for index in INDEX_NAMES]
    seen: dict[str, None] = {}
    for name in names:
        seen.setdefault(prefix + name, None)
    return list(seen)
