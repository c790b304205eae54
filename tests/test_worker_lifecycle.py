"""The worker's lifecycle as an operator meets it: a cycle at start, real signals during a slow
index against the GitLab test server, a missing token, a config edited while it runs, one log
line per cycle in UTC; and ``scout index``/``scout sweep`` on SIGTERM (exit 143).

Every process is the real ``scout`` in a subprocess, stopped by a real signal. No test bounds
wall-clock time: where "within 5 s" is the point, the worker is stuck in a request the test
server holds for far longer (30 s), and the test checks it left without waiting for it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.worker import Worker
from scout.config import load_config
from scout.demo.builder import EstateBuilder
from tests.gitlab_server.server import GitLabServer
from tests.helpers.config import render_config
from tests.helpers.demo import demo_estate
from tests.helpers.run import PIPE, Result, Started, run_cli, start_cli
from tests.helpers.served import TOKEN, TOKEN_ENV, config_text, placeholder

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
SCOUT = [sys.executable, "-m", "scout"]
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ scout\.")
PROJECTS = 12


def _demo(tmp_path: Path, schedule: str) -> Path:
    demo_estate(tmp_path / "estate")
    config = tmp_path / "scout.toml"
    text = DEMO_CONFIG.read_text().replace('"*/30 * * * *"', json.dumps(schedule))
    config.write_text(text, encoding="utf-8")
    return config


def _start(config: Path, *args: str, env: dict[str, str] | None = None) -> Started:
    return start_cli(
        ["--config", str(config), *args],
        stdout=PIPE,
        stderr=PIPE,
        cwd=config.parent,
        env={**os.environ, **(env or {})},
    )


def _read_until(process: Started, needle: str, lines: list[str]) -> None:
    """Read the worker's log until a line holds ``needle`` (or the worker ends)."""
    assert process.stderr is not None
    while True:
        line = process.stderr.readline()
        if not line:
            raise AssertionError(f"worker ended before {needle!r}: {''.join(lines)}")
        lines.append(line)
        if needle in line:
            return


def _signalled_after(config: Path, needle: str, *args: str) -> tuple[int, str, str]:
    """Start the worker, SIGTERM it once its log shows ``needle``: (exit, stdout, whole log)."""
    process = _start(config, "worker", *args)
    lines: list[str] = []
    try:
        _read_until(process, needle, lines)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, out, "".join(lines) + err


def _projects(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return 0
    try:
        return int(conn.execute("select count(*) from projects").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _wait_for(condition: Callable[[], bool], process: Started) -> None:
    # a hang guard only: what is asserted is the state reached, not how long it took
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"condition not met (exit {process.poll()})")


# ------------------------------------------------------------------------------ start


def test_the_first_cycle_runs_at_start_not_at_the_schedule(tmp_path: Path) -> None:
    config = _demo(tmp_path, "1d")  # before: the first cycle waited a day
    code, out, log = _signalled_after(config, "cycle 1 done in", "--json")
    assert code == 0, log
    assert json.loads(out) == {"cycles": 1}
    assert "worker started: schedule '1d'; first cycle now" in log
    # one line per cycle, each line stamped in the one time format (UTC)
    (done,) = [line for line in log.splitlines() if "cycle 1 done in" in line]
    assert "index: indexed 3 project(s)" in done and "sweep: read 7 issue(s)" in done
    assert all(STAMP.match(line) for line in log.splitlines()), log
    # never a line per skipped file
    assert "skipped acme/" not in log


def test_wait_first_waits_for_the_schedule(tmp_path: Path) -> None:
    config = _demo(tmp_path, "1d")
    code, out, log = _signalled_after(config, "worker started", "--wait-first", "--json")
    assert code == 0, log
    assert json.loads(out) == {"cycles": 0}
    assert re.search(r"first cycle at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", log), log
    assert not (tmp_path / "scout.db").exists()


def test_a_sigterm_while_the_worker_writes_its_log_still_stops_it(tmp_path: Path) -> None:
    """The signal handler only sets the stop; the main thread says so. A handler that logged
    wrote to stderr re-entrantly when the signal fell inside a log line (RuntimeError on a
    buffered stderr, before the stop was set), and the worker slept on to its schedule."""
    config = load_config(_demo(tmp_path, "1d"))
    worker = Worker(config, cycle=lambda current, stop: pytest.fail("no cycle is due"))
    records: list[logging.LogRecord] = []

    class SignalMidLine(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            if record.getMessage().startswith("worker started"):
                signal.raise_signal(signal.SIGTERM)  # handled here, inside this log line

    handler = SignalMidLine()
    logger = logging.getLogger("scout.worker")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        worker.run_forever(wait_first=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    said = [(r.getMessage(), r.funcName) for r in records]
    assert said[1:] == [
        ("SIGTERM: stopping; the cycle in progress keeps what it has committed", "_say_stopping"),
        ("worker stopped after 0 cycle(s)", "run_forever"),
    ]
    assert worker.cycles == 0


def test_the_worker_refuses_to_start_without_its_token_variable(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = tmp_path / "scout.toml"
    config.write_text(
        '[forge]\nkind = "gitlab"\nurl = "http://127.0.0.1:9"\ntoken_env = "SCOUT_TEST_UNSET"\n'
        'groups = ["acme"]\n[ingest]\nschedule = "1s"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "SCOUT_TEST_UNSET"}
    done = subprocess.run(
        [*SCOUT, "--config", str(config), "worker"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (3, ""), done.stderr
    assert done.stderr == (
        f"scout: {config}: forge.token_env names $SCOUT_TEST_UNSET, which is not set: export it "
        "with a GitLab token that can read the groups\n"
    )


def test_the_worker_refuses_to_start_with_a_bad_config(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path, "1s")
    config.write_text(config.read_text().replace("[corpus]", "[corpus]\nvisibilty = []"))
    done = scout("worker", config=config)
    assert (done.code, done.stdout) == (3, "")
    assert done.stderr == (
        f"scout: {config}: corpus.visibilty: unknown key (did you mean 'visibility'?)\n"
    )


# ------------------------------------------------------------------------------ config


def test_the_config_is_read_again_each_cycle_and_a_broken_one_keeps_the_old(
    tmp_path: Path,
) -> None:
    config = _demo(tmp_path, "1s")
    good = config.read_text()
    process = _start(config, "worker")
    lines: list[str] = []
    try:
        _read_until(process, "cycle 1 done in", lines)
        config.write_text(good.replace("[corpus]", "[corpus]\nnot toml ["), encoding="utf-8")
        # the next cycle may have read the config before this write: wait for one that read it
        _read_until(process, "config not reloaded", lines)
        _read_until(process, " done in ", lines)
        # an edit that takes effect: every project is now excluded (and the docs site with
        # them), so the next cycle removes their passages
        head, tail = good.split("[[docs_site]]")
        edited = head.replace('exclude_projects = ["acme/infra"]', 'exclude_projects = ["acme/*"]')
        config.write_text(edited + "[answer]" + tail.split("[answer]", 1)[1], encoding="utf-8")
        _read_until(process, "config reloaded from", lines)
        _read_until(process, " done in ", lines)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    log = "".join(lines) + err
    assert process.returncode == 0, log
    refused = [line for line in log.splitlines() if "config not reloaded" in line]
    assert refused and all("not valid TOML" in line for line in refused), log
    refusal = log.index("config not reloaded")
    assert " done in " in log[refusal:]  # the old config went on working
    assert _projects(tmp_path / "scout.db") == 0
    assert "Traceback" not in log


# ------------------------------------------------------------------------------ signals


def _slow_estate(tmp_path: Path, start: Callable[..., GitLabServer]) -> tuple[Path, GitLabServer]:
    estate = placeholder(tmp_path / "estate")
    server = start(estate, token=TOKEN)
    (estate / "estate.toml").unlink()
    builder = EstateBuilder(estate, url=server.url)
    for n in range(PROJECTS):
        files = {f"docs/page{k}.md": f"# P{n} page {k}\n\nwidget{n}x{k} text.\n" for k in range(8)}
        builder.project(f"acme/p{n:02d}").commit({"README.md": f"# P{n}\n", **files}, "Docs")
        # issues with a note each: a sweep reads one notes listing per issue
        for iid in (1, 2):
            builder.issue(
                f"acme/p{n:02d}",
                iid,
                f"Where is widget{n}x{iid} explained?",
                f"See docs/page{iid}.md",
                updated_at=f"2026-02-01T10:{n:02d}:{iid:02d}Z",
                notes=["Also docs/page3.md"],
            )
    builder.write()
    config = tmp_path / "scout.toml"
    text = config_text(server.url).replace('exclude_projects = ["acme/infra"]', "")
    text = text.split("[[docs_site]]")[0] + '[ingest]\nschedule = "1d"\n'
    text += '[store]\npath = "scout.db"\n[answer]\nprovider = "offline"\n'
    config.write_text(text, encoding="utf-8")
    return config, server


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_slow_index_stops_at_the_next_file_and_keeps_whole_projects(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer], signum: int
) -> None:
    config, server = _slow_estate(tmp_path, gitlab_server_factory)
    server.inject("slow", times=None, match="/repository/archive", delay=0.4)
    db = tmp_path / "scout.db"
    process = _start(config, "worker", "--json", env={TOKEN_ENV: TOKEN})
    try:
        _wait_for(lambda: _projects(db) >= 2, process)
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert json.loads(out) == {"cycles": 1}
    assert "stopped early by a signal" in err and "(stopped: the project being read" in err
    indexed = _projects(db)
    assert 2 <= indexed < PROJECTS
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        # every project kept is whole (its eight pages), none half-written
        counts = conn.execute("select project, count(*) from passages group by 1").fetchall()
    finally:
        conn.close()
    assert len(counts) == indexed and {n for _, n in counts} == {8}
    # the cycle was left at once: at most the archive in flight was asked for after the signal
    assert len(server.requests("/repository/archive")) <= indexed + 1


@pytest.mark.slow
def test_a_worker_stuck_in_a_request_leaves_it_and_exits_0_without_waiting_for_it(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> None:
    config, server = _slow_estate(tmp_path, gitlab_server_factory)
    held = 30.0
    server.inject("slow", times=2, match="/repository/archive", delay=0.01)
    server.inject("slow", times=None, match="/repository/archive", delay=held)
    db = tmp_path / "scout.db"
    process = _start(config, "worker", "--json", env={TOKEN_ENV: TOKEN})
    try:
        _wait_for(lambda: _projects(db) >= 2, process)
        _wait_for(lambda: len(server.requests("/repository/archive")) >= 2, process)
        time.sleep(0.3)  # the third archive request is now held by the server
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=held * 2)
        # The server logs a request when it answers, so the held archive is unlogged as long as
        # it is held: the worker exited before its answer (an order of events, not a time).
        answered = len(server.requests("/repository/archive"))
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert json.loads(out) == {"cycles": 0}
    assert "did not stop within 4s: leaving it" in err
    assert answered == 2  # the two quick archives; the held one was left unanswered
    assert _projects(db) == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "kept"),
    [
        ("index", "scout: terminated; projects indexed before the interrupt are kept"),
        ("sweep", "scout: terminated; every issue committed before the interrupt is kept"),
    ],
)
def test_index_and_sweep_on_sigterm_exit_143_saying_what_was_kept(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer], command: str, kept: str
) -> None:
    config, server = _slow_estate(tmp_path, gitlab_server_factory)
    db = tmp_path / "scout.db"
    if command == "sweep":
        # many issues, each listing slow: a sweep long enough to be signalled
        done = run_cli(
            ["--config", str(config), "index"], env={**os.environ, TOKEN_ENV: TOKEN}, timeout=120
        )
        assert done.code == 0, done.stderr
        server.inject("slow", times=None, match="/notes", delay=1.0)
    else:
        server.inject("slow", times=None, match="/repository/archive", delay=0.4)
    process = _start(config, command, env={TOKEN_ENV: TOKEN})
    try:
        if command == "index":
            _wait_for(lambda: _projects(db) >= 1, process)
        else:
            _wait_for(lambda: len(server.requests("/notes")) >= 2, process)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, out) == (143, ""), err
    assert err.startswith(kept) and err.count("\n") == 1, err


def test_worker_once_is_for_cron_and_exits_with_the_cycle_code(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = tmp_path / "scout.toml"
    demo_estate(tmp_path / "estate")
    config.write_text(render_config(tmp_path / "estate"), encoding="utf-8")
    done = scout("worker", "--once", "--json", config=config)
    assert done.code == 0, done.stderr
    assert done.json()["index"]["projects_indexed"] >= 1
