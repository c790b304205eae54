"""``scout sweep``: incremental, crash-safe, withdrawing what no longer holds, one at a time."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scout.demo.builder import EstateBuilder
from tests.fakes.issues import kill_sweep_at, rounding_issue
from tests.helpers.calls import recorded, with_passages
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result, run_cli

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
CANARY = "CANARY-7f3a9c-do-not-store"


def _demo(tmp_path: Path, canary: str | None = None) -> Path:
    demo_estate(tmp_path / "estate", canary=canary)
    config = tmp_path / "scout.toml"
    config.write_text(DEMO_CONFIG.read_text(), encoding="utf-8")
    return config


def _state(db: Path) -> dict[str, Any]:
    """Everything a sweep decides, without ids and timestamps."""
    conn = sqlite3.connect(db)
    try:
        return {
            "signposts": sorted(
                conn.execute(
                    "select issue_project, issue_iid, reference, status, check_name, reason, "
                    "target_project, target_path, target_line_start, target_line_end, "
                    "target_sha, target from signposts"
                ).fetchall(),
                key=repr,
            ),
            "passages": sorted(
                conn.execute(
                    "select project, path, sha, line_start, line_end, heading, body, origin, "
                    "target from passages"
                ).fetchall(),
                key=repr,
            ),
            "issues": sorted(
                conn.execute("select project, iid, updated_at, refs from issues").fetchall()
            ),
            "cursors": sorted(conn.execute("select scope, value from cursors").fetchall()),
        }
    finally:
        conn.close()


def test_a_second_sweep_with_nothing_changed_reads_nothing(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path)
    assert scout("index", config=config).code == 0
    first = scout("sweep", "--json", config=config)
    assert first.code == 0, first.stderr
    assert first.json()["references"] > 20
    second = scout("sweep", "--json", config=config).json()
    assert second["references"] == 0 and second["issues_read"] == 0
    assert second["forge_requests"].get("issues") == 1
    assert set(second["forge_requests"]) <= {"issues", "project", "head"}


EXTRA_ISSUES = 60


def _busy_demo(directory: Path) -> Path:
    """The demo estate plus many small issues, so a sweep has many commit points to die at."""
    config = _demo(directory)
    issues = directory / "estate" / "issues" / "acme" / "ledger.jsonl"
    with issues.open("a", encoding="utf-8") as handle:
        for n in range(EXTRA_ISSUES):
            record = rounding_issue(n, "https://gitlab.acme.example/acme/ledger/-/issues")
            handle.write(json.dumps(record) + "\n")
    return config


def _copy_db(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


@pytest.mark.slow
def test_sigkill_at_any_point_then_rerun_equals_an_uninterrupted_sweep(tmp_path: Path) -> None:
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    config = _busy_demo(reference_dir)
    assert run_cli(["--config", str(config), "index"]).code == 0
    # every trial sweeps this indexed store: indexing is the same each time, and not on trial
    indexed = tmp_path / "indexed.db"
    _copy_db(reference_dir / "scout.db", indexed)
    assert run_cli(["--config", str(config), "sweep"]).code == 0
    expected = _state(reference_dir / "scout.db")
    total = len(expected["issues"])

    # Kill points spread on purpose: before the first commit, just after it, at a third, at two
    # thirds, and before the last. Each kill lands at the next poll after that many issues are
    # committed, mostly inside the next issue's transaction or judgements.
    kill_points = [0, 1, total // 3, 2 * total // 3, total - 1]
    killed_at = []
    for trial, point in enumerate(kill_points):
        trial_dir = tmp_path / f"trial{trial}"
        trial_dir.mkdir()
        trial_config = _busy_demo(trial_dir)
        db = trial_dir / "scout.db"
        _copy_db(indexed, db)
        died = kill_sweep_at(["--config", str(trial_config), "sweep"], db, point)
        if died is not None:
            killed_at.append(died)
        assert run_cli(["--config", str(trial_config), "sweep"]).code == 0
        assert _state(db) == expected, f"killed after {point} issues"
    # the kills must land at many different points, not all before or after the sweep
    assert len(set(killed_at)) >= 4, killed_at


def _small_estate(builder: EstateBuilder) -> tuple[Any, str]:
    repo = builder.project("acme/tool")
    repo.commit(
        {
            "README.md": "# Tool\n\nThe tool exports ledgers.\n",
            "src/export.py": "".join(f"# export step {n}: writes ledger rows\n" for n in range(30)),
        },
        "init",
    )
    body = "How does the export write ledger rows? See src/export.py:5 for the export step."
    builder.issue(
        "acme/tool", 1, "Export writes ledger rows how?", body, updated_at="2026-03-01T10:00:00Z"
    )
    builder.write()
    return repo, body


def test_editing_an_issue_to_remove_a_link_withdraws_the_signpost(
    estate_builder: EstateBuilder, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    _repo, _body = _small_estate(estate_builder)
    config = write_config()
    scout("index", config=config)
    first = scout("sweep", "--json", config=config).json()
    assert first["accepted"] == 1, first
    listed = scout("signposts", "--status", "accepted", "--json", config=config).json()
    assert [row["reference"] for row in listed] == ["acme/tool:src/export.py#L5"]
    estate_builder.issue(
        "acme/tool",
        1,
        "Export writes ledger rows how?",
        "Never mind.",
        updated_at="2026-03-02T10:00:00Z",
    )
    estate_builder.write()
    second = scout("sweep", "--json", config=config).json()
    assert second["issues_read"] == 1 and second["references"] == 0
    assert scout("signposts", "--status", "all", "--json", config=config).json() == []
    db = sqlite3.connect(estate_builder.root.parent / "scout.db")
    assert db.execute("select count(*) from passages where origin = 'signpost'").fetchone() == (0,)


def test_deleting_a_signposted_file_upstream_withdraws_it_on_the_next_sweep(
    estate_builder: EstateBuilder, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    repo, _body = _small_estate(estate_builder)
    config = write_config()
    scout("index", config=config)
    assert scout("sweep", "--json", config=config).json()["accepted"] == 1
    repo.commit({"src/export.py": None}, "remove the exporter")
    second = scout("sweep", "--json", config=config).json()
    assert second["withdrawn"] == 1 and second["issues_read"] == 0
    rows = scout("signposts", "--status", "withdrawn", "--json", config=config).json()
    assert len(rows) == 1 and rows[0]["status"] == "withdrawn" and rows[0]["check"] == "resolves"
    assert "does not exist at the head" in rows[0]["reason"] and rows[0]["withdrawn_at"]
    db = sqlite3.connect(estate_builder.root.parent / "scout.db")
    assert db.execute("select count(*) from passages where origin = 'signpost'").fetchone() == (0,)


def test_a_moved_head_rereads_surviving_targets_at_the_new_sha(
    estate_builder: EstateBuilder, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    repo, _body = _small_estate(estate_builder)
    config = write_config()
    scout("index", config=config)
    scout("sweep", config=config)
    new_sha = repo.commit({"README.md": "# Tool\n\nThe tool exports ledgers, quickly.\n"}, "edit")
    result = scout("sweep", "--json", config=config).json()
    assert result["revalidated"] == 1 and result["withdrawn"] == 0
    db = sqlite3.connect(estate_builder.root.parent / "scout.db")
    shas = db.execute("select distinct sha from passages where origin = 'signpost'").fetchall()
    assert shas == [(new_sha,)]


def test_two_sweeps_cannot_run_at_once(tmp_path: Path, scout: Callable[..., Result]) -> None:
    import fcntl

    config = _demo(tmp_path)
    scout("index", config=config)
    with open(tmp_path / "scout.db.sweep.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        handle.write("4242")
        handle.flush()
        blocked = scout("sweep", config=config)
    assert blocked.code == 7
    assert blocked.stdout == ""
    assert "another sweep is running" in blocked.stderr and blocked.stderr.count("\n") == 1
    assert scout("sweep", config=config).code == 0


def test_the_worker_runs_cycles_on_an_interval_and_stops_on_sigterm(tmp_path: Path) -> None:
    config = _demo(tmp_path)
    text = config.read_text().replace('schedule = "*/30 * * * *"', 'schedule = "1s"')
    config.write_text(text)
    process = subprocess.Popen(
        [sys.executable, "-m", "scout", "--config", str(config), "worker", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    cycles = 0
    lines: list[str] = []
    assert process.stderr is not None
    while time.monotonic() < deadline and cycles < 2:
        line = process.stderr.readline()
        lines.append(line)
        cycles += " done in " in line
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=15)
    assert cycles == 2, "".join(lines)
    assert process.returncode == 0, err
    assert json.loads(out)["cycles"] >= 2


def test_worker_once_runs_one_cycle(tmp_path: Path, scout: Callable[..., Result]) -> None:
    config = _demo(tmp_path)
    result = scout("worker", "--once", "--json", config=config)
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["index"]["projects_indexed"] == 3 and body["sweep"]["references"] > 20


@pytest.mark.parametrize(
    ("command", "schedule"), [("worker", "every tuesday"), ("gaps", "0m"), ("sweep", "61 * * * *")]
)
def test_a_bad_schedule_is_a_config_error_for_every_command(
    tmp_path: Path, scout: Callable[..., Result], command: str, schedule: str
) -> None:
    config = _demo(tmp_path)
    config.write_text(config.read_text().replace('"*/30 * * * *"', json.dumps(schedule)))
    result = scout(command, config=config)
    assert result.code == 3 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and f"{config}: ingest.schedule: " in result.stderr


@pytest.mark.slow
def test_the_canary_planted_in_issues_never_reaches_the_store_or_an_answer(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = _demo(tmp_path, canary=CANARY)
    assert scout("index", config=config).code == 0
    swept = scout("sweep", "--json", config=config)
    assert swept.code == 0 and swept.json()["references"] > 20
    outputs = [swept.stdout, swept.stderr]
    for question in (
        "How often are deploy keys rotated?",
        "How are FX rates rounded in the ledger, and why?",
    ):
        answer = scout("ask", question, "--json", config=config)
        outputs += [answer.stdout, answer.stderr]
    outputs.append(scout("signposts", "--status", "all", "--json", config=config).stdout)
    for output in outputs:
        assert CANARY not in output
    for name in ("scout.db", "scout.db-wal"):
        path = tmp_path / name
        if path.exists():
            assert CANARY.encode() not in path.read_bytes()
    conn = sqlite3.connect(tmp_path / "scout.db")
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    assert CANARY.encode() not in (tmp_path / "scout.db").read_bytes()


def test_the_canary_is_never_inside_a_prompt_passage_of_a_model_provider(
    tmp_path: Path, scout: Callable[..., Result], claude_bin: Path
) -> None:
    """With a model provider, issue text may be the addresses check's question, never a passage."""
    config = _demo(tmp_path, canary=CANARY)
    config.write_text(
        config.read_text().replace('provider = "offline"', 'provider = "claude-local"')
    )
    assert scout("index", config=config).code == 0
    swept = scout("sweep", "--json", config=config)
    assert swept.code == 0, swept.stderr
    answer = scout("ask", "How are FX rates rounded in the ledger?", "--json", config=config)
    assert answer.code == 0 and CANARY not in answer.stdout
    calls = recorded(claude_bin)
    assert len(calls) > 10
    fenced = re.compile(r"-----BEGIN PASSAGE (\d+ \w+)-----.*?-----END PASSAGE \1-----", re.DOTALL)
    questions_with_canary = 0
    # a search-terms call holds the question alone, and no issue text
    assert all(CANARY not in c["stdin"] for c in calls if c not in with_passages(calls))
    for call in with_passages(calls):
        prompt = call["stdin"] + " ".join(call["argv"])
        passages = fenced.findall(prompt)
        for block in fenced.finditer(prompt):
            assert CANARY not in block.group(0)
        assert passages
        questions_with_canary += CANARY in fenced.sub("", prompt)
    assert questions_with_canary >= 1  # the issue was the question, outside the fences
