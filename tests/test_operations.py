"""Run the way an operator runs it: stopped by systemd, Ctrl-C at a terminal, cron, a new user.

Every process here is the real ``scout`` in a subprocess, stopped by a real signal, with the fake
``claude`` slowed down so that the signal lands while a sweep or an answer is in progress.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from scout.cli.main import cli
from scout.cli.progress import LogProgress
from scout.demo.builder import EstateBuilder
from tests.helpers.config import render_config
from tests.helpers.demo import demo_estate
from tests.helpers.run import PIPE, Result, Started, start_cli
from tests.helpers.wrapped import wrapped_command

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
SCOUT = [sys.executable, "-m", "scout"]


def _demo(
    tmp_path: Path, *, provider: str = "offline", schedule: str | None = None, extra: int = 0
) -> Path:
    """The demo estate, plus ``extra`` issues that each need one judgement."""
    demo_estate(tmp_path / "estate")
    with (tmp_path / "estate" / "issues" / "acme" / "ledger.jsonl").open("a") as issues:
        for n in range(extra):
            record = {
                "iid": 1000 + n,
                "title": f"Rounding question {n}: how are FX rates rounded?",
                "description": "See src/ledger/rates.py#L13 for the rule.",
                "state": "opened",
                "created_at": "2026-03-01T00:00:00Z",
                "updated_at": f"2026-03-02T{n // 60:02d}:{n % 60:02d}:00Z",
                "web_url": f"https://gitlab.acme.example/acme/ledger/-/issues/{1000 + n}",
                "notes": [],
            }
            issues.write(json.dumps(record) + "\n")
    text = DEMO_CONFIG.read_text().replace('provider = "offline"', f'provider = "{provider}"')
    if schedule is not None:
        text = text.replace('schedule = "*/30 * * * *"', f'schedule = "{schedule}"')
    config = tmp_path / "scout.toml"
    config.write_text(text, encoding="utf-8")
    return config


def _query(db: Path, sql: str) -> list[tuple[object, ...]]:
    return _read_together(db, sql)[0]


def _read_together(db: Path, *sql: str) -> list[list[tuple[object, ...]]]:
    """Each statement's rows, all read in one transaction: a sweep committing meanwhile cannot
    show one statement's rows without the other's (no rows while the store is not there)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return [[] for _ in sql]
    try:
        conn.execute("begin")
        return [conn.execute(statement).fetchall() for statement in sql]
    except sqlite3.Error:
        return [[] for _ in sql]
    finally:
        conn.close()


def _whole_issues(db: Path) -> int:
    """Committed issues, after checking each has exactly one verdict per stored reference."""
    issues, counted = _read_together(
        db,
        "select project, iid, refs from issues",
        "select issue_project, issue_iid, count(*) from signposts group by 1, 2",
    )
    verdicts = dict(((str(p), int(str(i))), int(str(n))) for p, i, n in counted)
    for project, iid, refs in issues:
        assert verdicts.get((str(project), int(str(iid))), 0) == len(json.loads(str(refs)))
    assert sum(verdicts.values()) == sum(len(json.loads(str(r))) for *_, r in issues)
    return len(issues)


def _wait_for(condition: Callable[[], bool], process: Started, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"condition not met (exit {process.poll()})")


def _start(config: Path, cwd: Path, *args: str) -> Started:
    """The real ``scout`` with ``config`` running ``args``, its output piped, for signals."""
    return start_cli(["--config", str(config), *args], stdout=PIPE, stderr=PIPE, cwd=cwd)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.split(") ", 1)[1][0] != "Z"


@pytest.fixture
def slow_claude(claude_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake ``claude`` taking 0.4 s a reply; returns the file its pids are written to."""
    pids = tmp_path / "claude-pids"
    monkeypatch.setenv("FAKE_CLAUDE_DELAY", "0.4")
    monkeypatch.setenv("FAKE_CLAUDE_PIDS", str(pids))
    return pids


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_worker_sweep_commits_the_current_issue_and_exits_0(
    tmp_path: Path, scout: Callable[..., Result], slow_claude: Path, signum: int
) -> None:
    # 40 more judgements than the demo's: more than 4 at a time can finish before the signal
    config = _demo(tmp_path, provider="claude-local", schedule="1s", extra=40)
    db = tmp_path / "scout.db"
    process = _start(config, tmp_path, "worker", "--json")
    try:
        _wait_for(lambda: _whole_issues(db) >= 1, process, 60)
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert json.loads(out) == {"cycles": 1}
    assert "Traceback" not in err and "Error" not in err, err
    assert "apscheduler" not in err  # not even "skipped: maximum number of running instances"
    assert "stopped early by a signal" in err
    committed = _whole_issues(db)
    # The sweep was stopped part-way: a later sweep reads the rest, and ends whole. It judges
    # offline: what it reads does not depend on the judge, and the ~50 fake claude processes
    # it started were two thirds of this test's CPU.
    config.write_text(
        config.read_text().replace('provider = "claude-local"', 'provider = "offline"')
    )
    swept = scout("sweep", "--json", config=config)
    assert swept.code == 0, swept.stderr
    assert swept.json()["issues_read"] >= 1
    assert _whole_issues(db) > committed


@pytest.mark.slow
def test_ctrl_c_during_a_sweep_exits_130_keeps_whole_issues_and_kills_claude(
    tmp_path: Path, scout: Callable[..., Result], slow_claude: Path
) -> None:
    # many issues, so the sweep cannot have ended by the time the signal lands on a slow machine
    config = _demo(tmp_path, provider="claude-local", extra=40)
    db = tmp_path / "scout.db"
    assert scout("index", config=config).code == 0
    process = _start(config, tmp_path, "sweep")
    try:
        _wait_for(lambda: _whole_issues(db) >= 1 and slow_claude.exists(), process, 60)
        time.sleep(0.1)  # let the next judgement's claude start
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert out == ""
    assert err.count("\n") == 1 and "Aborted" not in err and "Traceback" not in err
    assert err.startswith("scout: interrupted; every issue committed before the interrupt is kept")
    _whole_issues(db)
    pids = [int(line) for line in slow_claude.read_text().split()]
    time.sleep(0.2)
    assert pids and not [pid for pid in pids if _alive(pid)]


def test_ctrl_c_during_ask_exits_130_and_kills_the_claude_child(
    tmp_path: Path, scout: Callable[..., Result], slow_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _demo(tmp_path, provider="claude-local")
    db = tmp_path / "scout.db"
    assert scout("index", config=config).code == 0
    monkeypatch.setenv("FAKE_CLAUDE_DELAY", "60")
    process = _start(config, tmp_path, "ask", "How often are deploy keys rotated?")
    try:
        _wait_for(slow_claude.exists, process, 30)
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        process.kill()
    assert (process.returncode, out) == (130, "")
    assert err == "scout: interrupted; nothing was logged: the question is not on the gap backlog\n"
    (pid,) = (int(line) for line in slow_claude.read_text().split())
    time.sleep(0.2)
    assert not _alive(pid)
    assert _query(db, "select count(*) from questions") == [(0,)]


def gated_git(directory: Path, marker: str) -> tuple[Path, Path]:
    """A ``git`` first on PATH that, called for a repository whose path holds ``marker``, creates
    the returned file and waits there (until killed or ``released`` exists), so a signal can be
    sent while a command is surely half-way; any other call runs git."""
    reached = directory / "reached"
    hold = (
        f'case "$*" in *"{marker}"*)\n'
        f'  : > "{reached}"\n'
        f'  while [ ! -e "{directory}/released" ]; do sleep 0.05; done ;;\n'
        "esac\n"
    )
    return wrapped_command(directory, "git", hold), reached


@pytest.mark.slow
def test_ctrl_c_during_index_exits_130(tmp_path: Path) -> None:
    # many small projects, so the index has many commit points to be interrupted between; git
    # waits at the sixth, so the interrupt lands after five are kept and before the rest
    builder = EstateBuilder(tmp_path / "estate")
    for n in range(10):
        files = {
            f"docs/page{k}.md": f"## P{n} page {k}\n\nwidget{n}x{k} text.\n" for k in range(20)
        }
        builder.project(f"acme/p{n:02d}").commit({"README.md": f"# P{n}\n", **files}, "Docs")
    builder.write()
    config = tmp_path / "scout.toml"
    config.write_text(render_config(tmp_path / "estate"), encoding="utf-8")
    db = tmp_path / "scout.db"
    bin_dir, reached = gated_git(tmp_path, "/acme/p05 ls-tree")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    process = start_cli(
        ["--config", str(config), "index"], stdout=PIPE, stderr=PIPE, cwd=tmp_path, env=env
    )
    try:
        _wait_for(reached.exists, process, 60)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        (tmp_path / "released").touch()
        process.kill()
    assert (process.returncode, out) == (130, ""), err
    assert err.startswith("scout: interrupted; projects indexed before the interrupt are kept")
    assert err.count("\n") == 1
    conn = sqlite3.connect(db)
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    indexed = conn.execute("select count(*) from projects").fetchone()[0]
    conn.close()
    assert indexed == 5


def test_worker_once_text_shows_the_index_and_the_sweep(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path)
    result = scout("worker", "--once", config=config)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("index: indexed 3 project(s), 0 unchanged, 0 removed;")
    assert [line for line in lines if line.startswith("sweep: read 7 issue(s) and ")]


@pytest.mark.slow
def test_worker_logs_are_readable_and_say_when_the_next_cycle_runs(tmp_path: Path) -> None:
    config = _demo(tmp_path, schedule="1s")
    process = _start(config, tmp_path, "worker")
    lines: list[str] = []
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and sum("done in" in line for line in lines) < 2:
        lines.append(process.stderr.readline())
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    log = "".join(lines) + err
    assert process.returncode == 0, log
    assert out.startswith("worker stopped after ")
    assert "apscheduler" not in log and "executed successfully" not in log
    assert "{" not in log  # summaries are sentences, not JSON blobs
    assert "worker started: schedule '1s'; first cycle now" in log
    assert log.count("next cycle at ") >= 1  # after cycle 1 (the first runs at start)
    assert "cycle 1 done in" in log and "cycle 2 done in" in log
    assert "sweep: read 7 issue(s)" in log and "index: indexed 3 project(s)" in log


def test_a_failed_cycle_is_not_followed_by_a_success_line(tmp_path: Path) -> None:
    config = _demo(tmp_path, schedule="1s")
    (tmp_path / "estate").rename(tmp_path / "gone")
    process = _start(config, tmp_path, "worker")
    lines: list[str] = []
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any("cycle 1 failed" in line for line in lines):
        lines.append(process.stderr.readline())
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    log = "".join(lines) + err
    assert process.returncode == 0, log
    assert "cycle 1 failed: " in log
    assert "executed successfully" not in log and "Traceback" not in log


# ---------------------------------------------------------------------- getting started
def _options(group: click.Group, prefix: str = "scout") -> list[tuple[str, click.Parameter]]:
    found: list[tuple[str, click.Parameter]] = [(prefix, p) for p in group.params]
    ctx = click.Context(group)
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            found += _options(command, f"{prefix} {name}")
        else:
            found += [(f"{prefix} {name}", p) for p in command.params]
    return found


def test_every_option_has_help() -> None:
    options = _options(cli)
    assert {where for where, _ in options} >= {"scout ask", "scout signposts show"}
    missing = [
        f"{where} {param.name}"
        for where, param in options
        if isinstance(param, click.Option) and not param.help
    ]
    assert missing == []


@pytest.mark.parametrize("command", [(), ("ask",), ("signposts",), ("signposts", "summary")])
def test_dash_h_is_help(command: tuple[str, ...], scout: Callable[..., Result]) -> None:
    short, long = scout(*command, "-h"), scout(*command, "--help")
    assert (short.code, short.stdout) == (0, long.stdout)
    assert short.stdout.startswith("Usage: ")


def test_config_is_accepted_after_the_subcommand(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path)
    before = scout("--config", str(config), "index", "--json")
    assert before.code == 0, before.stderr
    after = scout("index", "--json", "--config", str(config))
    assert after.code == 0, after.stderr
    assert after.json()["projects_unchanged"] == 3
    nested = scout("signposts", "summary", "--config", str(config))
    assert nested.code == 0 and nested.stdout == "no signposts yet: run `scout sweep`\n"
    missing = scout("gaps", "--config", str(tmp_path / "nope.toml"))
    assert missing.code == 3 and "nope.toml" in missing.stderr


def test_ask_dash_reads_the_question_from_stdin(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path)
    assert scout("index", config=config).code == 0
    question = "How often are deploy keys rotated?"
    piped = scout("ask", "-", "--json", config=config, input=question + "\n")
    direct = scout("ask", question, "--json", config=config)
    assert piped.code == 0, piped.stderr
    assert piped.json() == direct.json()
    assert piped.json()["outcome"] == "answered"
    empty = scout("ask", "-", config=config, input="")
    assert empty.code == 2 and empty.stdout == ""


@pytest.mark.slow
def test_the_demo_prints_a_command_that_runs_where_scout_is_not_on_path(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    demo = scout("demo", "--dir", str(tmp_path / "d"), env=env)
    assert demo.code == 0, demo.stderr
    (hint,) = [line for line in demo.stdout.splitlines() if line.startswith("Audit with: ")]
    command = hint.removeprefix("Audit with: ").split("   ")[0]
    assert not command.startswith("scout ")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split()[:2] == ["id", "kind"]
    assert "state: rejected" in done.stdout.splitlines()  # the same on every row: a caption


# ---------------------------------------------------------------------- concurrent judgements
def _verdicts(db: Path) -> list[tuple[object, ...]]:
    return sorted(
        _query(
            db,
            "select issue_project, issue_iid, reference, status, check_name, reason, target, "
            "target_sha from signposts",
        ),
        key=repr,
    ) + sorted(_query(db, "select scope, value from cursors"), key=repr)


def _most_at_once(spans: Path) -> int:
    events = []
    for line in spans.read_text().splitlines():
        start, end = (float(x) for x in line.split())
        events += [(start, 1), (end, -1)]
    running = most = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        running += step
        most = max(most, running)
    return most


@pytest.mark.slow
def test_judgements_run_concurrently_within_the_bound_with_the_same_verdicts(
    tmp_path: Path, scout: Callable[..., Result], claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_DELAY", "0.3")
    results = {}
    for concurrency in (1, 3):
        directory = tmp_path / f"c{concurrency}"
        directory.mkdir()
        config = _demo(directory, provider="claude-local")
        config.write_text(
            config.read_text().replace("[ingest]", f"[ingest]\nconcurrency = {concurrency}")
        )
        spans = directory / "spans"
        monkeypatch.setenv("FAKE_CLAUDE_SPANS", str(spans))
        assert scout("index", config=config).code == 0
        swept = scout("sweep", "--json", config=config)
        assert swept.code == 0, swept.stderr
        calls = len(spans.read_text().splitlines())
        results[concurrency] = (_verdicts(directory / "scout.db"), _most_at_once(spans))
        assert (
            calls >= 10
            and calls == swept.json()["accepted"] + swept.json()["rejected"]["addresses"]
        )
    (one, one_most), (three, three_most) = results[1], results[3]
    assert one == three  # same verdicts, same cursor, whatever the concurrency
    # judgements overlapped up to the bound, never past it (the speed-up is bench/bench_judge.py's)
    assert one_most == 1
    assert three_most == 3


# ---------------------------------------------------------------------- progress
def _on_a_terminal(*args: str, cwd: Path) -> tuple[int, str, str]:
    """Run scout with stderr on a pseudo-terminal (stdout stays a pipe); returns what each got."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    with os.fdopen(slave, "wb", buffering=0) as terminal:  # the child keeps its own copy
        process = start_cli(list(args), stdout=PIPE, stderr=terminal, cwd=cwd, env=env)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    out, _ = process.communicate(timeout=60)
    os.close(master)
    assert process.returncode is not None and out is not None
    return process.returncode, out, b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.slow
def test_on_a_terminal_each_phase_is_one_updating_line_with_counts_and_rate(
    tmp_path: Path,
) -> None:
    config = _demo(tmp_path)
    code, out, err = _on_a_terminal("--config", str(config), "index", cwd=tmp_path)
    assert code == 0 and out.startswith("indexed 3 project(s)")
    assert "projects" in err and "files" in err and "/s" in err
    code, out, err = _on_a_terminal("--config", str(config), "sweep", cwd=tmp_path)
    assert code == 0 and out.startswith("read 7 issue(s)")
    final = err.replace("\r\n", "\n").split("\r")[-1]  # the display's last frame
    final = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", final)
    # 8 issues gone through: 7 read, and one of the private project dropped unread
    assert re.search(r"issues\s+8\s+[\d.]+/s\s+\d:\d\d:\d\d", final), final
    assert re.search(r"references\s+32\s+[\d.]+/s", final), final
    assert "\x1b[" in err  # drawn in place, not scrolled line by line
    code, out, err = _on_a_terminal(
        "--config", str(config), "ask", "How often are deploy keys rotated?", cwd=tmp_path
    )
    assert code == 0 and "offline is composing an answer" in err


def test_quiet_silences_progress_on_a_terminal(tmp_path: Path) -> None:
    config = _demo(tmp_path)
    for args in (("index", "--quiet"), ("-q", "sweep"), ("ask", "-q", "deploy keys rotated?")):
        code, out, err = _on_a_terminal("--config", str(config), *args, cwd=tmp_path)
        assert code == 0 and out
        assert err == ""


def test_off_a_terminal_progress_is_a_log_line_every_few_seconds() -> None:
    lines: list[str] = []
    progress = LogProgress(lines.append, every=0.05)
    progress.phase("issues")
    progress.advance("issues")
    assert lines == []  # nothing before the first interval
    time.sleep(0.06)
    progress.advance("issues", 4)
    progress.advance("issues")  # within the interval again: no line
    assert len(lines) == 1
    assert re.fullmatch(r"progress: issues 5 \([\d.]+/s\); 0s elapsed", lines[0]), lines


# ---------------------------------------------------------------------- reasons
def test_resolves_reasons_never_contradict_themselves(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    builder = EstateBuilder(tmp_path / "estate")
    repo = builder.project("acme/tool")
    first = repo.commit({"README.md": "# Tool\n", "docs/old.md": "# Old\n\nrotate keys\n"}, "a")
    repo.branch("feature/x")
    repo.checkout("feature/x")
    repo.commit({"docs/branch.md": "# Branch\n\nrotate keys on the branch\n"}, "b")
    repo.checkout("main")
    head = repo.commit({"docs/old.md": None, "docs/new.md": "# New\n\nrotate keys\n"}, "c")
    base = "https://gitlab.acme.example/acme/tool/-/blob"
    builder.issue(
        "acme/tool",
        1,
        "How do I rotate keys?",
        "\n".join(
            [
                f"{base}/{first}/docs/old.md",  # existed at the pinned sha, deleted since
                f"{base}/{first}/docs/never.md",  # at neither sha
                f"{base}/main/docs/gone.md",  # names the branch at its head
                f"{base}/feature/x/docs/new.md",  # a branch, read at the default head
            ]
        ),
    )
    builder.write()
    config = tmp_path / "scout.toml"
    config.write_text(render_config(tmp_path / "estate"), encoding="utf-8")
    assert scout("index", config=config).code == 0
    assert scout("sweep", config=config).code == 0
    listed = scout("signposts", "--status", "all", "--json", config=config).json()
    reasons = {row["reference"].rsplit("/", 1)[-1]: row["reason"] for row in listed}
    assert reasons["old.md"] == f"docs/old.md was deleted since {first[:12]}"
    assert reasons["never.md"] == (
        f"docs/never.md does not exist at {first[:12]} (the linked sha) nor at the head {head[:12]}"
    )
    assert reasons["gone.md"] == f"docs/gone.md does not exist at the head {head[:12]}"
    assert not [r for r in reasons.values() if "existed at" in r]
    (branch,) = [row for row in listed if "feature/x" in row["reference"]]
    shown = scout("signposts", "show", str(branch["id"]), config=config)
    assert f"  read at   main  sha {head}  (the link named feature/x;" in shown.stdout
    detail = scout("signposts", "show", str(branch["id"]), "--json", config=config).json()
    assert (detail["ref"], detail["linked_ref"], detail["target"]["sha"]) == (
        "main",
        "feature/x",
        head,
    )
