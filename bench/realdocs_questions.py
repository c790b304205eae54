"""Check a file of realdocs questions against an indexed estate, and class each by overlap.

    .venv/bin/python -m bench.realdocs_questions CONFIG FILE [--write]

FILE is in the schema of realdocs-dev's ``questions-more.json``. Every target must name at least
one indexed passage (project, path, ``heading_contains`` in its heading path, ``line`` in its
lines): a target nothing matches would count as a miss whatever retrieval does. Each answerable
question is then classed by how much vocabulary it shares with its answer, as realdocs-dev's
notes do: the share of the question's words (stop words and the projects' own names left out,
each word lightly stemmed) found in its best-matching target passage; ``low`` is at most 0.34,
``high`` at least 0.6. With ``--write`` the class opens each answerable question's note
(``overlap low (0.30)``), replacing one already there.

This reads the passages table only: it never ranks anything, so a question is never shaped by
what Scout retrieves for it.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

LOW, HIGH = 0.34, 0.6
LOOSE = 5  # a target matching more passages than this is reported (not refused)
SPLITS = ("tune", "check", "transfer")  # transfer: bench/transfer_estate.py's estate
# Product names are how a question says where, not what: they would make every question on a
# project overlap with every passage of it.
PRODUCT_WORDS = frozenset(
    """gitlab helm chart charts hugo sphinx mkdocs material stencil python docusaurus k8s flask
    pytest click attrs werkzeug mkdocstrings""".split()
)


def overlap(question: str, passages: list[tuple[str, str]]) -> float:
    """The share of ``question``'s words found in the best of ``passages`` (heading, body)."""
    from scout.words import STOPWORDS, stem, words

    asked = {stem(w) for w in words(question) if w not in STOPWORDS and w not in PRODUCT_WORDS}
    asked.discard("")
    if not asked:
        return 0.0
    best = 0.0
    for heading, body in passages:
        held = {stem(w) for w in words(f"{heading}\n{body}")}
        best = max(best, len(asked & held) / len(asked))
    return best


def overlap_class(share: float) -> str:
    return "low" if share <= LOW else "high" if share >= HIGH else "mid"


def target_passages(db: sqlite3.Connection, target: dict[str, Any]) -> list[tuple[str, str]]:
    """The passages (heading, body) a target names, as realdocs-dev's ``recall.py`` matches."""
    rows = db.execute(
        "select heading, body, line_start, line_end from passages where project = ? and path = ?",
        [target["project"], target["path"]],
    ).fetchall()
    wanted = str(target.get("heading_contains") or "").casefold()
    line = target.get("line")
    return [
        (heading, body)
        for heading, body, start, end in rows
        if wanted in heading.casefold() and (line is None or start <= int(line) <= end)
    ]


def problems(question: Any, ids: set[str]) -> list[str]:
    """What is wrong with one question's fields (schema of questions-more.json)."""
    if not isinstance(question, dict):
        return ["not an object"]
    out = []
    qid = question.get("id")
    if not isinstance(qid, str) or not qid:
        out.append("id must be a non-empty string")
    elif qid in ids:
        out.append(f"id {qid} repeats")
    text = question.get("question")
    if not isinstance(text, str) or not text.strip() or len(text) > 2_000:
        out.append("question must be text of 1 to 2,000 characters")
    if question.get("split") not in SPLITS:
        out.append(f"split must be one of {', '.join(SPLITS)}")
    answerable = question.get("answerable")
    targets = question.get("targets")
    if not isinstance(answerable, bool):
        out.append("answerable must be true or false")
    elif not isinstance(targets, list) or (answerable and not targets):
        out.append("an answerable question needs targets (a list)")
    else:
        for target in targets:
            if not isinstance(target, dict) or not all(
                isinstance(target.get(key), str) for key in ("project", "path")
            ):
                out.append("a target needs project and path")
            elif not isinstance(target.get("heading_contains", ""), str) or not isinstance(
                target.get("line", 0), int
            ):
                out.append("a target's heading_contains is text and its line a number")
    if not isinstance(question.get("note", ""), str):
        out.append("note must be text")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("file", type=Path)
    parser.add_argument("--write", action="store_true", help="write each overlap into its note")
    args = parser.parse_args()

    from scout.config import load_config

    try:
        questions = json.loads(args.file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(questions, list):
        print(f"error: {args.file}: expected a list of questions", file=sys.stderr)
        return 2
    db = sqlite3.connect(f"file:{load_config(args.config).store.path}?mode=ro", uri=True)
    bad = 0
    ids: set[str] = set()
    classes: dict[str, int] = {}
    for question in questions:
        wrong = problems(question, ids)
        if not wrong and question["answerable"]:
            found = [p for t in question["targets"] for p in target_passages(db, t)]
            missing = [t for t in question["targets"] if not target_passages(db, t)]
            wrong += [f"target matches no passage: {json.dumps(t)}" for t in missing]
            for t in question["targets"]:
                many = len(target_passages(db, t))
                if many > LOOSE:  # a page title matches every section of its page
                    print(f"{question['id']}: note: {many} passages match {json.dumps(t)}")
            if found and not missing:
                share = overlap(question["question"], found)
                name = overlap_class(share)
                classes[name] = classes.get(name, 0) + 1
                note = re.sub(r"^overlap \w+ \([\d.]+\)[;,]?\s*", "", question.get("note", ""))
                question["note"] = f"overlap {name} ({share:.2f})" + (f"; {note}" if note else "")
        if isinstance(question, dict) and isinstance(question.get("id"), str):
            ids.add(question["id"])
        for problem in wrong:
            bad += 1
            print(f"{question.get('id', '?') if isinstance(question, dict) else '?'}: {problem}")
    print(f"{len(questions)} questions, {bad} problems; answerable by overlap: {classes}")
    if args.write and not bad:
        args.file.write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
