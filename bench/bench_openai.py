"""The openai provider's cost per task: ``.venv/bin/python -m bench.bench_openai [--tasks 100]``.

Runs ``--tasks`` answer tasks through one OpenAIProvider against the loopback Chat Completions
server (tests/fakes/openai_api.py, which answers at once), once per server dialect, and the same
tasks as bare HTTP posts of the same request body (no SDK, no validation) for the baseline. It
reports requests per task (a server refusing ``json_schema`` costs one extra request, once) and
the time per task as a ratio to the bare posts measured in the same run, so machine load cancels
out. A real model's seconds dwarf either; this measures what Scout adds around them. Prints a
table and writes ``bench/results/openai-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scout.config import Endpoint
from scout.providers.base import Task
from scout.providers.openai import OpenAIProvider
from scout.providers.schema import AnswerOutput
from tests.fakes.openai_api import FLAVOURS, FakeOpenAI

RESULTS = Path(__file__).resolve().parent / "results"
TASK = Task(
    kind="answer",
    system="You answer questions from the passages you are given.",
    user="Question: How do I rotate the database keys?\n\nPassages: " + "lorem ipsum " * 400,
    output=AnswerOutput,
    question="How do I rotate the database keys?",
    passages=(),
)


def _bare(api: FakeOpenAI, tasks: int) -> float:
    """Seconds per task for plain HTTP posts of a body like the provider's, in the shape the
    server accepts (the baseline)."""
    form: dict[str, Any] = {"type": "json_schema", "json_schema": {"name": "A", "schema": {}}}
    if api.flavour == "llamacpp-old":
        form = {"type": "json_object"}
    body = json.dumps(
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": TASK.system + " Reply in JSON."},
                {"role": "user", "content": TASK.user},
            ],
            "response_format": form,
        }
    ).encode()
    started = time.perf_counter()
    for _ in range(tasks):
        request = urllib.request.Request(
            f"{api.url}/chat/completions", body, {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            json.loads(reply.read())
    return (time.perf_counter() - started) / tasks


def _provider(api: FakeOpenAI, tasks: int) -> float:
    provider = OpenAIProvider(model="m", endpoint=Endpoint(api.url, "SCOUT_BENCH_NO_KEY"))
    started = time.perf_counter()
    for _ in range(tasks):
        provider.run(TASK)
    return (time.perf_counter() - started) / tasks


def run(tasks: int) -> dict[str, Any]:
    rows = {}
    for flavour in FLAVOURS:
        with FakeOpenAI(flavour=flavour) as api:
            bare = statistics.median(_bare(api, tasks // 4) for _ in range(3))
            sent = len(api.log)
            through = statistics.median(_provider(api, tasks // 4) for _ in range(3))
            requests = (len(api.log) - sent) / (3 * (tasks // 4))
        rows[flavour] = {
            "requests_per_task": round(requests, 3),
            "bare_ms": round(bare * 1000, 2),
            "provider_ms": round(through * 1000, 2),
            "ratio": round(through / bare, 2),
        }
    return {"tasks": tasks, "flavours": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    args = parser.parse_args()
    result = run(max(args.tasks, 4))
    print(f"{'server':<14}{'requests/task':>15}{'bare ms':>10}{'provider ms':>13}{'ratio':>8}")
    for flavour, row in result["flavours"].items():
        print(
            f"{flavour:<14}{row['requests_per_task']:>15}{row['bare_ms']:>10}"
            f"{row['provider_ms']:>13}{row['ratio']:>8}"
        )
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    (RESULTS / f"openai-{stamp}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
