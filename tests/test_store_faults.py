"""Store faults as an operator meets them, each the real thing: a write lock held by another
process, a store on a small tmpfs that fills, a file with damaged pages. Each exits with its own
code and a message saying what to do (never exit 1 "internal error", never a rollback error in
place of the cause), and leaves the store as it was.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from tests.helpers.config import render_config
from tests.helpers.run import PIPE, Result, start_cli
from tests.helpers.served import integrity as _integrity

QUESTION = "How do I rotate the vault keys?"
PROJECTS = 60  # in the estate the concurrent-backup test indexes


def _estate(root: Path) -> EstateBuilder:
    builder = EstateBuilder(root)
    docs = builder.project("acme/config")
    docs.commit(
        {
            "README.md": "# Config\n\nWhere the estate's settings live.\n",
            "docs/credentials.md": "# Credentials\n\n## Rotating keys\n\nTo rotate the vault "
            "keys, run `vault rotate --all` from the admin host.\n",
            **{
                f"docs/topic{n}.md": f"# Topic {n}\n\nThe widget{n}qq subsystem frobnicates "
                f"gadget{n}zz records.\n"
                for n in range(30)
            },
        },
        "Docs",
    )
    builder.write()
    return builder


def _config(tmp_path: Path, store: Path, busy_timeout: float = 10.0) -> Path:
    config = tmp_path / "scout.toml"
    config.write_text(
        render_config(
            tmp_path / "estate", store={"path": str(store), "busy_timeout": busy_timeout}
        ),
        encoding="utf-8",
    )
    return config


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(db)
    try:
        return {
            table: sorted(conn.execute(f"select * from {table}").fetchall(), key=repr)
            for table in ("projects", "passages", "questions")
        }
    finally:
        conn.close()


def _indexed(
    tmp_path: Path, scout: Callable[..., Result], *, asked: bool = False
) -> tuple[Path, EstateBuilder]:
    """The estate indexed into tmp_path/scout.db (and one question asked): config, builder."""
    builder = _estate(tmp_path / "estate")
    config = _config(tmp_path, tmp_path / "scout.db")
    assert scout("index", config=config).code == 0
    if asked:
        assert scout("ask", QUESTION, config=config).code == 0
    return config, builder


# ------------------------------------------------------------------------------- busy


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Another process that takes the store's write lock and holds it until told to stop."""
    started: list[subprocess.Popen[str]] = []

    def hold(db: Path) -> subprocess.Popen[str]:
        code = (
            "import sqlite3, sys\n"
            f"conn = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
            "conn.execute('begin immediate')\n"
            "print('held', flush=True)\n"
            "sys.stdin.readline()\n"
            "conn.execute('rollback')\n"
        )
        child = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(child)
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        return child

    yield hold
    for child in started:
        if child.poll() is None:
            child.communicate("\n", timeout=30)


@pytest.mark.parametrize(
    "command",
    [["ask", QUESTION], ["index"]],
    ids=["ask-logging-its-question", "index-replacing-a-project"],
)
def test_a_write_lock_held_past_the_busy_timeout_is_exit_7_naming_the_holder(
    tmp_path: Path,
    scout: Callable[..., Result],
    holder: Callable[[Path], subprocess.Popen[str]],
    command: list[str],
) -> None:
    builder = _estate(tmp_path / "estate")
    db = tmp_path / "scout.db"
    config = _config(tmp_path, db, busy_timeout=0.3)
    assert scout("index", config=config).code == 0
    # a new head, so that index has a project to replace
    builder.project("acme/config").commit({"docs/new.md": "# New\n\nNew words.\n"}, "More")
    before = _rows(db)
    child = holder(db)
    done = scout(*command, config=config)
    assert (done.code, done.stdout) == (7, ""), done.stderr
    assert done.stderr.startswith(f"scout: store {db} is busy: pid {child.pid} (python"), (
        done.stderr
    )
    assert "busy timeout (0.3 s)" in done.stderr and "[store] busy_timeout" in done.stderr
    assert done.stderr.count("\n") == 1
    child.communicate("\n", timeout=30)
    assert _rows(db) == before and _integrity(db) == "ok"
    # once the holder is done, the same command goes through
    assert scout(*command, config=config).code == 0


# ------------------------------------------------------------------------------- full


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs: a device that really fills (root only; skipped where mounting is refused)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int = 0) -> Path:
    """Fill the device of ``folder`` but ``leave`` bytes; the filler file, to free it later."""
    filler = folder / "filler"
    block = b"\0" * 65536
    with open(filler, "wb", buffering=0) as handle:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    handle.write(block[:size])
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        handle.truncate(max(0, handle.tell() - leave))
    return filler


@pytest.mark.parametrize(
    "leave",
    [0, 256 * 1024],
    ids=["no-room-to-open", "room-to-open-but-not-to-write-the-project"],
)
def test_a_full_disk_is_exit_4_naming_the_device_and_the_store_is_as_it_was(
    tmp_path: Path, scout: Callable[..., Result], small_fs: Path, leave: int
) -> None:
    builder = _estate(tmp_path / "estate")
    db = small_fs / "scout.db"
    config = _config(tmp_path, db)
    assert scout("index", config=config).code == 0
    assert scout("ask", QUESTION, config=config).code == 0
    # a large new page: more than the WAL file can take in the space it already has
    words = " ".join(f"term{n}x{n * 7 % 1000}" for n in range(30_000))
    builder.project("acme/config").commit({"docs/big.md": f"# Big\n\n{words}\n"}, "Big docs")
    before = _rows(db)
    filler = _fill(small_fs, leave)
    # with room to open, ask's one-row log write may fit: only index is sure to need more
    commands = [["index"], ["ask", QUESTION], ["sweep"]] if leave == 0 else [["index"]]
    for command in commands:
        done = scout(*command, config=config)
        assert (done.code, done.stdout) == (4, ""), (command, done.stderr)
        assert done.stderr.startswith(f"scout: no space left on the device of {db}: "), done.stderr
        assert "rollback" not in done.stderr and "internal error" not in done.stderr
    filler.unlink()
    assert _integrity(db) == "ok" and _rows(db) == before
    assert scout("index", config=config).code == 0


# ------------------------------------------------------------------------------- damaged


def _damage(db: Path, table: str) -> None:
    """Overwrite every page of ``table`` (or of the index) with garbage, as a bad disk would."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("pragma wal_checkpoint(truncate)")
        size = int(conn.execute("pragma page_size").fetchone()[0])
        pages = [
            int(n) for (n,) in conn.execute("select pageno from dbstat where name = ?", [table])
        ]
    finally:
        conn.close()
    assert pages, table
    with open(db, "r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * size)
            handle.write(bytes((page * 37 + i) % 251 for i in range(size)))


def _damaged_store(
    tmp_path: Path, scout: Callable[..., Result], table: str
) -> tuple[Path, Path, EstateBuilder]:
    config, builder = _indexed(tmp_path, scout, asked=True)  # a question log with a row
    db = tmp_path / "scout.db"
    _damage(db, table)
    return db, config, builder


@pytest.mark.parametrize(
    ("table", "command"),
    [
        ("passages", ["ask", QUESTION]),
        ("passages_fts_data", ["ask", QUESTION]),
        ("questions", ["ask", QUESTION]),
        ("questions", ["gaps"]),
        ("passages", ["search", "rotate vault keys"]),
        ("sqlite_schema", ["ask", QUESTION]),
    ],
    ids=[
        "ask-reaching-damaged-passages",
        "ask-reaching-a-damaged-full-text-index",
        "ask-logging-into-a-damaged-question-log",
        "gaps-reading-a-damaged-question-log",
        "search-reaching-damaged-passages",
        "any-command-on-a-damaged-schema",
    ],
)
def test_a_damaged_store_is_exit_4_naming_the_file_and_the_way_back(
    tmp_path: Path, scout: Callable[..., Result], table: str, command: list[str]
) -> None:
    db, config, _ = _damaged_store(tmp_path, scout, table)
    done = scout(*command, config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert done.stderr.startswith(f"scout: store {db} is damaged"), done.stderr
    assert "scout index --rebuild" in done.stderr and "backup" in done.stderr
    assert done.stderr.count("\n") == 1


def test_index_meeting_damage_mid_run_is_exit_4_not_a_rollback_error(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    db, config, builder = _damaged_store(tmp_path, scout, "passages")
    # the store opens; the damage is met when index deletes the project's old passages
    builder.project("acme/config").commit({"docs/new.md": "# New\n\nNew words.\n"}, "More")
    done = scout("index", config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert done.stderr.startswith(f"scout: store {db} is damaged"), done.stderr
    assert "rollback" not in done.stderr


def test_a_full_text_index_naming_passages_that_are_gone_is_damage_not_a_shorter_answer(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config, _ = _indexed(tmp_path, scout)
    conn = sqlite3.connect(tmp_path / "scout.db")
    # rows lost from the table but not from the index: what a damaged page leaves behind
    conn.execute("drop trigger passages_ad")
    conn.execute("delete from passages where path = 'docs/credentials.md'")
    conn.commit()
    conn.close()
    done = scout("ask", QUESTION, config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert "full-text index names passage(s)" in done.stderr


def test_rebuild_makes_a_fresh_store_and_keeps_the_damaged_one_aside(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    db, config, _ = _damaged_store(tmp_path, scout, "passages")
    damaged = db.read_bytes()
    done = scout("index", "--rebuild", "--json", config=config)
    assert done.code == 0, done.stderr
    result = done.json()
    aside = Path(result["previous"])
    assert aside.parent == db.parent and aside.read_bytes() == damaged
    assert result["projects_indexed"] == 1 and _integrity(db) == "ok"
    asked = scout("ask", QUESTION, "--json", config=config)
    assert asked.code == 0 and asked.json()["outcome"] == "answered"
    assert os.path.exists(db)


# ------------------------------------------------------------------------------- backup


def test_backup_is_a_checked_copy_that_opens_as_a_store(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config, _ = _indexed(tmp_path, scout, asked=True)
    db = tmp_path / "scout.db"
    target = tmp_path / "backups" / "scout-1.db"
    target.parent.mkdir()
    done = scout("backup", str(target), "--json", config=config)
    assert done.code == 0, done.stderr
    result = done.json()
    assert set(result) == {"path", "bytes", "seconds"}
    assert result["path"] == str(target) and result["bytes"] == target.stat().st_size
    assert _rows(target) == _rows(db) and _integrity(target) == "ok"
    assert sorted(p.name for p in target.parent.iterdir()) == ["scout-1.db"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("scout.db", "is the store itself"),
        ("backups", "is a folder"),
        ("missing/dir/b.db", "cannot write the backup"),
    ],
)
def test_backup_to_a_bad_path_is_exit_4_and_writes_nothing(
    tmp_path: Path, scout: Callable[..., Result], target: str, message: str
) -> None:
    config, _ = _indexed(tmp_path, scout)
    db = tmp_path / "scout.db"
    (tmp_path / "backups").mkdir()
    before = db.read_bytes()
    done = scout("backup", str(tmp_path / target), config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert message in done.stderr
    assert db.read_bytes() == before and list((tmp_path / "backups").iterdir()) == []


def test_backup_of_a_damaged_store_is_refused_and_writes_nothing(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    db, config, _ = _damaged_store(tmp_path, scout, "passages")
    target = tmp_path / "b.db"
    done = scout("backup", str(target), config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert done.stderr.startswith(f"scout: store {db} is damaged"), done.stderr
    assert not target.exists() and not list(tmp_path.glob(".b.db*"))


def test_backup_to_a_full_device_is_exit_4_naming_it(
    tmp_path: Path, scout: Callable[..., Result], small_fs: Path
) -> None:
    config, _ = _indexed(tmp_path, scout)
    db = tmp_path / "scout.db"
    _fill(small_fs)
    target = small_fs / "b.db"
    done = scout("backup", str(target), config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert done.stderr.startswith(f"scout: no space left on the device of {target}"), done.stderr
    assert not target.exists() and _integrity(db) == "ok"


def _passages_by_project(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "select project, path, sha, line_start, line_end, body from passages order by 1, 2, 4"
        ).fetchall()
    finally:
        conn.close()
    found: dict[str, list[tuple[object, ...]]] = {}
    for row in rows:
        found.setdefault(str(row[0]), []).append(row)
    return found


@pytest.mark.slow
def test_backups_taken_while_index_writes_each_hold_one_committed_state(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    builder = EstateBuilder(tmp_path / "estate")
    for n in range(PROJECTS):
        pages = {f"docs/p{k}.md": f"# P{n}.{k}\n\nwidget{n}x{k} words.\n" for k in range(15)}
        builder.project(f"acme/p{n:02d}").commit(pages, "Docs")
    builder.write()
    db = tmp_path / "scout.db"
    config = _config(tmp_path, db)
    backups: list[Path] = []
    with start_cli(["--config", str(config), "index"], stderr=PIPE) as index:
        try:
            while index.poll() is None or not backups:
                if not db.exists():
                    continue
                target = tmp_path / f"b{len(backups)}.db"
                done = scout("backup", str(target), config=config)
                if done.code == 4 and "holds no Scout index" in done.stderr:
                    continue  # before the first migration committed
                assert done.code == 0, done.stderr
                backups.append(target)
            _, err = index.communicate(timeout=120)
            assert index.returncode == 0, err
        finally:
            index.kill()
    final = _passages_by_project(db)
    assert len(final) == PROJECTS
    during = [b for b in backups if len(_passages_by_project(b)) < PROJECTS]
    if not during:
        pytest.skip("the index ended before a backup could be taken while it ran")
    for backup in backups:
        assert _integrity(backup) == "ok"
        # every project a backup holds, it holds whole: its passages as the index committed them
        for project, rows in _passages_by_project(backup).items():
            assert rows == final[project], (backup, project)


def test_the_worker_on_a_damaged_store_stops_with_exit_4_instead_of_failing_forever(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    db, config, _ = _damaged_store(tmp_path, scout, "sqlite_schema")
    config.write_text(config.read_text() + '\n[ingest]\nschedule = "1s"\n', encoding="utf-8")
    done = scout("worker", config=config, timeout=120)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert "cycle 1 failed, the worker stops: store " in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"scout: store {db} is damaged")
