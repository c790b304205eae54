"""Reading unified diffs (GitLab's per-file ``diff`` text): which lines a change added, and where
lines of an old version are in a newer one. Pure functions: validation feeds them forge diffs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
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
