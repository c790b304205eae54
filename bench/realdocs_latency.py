"""Retrieval latency at about 100k real passages, by candidate list: words alone, with a model's
terms, with embeddings, with both, all in one run (figures as ratios to words alone).

    .venv/bin/python -m bench.realdocs_latency STORE --realdocs PATH --expanded TERMS
        [--copies 9] [--dimension 384] [--repeat 1] [--work DIR] [--json OUT]

STORE is an indexed realdocs-dev store (``build_estate.py`` and ``scout index``); its passages
are replicated ``--copies`` times (``bench/realdocs_child.py``'s replication: each copy under a
path of its own, with one token of its own). Every replicated passage gets a vector: its source
passage's when STORE holds vectors of ``--dimension`` (an index with ``[retrieval.embeddings]``),
else a random unit vector (the dense stage's cost is a matrix product and a partial sort, the
same whatever the numbers). The question's vector comes from an in-process stand-in that
answers at once, so the figures are retrieval's own: the embedding call a real model makes per
question (a server round trip, or fastembed in-process) is reported apart, from ``--model-ms``
if given. TERMS is a question-id -> terms file (bench/questions/realdocs-dev-expansion.json).

Reported per mode: CPU time per question (p50, p99) and wall time p50, warm (the matrix read
once before timing, as the server holds it), each question asked once (``--repeat``: more
passes, where a connection's kept row counts make the later ones cheaper), each mode on a
connection of its own; then the cold cost a one-shot ``scout ask`` pays to read the matrix,
and the vectors' bytes per passage in the store.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# as scout.embeddings.configured does, before numpy is imported (a process running Scout with
# embeddings has one BLAS thread unless its environment says otherwise)
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy  # noqa: E402

from bench.realdocs_child import replicate  # noqa: E402
from bench.realdocs_recall import all_questions, expanded_terms  # noqa: E402

MODEL = "bench:vectors"


class _Instant:
    """An embedder that answers at once with a fixed unit vector per text (not a model)."""

    def __init__(self, dimension: int) -> None:
        self.name = MODEL
        self.dimension = dimension

    def embed(self, texts: list[str], *, deadline: float | None = None) -> Any:
        rows = []
        for text in texts:
            rng = numpy.random.default_rng(abs(hash(text)) % (1 << 32))
            rows.append(rng.standard_normal(self.dimension).astype(numpy.float32))
        return numpy.array(rows, dtype=numpy.float32)


def add_vectors(source: Path, target: Path, dimension: int) -> dict[str, Any]:
    """A vector for every passage of ``target``: its source passage's (by path and lines, the
    copy's path with its ``copyN/`` prefix taken off), or a random one."""
    from scout.records import embed_key
    from scout.store import Store

    real: dict[tuple[str, str, int], bytes] = {}
    with sqlite3.connect(source) as conn:
        rows = conn.execute(
            "select p.project, p.path, p.line_start, v.vector from passages p join vectors v "
            "on v.key = p.embed_key where length(v.vector) = ?",
            [dimension * 4],
        ).fetchall()
        real = {(project, path, line): blob for project, path, line, blob in rows}
    rng = numpy.random.default_rng(1)
    used_real = 0
    with Store.open(target) as store:
        store.fill_embed_keys()
        store.start_vectors(MODEL, dimension)
        batch: list[tuple[str, bytes]] = []
        for passage in store.passages():
            key = embed_key(passage.heading, passage.body)
            origin = (passage.project, passage.path.split("/", 1)[1], passage.line_start)
            blob = real.get(origin)
            if blob is None:
                vector = rng.standard_normal(dimension).astype("<f4")
                blob = (vector / numpy.linalg.norm(vector)).astype("<f4").tobytes()
            else:
                used_real += 1
            batch.append((key, blob))
            if len(batch) == 5_000:
                store.save_vectors(MODEL, batch)
                batch = []
        if batch:
            store.save_vectors(MODEL, batch)
        count = store.vector_count(MODEL)
    return {"vectors": count, "from_source": used_real}


def _p99(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def vector_bytes(db: Path) -> int:
    """The vectors table's bytes (its pages, SQLite's dbstat where built in, else the blobs)."""
    with sqlite3.connect(db) as conn:
        try:
            row = conn.execute(
                "select sum(pgsize) from dbstat where name in ('vectors', 'vectors_key')"
            ).fetchone()
            if row and row[0]:
                return int(row[0])
        except sqlite3.OperationalError:
            pass
        return int(conn.execute("select sum(length(vector) + 40) from vectors").fetchone()[0])


def measure(db: Path, asked: list[str], terms: dict[str, list[str]], dimension: int,
            repeat: int) -> dict[str, Any]:  # fmt: skip
    from scout.embeddings import Embeddings
    from scout.retrieve import dense, retrieve
    from scout.retrieve.expansion import replayed
    from scout.store import Store

    embeddings = Embeddings(_Instant(dimension))
    out: dict[str, Any] = {}
    with Store.open(db) as store:
        started = time.perf_counter()
        dense._matrices.clear()
        dense._matrix(store, embeddings.name, dimension)
        out["matrix_cold_ms"] = round((time.perf_counter() - started) * 1000, 1)
        modes = {
            "words": {},
            "expanded": {"terms": True},
            "dense": {"dense": True},
            "both": {"terms": True, "dense": True},
        }
        for question in asked[:5]:  # warm the page cache for every mode
            retrieve(store, question, 8, embeddings=embeddings)
        for mode, wants in modes.items():
            cpu: list[float] = []
            wall: list[float] = []
            # A connection of its own for each mode: what a connection keeps of the passages
            # (row counts, ``Connected.derived``) must not carry one mode's work into the next.
            with Store.open(db) as fresh:
                for _ in range(repeat):
                    for question in asked:
                        expand = replayed(terms.get(question)) if wants.get("terms") else None
                        vectors = embeddings if wants.get("dense") else None
                        began, used = time.perf_counter(), time.process_time()
                        retrieve(fresh, question, 8, expand=expand, embeddings=vectors)
                        cpu.append((time.process_time() - used) * 1000)
                        wall.append((time.perf_counter() - began) * 1000)
            cpu.sort()
            wall.sort()
            out[mode] = {
                "cpu_p50_ms": round(statistics.median(cpu), 1),
                "cpu_p99_ms": round(_p99(cpu), 1),
                "wall_p50_ms": round(statistics.median(wall), 1),
                "wall_p99_ms": round(_p99(wall), 1),
            }
        out["passages"] = store.passage_count()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--realdocs", type=Path, required=True)
    parser.add_argument("--expanded", type=Path, required=True)
    parser.add_argument("--copies", type=int, default=9)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.copies < 1 or args.dimension < 1 or args.repeat < 1 or args.questions < 1:
        print("--copies, --dimension, --repeat and --questions must be at least 1", file=sys.stderr)
        return 2

    questions = [q for q in all_questions(args.realdocs, []) if q.get("answerable", True)]
    random.Random(7).shuffle(questions)
    questions = questions[: args.questions]
    terms = expanded_terms(args.expanded, questions)
    asked = [q["question"] for q in questions]
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        db = Path(work) / "big.db"
        replicated = replicate(str(args.store), str(db), args.copies)
        print(f"replicated: {replicated}", file=sys.stderr)
        before = db.stat().st_size
        vectors = add_vectors(args.store, db, args.dimension)
        print(f"vectors: {vectors}", file=sys.stderr)
        figures = measure(db, asked, terms, args.dimension, args.repeat)
        figures["vectors"] = vectors
        figures["vector_bytes_per_passage"] = round(vector_bytes(db) / vectors["vectors"], 1)
        figures["file_bytes_per_passage_added"] = round(
            (db.stat().st_size - before) / vectors["vectors"], 1
        )
    words = figures["words"]
    for mode in ("expanded", "dense", "both"):
        row = figures[mode]
        for figure in ("cpu_p50_ms", "cpu_p99_ms", "wall_p50_ms", "wall_p99_ms"):
            row[figure.replace("_ms", "_x")] = round(row[figure] / words[figure], 2)
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
