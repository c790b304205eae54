"""A learned linear ranking of keyword features, and the bound it sets, measured by split.

    .venv/bin/python -m bench.realdocs_linear CONFIG --realdocs PATH [--extra FILE]
        [--only FILE] [--fit-on tune] [--cap N] [--depth 100] [--weights FILE]
        [--save FILE]

The issue asked for k1, b and the field weights to be tuned on measurements. This generalises
that: each question's top ``--depth`` passages (as ``scout search --limit`` ranks them) get the
keyword evidence the ranking could use (their score, their heading's and body's BM25 apart, the
idf-weighted share of the question's words in the passage, its heading, its last heading and
its whole file, changelog kind, named project, code span, length, depth, how many of the top
its file holds), and a weighted sum of them, fitted by coordinate ascent on recall@8 + MRR of
the ``--fit-on`` split, orders them again (``--cap`` keeps a file to N of the first 8). The
figures are then reported for every split, before and after.

Fitting on ``check`` itself (``--fit-on check``) is not a result: it is the most that any
weighting of these features can give on ``check``, the bound for keyword re-ranking. A hit is
judged one passage at a time by the realdocs folder's ``recall.py``; the "before" column is the
order of a pool of ``--depth`` (a deeper pool than ``scout ask``'s, so one or two questions
above ``bench/realdocs_recall.py``'s figures). ``--weights`` applies saved weights (``--save``)
without fitting: fit on one estate, measure on another.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path
from typing import Any

from bench.realdocs_recall import add_extra, all_questions, load_recall, overlap_class

FEATURES = (
    "order", "score", "heading", "body", "share", "heading_share", "last_share", "file_share",
    "changelog", "named", "code", "length", "depth", "file_pool",
)  # fmt: skip
STEPS = (-2.0, -1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0, 2.0)
PASSES = 4
TOP = 8
START = {"order": 1.0}  # the order retrieval gave: the fit starts from what ships


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--realdocs", type=Path, required=True)
    add_extra(parser)
    parser.add_argument("--only", type=Path, help="this file's questions alone")
    parser.add_argument("--fit-on", default="tune", help="the split the weights are chosen on")
    parser.add_argument("--cap", type=int, default=0, help="most passages of a file in the top 8")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--weights", type=Path, help="apply these saved weights, no fitting")
    parser.add_argument("--save", type=Path, help="write the fitted weights here")
    args = parser.parse_args()
    if not 8 <= args.depth <= 100 or args.cap < 0:
        print("--depth must be 8 to 100 and --cap at least 0", file=sys.stderr)
        return 2

    try:
        saved = read_weights(args.weights) if args.weights else None
        questions = read_questions(args.only) if args.only else None
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    recall = load_recall(args.realdocs)
    if questions is None:
        questions = all_questions(args.realdocs, args.extra)
    from scout.config import load_config
    from scout.store import Store

    with Store.open(load_config(args.config).store.path) as store:
        lists = [q for q in (candidates(store, recall, q, args.depth) for q in questions) if q]

    if saved is not None:
        weights = saved
    else:
        fit = [q for q in lists if q["split"] == args.fit_on]
        if not fit:
            print(f"no answerable question in split {args.fit_on!r}", file=sys.stderr)
            return 2
        weights = fitted(fit, args.cap)
    print("weights: " + ", ".join(f"{k} {v:g}" for k, v in weights.items() if v))
    print(
        f"{'questions':<16} {'n':>4}  recall@8 before / after  MRR before / after  "
        "recall@20 before / after"
    )
    for label, group in groups(lists):
        b, a = metrics(group, START, 0), metrics(group, weights, args.cap)
        print(f"{label:<16} {len(group):>4}  {b[0]:.3f} / {a[0]:.3f}            "
              f"{b[1]:.3f} / {a[1]:.3f}       {b[2]:.3f} / {a[2]:.3f}")  # fmt: skip
    if args.save:
        args.save.write_text(json.dumps(weights, indent=1) + "\n")
    return 0


def read_weights(path: Path) -> dict[str, float]:
    """Saved weights: a JSON object of feature names (``FEATURES``) to numbers."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"--weights {path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"--weights {path}: must be a JSON object of feature to weight")
    for name, value in data.items():
        if name not in FEATURES:
            raise ValueError(f"--weights {path}: unknown feature {name!r}")
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ValueError(f"--weights {path}: {name}'s weight must be a finite number")
    return {name: float(value) for name, value in data.items()}


def read_questions(path: Path) -> list[dict[str, Any]]:
    """``--only``'s questions: a JSON list of objects, each with a question and its targets."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"--only {path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, list) or not all(
        isinstance(q, dict)
        and isinstance(q.get("question"), str)
        and isinstance(q.get("id"), str)
        and (not q.get("answerable", True) or isinstance(q.get("targets"), list))
        for q in data
    ):
        raise ValueError(f"--only {path}: must be a list of questions with id, question, targets")
    return data


def candidates(store: Any, recall: Any, q: dict[str, Any], depth: int) -> dict[str, Any] | None:
    """One answerable question's top ``depth``, each passage with its features and label."""
    from scout import retrieve, words
    from scout.errors import UsageError
    from scout.retrieve import lexical
    from scout.retrieve import question as asking
    from scout.retrieve import rerank as rank

    if not q.get("answerable", True):
        return None
    question = q["question"]
    try:
        hits = retrieve.retrieve(store, question, depth).hits
        terms = words.query_terms(question)
    except UsageError:
        hits, terms = [], []
    total = store.passage_count()
    count = functools.partial(_count, store, total)
    live = [t for t in terms if count(t)]
    idf = {
        words.stem(t): max(math.log((total - count(t) + 0.5) / (count(t) + 0.5)), 0.01)
        for t in live
    }
    weight = sum(idf.values()) or 1.0
    ids = [h.id for h in hits]
    match = " OR ".join(lexical.literal(t) for t in live) or '""'
    body = store.scores(match, ids, heading_weight=0.0) if live else {}
    whole = store.scores(match, ids, heading_weight=1.0) if live else {}
    asked = words.words(question)
    named = rank.named_projects(
        asked,
        store.project_names(),
        lambda word, project: (
            store.count_matches(lexical.literal(word), total, projects=(project,))
            / max(count(word), 1)
        ),
    )
    versions = asking.about_versions(question, asked)
    spans = asking.code_spans(question)
    pool: dict[tuple[str, str], int] = {}
    for h in hits:
        pool[(h.project, h.path)] = pool.get((h.project, h.path), 0) + 1

    def share(stems: frozenset[str]) -> float:
        return sum(v for s, v in idf.items() if s in stems) / weight

    rows = []
    for i, h in enumerate(hits):
        heading, text = _stems(h.heading), _stems(f"{h.heading}\n{h.body}")
        features = {
            "order": -math.log(1 + i),
            "score": -h.score,
            "heading": -(whole.get(h.id, 0.0) - body.get(h.id, 0.0)),
            "body": -body.get(h.id, 0.0),
            "share": share(text),
            "heading_share": share(heading),
            "last_share": share(_stems(h.heading.rsplit(" > ", 1)[-1])),
            "file_share": share(_file_stems(store, h.project, h.path)),
            "changelog": float(h.kind == "changelog" and not versions),
            "named": float(h.project in named),
            "code": float(any(s in f"{h.heading}\n{h.body}".casefold() for s in spans)),
            "length": math.log(1 + len(h.body.split())),
            "depth": float(h.heading.count(" > ")),
            "file_pool": math.log(pool[(h.project, h.path)]),
        }
        hit = {"project": h.project, "path": h.path, "heading": h.heading,
               "lines": [h.line_start, h.line_end]}  # fmt: skip
        rows.append({"f": features, "rel": recall.first_rank([hit], q["targets"]) == 1,
                     "file": (h.project, h.path)})  # fmt: skip
    for name in ("score", "heading", "body"):
        # Scaled by the question's best, so that one weight means the same for every question.
        top = max((r["f"][name] for r in rows), default=0.0) or 1.0
        for r in rows:
            r["f"][name] /= top
    return {"id": q["id"], "split": q.get("split", "orig"), "class": overlap_class(q),
            "own": bool(q.get("own")), "rows": rows}  # fmt: skip


@functools.lru_cache(maxsize=200_000)
def _stems(text: str) -> frozenset[str]:
    from scout import words

    return frozenset(words.stem(w) for w in words.words(text))


@functools.lru_cache(maxsize=100_000)
def _count(store: Any, total: int, term: str) -> int:
    from scout.retrieve import lexical

    return int(store.count_matches(lexical.literal(term), total))


_FILES: dict[tuple[str, str], frozenset[str]] = {}


def _file_stems(store: Any, project: str, path: str) -> frozenset[str]:
    if (project, path) not in _FILES:
        texts: dict[tuple[str, str], list[str]] = {}
        for p in store.passages(project):
            texts.setdefault((p.project, p.path), []).append(f"{p.heading}\n{p.body}")
        for key, parts in texts.items():
            # The union of its passages' stems: each is cached already, and no file's whole text
            # becomes a cache key.
            _FILES[key] = frozenset().union(*(_stems(part) for part in parts))
        _FILES.setdefault((project, path), frozenset())
    return _FILES[(project, path)]


def first_hit(q: dict[str, Any], weights: dict[str, float], cap: int) -> int | None:
    """The rank of ``q``'s first relevant passage when ordered by ``weights``."""
    rows = q["rows"]
    order = sorted(
        range(len(rows)), key=lambda i: -sum(w * rows[i]["f"][f] for f, w in weights.items())
    )
    if cap:
        placed: dict[tuple[str, str], int] = {}
        top: list[int] = []
        rest: list[int] = []
        for i in order:
            file = rows[i]["file"]
            if len(top) < TOP and placed.get(file, 0) < cap:
                placed[file] = placed.get(file, 0) + 1
                top.append(i)
            else:
                rest.append(i)
        order = top + rest
    return next((n for n, i in enumerate(order, 1) if rows[i]["rel"]), None)


def metrics(qs: list[dict[str, Any]], weights: dict[str, float], cap: int) -> tuple[float, ...]:
    """recall@8, MRR (at 8, as bench/realdocs_recall.py counts it) and recall@20."""
    ranks = [first_hit(q, weights, cap) for q in qs]
    n = len(qs) or 1
    return (
        sum(1 for r in ranks if r and r <= TOP) / n,
        sum(1 / r for r in ranks if r and r <= TOP) / n,
        sum(1 for r in ranks if r and r <= 20) / n,
    )


def fitted(qs: list[dict[str, Any]], cap: int) -> dict[str, float]:
    """Coordinate ascent from ``START``: each feature's weight moved by each step in turn,
    kept where recall@8 + MRR rises, for ``PASSES`` rounds or until nothing rises."""

    def objective(weights: dict[str, float]) -> float:
        r8, mrr, _ = metrics(qs, weights, cap)
        return r8 + mrr

    weights, best = dict(START), objective(START)
    for _ in range(PASSES):
        moved = False
        for feature in FEATURES:
            for step in STEPS:
                trial = {**weights, feature: round(weights.get(feature, 0.0) + step, 6)}
                value = objective(trial)
                if value > best + 1e-9:
                    weights, best, moved = trial, value, True
        if not moved:
            break
    return weights


def groups(lists: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for split in sorted({q["split"] for q in lists}):
        of = [q for q in lists if q["split"] == split]
        out.append((split, of))
        for cls in ("low", "mid", "high"):
            if any(q["class"] == cls for q in of):
                out.append((f"{split}/{cls}", [q for q in of if q["class"] == cls]))
    own = [q for q in lists if q["own"]]
    if own:
        out.append(("own", own))
    return out


if __name__ == "__main__":
    sys.exit(main())
