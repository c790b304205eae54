"""Retrieval on real documentation, this checkout beside an older one, in one run.

    .venv/bin/python -m bench.realdocs --realdocs PATH [--before REV] [--copies 9]

PATH is a realdocs folder (``build_estate.py``, ``questions.json``, ``recall.py``; for example
the shared realdocs-dev). The estate is built into a temporary folder and indexed by both
versions (throughput, peak RSS), recall@8 and MRR are taken on its questions, then its passages
are replicated ``--copies`` times (each copy with a path and one token of its own) to about 100k
passages, where retrieval latency, the fast path's top 8 against the full BM25 ranking, and a
whole ``scout ask --provider offline`` process (both versions in turn) are timed. The older
version is ``git archive REV`` of this repository (default ``main``), extracted to the same
temporary folder; both run through ``bench/realdocs_child.py`` with their own code first on
``PYTHONPATH``, so figures are same-run ratios. Prints a table and writes
``bench/results/realdocs-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHILD = ROOT / "bench" / "realdocs_child.py"
PYTHON = sys.executable
ASK = "import sys; from scout.cli.main import main; sys.argv[0] = 'scout'; main()"


def log(message: str) -> None:
    print(f"[realdocs] {message}", file=sys.stderr, flush=True)


def child(code: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [PYTHON, str(CHILD), *args], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} ({code}) failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def questions(realdocs: Path, db: Path, extra: int) -> list[str]:
    """The development questions, then chatty ones made from section headings (every n-th)."""
    import sqlite3

    listed = json.loads((realdocs / "questions.json").read_text(encoding="utf-8"))
    listed = listed["questions"] if isinstance(listed, dict) else listed
    asked = [q["question"] for q in listed]
    with sqlite3.connect(db) as conn:
        headings = [h for (h,) in conn.execute("select heading from passages order by id")]
    named = [h.split(" > ")[-1] for h in headings if h and h.isascii()]
    step = max(1, len(named) // extra)
    return asked + [f"how do I configure {h} for my site?" for h in named[::step][:extra]]


def ask_once(code: Path, config: Path, question: str) -> tuple[float, float]:
    """One whole ``scout ask --provider offline`` process: wall and CPU milliseconds."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = ["-c", ASK, "--config", str(config), "ask", "--provider", "offline", question]
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    # From the version's own folder: `python -c` puts the working folder first on sys.path,
    # ahead of PYTHONPATH, so run from this checkout both versions would be this one.
    subprocess.run([PYTHON, *argv], capture_output=True, env=env, check=True, cwd=code)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def ask_walls(runs: dict[str, tuple[Path, Path]], asked: list[str]) -> dict[str, Any]:
    """Whole asks of every version, interleaved question by question (the order turning each
    time), so a machine that speeds up or slows down during the run moves both alike."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for n, question in enumerate(asked):
        names = list(runs)[n % len(runs) :] + list(runs)[: n % len(runs)]
        for name in names:
            times[name].append(ask_once(*runs[name], question))
    result = {}
    for name, pairs in times.items():
        walls = sorted(wall for wall, _ in pairs)
        result[name] = {"asks": len(walls), "wall_p50_ms": round(statistics.median(walls), 1),
                        "wall_p95_ms": round(walls[int(len(walls) * 0.95)], 1),
                        "cpu_p50_ms": round(statistics.median(c for _, c in pairs), 1)}  # fmt: skip
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    realdocs = args.realdocs.resolve()
    work = Path(tempfile.mkdtemp(prefix="scout-realdocs-"))
    before = work / "before"
    before.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", args.before], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
    log(f"building the estate from {realdocs}")
    subprocess.run(
        [PYTHON, str(realdocs / "build_estate.py"), str(work / "dev")],
        check=True, capture_output=True,
    )  # fmt: skip
    config_text = (work / "dev" / "scout.toml").read_text(encoding="utf-8")
    versions = {"now": ROOT, "before": before}
    result: dict[str, Any] = {
        "realdocs": realdocs.name,  # the corpus by name: the path is only this machine's
        "before": args.before,
        "copies": args.copies,
    }
    for name, code in versions.items():
        config = work / "dev" / f"{name}.toml"
        config.write_text(config_text.replace("scout.db", f"{name}.db"), encoding="utf-8")
        log(f"{name}: index")
        result[f"index_{name}"] = child(code, "index", str(config))
        log(f"{name}: recall")
        result[f"recall_{name}"] = child(
            code, "recall", str(work / "dev" / f"{name}.db"),
            str(realdocs / "questions.json"), str(realdocs / "recall.py"),
        )  # fmt: skip
    asked = questions(realdocs, work / "dev" / "now.db", args.questions)
    qfile = work / "questions.json"
    qfile.write_text(json.dumps(asked), encoding="utf-8")
    asks: dict[str, tuple[Path, Path]] = {}
    for name, code in versions.items():
        # Each version replicates its own index with its own code: a store carries its schema
        # version, and an older Scout refuses a newer one.
        big = work / f"big-{name}.db"
        log(f"{name}: replicating {args.copies}x")
        replicated = child(code, "replicate", str(work / "dev" / f"{name}.db"), str(big),
                           str(args.copies))  # fmt: skip
        result.setdefault("replicated", replicated)
        result[f"replicated_{name}"] = replicated
        big_config = work / f"big-{name}.toml"
        big_config.write_text(config_text.replace(str(work / "dev" / "scout.db"), str(big))
                              .replace('"scout.db"', f'"{big}"'), encoding="utf-8")  # fmt: skip
        log(f"{name}: retrieval at {replicated['passages']} passages")
        result[f"retrieval_{name}"] = child(
            code, "retrieval", str(big), str(qfile), str(args.repeat)
        )
        asks[name] = (code, big_config)
    log("scout ask --provider offline, both versions in turn")
    for name, figures in ask_walls(asks, asked[: args.asks]).items():
        result[f"ask_{name}"] = figures
    subprocess.run(["rm", "-rf", str(work)], check=False)
    return result


def table(r: dict[str, Any]) -> str:
    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if b else "-"

    rows = [("", "now", "before", "now / before")]
    for key, label in [("seconds", "index s"), ("peak_rss_mb", "index peak RSS MB")]:
        a, b = r["index_now"][key], r["index_before"][key]
        rows.append((label, str(a), str(b), ratio(a, b)))
    rows.append(("passages (dev set)", str(r["index_now"]["passages"]),
                 str(r["index_before"]["passages"]), ""))  # fmt: skip
    for key in ("recall_at_8", "mrr"):
        rows.append((key, str(r["recall_now"][key]), str(r["recall_before"][key]), ""))
    n = r["replicated"]["passages"]
    keys = ("p50_ms", "p95_ms", "p99_ms", "cpu_p50_ms", "cpu_p99_ms")
    for key in (*keys, "full_cpu_p50_ms", "full_cpu_p99_ms"):
        a, b = r["retrieval_now"][key], r["retrieval_before"][key]
        rows.append((f"retrieval {key} at {n}", str(a), str(b), ratio(a, b)))
    for key in ("overlap_at_8_vs_full_mean", "overlap_at_8_vs_full_min"):
        rows.append((key, str(r["retrieval_now"][key]), str(r["retrieval_before"][key]), ""))
    for key in ("wall_p50_ms", "cpu_p50_ms"):
        a, b = r["ask_now"][key], r["ask_before"][key]
        rows.append((f"ask {key} at {n}", str(a), str(b), ratio(a, b)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realdocs", description=__doc__)
    parser.add_argument("--realdocs", type=Path, required=True, help="the realdocs folder")
    parser.add_argument("--before", default="main", help="git revision to compare with")
    parser.add_argument("--copies", type=int, default=9, help="replication factor (9: ~100k)")
    parser.add_argument("--questions", type=int, default=160, help="heading questions added")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes over the questions")
    parser.add_argument("--asks", type=int, default=20, help="whole ask processes timed")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if not (args.realdocs / "build_estate.py").exists():
        parser.error(f"--realdocs {args.realdocs}: no build_estate.py there")
    result = run(args)
    result["measured_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = args.out or ROOT / "bench" / "results" / f"realdocs-{result['measured_at']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table(result))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
