"""Scout's benchmarks, one command: ``.venv/bin/python -m bench.run [--smoke] [--sizes 10k,100k]``.

Measures, side by side in one run: retrieval latency and top-8 agreement against tantivy at each
corpus size; ``scout ask --provider offline`` as a whole process (start-up, retrieval, the rest);
indexing throughput and the cost of re-indexing an unchanged estate; sweep economy against the
GitLab API test server with injected latency (requests against the REST minimum, wall time
against latency x requests / concurrency); peak RSS of indexing and sweeping. Prints a table and
writes ``bench/results/<time>.json``. ``--smoke`` runs everything tiny, in seconds (for CI).
Needs the ``bench`` extra (tantivy). Work files go to a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import Vocabulary, passages, questions
from bench.estates import build_docs_estate, build_issue_estate
from bench.retrieval import Tantivy, build_store, diagnose, measure

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PYTHON = sys.executable
SCOUT = str(Path(PYTHON).parent / "scout")
TOKEN_ENV = "SCOUT_BENCH_TOKEN"
TOKEN = "glpat-bench-token"


def _size(text: str) -> int:
    text = text.lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * scale)


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        memory = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout
        memory = memory.splitlines()[1].split()[1]
    except (OSError, IndexError):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": memory,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def child(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [PYTHON, "-m", "bench.child", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench.child {args[0]} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def config_text(
    kind: str, url: str, store: Path, estate: Path | None = None, api: str = "rest"
) -> str:
    forge = f'path = "{estate}"' if kind == "local" else f'token_env = "{TOKEN_ENV}"\napi = "{api}"'
    return (
        f'[forge]\nkind = "{kind}"\nurl = "{url}"\n{forge}\ngroups = ["acme"]\n\n'
        '[corpus]\nvisibility = ["public"]\n\n'
        '[answer]\nprovider = "offline"\n\n'
        f'[store]\npath = "{store}"\n'
    )


# ------------------------------------------------------------------ retrieval and ask
def retrieval(work: Path, size: int, count: int, repeat: int) -> dict[str, Any]:
    vocab = Vocabulary(1)
    db = work / f"r{size}" / "scout.db"
    db.parent.mkdir(parents=True)
    written, seconds = build_store(db, passages(size, vocab=vocab))
    engines = {
        "tantivy_bm25f": Tantivy(
            work / f"r{size}" / "t1", passages(size, vocab=vocab), repeat_heading=True
        ),
        "tantivy": Tantivy(work / f"r{size}" / "t2", passages(size, vocab=vocab)),
    }
    asked = questions(list(passages(min(size, 20_000), vocab=vocab)), count)
    figures = measure(db, engines, asked, repeat=repeat)
    why = diagnose(db, asked, figures.pop("scout_before_seconds"))
    return {
        "passages": written,
        "questions": len(asked),
        "store_seconds": round(seconds, 2),
        "store_passages_per_s": round(written / seconds),
        "tantivy_seconds": round(engines["tantivy"].seconds, 2),
        **figures,
        "why_fts5_is_slow": why,
        "db": str(db),
        "sample_questions": asked[:12],
    }


def ask_process(work: Path, db: Path, asked: list[str]) -> dict[str, Any]:
    """``scout ask --provider offline`` wall time per question, broken down."""
    config = work / f"ask-{db.parent.name}.toml"
    config.write_text(config_text("local", "https://gitlab.bench.example", db, work), "utf-8")

    def wall(*args: str) -> float:
        started = time.perf_counter()
        done = subprocess.run([SCOUT, "--config", str(config), *args], capture_output=True)
        spent = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"scout {args[0]} failed: {done.stderr.decode()[-1000:]}")
        return spent

    # interleaved, so both medians see the same background load
    starts, totals = [], []
    for q in asked:
        starts.append(wall("--version"))
        totals.append(wall("ask", "--provider", "offline", "--json", q))
    startup = statistics.median(starts)
    from bench.retrieval import scout_search
    from scout.store import Store

    with Store.open(db) as store:
        search = scout_search(store)
        spent = []
        for q in asked:
            started = time.perf_counter()
            search(q)
            spent.append(time.perf_counter() - started)
    total, retrieve = statistics.median(totals), statistics.median(spent)
    return {
        "questions": len(asked),
        "wall_p50_ms": round(total * 1000, 1),
        "wall_max_ms": round(max(totals) * 1000, 1),
        "startup_ms": round(startup * 1000, 1),
        "retrieval_ms": round(retrieve * 1000, 1),
        "rest_ms": round((total - startup - retrieve) * 1000, 1),
    }


# ------------------------------------------------------------------ indexing
def indexing(work: Path, pages: int) -> dict[str, Any]:
    estate = work / "docs-estate"
    size = build_docs_estate(estate, pages)
    config = work / "index.toml"
    config.write_text(
        config_text("local", "https://gitlab.bench.example", work / "index.db", estate), "utf-8"
    )
    runs = child("index", str(config))
    cold = runs["cold"]
    return {
        "pages": pages,
        "mb": round(size / 1e6, 2),
        "passages": cold["passages"],
        "seconds": cold["seconds"],
        "passages_per_s": round(cold["passages"] / cold["seconds"]),
        "mb_per_s": round(size / 1e6 / cold["seconds"], 2),
        "forge_requests": sum(cold["forge_requests"].values()),
        "unchanged_seconds": runs["unchanged"]["seconds"],
        "unchanged_forge_requests": runs["unchanged"]["forge_requests"],
        "peak_rss_mb": runs["peak_rss_mb"],
    }


# ------------------------------------------------------------------ sweep
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sweep(
    work: Path, issues: int, latency: float, sequential: bool = False, api: str = "rest"
) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    estate = build_issue_estate(work / f"issues-{issues}-{port}", url, issues)
    server = subprocess.Popen(
        [PYTHON, "-m", "tests.gitlab_server", str(estate.root), "--port", str(port)]
        + ["--latency", str(latency), "--quiet", "--token", TOKEN],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the URL: the server is listening
        name = f"sweep-{issues}{'-sequential' if sequential else ''}-{api}"
        config = work / f"{name}.toml"
        config.write_text(config_text("gitlab", url, work / f"{name}.db", api=api), "utf-8")
        started = time.perf_counter()
        flags = ["--sequential"] if sequential else []
        result = child("sweep", str(config), *flags, env={TOKEN_ENV: TOKEN})
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=10)
    requests = result["forge_requests"]
    total = sum(requests.values())
    pages = -(-issues // 100)
    # The REST minimum: issue pages, one notes page per issue with notes, one lookup per
    # distinct target, and each project's metadata and head once. Through GraphQL an issue
    # page carries its issues' notes: the listing is the issue pages alone.
    listing = pages if api == "graphql" else pages + estate.with_notes
    minimum = listing + estate.distinct_targets + 2 * estate.projects
    listed = sum(requests.get(kind, 0) for kind in ("issues", "notes", "graphql"))
    concurrency = result.get("concurrency", 1)
    bound = latency * total / concurrency
    return {
        "api": api,
        "issues": issues,
        "issues_with_notes": estate.with_notes,
        "listing_requests": listed,
        "references": result["references"],
        "distinct_targets": estate.distinct_targets,
        "forge_requests": total,
        "requests_by_kind": requests,
        "rest_minimum": minimum,
        "requests_vs_minimum": round(total / minimum, 3),
        "requests_per_issue": round(total / issues, 3),
        "requests_per_reference": round(total / max(1, result["references"]), 3),
        "sweep_seconds": result["seconds"],
        "latency_s": latency,
        "concurrency": concurrency,
        "latency_bound_seconds": round(bound, 2),
        "seconds_vs_bound": round(result["seconds"] / bound, 3) if bound else None,
        "process_seconds": round(wall, 2),
        "peak_rss_mb": result["peak_rss_mb"],
        "sweep_cpu_seconds": result["cpu_seconds"],
    }


# ------------------------------------------------------------------ the run
def run(args: argparse.Namespace) -> dict[str, Any]:
    smoke = args.smoke
    sizes = [2_000] if smoke else [_size(s) for s in args.sizes.split(",")]
    count, repeat = (60, 1) if smoke else (args.questions, 2)
    result: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "smoke": smoke,
        "machine": machine(),
        "retrieval": {},
        "ask": {},
    }
    wanted = set(args.sections.split(","))
    with tempfile.TemporaryDirectory(prefix="scout-bench-") as tmp:
        work = Path(tmp)
        for size in sizes if "retrieval" in wanted else []:
            log(f"retrieval at {size} passages")
            figures = retrieval(work, size, count, repeat)
            db = Path(figures.pop("db"))
            result["retrieval"][str(size)] = figures
            if size <= 100_000:
                log(f"scout ask at {size} passages")
                asked = figures["sample_questions"][: 2 if smoke else 12]
                result["ask"][str(size)] = ask_process(work, db, asked)
            shutil.rmtree(db.parent)
        if "indexing" in wanted:
            log("indexing")
            result["indexing"] = indexing(work, 30 if smoke else args.pages)
            log("memory: storing passages")
            stored = child("store", str(2_000 if smoke else 100_000), str(work / "rss.db"))
            result["memory"] = {"store_passages": stored}
        result["sweep"] = {}
        latency = 0.002 if smoke else args.latency
        for issues in (
            ([40] if smoke else sorted({1_000, args.issues})) if "sweep" in wanted else []
        ):
            log(f"sweep of {issues} issues")
            result["sweep"][str(issues)] = sweep(work, issues, latency)
            log(f"sweep of {issues} issues through GraphQL")
            through = sweep(work, issues, latency, api="graphql")
            rest = result["sweep"][str(issues)]
            through["requests_vs_rest"] = round(
                through["forge_requests"] / rest["forge_requests"], 3
            )
            through["listing_vs_rest"] = round(
                through["listing_requests"] / rest["listing_requests"], 3
            )
            through["seconds_vs_rest"] = round(through["sweep_seconds"] / rest["sweep_seconds"], 3)
            result["sweep"][f"{issues}-graphql"] = through
        if "sweep" in wanted and not smoke:
            log(f"sweep of {args.issues} issues, sequential (as before)")
            before = sweep(work, args.issues, latency, sequential=True)
            result["sweep"][f"{args.issues}-sequential"] = before
        if "forge" in wanted:
            from bench.forge_limits import blob_urls, limited_sweep

            log("50 long blob URLs; sweep under GitLab.com-like rate limits")
            result["forge"] = {"blob_urls": blob_urls(work, 10 if smoke else 50)}
            for limit in [] if smoke else [2_000, 600]:  # a minute-long window is no smoke test
                figures = limited_sweep(work, args.issues, latency, limit)
                result["forge"][f"limited_sweep_{limit}"] = figures
    return result


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def table(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [f"machine: {m['nproc']} cores, {m['cpu']}, {m['memory']} RAM, Python {m['python']}"]
    lines.append("")
    lines.append(
        f"{'retrieval':<12}{'engine':<15}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
        f"{'overlap@8':>11}{'vs before':>11}"
    )
    for size, fig in result["retrieval"].items():
        for engine in ("scout", "scout_before", "tantivy_bm25f", "tantivy"):
            row = fig[engine]
            ov = row.get("overlap_at_8_vs_tantivy_bm25f", "")
            vb = row.get("overlap_at_8_vs_before", "")
            lines.append(
                f"{size:<12}{engine:<15}{row['p50_ms']:>9}{row['p95_ms']:>9}{row['p99_ms']:>9}"
                f"{ov!s:>11}{vb!s:>11}"
            )
        ratio = fig["scout"]["p50_ms"] / max(fig["tantivy_bm25f"]["p50_ms"], 1e-9)
        lines.append(
            f"{'':<12}scout p50 / tantivy p50 = {ratio:.1f}x; scout p99 / before p99 = "
            f"{fig['scout']['p99_ms'] / max(fig['scout_before']['p99_ms'], 1e-9):.2f}"
        )
    lines.append("")
    for size, fig in result["ask"].items():
        lines.append(
            f"ask {size:<8} wall p50 {fig['wall_p50_ms']} ms = start-up {fig['startup_ms']} + "
            f"retrieval {fig['retrieval_ms']} + rest {fig['rest_ms']}"
        )
    ix = result.get("indexing")
    if ix:
        lines.append(
            f"index {ix['pages']} pages ({ix['mb']} MB): {ix['passages']} passages in "
            f"{ix['seconds']} s"
            f" = {ix['passages_per_s']} passages/s, {ix['mb_per_s']} MB/s; unchanged re-index "
            f"{ix['unchanged_seconds']} s, requests {ix['unchanged_forge_requests']}; "
            f"peak RSS {ix['peak_rss_mb']} MB"
        )
        st = result["memory"]["store_passages"]
        lines.append(
            f"store {st['passages']} passages: {st['seconds']} s, peak RSS {st['peak_rss_mb']} MB"
        )
    for issues, sw in result["sweep"].items():
        if sw.get("api") == "graphql":
            lines.append(
                f"sweep {issues} issues: {sw['forge_requests']} requests "
                f"({sw['requests_vs_rest']}x REST's; listing {sw['listing_requests']} requests, "
                f"{sw['listing_vs_rest']}x REST's), {sw['sweep_seconds']} s "
                f"({sw['seconds_vs_rest']}x REST's) at {sw['latency_s'] * 1000:g} ms latency, "
                f"sweep CPU {sw['sweep_cpu_seconds']} s, peak RSS {sw['peak_rss_mb']} MB"
            )
            continue
        lines.append(
            f"sweep {issues} issues: {sw['forge_requests']} requests "
            f"({sw['requests_vs_minimum']}x the REST minimum {sw['rest_minimum']}; "
            f"{sw['requests_per_issue']}/issue, {sw['requests_per_reference']}/reference), "
            f"{sw['sweep_seconds']} s at {sw['latency_s'] * 1000:g} ms latency, concurrency "
            f"{sw['concurrency']} (bound {sw['latency_bound_seconds']} s, "
            f"ratio {sw['seconds_vs_bound']}), sweep CPU {sw['sweep_cpu_seconds']} s, "
            f"peak RSS {sw['peak_rss_mb']} MB"
        )
    forge = result.get("forge", {})
    if "blob_urls" in forge:
        bu = forge["blob_urls"]
        lines.append(
            f"one issue, {bu['blob_urls']} long blob URLs: {bu['forge_requests']} requests "
            f"{bu['requests_by_kind']}, sweep {bu['seconds']} s"
        )
    for key in [k for k in forge if k.startswith("limited_sweep")]:
        ls = forge[key]
        lines.append(
            f"sweep {ls['issues']} issues at {ls['limit_per_minute']} requests/min (bare 429s): "
            f"exit {ls['exit_code']}, {ls['forge_requests']} requests, {ls['bare_429s']} 429s, "
            f"{ls['sweep_seconds']} s"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="everything tiny, in seconds")
    parser.add_argument("--sizes", default="10k,100k", help="corpus sizes (e.g. 10k,100k,1m)")
    parser.add_argument("--questions", type=int, default=300, help="questions per size")
    parser.add_argument("--pages", type=int, default=3_000, help="pages for the index run")
    parser.add_argument("--issues", type=int, default=5_000, help="issues for the sweep run")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per forge request")
    parser.add_argument(
        "--sections",
        default="retrieval,indexing,sweep,forge",
        help="which parts to run (comma list)",
    )
    parser.add_argument("--out", type=Path, default=None, help="result file (default: results/)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = run(args)
    result["bench_seconds"] = round(time.perf_counter() - started, 1)
    stem = result["when"].replace(":", "") + ("-smoke" if args.smoke else "")
    out = args.out or RESULTS / f"{stem}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    print(f"\nwritten: {out} ({result['bench_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
