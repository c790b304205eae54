"""What kind of source a passage was read from, by how it goes stale: docs, readme, changelog, code.

The main rule: the kind follows from where the passage lives (its path and source), never from
its text, so it is the same at every index and cheap to tell at read time. A changelog (release
notes, a release post, news) records what was true when it was written, so ranking puts it below
the docs unless the question asks about a version or a release (``scout.rank``).
"""

from __future__ import annotations

import re
from typing import Literal

PassageKind = Literal["docs", "readme", "changelog", "code"]
KINDS: tuple[PassageKind, ...] = ("docs", "readme", "changelog", "code")

# File stems and folder names that hold release history. "release" alone is not one of them: a
# release.md is usually how to make a release (a procedure), releases/ is usually history.
_HISTORY = r"change[-_ ]?logs?|changes|history|news|release[-_ ]?notes?|releases|whats[-_ ]?new"
# "CHANGELOG", "changes-7.x", "HISTORY.v2": a history file, alone or with a version after it.
_HISTORY_STEM = re.compile(rf"(?:{_HISTORY})(?:[-_.]?v?\d[\w.-]*)?", re.IGNORECASE)
_HISTORY_DIR = re.compile(rf"(?:{_HISTORY})", re.IGNORECASE)
# A blog or news post that announces a release: "material-9.5-released", "v2-0-release".
_RELEASE_POST = re.compile(r"(?:^|[-_])(?:released?|v?\d+[-_.]\d+)(?:[-_.]|$)", re.IGNORECASE)
_POST_DIRS = frozenset({"blog", "posts", "news"})
MAX_PATH_CHARS = 4_096


def passage_kind(path: str, source: str) -> PassageKind:
    """The kind of a passage read from ``path`` (``source`` ``code`` is a signposted file)."""
    if source == "code":
        return "code"
    parts = path[:MAX_PATH_CHARS].split("/")
    name = parts[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    folders = [part.casefold() for part in parts[:-1]]
    if stem.casefold() == "readme":
        return "readme"
    if _HISTORY_STEM.fullmatch(stem[:200]) or any(
        _HISTORY_DIR.fullmatch(folder[:200]) for folder in folders
    ):
        return "changelog"
    if _POST_DIRS.intersection(folders) and _RELEASE_POST.search(stem[:200]):
        return "changelog"
    return "docs"
