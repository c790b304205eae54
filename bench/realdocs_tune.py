"""A grid over the ranking's constants on realdocs-dev's ``tune`` questions only.

    .venv/bin/python -m bench.realdocs_tune CONFIG --realdocs PATH [--set NAME=V1,V2 ...]
        [--extra FILE] [--expanded TERMS]

Each ``--set`` names a constant of a retrieval stage (``scout.retrieve`` and its modules) (``POOL``,
``FILE_CAP``, ``HEADING_WEIGHT``...) and the values to try; every combination is measured on
the ``tune`` split (recall@8, MRR, recall@20), best first. The winner is then measured once on
``check`` by bench/realdocs_recall.py: a setting that lifts ``tune`` and not ``check`` is fitting.
FTS5's k1 and b are fixed (1.2, 0.75: it takes column weights only), so they are not in the grid.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

from bench.realdocs_recall import (
    add_extra,
    expanded_terms,
    load_recall,
    measure,
    split_questions,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--realdocs", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2")
    parser.add_argument("--split", default="tune")
    add_extra(parser)
    parser.add_argument("--expanded", type=Path, default=None, help="as bench.realdocs_recall's")
    args = parser.parse_args()

    from scout import retrieve
    from scout.config import load_config
    from scout.retrieve import expansion, fuse, lexical, rerank
    from scout.store import Store

    recall = load_recall(args.realdocs)
    store = Store.open(load_config(args.config).store.path)
    questions = split_questions(args.realdocs, args.extra, args.split)
    terms = expanded_terms(args.expanded, questions) if args.expanded else {}
    grid: dict[str, list[float]] = {}
    for setting in args.set:
        name, _, values = setting.partition("=")
        grid[name] = [float(v) for v in values.split(",")]

    def search(question: str, k: int) -> list[dict[str, Any]]:
        return [
            {"project": h.project, "path": h.path, "heading": h.heading,
             "lines": [h.line_start, h.line_end]}
            for h in retrieve.retrieve(
                store, question, k, expand=expansion.replayed(terms.get(question))
            ).hits
        ]  # fmt: skip

    results = []
    for combo in itertools.product(*grid.values()):
        for name, value in zip(grid, combo, strict=True):
            module = next(m for m in (rerank, lexical, fuse, retrieve) if hasattr(m, name))
            setattr(module, name, int(value) if float(value).is_integer() else value)
        row = measure(search, recall, questions)[args.split]
        results.append((row["r@8"], row["mrr"], row["r@20"], dict(zip(grid, combo, strict=True))))
        print(f"r@8 {row['r@8']:.3f} mrr {row['mrr']:.3f} r@20 {row['r@20']:.3f}  {results[-1][3]}")
    results.sort(key=lambda r: (r[0] + r[1], r[2]), reverse=True)
    print("best:", results[0])
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
