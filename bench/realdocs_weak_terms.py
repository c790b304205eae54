"""Stand-in expansion terms of a weak model, for measuring what bad terms cost.

    .venv/bin/python -m bench.realdocs_weak_terms CONFIG --realdocs PATH OUT [--top N]
        [--extra FILE]

For each question, the ``N`` words of section headings most associated with the question's words
across the indexed passages (normalised PMI of the passages holding each, weighted by the
question word's idf): words that look on topic, as a model's would, but that were found without
knowing what the question asks, the way a model that does not know the projects finds them. OUT
is a JSON object of question id to terms, the shape ``bench.realdocs_recall --expanded`` reads.

Only the passages table and the questions' text are read: never a question's targets, never a
ranking, so the terms cannot have been fitted to an answer.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path

MIN_TOGETHER = 3  # passages a pair must share before its association counts
MAX_CANDIDATE_SHARE = 0.05  # heading words in more of the passages say nothing
MAX_QUESTION_SHARE = 0.2  # nor do question words this common


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("out", type=Path)
    parser.add_argument("--realdocs", type=Path, required=True)
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--extra", type=Path, action="append", default=[])
    args = parser.parse_args()

    from bench.realdocs_recall import all_questions
    from scout.config import load_config
    from scout.words import STOPWORDS, content_words, stem, words

    def kept(text: str) -> set[str]:
        return {w for w in words(text) if w not in STOPWORDS and len(w) > 2 and not w.isdigit()}

    db = sqlite3.connect(f"file:{load_config(args.config).store.path}?mode=ro", uri=True)
    holding: dict[str, set[int]] = defaultdict(set)
    in_heading: set[str] = set()
    spelling: dict[str, Counter[str]] = defaultdict(Counter)
    total = 0
    for row, heading, body in db.execute("select id, heading, body from passages"):
        total += 1
        for word in kept(f"{heading} {body}"):
            holding[stem(word)].add(row)
            spelling[stem(word)][word] += 1
        in_heading |= {stem(w) for w in kept(heading.rsplit(" > ", 1)[-1])}
    db.close()
    candidates = [
        v for v in in_heading if MIN_TOGETHER <= len(holding[v]) <= total * MAX_CANDIDATE_SHARE
    ]

    out = {}
    for question in all_questions(args.realdocs, args.extra):
        asked = {stem(w) for w in content_words(question["question"])}
        asked = {w for w in asked if 0 < len(holding[w]) < total * MAX_QUESTION_SHARE}
        score: Counter[str] = Counter()
        for word in asked:
            rows = holding[word]
            idf = math.log(total / len(rows))
            for other in candidates:
                if other in asked:
                    continue
                together = len(rows & holding[other])
                if together < MIN_TOGETHER:
                    continue
                joint = together / total
                pmi = math.log(joint / (len(rows) / total * len(holding[other]) / total))
                if pmi > 0:
                    score[other] += idf * pmi / -math.log(joint)
        out[question["id"]] = [
            spelling[v].most_common(1)[0][0] for v, _ in score.most_common(args.top)
        ]
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{len(out)} questions, {args.top} terms each at most: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
