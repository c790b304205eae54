"""Recall on a realdocs folder's questions, in-process, by split and by overlap class.

    .venv/bin/python -m bench.realdocs_recall CONFIG --realdocs PATH [--extra FILE] [--misses]
        [--expanded TERMS] [--json OUT] [--only FILE]

The realdocs folder's ``recall.py`` counts a question found as it does (its ``first_rank``);
this adds what it does not print: recall at 8, 20 and 50 and MRR (at 8) for ``questions.json``
and for each ``split`` of ``questions-more.json``, each by ``overlap`` class (the first words of
a question's note). Tune on ``tune``; a change that lifts it and not ``check`` is fitting.
``--extra`` adds questions of the same schema written for this corpus (bench/questions/, all
on the ``tune`` side): they count in their split and are also reported on their own as ``own``.
``--expanded`` measures expansion without a provider call: a JSON object of question id to the
terms a model replied for that question alone (``[retrieval] expand = "model"``'s prompt),
cleaned and ranked as retrieval does with a live reply. ``--only`` measures the questions of one
file alone, for another estate than realdocs-dev's (``--realdocs`` still gives ``recall.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

DEPTHS = (8, 20, 50)


def load_recall(realdocs: Path) -> Any:
    spec = importlib.util.spec_from_file_location("realdocs_recall", realdocs / "recall.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def overlap_class(question: dict[str, Any]) -> str:
    note = str(question.get("note", ""))
    return note.split()[1] if note.startswith("overlap ") else "-"


def add_extra(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--extra",
        type=Path,
        action="append",
        default=[],
        help="more questions (bench/questions/*.json)",
    )


def split_questions(realdocs: Path, extra: list[Path], split: str) -> list[dict[str, Any]]:
    """``questions-more.json``'s questions of ``split``, with those of ``extra`` files."""
    return [q for q in all_questions(realdocs, extra) if q.get("split") == split]


def all_questions(realdocs: Path, extra: list[Path]) -> list[dict[str, Any]]:
    """realdocs-dev's questions (``questions.json``, ``questions-more.json``), then ``extra``'s."""
    return [
        *json.loads((realdocs / "questions.json").read_text(encoding="utf-8")),
        *json.loads((realdocs / "questions-more.json").read_text(encoding="utf-8")),
        *extra_questions(extra),
    ]


def extra_questions(files: list[Path]) -> list[dict[str, Any]]:
    """The questions of ``files``, each marked as our own (reported as ``own`` as well)."""
    out = []
    for file in files:
        out += [{**q, "own": True} for q in json.loads(file.read_text(encoding="utf-8"))]
    return out


def expanded_terms(file: Path, questions: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Question text -> the terms ``file`` holds for its id, cleaned as a live reply is."""
    from scout.retrieve.expansion import clean_terms

    replies = json.loads(file.read_text(encoding="utf-8"))
    out = {}
    for q in questions:
        raw = replies.get(q.get("id"))
        if isinstance(raw, list):
            out[q["question"]] = clean_terms(raw, q["question"])
    return out


def setup(args: argparse.Namespace) -> tuple[Any, Any, Any, list[dict[str, Any]]]:
    """What both measuring tools start from: realdocs' ``recall.py``, the store of ``args.config``
    (open), its embedding model when ``args.dense`` asks for it (None otherwise, or when the
    config names none), and the questions (``args.only``'s, or realdocs-dev's with ``--extra``)."""
    from scout.config import load_config
    from scout.retrieve.settings import RetrievalSettings
    from scout.store import Store

    config = load_config(args.config)
    embeddings = RetrievalSettings.of(config, "offline", dense=args.dense).embeddings
    questions = (
        json.loads(args.only.read_text(encoding="utf-8"))
        if args.only
        else all_questions(args.realdocs, args.extra)
    )
    return load_recall(args.realdocs), Store.open(config.store.path), embeddings, questions


def summary(ranks: list[tuple[int | None, int | None]]) -> dict[str, Any]:
    """recall@8 and MRR from the top-8 list (as ask gets it), @20 and @50 from the top-50 one
    (re-ranking works on a pool at least as deep as the list asked for, so the two differ)."""
    n = len(ranks)
    out: dict[str, Any] = {"n": n}
    if not n:
        return out
    out["r@8"] = round(sum(1 for r, _ in ranks if r) / n, 3)
    for k in DEPTHS[1:]:
        out[f"r@{k}"] = round(sum(1 for _, r in ranks if r and r <= k) / n, 3)
    out["mrr"] = round(sum(1 / r for r, _ in ranks if r) / n, 3)
    return out


def measure(
    search: Any, recall: Any, questions: list[dict[str, Any]], misses: bool = False
) -> dict[str, Any]:
    """Figures for ``questions`` by group (split x overlap), from ``search(question, k)``."""
    groups: dict[str, list[tuple[int | None, int | None]]] = {}
    for q in questions:
        if not q.get("answerable", True):
            continue
        hits = search(q["question"], DEPTHS[0])
        rank = recall.first_rank(hits, q["targets"])
        deep = recall.first_rank(search(q["question"], max(DEPTHS)), q["targets"])
        split = q.get("split", "orig")
        keys = [split, f"{split}/{overlap_class(q)}"]
        if q.get("own"):
            keys += ["own", f"own/{overlap_class(q)}"]
        for key in keys:
            groups.setdefault(key, []).append((rank, deep))
        if misses and (rank is None or rank > 8):
            print(f"  {q['id']} r={rank} [{split} {overlap_class(q)}] {q['question'][:90]}")
            print(f"      top: {recall.describe(hits[0]) if hits else '-'}")
    return {key: summary(ranks) for key, ranks in sorted(groups.items())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--realdocs", type=Path, required=True)
    parser.add_argument("--misses", action="store_true", help="print questions not in the top 8")
    parser.add_argument("--split", default=None, help="only this split (tune, check, orig)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--expanded", type=Path, default=None, help="question id -> a model's terms (JSON)"
    )
    parser.add_argument(
        "--only",
        type=Path,
        default=None,
        help="these questions alone (another estate's: bench/questions/transfer.json)",
    )
    parser.add_argument(
        "--dense",
        action="store_true",
        help="fuse the dense list of the config's [retrieval.embeddings] (run scout index first)",
    )
    add_extra(parser)
    args = parser.parse_args()

    from scout.retrieve import retrieve
    from scout.retrieve.expansion import replayed

    recall, store, embeddings, questions = setup(args)
    terms = expanded_terms(args.expanded, questions) if args.expanded else {}

    def search(question: str, k: int) -> list[dict[str, Any]]:
        expand = replayed(terms[question]) if question in terms else None
        return [
            {"project": h.project, "path": h.path, "heading": h.heading,
             "lines": [h.line_start, h.line_end]}
            for h in retrieve(store, question, k, expand=expand, embeddings=embeddings).hits
        ]  # fmt: skip

    if args.split:
        questions = [q for q in questions if q.get("split", "orig") == args.split]
    figures = measure(search, recall, questions, args.misses)
    for key, row in figures.items():
        cells = "  ".join(f"{name} {value}" for name, value in row.items())
        print(f"{key:<12} {cells}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
