"""The benchmark suite runs end to end in smoke mode, and two-stage retrieval keeps the results.

The smoke run is the CI check that ``python -m bench.run`` still works (it needs the ``bench``
extra, tantivy, and is skipped without it). The retrieval test drives the two-stage path on a
corpus small enough for a test, by forcing a small rare-row budget, and compares it with the
single full query it stands in for.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from bench.corpus import Vocabulary, passages, questions
from bench.retrieval import build_store
from scout.retrieve import retrieve
from scout.retrieve.lexical import essential
from scout.store import Store

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_smoke_run_prints_the_table_and_writes_every_figure(tmp_path: Path) -> None:
    pytest.importorskip("tantivy")
    out = tmp_path / "result.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert set(result) >= {"machine", "retrieval", "ask", "indexing", "memory", "sweep"}
    retrieval = result["retrieval"]["2000"]
    assert set(retrieval) >= {"scout", "scout_before", "tantivy_bm25f", "tantivy"}
    assert retrieval["scout"]["overlap_at_8_vs_full"] == 1.0
    assert retrieval["scout"]["overlap_at_8_vs_before"] >= 0.9
    assert set(result["ask"]["2000"]) >= {"wall_p50_ms", "startup_ms", "retrieval_ms", "rest_ms"}
    assert result["indexing"]["unchanged_forge_requests"].keys() <= {"projects", "head"}
    sweep = result["sweep"]["40"]
    assert sweep["issues"] == 40 and sweep["forge_requests"] >= sweep["rest_minimum"]
    graphql = result["sweep"]["40-graphql"]
    assert graphql["api"] == "graphql" and graphql["requests_by_kind"].keys() >= {"graphql"}
    assert "issues" not in graphql["requests_by_kind"] and graphql["listing_requests"] == 1
    assert graphql["references"] == sweep["references"]
    # blob URLs split locally: one listing of branches and one of tags, however many URLs
    assert result["forge"]["blob_urls"]["requests_by_kind"]["refs"] == 2
    assert "scout p50 / tantivy p50" in done.stdout and "written:" in done.stdout


@pytest.mark.parametrize(
    ("bounds", "needed", "expected"),
    [
        ({"a": 1.0, "b": 2.0, "c": 9.0}, 0.0, ["a", "b", "c"]),  # nothing kept yet: every term
        ({"a": 1.0, "b": 2.0, "c": 9.0}, 3.5, ["c"]),  # a and b together reach 3 < 3.5
        ({"a": 1.0, "b": 2.0, "c": 9.0}, 3.0, ["b", "c"]),  # reaching the worst row is enough
        ({"a": 5.0, "b": 2.0, "c": 9.0}, 100.0, []),  # all three cannot reach it: done
        ({"a": 2.0, "b": 2.0}, 2.5, ["b"]),  # equal bounds: one of them, in question order
    ],
    ids=["no_rows_yet", "weak_terms_left_out", "ties_stay", "proven", "equal_bounds"],
)
def test_essential_terms_are_those_whose_rows_could_still_rank(
    bounds: dict[str, float], needed: float, expected: list[str]
) -> None:
    assert essential(list(bounds), bounds, needed) == expected


def test_two_stage_retrieval_agrees_with_the_full_query(tmp_path: Path) -> None:
    vocab = Vocabulary(3)
    db = tmp_path / "scout.db"
    build_store(db, passages(2_500, seed=3, vocab=vocab))
    asked = questions(list(passages(2_500, seed=3, vocab=vocab)), 80, seed=3)
    with Store.open(db) as store:
        full = [[h.id for h in retrieve(store, q, 8, budget=10**9).hits] for q in asked]
        staged = [[h.id for h in retrieve(store, q, 8, budget=150).hits] for q in asked]
        for q in asked[:20]:
            scores = {h.id: h.score for h in retrieve(store, q, 8, budget=10**9).hits}
            for hit in retrieve(store, q, 8, budget=150).hits:
                if hit.id in scores:
                    # the two-stage score of a row is its exact full-query score
                    assert hit.score == pytest.approx(scores[hit.id], rel=1e-9, abs=1e-9)
    shares = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(staged, full, strict=True)]
    assert statistics.fmean(shares) >= 0.9
    assert sum(a == b for a, b in zip(staged, full, strict=True)) >= len(asked) // 2
