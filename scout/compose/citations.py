"""The citation check (docs/design.md, invariant 6): a citation is checked, not trusted.

An answer that cites nothing in its structured ``cited`` list, names a passage number outside 1..k
there or as a ``[n]`` marker in its prose, or has a prose marker its list does not hold, is
refused; the refusal is a decline carrying the reason. The list decides what is cited; prose
markers must be a subset of it. Prose is
read as a person reads it (invisible characters dropped, NFKC, look-alike brackets folded), and a
bracketed number the check cannot read as a marker refuses the answer too. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scout.normalise import prose
from scout.providers.schema import AnswerOutput

# [3], [1, 2], [1; 2], [1-3], [2][4]: a bracket holding only numbers, separators and ranges.
_MARKER = re.compile(r"\[\s*(\d{1,6}(?:\s*(?:,|;|-|–)\s*\d{1,6})*)\s*\]")
_RANGE = re.compile(r"(\d+)\s*(?:-|–)\s*(\d+)")
# Any bracket with a digit in it: a marker the check must be able to read, or a refusal. (The
# digit is looked for after matching: a digit between two scans of the same class backtracks.)
_BRACKETED = re.compile(r"\[([^\[\]\n]*)\]")
MAX_RANGE = 50

DEFAULT_DECLINE = "the passages do not answer the question"


@dataclass(frozen=True)
class CitationCheck:
    """The checked outcome: answered with these passage numbers, or declined with a reason."""

    answered: bool
    cited: tuple[int, ...]
    reason: str | None


def markers(text: str) -> list[int]:
    """Passage numbers named by ``[n]`` markers in prose, in order (ranges expanded).

    Read on :func:`~scout.normalise.prose`, so ``[\u200b9]`` and ``［9］`` are ``[9]``.
    """
    found: list[int] = []
    for match in _MARKER.finditer(prose(text)):
        for part in re.split("[,;]", match.group(1)):
            span = _RANGE.fullmatch(part.strip())
            if span:
                low, high = int(span.group(1)), int(span.group(2))
                found.extend(range(low, min(high, low + MAX_RANGE) + 1) if low <= high else [low])
            else:
                found.append(int(part.strip()))
    return found


def unreadable(text: str) -> str | None:
    """The first bracket holding a digit that is not a plain marker (``[^9]``, ``[1 of 9]``).

    Such a bracket may be read as a citation by a person, and the check cannot say which
    passage it names, so an answer holding one is refused rather than guessed at. The returned
    text is digits and ASCII punctuation only: it is part of a printed reason.
    """
    for match in _BRACKETED.finditer(prose(text)):
        if not any(c.isdigit() for c in match.group(1)):
            continue
        if not _MARKER.fullmatch(match.group(0)):
            shown = re.sub(r"[^0-9,;^ .:#-]", "?", match.group(1))[:20]
            return shown
    return None


def check(output: AnswerOutput, k: int) -> CitationCheck:
    """Accept the output as an answer only if it cites something and only passages 1..k."""
    if output.declined:
        reason = " ".join(output.reason.split()) or DEFAULT_DECLINE
        return CitationCheck(False, (), reason)
    if not output.answer.strip():
        return CitationCheck(False, (), "empty answer")
    unread = unreadable(output.answer)
    if unread is not None:
        return CitationCheck(False, (), f"cannot read the citation marker [{unread}]")
    in_prose = markers(output.answer)
    for n in [*output.cited, *in_prose]:
        if not 1 <= n <= k:
            return CitationCheck(False, (), f"cited passage {n} of {k}")
    if not output.cited:
        return CitationCheck(False, (), "cited nothing")
    # The structured list is what the answer cites; a prose marker only points into it, so text
    # the answer quotes (a docs sentence ending in "[2]") cannot add a passage to it.
    stray = next((n for n in in_prose if n not in output.cited), None)
    if stray is not None:
        return CitationCheck(False, (), f"marker [{stray}] is not in the cited list")
    return CitationCheck(True, tuple(sorted(set(output.cited))), None)
