"""Fusion of retrieval's candidate lists, measured: lexical, a model's terms, embeddings.

    .venv/bin/python -m bench.realdocs_fusion CONFIG --realdocs PATH [--extra FILE] [--only FILE]
        [--expanded TERMS] [--dense] [--noise mix|bad] [--set NAME=V1,V2 ...] [--split S]
        [--questions-out FILE]

Each question's candidate lists (``scout.retrieve.candidates``: the own words' BM25 list, the list
with a model's recorded terms when ``--expanded`` gives them, the dense list of the config's
``[retrieval.embeddings]`` with ``--dense``; run ``scout index`` with that config first) are
computed once for each depth retrieval would compute them at, and every combination of the
``--set`` constants (of ``scout.retrieve`` and its stage modules: ``RRF_K``, ``DENSE_WEIGHT``,
``KEEP_OWN``, ``DENSE_DEPTH``, ``CHANGELOG_WEIGHT``...) is then applied to the
fusion and re-ranking of those lists (``scout.retrieve.ranking``), as retrieval would. Per split
(and per overlap class with ``--by-class``): recall@8, MRR, recall@20, and the questions gained and
lost against the own words alone (``lost`` is the number that matters: a question the question's
own words found in the top 8 that the fused ranking lost), and, with both lists, against expansion
alone.

``--noise`` replaces half (``mix``) or all (``bad``) of each question's recorded terms with
another question's, drawn with a fixed seed: how much a weak model's terms can cost.
Tune on ``tune``; report ``check``, the originals and ``transfer`` (``--only``).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import random
import sys
from pathlib import Path
from typing import Any

from bench.realdocs_recall import add_extra, expanded_terms, overlap_class, setup

DEEP = 100  # how deep the dense list is computed once; DENSE_DEPTH cuts it per combination


def modes(expanded: bool, dense: bool) -> list[str]:
    out = ["words"]
    if expanded:
        out += ["expanded", "rrf"]
    if dense:
        out.append("dense")
    if expanded and dense:
        out.append("both")
    return out


def noisy(terms: dict[str, list[str]], kind: str | None, seed: int = 0) -> dict[str, list[str]]:
    """The terms with half (mix) or all (bad) of each question's replaced by another's."""
    if kind is None:
        return terms
    rnd = random.Random(seed)
    asked = sorted(terms)
    out = {}
    for question in asked:
        other = terms[rnd.choice([q for q in asked if q != question])]
        mine = terms[question]
        if kind == "bad":
            out[question] = list(other)
        else:
            out[question] = [t for pair in zip(mine, other, strict=False) for t in pair][:12]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--realdocs", type=Path, required=True)
    parser.add_argument("--only", type=Path, default=None)
    parser.add_argument("--expanded", type=Path, default=None)
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--noise", choices=("mix", "bad"), default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2")
    parser.add_argument("--split", default=None)
    parser.add_argument("--by-class", action="store_true")
    parser.add_argument("--questions-out", type=Path, default=None)
    add_extra(parser)
    args = parser.parse_args()

    import scout.retrieve as pipeline
    from scout.retrieve import expansion, fuse, lexical, rerank

    recall, store, embeddings, questions = setup(args)
    if args.dense and embeddings is None:
        print("--dense: the config has no [retrieval.embeddings]", file=sys.stderr)
        return 2
    questions = [q for q in questions if q.get("answerable", True)]
    if args.split:
        questions = [q for q in questions if q.get("split", "orig") == args.split]
    terms = expanded_terms(args.expanded, questions) if args.expanded else {}
    terms = noisy(terms, args.noise)

    # Each question's lists, once per depth the pipeline would compute them at.
    cache: dict[tuple[str, int, bool, tuple[Any, ...]], Any] = {}
    grid: dict[str, list[Any]] = {}

    def lists(q: dict[str, Any], depth: int, dense: bool) -> Any:
        # the lexical stage's constants shape the lists themselves: part of the key
        shaping = tuple(getattr(lexical, name) for name in sorted(grid) if hasattr(lexical, name))
        key = (q["id"], depth, dense, shaping)
        if key not in cache:
            text = q["question"]
            saved = pipeline.DENSE_DEPTH
            pipeline.DENSE_DEPTH = DEEP
            cache[key] = pipeline.candidates(
                store,
                text,
                min(depth, 20),
                expand=expansion.replayed(terms[text]) if text in terms else None,
                embeddings=embeddings if dense else None,
                depth=depth,
            )
            pipeline.DENSE_DEPTH = saved
        return cache[key]

    def cut(q: dict[str, Any], mode: str, limit: int) -> Any:
        dense = mode in ("dense", "both")
        depth = max(limit, rerank.POOL)
        found = lists(q, depth, dense)
        words = found.words if mode in ("expanded", "both", "rrf") else found.own
        near = []
        if dense:
            # the dense list as deep as DENSE_DEPTH, and the lexical candidates' own ranks by
            # meaning however deep
            lexical_ids = {h.id for h in words}
            near = [
                h
                for h in found.near
                if (h.dense_rank or 0) <= pipeline.DENSE_DEPTH or h.id in lexical_ids
            ]
        if mode == "rrf":
            # the candidate the issue names: the own words' and the expanded rankings fused
            # by reciprocal rank, equal weights (the expanded list in the place of the dense)
            return dataclasses.replace(found, words=found.own, near=found.words)
        return dataclasses.replace(found, words=words, near=near)

    for setting in args.set:
        name, _, values = setting.partition("=")
        grid[name] = [_value(v) for v in values.split(",")]
    modules = (pipeline, fuse, rerank, lexical)
    per_question: list[dict[str, Any]] = []
    for combo in itertools.product(*grid.values()) if grid else [()]:
        chosen = dict(zip(grid, combo, strict=True))
        for name, value in chosen.items():
            module = next((m for m in modules if hasattr(m, name)), None)
            if module is None:
                print(f"--set: no constant {name}", file=sys.stderr)
                return 2
            setattr(module, name, value)
        ranks: dict[str, dict[str, tuple[int | None, int | None]]] = {}
        for q in questions:
            ranks[q["id"]] = {}
            for mode in modes(bool(terms), args.dense):
                top8 = _rows(pipeline.ranking(cut(q, mode, 8), 8))
                top20 = _rows(pipeline.ranking(cut(q, mode, 20), 20))
                ranks[q["id"]][mode] = (
                    recall.first_rank(top8, q["targets"]),
                    recall.first_rank(top20, q["targets"]),
                )
        print(f"== {chosen or 'as configured'}")
        _report(questions, ranks, args.by_class)
        per_question.append({"set": chosen, "ranks": ranks})
    if args.questions_out:
        args.questions_out.write_text(json.dumps(per_question) + "\n", encoding="utf-8")
    store.close()
    return 0


def _value(text: str) -> Any:
    """A ``--set`` value: true or false, a whole number, a number, or a word."""
    if text.casefold() in ("true", "false"):
        return text.casefold() == "true"
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() else number


def _rows(hits: list[Any]) -> list[dict[str, Any]]:
    return [
        {"project": h.project, "path": h.path, "heading": h.heading,
         "lines": [h.line_start, h.line_end]}
        for h in hits
    ]  # fmt: skip


def _report(
    questions: list[dict[str, Any]],
    ranks: dict[str, dict[str, tuple[int | None, int | None]]],
    by_class: bool,
) -> None:
    groups: dict[str, list[str]] = {}
    for q in questions:
        split = q.get("split", "orig")
        keys = [split] + ([f"{split}/{overlap_class(q)}"] if by_class else [])
        for key in keys:
            groups.setdefault(key, []).append(q["id"])
    for key, ids in sorted(groups.items()):
        cells = []
        for mode in next(iter(ranks.values())):
            at8 = [ranks[i][mode][0] for i in ids]
            at20 = [ranks[i][mode][1] for i in ids]
            base = [ranks[i]["words"][0] for i in ids]
            n = len(ids)
            r8 = sum(1 for r in at8 if r) / n
            mrr = sum(1 / r for r in at8 if r) / n
            r20 = sum(1 for r in at20 if r) / n
            gained = sum(1 for r, b in zip(at8, base, strict=True) if r and not b)
            lost = sum(1 for r, b in zip(at8, base, strict=True) if b and not r)
            cell = f"{mode} {r8:.3f}/{mrr:.3f} r20 {r20:.3f} +{gained}-{lost}"
            if mode == "both":
                alone = [ranks[i]["expanded"][0] for i in ids]
                lost_exp = sum(1 for r, b in zip(at8, alone, strict=True) if b and not r)
                cell += f" (-{lost_exp} vs expanded)"
            cells.append(cell)
        print(f"  {key:<14} n {len(ids):3}  " + " | ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
