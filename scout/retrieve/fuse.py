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

# Measured on realdocs-dev's tune questions (bench/realdocs_fusion.py): k 20 to 60 ranked
# alike, the dense list a little above the lexical one gained most and lost least of what words
# alone found, and a score-based (convex) fusion gained less and lost more at every weight.
RRF_K = 60
LEXICAL_WEIGHT = 1.0
DENSE_WEIGHT = 1.25
# The dense list's weight when the lexical list already holds a model's terms, which bridge the
# asker's words and the page's as embeddings do, and rank sharper: at 0.5 and above, meaning
# pushed the terms' first places down (MRR on tune 0.824 -> 0.765 at 0.5).
DENSE_WEIGHT_EXPANDED = 0.1


def ranked(hits: list[PassageHit], *, dense: bool) -> list[PassageHit]:
    """``hits`` (best first) marked with their rank in that list, and, for the lexical list,
    with their BM25 score."""
    if dense:
        # the dense stage gives ranks among all passages (a lexical candidate's however deep)
        return [
            h if h.dense_rank is not None else dataclasses.replace(h, dense_rank=n)
            for n, h in enumerate(hits, 1)
        ]
    return [
        dataclasses.replace(h, lexical_rank=n, bm25=h.score if h.bm25 is None else h.bm25)
        for n, h in enumerate(hits, 1)
    ]


def fuse(
    lexical: list[PassageHit], dense: list[PassageHit], *, expanded: bool = False
) -> list[PassageHit]:
    """One ranking of both lists (each best first), best first; scores are negative, lower
    better, as BM25's are, so the re-ranking's factors apply to them unchanged. ``expanded``:
    the lexical list holds a model's terms. A passage's rank in each list decides its fused
    score: its place in the lexical list, and its rank by meaning among all the passages (the
    dense stage gives it for every lexical candidate, however far down)."""
    lexical, dense = ranked(lexical, dense=False), ranked(dense, dense=True)
    if not dense:
        return lexical
    if not lexical:
        return dense
    merged: dict[int, PassageHit] = {hit.id: hit for hit in lexical}
    for hit in dense:
        held = merged.get(hit.id)
        merged[hit.id] = (
            hit if held is None else dataclasses.replace(held, dense_rank=hit.dense_rank)
        )
    weight = DENSE_WEIGHT_EXPANDED if expanded else DENSE_WEIGHT
    fused = [
        dataclasses.replace(hit, score=-_rrf(hit.lexical_rank, hit.dense_rank, weight))
        for hit in merged.values()
    ]
    fused.sort(key=lambda h: (h.score, h.id))
    if not expanded:
        return fused
    # With a model's terms the fused order goes on the lexical list's scale (the n-th passage
    # gets the n-th best lexical score): the dense list only nudges the terms' ranking, and the
    # re-ranking's factors weigh as they weigh without embeddings (measured on tune: MRR 0.844
    # against 0.835 on the fused scale, where a factor of 1.7 outweighs many ranks; without
    # terms, the fused scale ranked better: 0.587 against 0.578).
    scale = [hit.score for hit in lexical]
    return [
        dataclasses.replace(hit, score=scale[min(n, len(scale) - 1)]) for n, hit in enumerate(fused)
    ]


def _rrf(lexical: int | None, dense: int | None, dense_weight: float) -> float:
    score = 0.0
    if lexical is not None:
        score += LEXICAL_WEIGHT / (RRF_K + lexical)
    if dense is not None:
        score += dense_weight / (RRF_K + dense)
    return score
