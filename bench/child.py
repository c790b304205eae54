"""One measured task per process, so its peak RSS is its own: ``python -m bench.child TASK ARGS``.

Tasks: ``store N DB`` (write N generated passages through Store), ``index CONFIG`` (``scout
index`` in-process, twice: cold, then unchanged), ``sweep CONFIG [--sequential]`` (one sweep).
Each prints one JSON document: the task's figures plus ``peak_rss_mb``.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any


def peak_rss_mb() -> float:
    # VmHWM is this process image's own peak; ru_maxrss would carry the parent's over exec.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def store(count: int, db: Path) -> dict[str, Any]:
    from bench.corpus import passages
    from bench.retrieval import build_store

    written, seconds = build_store(db, passages(count))
    return {"passages": written, "seconds": round(seconds, 2)}


def index(config_path: Path) -> dict[str, Any]:
    from scout.config import load_config
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules
    from scout.forge import open_forge
    from scout.store import Store

    config = load_config(config_path)
    rules = CorpusRules(tuple(config.forge.groups), config.corpus)
    runs = []
    for _ in range(2):
        forge = open_forge(config)
        with Store.open(config.store.path, create=True) as st:
            started = time.perf_counter()
            summary = index_estate(forge, st, rules)
            runs.append(
                {
                    "seconds": round(time.perf_counter() - started, 3),
                    "passages": summary.passages,
                    "forge_requests": dict(forge.requests),
                }
            )
        forge.close()
    return {"cold": runs[0], "unchanged": runs[1]}


def sweep(config_path: Path, sequential: bool) -> dict[str, Any]:
    import ingest.sweep
    from ingest.sweep import Sweep
    from scout.config import load_config
    from scout.forge import open_forge
    from scout.providers import make_provider
    from scout.store import Store

    if sequential:
        # The sweep as it was: each issue's notes fetched when the issue is read, none ahead.
        ingest.sweep.READ_AHEAD = 0
    config = load_config(config_path)
    forge = open_forge(config)
    with Store.open(config.store.path, create=True) as st:
        summary = Sweep(config, forge, st, make_provider("offline", model="offline")).run()
    forge.close()
    concurrency = 1 if sequential else ingest.sweep.CONCURRENCY + 1  # the pool and the sweeper
    return {**summary.to_json(), "concurrency": concurrency}


def main(argv: list[str]) -> int:
    task, *args = argv
    if task == "store":
        result = store(int(args[0]), Path(args[1]))
    elif task == "index":
        result = index(Path(args[0]))
    elif task == "sweep":
        result = sweep(Path(args[0]), sequential="--sequential" in args)
    else:
        raise SystemExit(f"unknown task {task!r}")
    result["peak_rss_mb"] = peak_rss_mb()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
