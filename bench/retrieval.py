"""Retrieval latency and agreement: Scout's FTS5 retrieval against tantivy on the same passages.

The main rule: both engines get the same passages, the same query terms (Scout's own
``query_terms``, stop words dropped the same way) and the same heading boost, and are timed the
same way (query building included). Agreement is overlap@8: the share of Scout's top 8 that is
also in tantivy's top 8.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.corpus import Passage
from scout.retrieve import retrieve
from scout.retrieve.lexical import HEADING_WEIGHT, literal
from scout.store import PassageRecord, Store
from scout.words import query_terms

TOP = 8
SHA = "0" * 40


def record(n: int, passage: Passage) -> PassageRecord:
    path = f"docs/page-{passage.page}.md"
    return PassageRecord(
        project="bench/docs",
        path=path,
        sha=SHA,
        line_start=n,
        line_end=n,
        heading=passage.heading,
        body=passage.body,
        source="docs",
        origin="corpus",
        url=f"https://gitlab.bench.example/bench/docs/-/blob/{SHA}/{path}#L{n}-{n}",
    )


def build_store(path: Path, passages: Iterable[Passage], batch: int = 20_000) -> tuple[int, float]:
    """Write passages through Store (triggers and all); returns (count, seconds)."""
    started = time.perf_counter()
    count = 0
    with Store.open(path, create=True) as store:
        chunk: list[PassageRecord] = []
        for passage in passages:
            count += 1
            chunk.append(record(count, passage))
            if len(chunk) == batch:
                store.insert_passages(chunk)
                chunk = []
        if chunk:
            store.insert_passages(chunk)
    return count, time.perf_counter() - started


class Tantivy:
    """A tantivy index over the same passages: stemmed like FTS5's porter, heading boosted."""

    def __init__(
        self, directory: Path, passages: Iterable[Passage], *, repeat_heading: bool = False
    ) -> None:
        import tantivy

        self.tantivy = tantivy
        analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field("id", stored=True, indexed=False, fast=True)
        builder.add_text_field("heading", stored=False, tokenizer_name="scout")
        builder.add_text_field("body", stored=False, tokenizer_name="scout")
        self.schema = builder.build()
        directory.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        self.index = tantivy.Index(self.schema, path=str(directory))
        self.index.register_tokenizer("scout", analyzer)
        writer = self.index.writer(heap_size=256_000_000, num_threads=2)
        self.repeat_heading = repeat_heading
        for n, passage in enumerate(passages, start=1):
            if repeat_heading:
                # BM25F as FTS5 computes it: heading term frequencies count HEADING_WEIGHT times.
                heading, body = "", (passage.heading + " ") * int(HEADING_WEIGHT) + passage.body
            else:
                heading, body = passage.heading, passage.body
            writer.add_document(tantivy.Document(id=n, heading=heading, body=body))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        self.seconds = time.perf_counter() - started

    def search(self, question: str, limit: int = TOP) -> list[int]:
        terms = query_terms(question)
        query = self.index.parse_query(
            " OR ".join(literal(t) for t in terms),
            ["body"] if self.repeat_heading else ["heading", "body"],
            field_boosts={} if self.repeat_heading else {"heading": HEADING_WEIGHT},
        )
        hits = self.searcher.search(query, limit).hits
        return [self.searcher.doc(address)["id"][0] for _score, address in hits]


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50/p95/p99/max in milliseconds."""
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50_ms": round(q[49] * 1000, 3),
        "p95_ms": round(q[94] * 1000, 3),
        "p99_ms": round(q[98] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
    }


def timed(
    search: Callable[[str], list[int]], questions: list[str]
) -> tuple[list[list[int]], list[float]]:
    results, seconds = [], []
    for question in questions:
        started = time.perf_counter()
        results.append(search(question))
        seconds.append(time.perf_counter() - started)
    return results, seconds


def overlap(ours: list[list[int]], theirs: list[list[int]]) -> float:
    """Mean share of the reference's top results that ``ours`` also returns (1.0 if both empty)."""
    shares = []
    for a, b in zip(ours, theirs, strict=True):
        if not b:
            shares.append(1.0 if not a else 0.0)
        else:
            shares.append(len(set(a) & set(b)) / len(b))
    return round(statistics.fmean(shares), 4)


def scout_search(store: Store) -> Callable[[str], list[int]]:
    return lambda question: [hit.id for hit in retrieve(store, question, TOP).hits]


def before_search(store: Store) -> Callable[[str], list[int]]:
    """Scout's retrieval as it was before the benchmarks: one query, passages joined per match."""
    sql = (
        "select passages.id, bm25(passages_fts, ?, 1.0) as score "
        "from passages_fts join passages on passages.id = passages_fts.rowid "
        "where passages_fts match ? order by score limit ?"
    )
    columns = "passages.heading, passages.body, passages.url"
    sql = sql.replace("select passages.id,", f"select passages.id, {columns},")
    # Raw SQL on a connection of its own: the store keeps its connection private.
    conn = sqlite3.connect(store.path, check_same_thread=False)

    def search(question: str) -> list[int]:
        match = " OR ".join(literal(t) for t in query_terms(question))
        rows = conn.execute(sql, [HEADING_WEIGHT, match, TOP]).fetchall()
        return [row[0] for row in rows if row[-1] < -1e-4]

    return search


def measure(
    db: Path, engines: dict[str, Tantivy], questions: list[str], repeat: int = 2
) -> dict[str, Any]:
    """Time every question on every engine (best of ``repeat`` runs each) and compare top 8s."""
    with Store.open(db) as store:
        searches: dict[str, Callable[[str], list[int]]] = {
            "scout": scout_search(store),
            "scout_before": before_search(store),
            **{name: engine.search for name, engine in engines.items()},
        }
        figures: dict[str, Any] = {}
        results: dict[str, list[list[int]]] = {}
        for name, search in searches.items():
            timed(search, questions[:20])
            best: list[float] | None = None
            for _ in range(repeat):
                results[name], seconds = timed(search, questions)
                best = (
                    seconds
                    if best is None
                    else [min(a, b) for a, b in zip(best, seconds, strict=True)]
                )
            assert best is not None
            figures[name] = percentiles(best)
            if name == "scout_before":
                figures["scout_before_seconds"] = best
    reference = next(iter(engines))
    for name in searches:
        if name != reference:
            agreement = overlap(results[name], results[reference])
            figures[name]["overlap_at_8_vs_" + reference] = agreement
    figures["scout"]["overlap_at_8_vs_before"] = overlap(results["scout"], results["scout_before"])
    # Scout's own full ranking (no first stage): the two stages must give exactly its top 8.
    # "before" differs by design since spelling variants and copies of a section were added.
    with Store.open(db) as store:
        full = [[hit.id for hit in retrieve(store, q, TOP, budget=10**9).hits] for q in questions]
    figures["scout"]["overlap_at_8_vs_full"] = overlap(results["scout"], full)
    return figures


@dataclass(frozen=True)
class Diagnosis:
    """Why a query is slow: the rows its terms match (sum of document frequencies)."""

    question: str
    seconds: float
    postings: int
    top_term_share: float


def diagnose(db: Path, questions: list[str], seconds: list[float]) -> dict[str, Any]:
    """Relate latency to the document frequencies of the query's terms (via fts5vocab)."""
    Store.open(db).close()  # migrated, and its file checked, before reading it directly
    with sqlite3.connect(db) as conn:
        conn.execute(
            "create virtual table if not exists temp.bench_vocab "
            "using fts5vocab(main, passages_fts, 'row')"
        )
        total = int(conn.execute("select count(*) from passages").fetchone()[0])
        rows: list[Diagnosis] = []
        for question, spent in zip(questions, seconds, strict=True):
            dfs = []
            for term in query_terms(question):
                found = conn.execute(
                    "select count(*) from passages_fts where passages_fts match ?", [literal(term)]
                ).fetchone()
                dfs.append(int(found[0]))
            rows.append(Diagnosis(question, spent, sum(dfs), max(dfs, default=0) / total))
    rows.sort(key=lambda d: d.seconds)
    slow = rows[-len(rows) // 20 :]
    fast = rows[: len(rows) // 2]
    return {
        "slowest_5pct_mean_postings": round(statistics.fmean(d.postings for d in slow)),
        "fastest_50pct_mean_postings": round(statistics.fmean(d.postings for d in fast)),
        "slowest_5pct_mean_top_term_share": round(
            statistics.fmean(d.top_term_share for d in slow), 3
        ),
        "correlation_latency_postings": round(
            statistics.correlation([d.seconds for d in rows], [float(d.postings) for d in rows]), 3
        ),
    }
