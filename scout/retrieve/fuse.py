"""The fusion stage: one ranking from the candidate lists the earlier stages made.

The lists are the lexical one (BM25 of the question's own words, with a model's terms when
expansion ran) and the dense one (nearest in meaning). A passage's fused score is a weighted sum
over the lists that hold it of ``weight / (RRF_K + rank)`` (reciprocal rank fusion, Cormack,
Clarke and Buettcher 2009): ranks, not scores, because BM25 and cosine are on scales that say
nothing about each other. The constants are measured on realdocs-dev's ``tune`` questions
(bench/realdocs_fusion.py) and reported on ``check``, the originals and ``transfer``.

Each fused passage keeps its rank in each list (``lexical_rank``, ``dense_rank``) and its BM25
score, so ``scout search --json`` can show why it is where it is. A single list is passed on as
it is: with no embeddings, retrieval is exactly the lexical ranking.
"""

from __future__ import annotations

import dataclasses

from scout.store import PassageHit

RRF_K = 60
LEXICAL_WEIGHT = 1.0
DENSE_WEIGHT = 1.0
# The dense list's weight when the lexical list already holds a model's terms (which bridge
# the asker's words and the page's as embeddings do, and rank sharper).
DENSE_WEIGHT_EXPANDED = 1.0
# "rrf": by ranks, as above; "convex": by scores, each list's scaled to [0, 1] over its own
# candidates (BM25 over its best, cosine between the list's worst and best), the dense one
# weighted DENSE_SHARE (Bruch, Gai and Ingber 2023, "An Analysis of Fusion Functions").
MODE = "rrf"
DENSE_SHARE = 0.5


def ranked(hits: list[PassageHit], *, dense: bool) -> list[PassageHit]:
    """``hits`` (best first) marked with their rank in that list, and, for the lexical list,
    with their BM25 score."""
    if dense:
        return [dataclasses.replace(h, dense_rank=n) for n, h in enumerate(hits, 1)]
    return [dataclasses.replace(h, lexical_rank=n, bm25=h.score) for n, h in enumerate(hits, 1)]


def fuse(
    lexical: list[PassageHit], dense: list[PassageHit], *, expanded: bool = False
) -> list[PassageHit]:
    """One ranking of both lists (each best first), best first; scores are negative, lower
    better, as BM25's are, so the re-ranking's factors apply to them unchanged. ``expanded``:
    the lexical list holds a model's terms."""
    lexical, dense = ranked(lexical, dense=False), ranked(dense, dense=True)
    if not dense:
        return lexical
    if not lexical:
        return dense
    cosine = {hit.id: -hit.score for hit in dense}
    merged: dict[int, PassageHit] = {hit.id: hit for hit in lexical}
    for hit in dense:
        held = merged.get(hit.id)
        merged[hit.id] = (
            hit if held is None else dataclasses.replace(held, dense_rank=hit.dense_rank)
        )
    weight = DENSE_WEIGHT_EXPANDED if expanded else DENSE_WEIGHT
    if MODE == "convex":
        score = _convex(lexical, cosine, weight)
    else:
        score = lambda hit: _rrf(hit, weight)  # noqa: E731
    fused = [dataclasses.replace(hit, score=-score(hit)) for hit in merged.values()]
    return sorted(fused, key=lambda h: (h.score, h.id))


def _rrf(hit: PassageHit, dense_weight: float) -> float:
    score = 0.0
    if hit.lexical_rank is not None:
        score += LEXICAL_WEIGHT / (RRF_K + hit.lexical_rank)
    if hit.dense_rank is not None:
        score += dense_weight / (RRF_K + hit.dense_rank)
    return score


def _convex(lexical: list[PassageHit], cosine: dict[int, float], weight: float):  # type: ignore[no-untyped-def]
    best = min((h.score for h in lexical), default=-1.0) or -1.0
    high, low = max(cosine.values()), min(cosine.values())
    share = DENSE_SHARE * weight

    def score(hit: PassageHit) -> float:
        words = (hit.bm25 or 0.0) / best if hit.lexical_rank is not None else 0.0
        near = (cosine[hit.id] - low) / (high - low or 1.0) if hit.id in cosine else 0.0
        return (1 - share) * words + share * near

    return score
