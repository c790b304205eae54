"""``scout serve`` under load, beside ``scout ask`` processes asked the same questions, in one run.

    .venv/bin/python -m bench.serve --realdocs PATH [--memory-questions 10000] [--smoke]
        [--baseline REV [--baseline-only]]

PATH is a realdocs folder (``build_estate.py`` and ``questions.json``; for example the shared
realdocs-dev). Its estate is built into a temporary folder and indexed. Then, for the offline
provider and for a provider that takes 1 s a reply (the tests' fake ``claude`` with
``FAKE_CLAUDE_DELAY=1``), questions per second and p50/p99 latency at 1, 8 and 32 concurrent
clients: over HTTP against one ``scout serve`` (``max_concurrent_answers = 32``, so the clients,
not the slots, set the concurrency), and as that many concurrent ``scout ask --json`` processes.
Last, the server's resident memory before and after ``--memory-questions`` questions. Prints a
table and writes ``bench/results/serve-<time>.json``. ``--smoke`` asks a handful of questions.

``--baseline REV`` also serves the same questions from Scout at git revision REV (extracted with
``git archive`` into a temporary folder, run by this interpreter with it first on PYTHONPATH), on
its own copy of the index (indexed by REV, so each version opens a store it knows), offline over
HTTP at 1, 8 and 32 clients, alternating with this version (this, REV, REV, this, ...) so that
both meet the same load, and reports the median of this version's questions a second over the
median of REV's. Both allow the
bench's clients, one address, all their answers at once (this version's
``max_concurrent_answers_per_client = 32``). ``--baseline-only`` runs just that comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.serving import claude_on_path, free_port, wait_until_up

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PYTHON = sys.executable
SCOUT = [PYTHON, "-m", "scout"]
CLIENTS = (1, 8, 32)
ROUNDS = 4  # of each version at each size, for --baseline: the ratio is of their medians


def log(message: str) -> None:
    print(f"[serve] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def load(clients: int, count: int, one: Callable[[int], None]) -> dict[str, Any]:
    """``count`` calls of ``one(i)`` spread over ``clients`` threads: rate and latency."""
    latencies: list[float] = []
    lock = threading.Lock()
    next_index = iter(range(count))

    def worker() -> None:
        while True:
            with lock:
                i = next(next_index, None)
            if i is None:
                return
            started = time.perf_counter()
            one(i)
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {
        "clients": clients,
        "questions": count,
        "qps": round(count / wall, 2),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
    }


def write_config(
    base: str, directory: Path, name: str, provider: str, *, baseline: bool = False
) -> Path:
    config = directory / f"{name}.toml"
    text = base.replace('provider = "offline"', f'provider = "{provider}"')
    if provider not in text:
        text += f'\n[answer]\nprovider = "{provider}"\n'
    text += (
        '\n[serve]\nrate_limit = "1000000/second"\nmax_concurrent_answers = 32\n'
        "queue_timeout = 600\nanswer_timeout = 600\n"
    )
    if baseline:
        # the earlier version's own store, and none of the keys it does not know
        text = text.replace('path = "scout.db"', 'path = "baseline.db"')
    else:
        text += "max_concurrent_answers_per_client = 32\n"
    config.write_text(text, encoding="utf-8")
    return config


class Served:
    """A ``scout serve`` subprocess on a free port (``code``: a folder whose Scout it runs)."""

    def __init__(self, config: Path, env: dict[str, str], code: Path | None = None) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        log_file = config.parent / f"serve-{port}.log"
        with open(log_file, "wb") as err:
            self.process = subprocess.Popen(
                [*SCOUT, "--config", str(config), "serve", "--port", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env={**os.environ, **env, **_code_path(code)},
                cwd=code or None,
            )
        wait_until_up(self.url, self.process, log_file)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kb = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
        return round(int(kb) / 1024, 1)

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(30)


def over_http(url: str, asked: list[str], clients: int, count: int) -> dict[str, Any]:
    local = threading.local()
    outcomes: list[str] = []

    def one(i: int) -> None:
        if not hasattr(local, "client"):
            local.client = httpx.Client(timeout=600)
        response = local.client.post(url + "/api/v1/ask", json={"question": asked[i % len(asked)]})
        response.raise_for_status()
        outcomes.append(response.json()["outcome"])

    result = load(clients, count, one)
    result["answered"] = outcomes.count("answered")
    return result


def as_processes(
    config: Path, env: dict[str, str], asked: list[str], clients: int, count: int
) -> dict[str, Any]:
    def one(i: int) -> None:
        subprocess.run(
            [*SCOUT, "--config", str(config), "ask", asked[i % len(asked)], "--json", "-q"],
            capture_output=True,
            check=True,
            env={**os.environ, **env},
        )

    return load(clients, count, one)


def _code_path(code: Path | None) -> dict[str, str]:
    """The environment that makes ``python -m scout`` run the Scout in ``code``."""
    if code is None:
        return {}
    return {"PYTHONPATH": os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])}


def checkout(revision: str, work: Path) -> Path:
    """Scout's files at ``revision``, in a folder of their own (no git worktree is made)."""
    target = work / "baseline-code"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def versus(
    base: str, directory: Path, code: Path, asked: list[str], smoke: bool
) -> list[dict[str, Any]]:
    """This version and the one in ``code`` over HTTP, offline, alternating at each size."""
    this = write_config(base, directory, "this", "offline")
    other = write_config(base, directory, "baseline", "offline", baseline=True)
    log("indexing with the baseline, then copying its store for this version")
    subprocess.run(
        [*SCOUT, "--config", str(other), "index", "-q"],
        check=True,
        env={**os.environ, **_code_path(code)},
        cwd=code,
    )
    shutil.copyfile(directory / "baseline.db", directory / "scout.db")
    servers = {"this": Served(this, {}), "baseline": Served(other, {}, code)}
    rows = []
    try:
        for clients in CLIENTS:
            count = 20 if smoke else max(200, 20 * clients)
            runs: dict[str, list[dict[str, Any]]] = {"this": [], "baseline": []}
            for round_ in range(1 if smoke else ROUNDS):
                # this, REV; then REV, this: neither always meets the machine first
                order = list(servers.items())
                for name, served in order if round_ % 2 == 0 else order[::-1]:
                    log(f"versus: {name}, {clients} clients ({count} questions)")
                    runs[name].append(over_http(served.url, asked, clients, count))
            qps = {name: statistics.median(r["qps"] for r in got) for name, got in runs.items()}
            rows.append(
                {
                    "clients": clients,
                    "this": runs["this"],
                    "baseline": runs["baseline"],
                    "ratio": round(qps["this"] / qps["baseline"], 3),
                }
            )
    finally:
        for served in servers.values():
            served.stop()
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    realdocs = args.realdocs.resolve()
    work = Path(tempfile.mkdtemp(prefix="scout-serve-bench-"))
    log(f"building and indexing the estate from {realdocs}")
    subprocess.run(
        [PYTHON, str(realdocs / "build_estate.py"), str(work / "dev")],
        check=True,
        capture_output=True,
    )
    base = (work / "dev" / "scout.toml").read_text(encoding="utf-8")
    listed = json.loads((realdocs / "questions.json").read_text(encoding="utf-8"))
    listed = listed["questions"] if isinstance(listed, dict) else listed
    asked = [q["question"] for q in listed]
    # the corpus by name: its path is only this machine's
    result: dict[str, Any] = {"realdocs": realdocs.name, "questions_listed": len(asked)}
    if args.baseline:
        code = checkout(args.baseline, work)
        result["baseline"] = args.baseline
        result["versus"] = versus(base, work / "dev", code, asked, args.smoke)
        if args.baseline_only:
            result["load_average"] = os.getloadavg()
            return result
    offline = write_config(base, work / "dev", "offline", "offline")
    subprocess.run([*SCOUT, "--config", str(offline), "index", "-q"], check=True)
    providers = {
        "offline": (offline, {}),
        "provider_1s": (
            write_config(base, work / "dev", "slow", "claude-local"),
            {**claude_on_path(work), "FAKE_CLAUDE_DELAY": "1"},
        ),
    }
    for name, (config, env) in providers.items():
        served = Served(config, env)
        rows = []
        for clients in CLIENTS:
            if name == "offline":
                http_count = 20 if args.smoke else max(200, 20 * clients)
                process_count = 4 if args.smoke else max(24, 2 * clients)
            else:
                http_count = process_count = 4 if args.smoke else max(12, 2 * clients)
            log(f"{name}: {clients} clients over HTTP ({http_count} questions)")
            http = over_http(served.url, asked, clients, http_count)
            log(f"{name}: {clients} scout ask processes ({process_count} questions)")
            processes = as_processes(config, env, asked, clients, process_count)
            rows.append({"clients": clients, "serve": http, "scout_ask": processes})
        result[name] = rows
        if name == "offline":
            before = served.rss_mb()
            total = 50 if args.smoke else args.memory_questions
            log(f"memory: {total} questions at 8 clients")
            over_http(served.url, asked, 8, total)
            result["memory"] = {
                "questions": total,
                "rss_mb_before": before,
                "rss_mb_after": served.rss_mb(),
            }
        result[f"{name}_exit"] = served.stop()
    result["load_average"] = os.getloadavg()
    return result


def table(result: dict[str, Any]) -> str:
    lines = []
    if "versus" in result:
        lines.append(f"this version over {result['baseline']}, offline over HTTP:")
        lines.append("clients  this q/s  baseline q/s  ratio")
        for row in result["versus"]:
            this = statistics.median(r["qps"] for r in row["this"])
            other = statistics.median(r["qps"] for r in row["baseline"])
            lines.append(f"{row['clients']:>7} {this:>9.1f} {other:>13.1f} {row['ratio']:>6.2f}")
    if "offline" not in result:
        lines.append(f"load average {result['load_average']}")
        return "\n".join(lines)
    lines += [
        "provider     clients  serve q/s  p50 ms  p99 ms | scout ask q/s  p50 ms  p99 ms | x q/s"
    ]
    for name in ("offline", "provider_1s"):
        for row in result[name]:
            s, a = row["serve"], row["scout_ask"]
            lines.append(
                f"{name:<12} {row['clients']:>7} {s['qps']:>10} {s['p50_ms']:>7} {s['p99_ms']:>7} |"
                f" {a['qps']:>13} {a['p50_ms']:>7} {a['p99_ms']:>7} | {s['qps'] / a['qps']:>5.1f}"
            )
    memory = result["memory"]
    lines.append(
        f"server RSS: {memory['rss_mb_before']} MB at start, {memory['rss_mb_after']} MB after "
        f"{memory['questions']} questions; load average {result['load_average']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realdocs", type=Path, required=True, help="a realdocs folder")
    parser.add_argument("--memory-questions", type=int, default=10_000)
    parser.add_argument("--smoke", action="store_true", help="a handful of questions")
    parser.add_argument("--baseline", metavar="REV", help="also serve Scout at git revision REV")
    parser.add_argument(
        "--baseline-only", action="store_true", help="with --baseline: only the comparison"
    )
    args = parser.parse_args(argv)
    if not (args.realdocs / "build_estate.py").exists():
        parser.error(f"--realdocs {args.realdocs}: no build_estate.py there")
    result = run(args)
    print(table(result))
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    (RESULTS / f"serve-{stamp}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
