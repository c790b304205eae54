"""Reading unified diffs (GitLab's per-file ``diff`` text): which lines a change added, and where
lines of an old version are in a newer one. Pure functions: validation feeds them forge diffs.

GitLab cuts diffs past its limits (doc/administration/diff_limits.md): a compare says
``compare_timeout``, files go missing, or a file comes with an empty ``diff`` and ``too_large`` or
``collapsed``. A cut diff is never read as "no change": ``whole_file_diff`` and ``file_change``
diff the file's two versions locally (through the ``read`` function validation passes in), and
raise ``CannotCheck`` when even that is impossible.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from scout.errors import CannotCheck
from scout.forge.base import FileDiff

Read = Callable[[str, str], str | None]  # (sha, path) -> text, None when absent

# Line numbers of nine digits at most: a server's header with a longer number is no hunk (and
# int() of thousands of digits raises).
_HUNK = re.compile(r"^@@ -(\d{1,9})(?:,(\d{1,9}))? \+(\d{1,9})(?:,(\d{1,9}))? @@")
MEANINGFUL_CHARS = 4  # "}", "end", "" stand everywhere: they prove nothing about a change


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[str, ...]


def hunks(diff: str) -> list[Hunk]:
    found: list[Hunk] = []
    current: list[str] | None = None
    header: tuple[int, int, int, int] | None = None
    for line in diff.split("\n"):
        match = _HUNK.match(line)
        if match:
            if header is not None and current is not None:
                found.append(Hunk(*header, tuple(current)))
            o, ol, n, nl = match.groups()
            header = (int(o), int(ol or 1), int(n), int(nl or 1))
            current = []
        elif current is not None and line[:1] in (" ", "+", "-"):
            current.append(line)
    if header is not None and current is not None:
        found.append(Hunk(*header, tuple(current)))
    return found


def added_lines(diff: str) -> list[tuple[int, str]]:
    """(line number in the new version, text) of every added line."""
    result = []
    for hunk in hunks(diff):
        number = hunk.new_start
        for line in hunk.lines:
            if line.startswith("+"):
                result.append((number, line[1:]))
                number += 1
            elif line.startswith(" "):
                number += 1
    return result


def meaningful(text: str) -> bool:
    return len(text.strip()) >= MEANINGFUL_CHARS


def map_lines(diff: str, lines: tuple[int, int]) -> tuple[int, int] | None:
    """Map an old line range to the new version through a diff; None if any of it changed.

    Being strict is the point: a citation of lines that were rewritten would look right and say
    something the file no longer says.
    """
    first, last = lines
    mapped: dict[int, int | None] = {}
    shift_after: list[tuple[int, int]] = []  # (old line after which, cumulative shift)
    shift = 0
    for hunk in hunks(diff):
        old, new = hunk.old_start, hunk.new_start
        if hunk.old_len == 0:
            old += 1  # a pure insertion "-k,0" sits after line k
        for line in hunk.lines:
            if line.startswith(" "):
                mapped[old] = new
                old += 1
                new += 1
            elif line.startswith("-"):
                mapped[old] = None
                old += 1
            else:
                new += 1
        shift += hunk.new_len - hunk.old_len
        end = hunk.old_start + hunk.old_len if hunk.old_len else hunk.old_start + 1
        shift_after.append((end, shift))
    result = []
    for number in (first, last):
        if number in mapped:
            target = mapped[number]
        else:
            delta = 0
            for boundary, cumulative in shift_after:
                if number >= boundary:
                    delta = cumulative
            target = number + delta
        if target is None:
            return None
        result.append(target)
    for number in range(first, last + 1):
        if mapped.get(number, 0) is None:
            return None
    return result[0], result[1]


def local_diff(old: str, new: str) -> str:
    """``old`` to ``new`` as GitLab shapes a file's diff (hunks from ``@@``), without context."""
    lines = list(difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=0))
    return "\n".join(lines[2:])  # the ---/+++ header lines; GitLab's diff text has none


def whole_file_diff(diff: FileDiff, old: str, new: str, read: Read) -> FileDiff:
    """``diff`` itself when GitLab sent it whole, else the same file diffed locally."""
    if diff.complete:
        return diff
    before = None if diff.new_file else read(old, diff.old_path)
    after = None if diff.deleted_file else read(new, diff.new_path)
    if (before is None and not diff.new_file) or (after is None and not diff.deleted_file):
        raise CannotCheck(
            f"GitLab's diff of {diff.new_path} is over its limits and a side is unreadable",
        )
    return replace(diff, diff=local_diff(before or "", after or ""), complete=True)


def file_change(
    diffs: Sequence[FileDiff], path: str, old: str, new: str, read: Read
) -> FileDiff | None:
    """The whole change to ``path`` from ``old`` to ``new``; None when it did not change.

    A file missing from a listing GitLab cut short may still have changed: both versions are read
    and diffed here. A file gone at ``new`` then cannot be told apart from a renamed one.
    """
    for diff in diffs:
        if diff.old_path == path:
            return whole_file_diff(diff, old, new, read)
    if getattr(diffs, "complete", True):
        return None
    before, after = read(old, path), read(new, path)
    if before is None or after is None:
        where = old if before is None else new
        raise CannotCheck(
            f"GitLab's diff is over its limits and {path} is not at {where[:12]} "
            "(moved or deleted cannot be told apart)",
        )
    if before == after:
        return None
    return FileDiff(path, path, local_diff(before, after))
