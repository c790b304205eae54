"""One measurement in a fresh process, against whichever Scout comes first on ``PYTHONPATH``.

``bench.realdocs`` runs this file with the Scout under test (this checkout, or an older one
extracted to a temporary folder), so both are measured by the same code on the same store.
It imports nothing from ``bench``: an older checkout has its own.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def index(config_path: str) -> dict[str, Any]:
    from scout.config import load_config
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules
    from scout.forge import open_forge
    from scout.store import Store

    config = load_config(config_path)
    rules = CorpusRules(tuple(config.forge.groups), config.corpus)
    forge = open_forge(config)
    with Store.open(config.store.path, create=True) as store:
        started = time.perf_counter()
        summary = index_estate(forge, store, rules)
        seconds = time.perf_counter() - started
    forge.close()
    return {
        "seconds": round(seconds, 3),
        "passages": summary.passages,
        "peak_rss_mb": peak_rss_mb(),
    }


def replicate(source: str, target: str, copies: int) -> dict[str, Any]:
    """``copies`` copies of every passage, each copy under its own path prefix and with one
    token of its own, so no two copies are the same section (retrieval keeps one of those)."""
    from dataclasses import replace

    from scout.store import Store

    with Store.open(Path(source)) as src:
        records = src.passages()
    projects = sorted({r.project for r in records})
    with Store.open(Path(target), create=True) as dst:
        # One project's copies together, as `scout index` writes a project (one transaction):
        # a project's passages then have neighbouring row ids, as in a real store.
        for project in projects:
            dst.insert_passages(
                [
                    replace(r, path=f"copy{n}/{r.path}", body=f"{r.body} zzcopy{n}")
                    for n in range(copies)
                    for r in records
                    if r.project == project
                ]
            )
        return {"passages": dst.passage_count()}


def retrieval(db: str, questions_file: str, repeat: int) -> dict[str, Any]:
    """Latency of the default path, and its top 8 against the full ranking (by score)."""
    from scout.retrieve import retrieve
    from scout.store import Store

    questions = json.loads(Path(questions_file).read_text(encoding="utf-8"))
    spent: list[float] = []
    cpu: list[float] = []
    overlaps: list[float] = []
    with Store.open(Path(db)) as store:
        retrieve(store, "warm up the page cache", 8)
        for _ in range(repeat):
            for question in questions:
                started, used = time.perf_counter(), time.process_time()
                retrieve(store, question, 8)
                spent.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
        ranked: list[float] = []
        for question in questions:
            fast = sorted(round(h.score, 9) for h in retrieve(store, question, 8).hits)
            used = time.process_time()
            hits = retrieve(store, question, 8, budget=10**9).hits
            ranked.append((time.process_time() - used) * 1000)
            full = sorted(round(h.score, 9) for h in hits)
            if full:
                shared = sum(min(fast.count(s), full.count(s)) for s in set(full))
                overlaps.append(shared / len(full))
    spent.sort()
    cpu.sort()
    ranked.sort()
    return {
        "questions": len(questions),
        # CPU time: on a shared machine, wall time also counts other processes' turns.
        "cpu_p50_ms": round(statistics.median(cpu), 2),
        "cpu_p99_ms": round(cpu[int(len(cpu) * 0.99)], 2),
        # the full ranking alone (no first stage): the exact result's cost in either version
        "full_cpu_p50_ms": round(statistics.median(ranked), 2),
        "full_cpu_p99_ms": round(ranked[int(len(ranked) * 0.99)], 2),
        "p50_ms": round(statistics.median(spent), 2),
        "p95_ms": round(spent[int(len(spent) * 0.95)], 2),
        "p99_ms": round(spent[int(len(spent) * 0.99)], 2),
        "overlap_at_8_vs_full_mean": round(statistics.fmean(overlaps), 4),
        "overlap_at_8_vs_full_min": round(min(overlaps), 4),
    }


def recall(db: str, questions_file: str, recall_py: str) -> dict[str, Any]:
    """recall@8 and MRR on the development questions, as realdocs-dev's recall.py counts them."""
    import importlib.util

    from scout.retrieve import retrieve
    from scout.store import Store

    spec = importlib.util.spec_from_file_location("realdocs_recall", recall_py)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    questions = json.loads(Path(questions_file).read_text(encoding="utf-8"))
    questions = questions["questions"] if isinstance(questions, dict) else questions
    found = answerable = 0
    reciprocal = 0.0
    with Store.open(Path(db)) as store:
        for q in questions:
            if not q.get("answerable", True):
                continue
            answerable += 1
            hits = [
                {"project": h.project, "path": h.path, "heading": h.heading,
                 "lines": [h.line_start, h.line_end]}
                for h in retrieve(store, q["question"], 8).hits
            ]  # fmt: skip
            rank = module.first_rank(hits, q["targets"])
            if rank:
                found += 1
                reciprocal += 1 / rank
    return {
        "found": found,
        "answerable": answerable,
        "recall_at_8": round(found / answerable, 3),
        "mrr": round(reciprocal / answerable, 3),
    }


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "index":
        result = index(args[0])
    elif command == "replicate":
        result = replicate(args[0], args[1], int(args[2]))
    elif command == "retrieval":
        result = retrieval(args[0], args[1], int(args[2]))
    elif command == "recall":
        result = recall(args[0], args[1], args[2])
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
