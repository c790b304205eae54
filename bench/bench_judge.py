"""Concurrent addresses judgements: ``.venv/bin/python -m bench.bench_judge [--issues 1000]``.

A local estate of one project with 20 documentation pages and ``--issues`` issues, each pointing
at one of the pages (so every reference passes corpus rules and resolves and needs a judgement),
swept once per ``--concurrency`` value with a provider that takes ``--delay`` seconds a judgement
(a stand-in for a model: it sleeps, then says the page addresses the issue). Concurrency 1 is one
judgement at a time, as the sweep ran before judgements were pooled. Every run must store the
same verdicts and cursor. Prints a table and writes ``bench/results/judge-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scout.providers.base import T, Task

RESULTS = Path(__file__).resolve().parent / "results"
PAGES = 20


class SlowProvider:
    """Takes ``delay`` seconds a judgement, like a model call, and accepts every target."""

    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def run(self, task: Task[T]) -> T:
        time.sleep(self.delay)
        return task.output.model_validate({"addresses": True, "reason": "stand-in"})


def build(root: Path, issues: int) -> Path:
    from scout.demo.builder import EstateBuilder

    builder = EstateBuilder(root / "estate")
    pages = {
        f"docs/page{k}.md": f"# Page {k}\n\n## Rounding {k}\n\nRates round half even, k{k}.\n"
        for k in range(PAGES)
    }
    builder.project("acme/app").commit({"README.md": "# App\n", **pages}, "docs")
    for n in range(issues):
        builder.issue(
            "acme/app",
            n + 1,
            f"Question {n}: how are rates rounded?",
            f"See docs/page{n % PAGES}.md for the rounding rule.",
            updated_at=f"2026-03-{1 + n // 1000:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00Z",
        )
    builder.write()
    config = root / "scout.toml"
    config.write_text(
        "\n".join(
            [
                "[forge]",
                'kind = "local"',
                'url = "https://gitlab.acme.example"',
                'path = "estate"',
                'groups = ["acme"]',
                "[store]",
                'path = "scout.db"',
                "",
            ]
        ),
        encoding="utf-8",
    )
    return config


def sweep(config_path: Path, delay: float, concurrency: int) -> dict[str, Any]:
    from ingest.sweep import Sweep
    from scout.config import load_config
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules
    from scout.forge import open_forge
    from scout.store import Store

    config = load_config(config_path)
    config.store.path.unlink(missing_ok=True)
    forge = open_forge(config)
    try:
        with Store.open(config.store.path, create=True) as store:
            index_estate(forge, store, CorpusRules(tuple(config.forge.groups), config.corpus))
            started = time.monotonic()
            summary = Sweep(
                config, forge, store, SlowProvider(delay), concurrency=concurrency
            ).run()
            seconds = time.monotonic() - started
    finally:
        forge.close()
    conn = sqlite3.connect(config.store.path)
    verdicts = conn.execute(
        "select issue_project, issue_iid, reference, status, check_name, target "
        "from signposts order by 1, 2, 3"
    ).fetchall()
    cursor = conn.execute("select scope, value from cursors").fetchall()
    conn.close()
    return {
        "concurrency": concurrency,
        "issues": summary.issues_read,
        "judgements": summary.accepted + summary.rejected["addresses"],
        "seconds": round(seconds, 2),
        "bound_seconds": round(
            (summary.accepted + summary.rejected["addresses"]) * delay / concurrency, 2
        ),
        "fingerprint": hash((tuple(verdicts), tuple(cursor))),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--issues", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scout-bench-judge-") as work:
        config = build(Path(work), args.issues)
        runs = [sweep(config, args.delay, c) for c in args.concurrency]
    same = len({r.pop("fingerprint") for r in runs}) == 1
    print(f"{args.issues} issues, {args.delay} s a judgement; same verdicts in every run: {same}")
    print("| concurrency | judgements | wall | judgements x delay / concurrency |")
    print("|---|---|---|---|")
    for r in runs:
        cells = [r["concurrency"], r["judgements"], f"{r['seconds']} s", f"{r['bound_seconds']} s"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    result = {"issues": args.issues, "delay": args.delay, "same_verdicts": same, "runs": runs}
    (RESULTS / f"judge-{stamp}.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
