"""GitLab's limits, measured against the GitLab API test server (in this process, on loopback).

- ``blob_urls``: one issue with 50 blob URLs whose ref has slashes and whose paths are deep:
  the requests one sweep makes (splitting ``<ref>/<path>`` cost two requests per cut before).
- ``limited_sweep``: the 5,000-issue sweep of ``bench.run`` under GitLab.com-like limits: 2,000
  requests a minute on the Projects and Groups APIs (and, stricter, 600, which a sweep of this
  size is sure to hit), answered with a bare 429 (no Retry-After, no RateLimit-* headers, as
  GitLab.com does), in fixed windows aligned on the minute.

``python -m bench.forge_limits [--issues N] [--latency S] [--limits 2000,600]`` prints JSON;
``bench.run`` runs both (at 2,000 and 600 a minute) as its ``forge`` section. Each sweep runs
in a child process (``bench.child``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.estates import build_issue_estate
from scout.demo.builder import EstateBuilder
from tests.gitlab_server.server import GitLabServer

ROOT = Path(__file__).resolve().parent.parent
TOKEN_ENV = "SCOUT_BENCH_TOKEN"
TOKEN = "glpat-bench-token"
DEEP = "/".join(f"chapter-{i}" for i in range(12))
REF = "release/2026/spring/candidate"


def _config(url: str, store: Path) -> str:
    return (
        f'[forge]\nkind = "gitlab"\nurl = "{url}"\ntoken_env = "{TOKEN_ENV}"\n'
        'groups = ["acme"]\n\n[corpus]\nvisibility = ["public"]\n\n'
        f'[answer]\nprovider = "offline"\n\n[store]\npath = "{store}"\n'
    )


def _sweep(work: Path, name: str, url: str) -> tuple[int, dict[str, Any], float, str]:
    """(exit code, the sweep's JSON summary or {}, wall seconds, last stderr line)."""
    config = work / f"{name}.toml"
    config.write_text(_config(url, work / f"{name}.db"), encoding="utf-8")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.child", "sweep", str(config)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, TOKEN_ENV: TOKEN},
    )
    wall = time.perf_counter() - started
    summary = json.loads(done.stdout) if done.returncode == 0 else {}
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return done.returncode, summary, round(wall, 2), last[:300]


def build_blob_estate(root: Path, url: str, count: int = 50) -> Path:
    builder = EstateBuilder(root, url=url)
    repo = builder.project("acme/handbook")
    files = {f"{DEEP}/page-{n}.md": f"# Page {n}\n\nHow to run step {n}.\n" for n in range(count)}
    repo.commit(files, "Deep pages")
    for n in range(20):
        repo.git("branch", f"release/2026/train-{n}")
    repo.git("branch", REF)
    repo.git("tag", "v2026.1")
    links = [f"{url}/acme/handbook/-/blob/{REF}/{DEEP}/page-{n}.md" for n in range(count)]
    text = "Which page explains each step?\n\n" + "\n".join(links)
    builder.issue(
        "acme/handbook", 1, "Where are the steps?", text, updated_at="2026-02-01T10:00:00Z"
    )
    return builder.write()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def blob_urls(work: Path, count: int = 50) -> dict[str, Any]:
    port = _free_port()
    build_blob_estate(work / "blob-estate", f"http://127.0.0.1:{port}", count)
    with GitLabServer(work / "blob-estate", token=TOKEN, port=port) as server:
        code, summary, wall, last = _sweep(work, "blob-urls", server.url)
    requests = summary.get("forge_requests", {})
    return {
        "blob_urls": count,
        "exit_code": code,
        "forge_requests": sum(requests.values()),
        "requests_by_kind": requests,
        "accepted": summary.get("accepted"),
        "seconds": summary.get("seconds"),
        "process_seconds": wall,
        "error": last if code else None,
    }


def limited_sweep(work: Path, issues: int, latency: float, limit: int = 2_000) -> dict[str, Any]:
    name = f"limited-{issues}-{limit}"
    estate, port = work / name, _free_port()
    build_issue_estate(estate, f"http://127.0.0.1:{port}", issues)
    with GitLabServer(estate, token=TOKEN, latency=latency, port=port) as server:
        server.rate_limits.add(
            limit, window=60.0, match=r"^/api/v4/(projects|groups)/", headers=False
        )
        code, summary, wall, last = _sweep(work, name, server.url)
        throttled = server.rate_limits.throttled
        served = len(server.log)
    requests = summary.get("forge_requests", {})
    return {
        "issues": issues,
        "limit_per_minute": limit,
        "latency_s": latency,
        "exit_code": code,
        "forge_requests": sum(requests.values()),
        "requests_served": served,
        "bare_429s": throttled,
        "sweep_seconds": summary.get("seconds"),
        "process_seconds": wall,
        "error": last if code else None,
    }


def run(work: Path, issues: int, latency: float, limits: list[int]) -> dict[str, Any]:
    result: dict[str, Any] = {"blob_urls": blob_urls(work, 50)}
    for limit in limits:
        result[f"limited_sweep_{limit}"] = limited_sweep(work, issues, latency, limit)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.forge_limits", description=__doc__)
    parser.add_argument("--issues", type=int, default=5_000)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added per request")
    parser.add_argument(
        "--limits", default="2000,600", help="requests a minute, one limited sweep each"
    )
    args = parser.parse_args(argv)
    limits = [int(n) for n in args.limits.split(",") if n]
    with tempfile.TemporaryDirectory(prefix="scout-bench-forge-") as tmp:
        result = run(Path(tmp), args.issues, args.latency, limits)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
