"""The citation check (docs/design.md, invariant 6): a citation is checked, not trusted.

An answer that cites nothing, or names a passage number outside 1..k in its ``cited`` list or as a
``[n]`` marker in its prose, is refused; the refusal is a decline carrying the reason. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scout.compose.schema import AnswerOutput

# [3], [1, 2], [1-3], [2][4]: a bracket holding only numbers, commas and ranges.
_MARKER = re.compile(r"\[\s*(\d{1,6}(?:\s*(?:,|-|–)\s*\d{1,6})*)\s*\]")
_RANGE = re.compile(r"(\d+)\s*(?:-|–)\s*(\d+)")
MAX_RANGE = 50

DEFAULT_DECLINE = "the passages do not answer the question"


@dataclass(frozen=True)
class CitationCheck:
    """The checked outcome: answered with these passage numbers, or declined with a reason."""

    answered: bool
    cited: tuple[int, ...]
    reason: str | None


def markers(prose: str) -> list[int]:
    """Passage numbers named by ``[n]`` markers in prose, in order (ranges expanded)."""
    found: list[int] = []
    for match in _MARKER.finditer(prose):
        for part in match.group(1).split(","):
            span = _RANGE.fullmatch(part.strip())
            if span:
                low, high = int(span.group(1)), int(span.group(2))
                found.extend(range(low, min(high, low + MAX_RANGE) + 1) if low <= high else [low])
            else:
                found.append(int(part.strip()))
    return found


def check(output: AnswerOutput, k: int) -> CitationCheck:
    """Accept the output as an answer only if it cites something and only passages 1..k."""
    if output.declined:
        reason = " ".join(output.reason.split()) or DEFAULT_DECLINE
        return CitationCheck(False, (), reason)
    if not output.answer.strip():
        return CitationCheck(False, (), "empty answer")
    named = [*output.cited, *markers(output.answer)]
    for n in named:
        if not 1 <= n <= k:
            return CitationCheck(False, (), f"cited passage {n} of {k}")
    if not named:
        return CitationCheck(False, (), "cited nothing")
    return CitationCheck(True, tuple(sorted(set(named))), None)
