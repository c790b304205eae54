"""What a documentation path says on its own: whether it names a page of documentation, and
which language the page is a translation into.

Main rule: decided on the path alone, so that the forge can skip reading files that cannot qualify
and the corpus rules can judge a signpost target before reading it; it lives among the
foundations because both the forge and the corpus ask.

Documentation is a Markdown or reStructuredText file, or a README. A path is a translation when a
folder is a language tag under a folder that holds locales (`doc-locale/ja-jp/`, `i18n/fr/`,
`locales/de/`), or directly under a docs folder (`docs/ja/`, `content/fr/`), or when the file name
carries a language before its extension (`page.ja.md`, `README.zh-CN.md`). A language tag is an
ISO 639-1 code, optionally with a script or region (`pt-br`, `zh_Hans`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

DOC_SUFFIXES = {".md", ".markdown", ".mdx", ".rst"}
README_NAMES = {"readme", "readme.txt"}

# ISO 639-1 (two-letter) language codes.
ISO_639_1 = frozenset(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv
    cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht
    hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la
    lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj
    om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv
    sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
    """.split()
)

_TAG = re.compile(r"^([a-z]{2})(?:[-_](?:[a-z]{4}|[a-z]{2}|\d{3}))?$")
# Folders whose children are locales, and folders whose children may be a locale.
_LOCALE_PARENT = re.compile(r"locale|i18n|l10n|translations?|languages?|^lang$")
_DOCS_FOLDERS = {"doc", "docs", "content", "documentation", "website", "site", "src"}
# Two-letter folder names that are far more often something else under a docs folder.
_NOT_LOCALES = {"id", "is", "it", "no", "or", "as", "to", "ci", "io", "ts", "js", "os"}
# ... and before an extension (`api.ts.md`, `notes.io.md`).
_NOT_SUFFIXES = {"no", "or", "as", "to", "ci", "io", "ts", "js", "os"}


def language_tag(name: str) -> str | None:
    """The primary language of a tag such as `ja-jp` or `pt_BR`, lowercased; None otherwise."""
    match = _TAG.match(name.lower())
    return match.group(1) if match and match.group(1) in ISO_639_1 else None


def translation_language(path: str) -> str | None:
    """The language a path's page is written in, when the path says so; None when it does not
    (the page is then taken to be in the estate's main language)."""
    parts = path.split("/")
    for index, folder in enumerate(parts[:-1]):
        language = language_tag(folder)
        if language is None:
            continue
        parent = parts[index - 1].lower() if index else ""
        if _LOCALE_PARENT.search(parent):
            return language
        if parent in _DOCS_FOLDERS and folder.lower() not in _NOT_LOCALES:
            return language
    pieces = parts[-1].split(".")
    if len(pieces) >= 3 and pieces[-2].lower() not in _NOT_SUFFIXES:  # stem.LANG.ext
        return language_tag(pieces[-2])
    return None


def left_out(path: str, languages: tuple[str, ...] | list[str]) -> str | None:
    """The language of a translated page whose language is not listed, else None."""
    language = translation_language(path)
    if language is None:
        return None
    listed = {language_tag(item) or item.lower() for item in languages}
    return None if language in listed else language


def is_documentation(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    return PurePosixPath(name).suffix in DOC_SUFFIXES or name in README_NAMES
