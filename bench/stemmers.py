"""The two stemmers side by side: FTS5's porter (inside SQLite, what BM25 matches on) and
``scout.words.stem`` (in Python, what the offline provider and gap grouping compare).

Measures, on the words of a documentation tree: how often the two put a pair of words that share
a stem under one stem as well (agreement on groupings), and the cost of a stem each way. Porter is
reachable from Python only through an FTS5 table and its fts5vocab view, so a word costs a row
written and read back. Run: ``.venv/bin/python -m bench.stemmers [FOLDER]`` (default: the demo
estate).
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

from scout.words import stem, words

DEFAULT = Path(__file__).resolve().parent.parent / "scout" / "demo" / "estate"


def vocabulary(root: Path) -> list[str]:
    found: set[str] = set()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".md", ".rst", ".txt") and path.is_file():
            found |= set(words(path.read_text(encoding="utf-8", errors="replace")))
    return sorted(w for w in found if w.isalpha())


def porter(vocab: list[str]) -> dict[str, str]:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(vocab, 1))
    rows = db.execute("SELECT doc, term FROM v").fetchall()
    return {vocab[doc - 1]: term for doc, term in rows}


def groups(stems: dict[str, str]) -> set[frozenset[str]]:
    by: defaultdict[str, set[str]] = defaultdict(set)
    for word, s in stems.items():
        by[s].add(word)
    return {frozenset(g) for g in by.values() if len(g) > 1}


def pairs(found: set[frozenset[str]]) -> set[tuple[str, str]]:
    return {(a, b) for g in found for a in g for b in g if a < b}


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    vocab = vocabulary(root)
    started = time.process_time()
    by_porter = porter(vocab)
    porter_cpu = time.process_time() - started
    stem.cache_clear()
    started = time.process_time()
    by_light = {w: stem(w) for w in vocab}
    light_cpu = time.process_time() - started
    p, light = pairs(groups(by_porter)), pairs(groups(by_light))
    print(f"{len(vocab)} words from {root}")
    print(f"word pairs one stem: porter {len(p)}, light {len(light)}, both {len(p & light)}")
    print(f"only porter: {sorted(p - light)[:12]}")
    print(f"only light:  {sorted(light - p)[:12]}")
    print(
        f"CPU per word: porter via FTS5 {porter_cpu / len(vocab) * 1e6:.2f} us (one batch), "
        f"light {light_cpu / len(vocab) * 1e6:.2f} us; "
        f"ratio {porter_cpu / max(light_cpu, 1e-9):.1f}"
    )


if __name__ == "__main__":
    main()
