"""BM25's k1 and b, which FTS5 fixes, measured by re-scoring the pool in Python.

    .venv/bin/python -m bench.realdocs_bm25 CONFIG --realdocs PATH [--extra FILE]
        [--k1 0.8,1.2,2] [--b 0.3,0.5,0.75,0.9] [--split tune]

FTS5's bm25() takes column weights only (k1 = 1.2, b = 0.75). To know whether other values
would rank better, each pooled passage (the exact top ``rank.POOL``, or the depth asked for) is
scored again by BM25F (Robertson, Zaragoza and Taylor 2004) with the values of the grid: per
field, a term's count normalised by that field's length (``b`` for the body, ``--bh`` for the
heading path), weighted (heading ``--wh``), summed, then saturated by ``k1``; idf as FTS5's.
The re-ranking rules run on these scores as they do on FTS5's. Words are Scout's, stemmed
by ``scout.words.stem``. Only the order inside the pool changes, so this measures MRR and
the order of a deep list (recall@20 from a pool of 50), not what BM25 would bring into the
pool; FTS5's own run is the first row.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import math
import random
import sys
from pathlib import Path
from typing import Any

from bench.realdocs_recall import add_extra, load_recall, measure, split_questions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--realdocs", type=Path, required=True)
    add_extra(parser)
    parser.add_argument("--split", default="tune")
    parser.add_argument("--k1", default="0.8,1.2,2.0")
    parser.add_argument("--b", default="0.3,0.5,0.75,0.9")
    parser.add_argument("--bh", default="0.5")
    parser.add_argument("--wh", default="2.0")
    args = parser.parse_args()

    from scout import retrieve, words
    from scout.config import load_config
    from scout.retrieve import lexical
    from scout.retrieve import rerank as rank
    from scout.store import Store

    recall = load_recall(args.realdocs)
    store = Store.open(load_config(args.config).store.path)
    questions = split_questions(args.realdocs, args.extra, args.split)
    total = store.passage_count()
    sample = random.Random(1).sample(store.passages(), min(2_000, total))
    avg_heading = sum(len(words.words(p.heading)) for p in sample) / len(sample)
    avg_body = sum(len(words.words(p.body)) for p in sample) / len(sample)

    @functools.cache
    def rows(term: str) -> int:
        return store.count_matches(lexical.literal(term), total)

    @functools.lru_cache(maxsize=100_000)
    def tokens(text: str) -> tuple[str, ...]:
        return tuple(words.stem(w) for w in words.words(text))

    params: dict[str, float] = {}
    asked: list[str] = [""]
    plain = rank.rerank

    def bm25f(hits: list[Any], limit: int, **rules: Any) -> list[Any]:
        terms = {words.stem(t): t for t in words.query_terms(asked[0]) if rows(t)}
        rescored = []
        for hit in hits:
            heading, body = tokens(hit.heading), tokens(hit.body)
            score = 0.0
            for stemmed, term in terms.items():
                n = rows(term)
                idf = max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6)
                tf = params["wh"] * heading.count(stemmed) / (
                    1 - params["bh"] + params["bh"] * len(heading) / avg_heading
                ) + body.count(stemmed) / (1 - params["b"] + params["b"] * len(body) / avg_body)
                score += idf * tf * (params["k1"] + 1) / (tf + params["k1"])
            rescored.append(dataclasses.replace(hit, score=-score))
        return plain(rescored, limit, **rules)

    def search(question: str, k: int) -> list[dict[str, Any]]:
        asked[0] = question
        return [
            {"project": h.project, "path": h.path, "heading": h.heading,
             "lines": [h.line_start, h.line_end]}
            for h in retrieve.retrieve(store, question, k).hits
        ]  # fmt: skip

    row = measure(search, recall, questions)[args.split]
    print(f"FTS5 bm25 (k1 1.2, b 0.75)          r@8 {row['r@8']:.3f} mrr {row['mrr']:.3f} "
          f"r@20 {row['r@20']:.3f}")  # fmt: skip
    rank.rerank = bm25f
    grid = [[float(v) for v in values.split(",")] for values in (args.k1, args.b, args.bh, args.wh)]
    for k1, b, bh, wh in itertools.product(*grid):
        params.update(k1=k1, b=b, bh=bh, wh=wh)
        row = measure(search, recall, questions)[args.split]
        print(f"k1 {k1:<4} b {b:<4} bh {bh:<4} wh {wh:<4}  r@8 {row['r@8']:.3f} "
              f"mrr {row['mrr']:.3f} r@20 {row['r@20']:.3f}")  # fmt: skip
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
