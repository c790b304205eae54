"""The citation check: citing nothing or out of range, in list or prose, is a decline."""

from __future__ import annotations

import pytest

from scout.compose import AnswerOutput, CitationCheck, check, markers


def out(answer: str, cited: list[int], declined: bool = False, reason: str = "") -> AnswerOutput:
    return AnswerOutput(answer=answer, cited=cited, declined=declined, reason=reason)


@pytest.mark.parametrize(
    ("output", "k", "verdict"),
    [
        (out("Run it [1].", [1]), 8, CitationCheck(True, (1,), None)),
        (out("Run it [2] then [1].", [2, 1, 2]), 8, CitationCheck(True, (1, 2), None)),
        (out("Run it.", [3]), 8, CitationCheck(True, (3,), None)),
        (out("Run it [3].", []), 8, CitationCheck(False, (), "cited nothing")),
        (out("Run it [1, 4] and [6-7].", []), 8, CitationCheck(False, (), "cited nothing")),
        (out("Run it [1, 4] and [6-7].", [1, 4, 6, 7]), 8, CitationCheck(True, (1, 4, 6, 7), None)),
        # a quoted docs sentence ending in "[2]" does not make the answer cite passage 2
        (
            out("Keys rotate weekly [2]. [1]", [1]),
            8,
            CitationCheck(False, (), "marker [2] is not in the cited list"),
        ),
        (out("Run it.", []), 8, CitationCheck(False, (), "cited nothing")),
        (out("Run it [9].", [9]), 8, CitationCheck(False, (), "cited passage 9 of 8")),
        (out("Run it [1].", [1, 9]), 8, CitationCheck(False, (), "cited passage 9 of 8")),
        (out("Run it [1] and [9].", [1]), 8, CitationCheck(False, (), "cited passage 9 of 8")),
        (out("Run it [0].", [1]), 8, CitationCheck(False, (), "cited passage 0 of 8")),
        (out("Run it [2].", [-1]), 2, CitationCheck(False, (), "cited passage -1 of 2")),
        (out("Run it [1-12].", [1]), 8, CitationCheck(False, (), "cited passage 9 of 8")),
        (out("   ", [1]), 8, CitationCheck(False, (), "empty answer")),
        (out("", [], True, "the docs say no"), 8, CitationCheck(False, (), "the docs say no")),
        (
            out("", [], True, ""),
            8,
            CitationCheck(False, (), "the passages do not answer the question"),
        ),
        (out("x [9]", [9], True, "no"), 8, CitationCheck(False, (), "no")),
    ],
    ids=lambda v: repr(v)[:50],
)
def test_citation_check(output: AnswerOutput, k: int, verdict: CitationCheck) -> None:
    assert check(output, k) == verdict


@pytest.mark.parametrize(
    ("prose", "numbers"),
    [
        ("no markers", []),
        ("[1][2] and [ 3 ]", [1, 2, 3]),
        ("see [1, 2,3]", [1, 2, 3]),
        ("see [2-4] and [5–6]", [2, 3, 4, 5, 6]),
        ("a list [x] or [1a] or [] is not a marker", []),
        ("[10]", [10]),
    ],
)
def test_markers_in_prose(prose: str, numbers: list[int]) -> None:
    assert markers(prose) == numbers
