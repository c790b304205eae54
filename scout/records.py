"""A passage: the one record every floor passes around (the corpus writes it, the store keeps it,
retrieval finds it, the prompt quotes it, a verdict keeps the target's).

It lives below the store so a verdict can hold passages without importing the store; the store's
other rows are in ``scout/store/records.py``.
"""

from __future__ import annotations

import hashlib
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
    """A passage found by retrieval: its row id, the score it is ordered by (lower is better;
    BM25's own when words alone ranked it), its BM25 score, and its rank in each candidate list
    it came from (None: that list did not hold it, or there was no such list)."""

    id: int = 0
    score: float = 0.0
    bm25: float | None = None
    lexical_rank: int | None = None
    dense_rank: int | None = None


# What a sentence-embedding model reads of a passage: its heading path (the page's title, its
# section's) and its text. Cut well past what small models read (256 to 512 tokens) to bound the
# request, not the meaning.
MAX_EMBED_CHARS = 2_000


def embed_text(heading: str, body: str) -> str:
    """The text of a passage that is embedded (``scout.embeddings``)."""
    return f"{heading}\n{body}"[:MAX_EMBED_CHARS]


def embed_key(heading: str, body: str) -> str:
    """The key a passage's vector is stored under: the hash of its embedded text, so that a
    section that did not change keeps its vector when its project is indexed again."""
    data = embed_text(heading, body).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]
