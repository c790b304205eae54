"""A soak of ``scout worker``: a 1 s schedule, many cycles, the GitLab test server injecting faults.

    .venv/bin/python -m bench.worker_soak [--cycles 500] [--before cf87c43] [--budget 900]

Both versions run the same real worker process (``python -m scout worker`` with their own code
first on ``PYTHONPATH``, from their own folder) against one GitLab test server over the demo
estate, in turn, with the same seeded fault schedule: 5xx answers, dropped connections, slow
answers and headerless 429s (GitLab.com's Projects API). The older version is ``git archive
REV`` of this repository. Each run stops after ``--cycles`` cycle lines or ``--budget`` seconds,
by SIGTERM, and reports:

- cycles logged, how many completed and how many failed, and the share of the schedule's 1 s
  slots in which a cycle completed ("cycles that did work");
- the worker's resident memory after each cycle (from ``/proc/PID/status``): first, last, peak,
  and the growth per cycle over the second half (least squares);
- how long the worker took to exit after SIGTERM.

Prints a table and writes ``bench/results/worker-soak-<time>.json``. The machine is shared:
figures are same-run ratios, and the table says what the load was.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
TOKEN_ENV = "SCOUT_SOAK_TOKEN"
TOKEN = "glpat-soak-token"
FAULTS = (
    # kind, probability: a schedule the retries mostly absorb, with a headerless 429 now and then
    ("500", 0.03),
    ("502", 0.02),
    ("drop", 0.01),
    ("bare429", 0.01),
)
SEED = 20261201


def log(message: str) -> None:
    print(f"[worker-soak] {message}", file=sys.stderr, flush=True)


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def slope(values: list[int]) -> float:
    """Least-squares growth per step of ``values`` (KiB per cycle)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values))
    den = sum((x - mean_x) ** 2 for x in range(n))
    return num / den


def config_for(folder: Path, url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "scout.toml"
    config.write_text(
        f'[forge]\nkind = "gitlab"\nurl = "{url}"\ntoken_env = "{TOKEN_ENV}"\napi = "rest"\n'
        'groups = ["acme"]\n\n[corpus]\nvisibility = ["public"]\nexclude_projects = ["acme/infra"]'
        '\n\n[answer]\nprovider = "offline"\n\n[ingest]\nschedule = "1s"\n\n'
        '[store]\npath = "scout.db"\n',
        encoding="utf-8",
    )
    return config


def soak(code: Path, config: Path, cycles: int, budget: float) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code), TOKEN_ENV: TOKEN}
    env.pop("SCOUT_DEBUG", None)
    process = subprocess.Popen(
        [PYTHON, "-m", "scout", "--config", str(config), "--quiet", "worker", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=code,
    )
    assert process.stderr is not None
    started = time.monotonic()
    done = failed = 0
    memory: list[int] = []
    first_cycle_at: float | None = None
    while done + failed < cycles and time.monotonic() - started < budget:
        line = process.stderr.readline()
        if not line:
            break
        if " done in " in line or " failed" in line and "cycle " in line:
            if " done in " in line:
                done += 1
            else:
                failed += 1
            if first_cycle_at is None:
                first_cycle_at = time.monotonic() - started
            kib = rss_kib(process.pid)
            if kib is not None:
                memory.append(kib)
    wall = time.monotonic() - started
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    stop_seconds = time.monotonic() - signalled
    half = memory[len(memory) // 2 :]
    return {
        "cycles": done + failed,
        "completed": done,
        "failed": failed,
        "wall_seconds": round(wall, 1),
        "first_cycle_after_s": None if first_cycle_at is None else round(first_cycle_at, 2),
        "share_completed": round(done / max(1, done + failed), 3),
        "share_of_slots_with_work": round(done / max(1.0, wall), 3),
        "rss_kib": {
            "first": memory[0] if memory else None,
            "last": memory[-1] if memory else None,
            "peak": max(memory) if memory else None,
            "growth_per_cycle_second_half": round(slope(half), 2),
        },
        "stop_seconds": round(stop_seconds, 2),
        "exit": process.returncode,
        "stdout": out.strip()[-200:],
        "stderr_tail": err.strip().splitlines()[-3:],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    from scout.demo.estate import build_demo_estate
    from tests.gitlab_server.server import GitLabServer

    work = Path(tempfile.mkdtemp(prefix="worker-soak-"))
    before = work / "before"
    before.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", args.before], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
    estate = work / "estate"
    estate.mkdir()
    (estate / "estate.toml").write_text('url = "http://placeholder.invalid"\n')
    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()},
        "before_rev": args.before,
        "cycles_asked": args.cycles,
        "faults": dict(FAULTS),
        "runs": {},
    }
    with GitLabServer(estate, token=TOKEN, seed=SEED) as server:
        (estate / "estate.toml").unlink()
        build_demo_estate(estate, url=server.url)
        for name, code in (("before", before), ("after", ROOT)):
            server.clear_faults()
            for kind, probability in FAULTS:
                server.inject(kind, times=None, probability=probability)
            config = config_for(work / name, server.url)
            log(f"{name}: {args.cycles} cycles or {args.budget:.0f} s, whichever comes first")
            results["runs"][name] = soak(code, config, args.cycles, args.budget)
            results["runs"][name]["load_after"] = os.getloadavg()
    return results


def table(r: dict[str, Any]) -> str:
    before, after = r["runs"]["before"], r["runs"]["after"]
    rows = [
        ("cycles logged", "cycles"),
        ("completed", "completed"),
        ("failed", "failed"),
        ("wall seconds", "wall_seconds"),
        ("first cycle after (s)", "first_cycle_after_s"),
        ("share of cycles completed", "share_completed"),
        ("share of 1 s slots with a completed cycle", "share_of_slots_with_work"),
        ("stop after SIGTERM (s)", "stop_seconds"),
        ("exit", "exit"),
    ]
    lines = [f"| figure | before ({r['before_rev']}) | after |", "|---|---|---|"]
    lines += [f"| {label} | {before[key]} | {after[key]} |" for label, key in rows]
    for key in ("first", "last", "peak", "growth_per_cycle_second_half"):
        lines.append(f"| RSS {key} (KiB) | {before['rss_kib'][key]} | {after['rss_kib'][key]} |")
    load = (r["machine"]["load_before"], before["load_after"], after["load_after"])
    lines.append(f"\nload average at start, after before, after after: {load}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.worker_soak", description=__doc__)
    parser.add_argument("--cycles", type=int, default=500)
    parser.add_argument("--before", default="cf87c43")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per version")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    results = run(args)
    print(table(results))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or ROOT / "bench" / "results" / f"worker-soak-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
