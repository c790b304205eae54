"""A passage: the one record every floor passes around (the corpus writes it, the store keeps it,
retrieval finds it, the prompt quotes it, a verdict keeps the target's).

It lives below the store so a verdict can hold passages without importing the store; the store's
other rows are in ``scout/store/records.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scout.kinds import PassageKind, passage_kind

Source = Literal["docs", "code"]
Origin = Literal["corpus", "signpost"]


@dataclass(frozen=True)
class PassageRecord:
    """A passage as written: where it was read (project, path, sha, lines) and what it says."""

    project: str
    path: str
    sha: str
    line_start: int
    line_end: int
    heading: str
    body: str
    source: Source
    origin: Origin
    url: str
    target: str | None = None  # for origin = signpost: the key of the signpost target it belongs to

    @property
    def kind(self) -> PassageKind:
        """docs | readme | changelog | code: how the passage goes stale (``scout.kinds``)."""
        return passage_kind(self.path, self.source)


@dataclass(frozen=True)
class PassageHit(PassageRecord):
    """A passage found by search, with its BM25 score (lower is better) and row id."""

    id: int = 0
    score: float = 0.0
