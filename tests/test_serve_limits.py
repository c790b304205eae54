"""The serving limits on their own (an injected clock, no server), the serve extra's absence,
and ``scout ask`` never importing the server's libraries."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from scout.config import parse_rate
from scout.errors import Refused, StoreError
from scout.serve.limits import AnswerSlots, RateLimiter
from scout.store import Store
from tests.fakes.corpus import make_store, write_config

EXTRA = ("starlette", "uvicorn", "mcp", "prometheus_client", "jinja2")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("30/minute", (30, 60.0)), ("1/second", (1, 1.0)), (" 500 / hour ", (500, 3600.0))],
)
def test_rates_parse(text: str, parsed: tuple[int, float]) -> None:
    assert parse_rate(text) == parsed


@pytest.mark.parametrize(
    "text", ["", "30", "30/", "/minute", "0/minute", "-1/minute", "3.5/minute", "30/day", "a/b"]
)
def test_bad_rates_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="30/minute"):
        parse_rate(text)


def test_rate_limit_refuses_past_the_budget_and_says_when_to_come_back() -> None:
    clock = Clock()
    limiter = RateLimiter(3, 60.0, clock=clock)
    for _ in range(3):
        limiter.take("a")
    with pytest.raises(Refused) as refused:
        limiter.take("a")
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == (
        429,
        "rate_limited",
        20,
    )
    limiter.take("b")  # another client has its own budget
    clock.now += 20  # one request's worth refilled
    limiter.take("a")
    with pytest.raises(Refused):
        limiter.take("a")


def test_rate_table_forgets_the_least_recent_clients() -> None:
    limiter = RateLimiter(1, 3600.0, clock=Clock(), max_clients=100)
    for i in range(1_000):
        limiter.take(f"addr:{i}")
    assert limiter.clients() == 100


def test_answer_slots_bound_and_refuse_after_the_wait() -> None:
    async def main() -> tuple[int, int, str]:
        slots = AnswerSlots(2, 0.05)
        await slots.acquire()
        await slots.acquire()
        busy = slots.busy()
        try:
            await slots.acquire()
        except Refused as refused:
            code = f"{refused.status} {refused.code} {refused.retry_after}"
        slots.release()
        await slots.acquire()  # a released slot is taken at once
        return busy, slots.busy(), code

    assert asyncio.run(main()) == (2, 2, "503 busy 1")


def test_scout_ask_imports_none_of_the_serve_extra(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path)
    script = (
        "import sys\n"
        "from scout.cli.main import cli\n"
        f"try:\n    cli(['--config', {str(config)!r}, 'ask', 'rotate keys', '--json'])\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {EXTRA!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert '"outcome": "answered"' in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_without_the_serve_extra_exit_3_says_how_to_install(tmp_path: Path, command: str) -> None:
    # sys.modules[name] = None is how Python marks a module as not importable
    make_store(tmp_path).close()
    config = write_config(tmp_path)
    script = (
        "import sys\n"
        "sys.modules['starlette'] = None\nsys.modules['mcp'] = None\n"
        "from scout.cli.main import main\n"
        f"sys.argv = ['scout', '--config', {str(config)!r}, {command!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stderr == (
        f"scout: scout {command} needs the serve extra (starlette, mcp missing): "
        "pip install 'scout[serve]'\n"
    )
    assert done.stdout == ""


def test_a_reader_store_refuses_writes_and_still_reads(tmp_path: Path) -> None:
    # what the server's search and audit threads hold; its answer threads log questions
    make_store(tmp_path).close()
    with Store.open(tmp_path / "scout.db") as store:
        store.refuse_writes()
        assert store.passage_count() == 43
        with pytest.raises((sqlite3.OperationalError, StoreError), match="readonly"):
            store.log_question(
                question="q", outcome="declined", reason="r", provider="offline",
                passages=0, latency_ms=1,
            )  # fmt: skip
    with Store.open(tmp_path / "scout.db") as store:
        assert store.questions() == []
