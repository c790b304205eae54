"""The store's schema and its all-or-nothing writes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scout.errors import StoreError
from scout.store import MIGRATIONS, PassageRecord, ProjectRow, Store, schema


def _passage(n: int, project: str = "acme/a") -> PassageRecord:
    return PassageRecord(
        project,
        f"docs/{n}.md",
        "a" * 40,
        1,
        3,
        f"Heading {n}",
        f"body {n}",
        "docs",
        "corpus",
        f"https://g/{project}/-/blob/{'a' * 40}/docs/{n}.md#L1-3",
    )


def _row(path: str = "acme/a", sha: str = "a" * 40) -> ProjectRow:
    return ProjectRow(
        path, "public", False, "main", f"https://g/{path}", sha, "2026-01-01T00:00:00Z"
    )


def test_a_blank_database_ends_with_the_expected_schema(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db", create=True)
    assert store.schema_version == len(MIGRATIONS)
    store.close()
    db = sqlite3.connect(tmp_path / "s.db")  # the store's own connection is private
    tables = {
        name
        for (name,) in db.execute(
            "select name from sqlite_master where type in ('table', 'trigger') "
            "and name not like 'passages_fts_%' and name not like 'sqlite_%'"
        )
    }
    assert {
        "projects",
        "passages",
        "passages_fts",
        "questions",
        "gap_issues",
        "expansion_cache",
        "vectors",
    } <= tables
    assert [row[1:3] for row in db.execute("pragma table_info(expansion_cache)")] == [
        ("question", "TEXT"),
        ("provider", "TEXT"),
        ("model", "TEXT"),
        ("terms", "TEXT"),
        ("created_at", "TEXT"),
    ]
    assert [row[1:3] for row in db.execute("pragma table_info(vectors)")] == [
        ("id", "INTEGER"),
        ("model", "TEXT"),
        ("key", "TEXT"),
        ("vector", "BLOB"),
    ]
    assert [row[1:3] for row in db.execute("pragma table_info(gap_issues)")] == [
        ("gap", "TEXT"),
        ("links", "TEXT"),
        ("searched_at", "TEXT"),
    ]
    questions = [row[1] for row in db.execute("pragma table_info(questions)")]
    assert questions[-5:] == ["terms", "nearest", "cause", "expanded", "asker"]
    indexes = {row[1] for row in db.execute("pragma index_list(questions)")}
    assert "questions_asked_at" in indexes  # the log is trimmed by age without a scan
    assert db.execute("select length(value) from settings where key = 'asker_salt'").fetchone() == (
        32,
    )
    assert {"passages_ai", "passages_ad", "passages_au"} <= tables
    assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
    columns = {row[1]: row[2] for row in db.execute("pragma table_info(passages)")}
    assert columns == {
        "id": "INTEGER",
        "project": "TEXT",
        "path": "TEXT",
        "sha": "TEXT",
        "line_start": "INTEGER",
        "line_end": "INTEGER",
        "heading": "TEXT",
        "body": "TEXT",
        "source": "TEXT",
        "origin": "TEXT",
        "url": "TEXT",
        "target": "TEXT",
        "words": "TEXT",
        "embed_key": "TEXT",
    }


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    Store.open(tmp_path / "s.db", create=True).close()
    store = Store.open(tmp_path / "s.db")
    assert store.schema_version == len(MIGRATIONS)


def test_a_migration_another_connection_applied_meanwhile_is_not_applied_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store one migration behind, opened by two processes at once (a backup while the first
    # index after an upgrade migrates): both read the old version; the second to take the write
    # lock must find the migration done, not run it again ("duplicate column name").
    db = tmp_path / "s.db"
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", MIGRATIONS[:-1])
        Store.open(db, create=True).close()
    other = schema.connect(db)
    other.execute("begin immediate")  # the first process, holding the lock mid-migration
    waiting = threading.Event()
    failure: list[BaseException] = []
    versions: list[int] = []

    def second() -> None:
        conn = schema.connect(db)  # a connection belongs to the thread that made it
        conn.set_trace_callback(lambda sql: waiting.set() if sql == "begin immediate" else None)
        try:
            schema.migrate(conn, db)
            versions.append(schema.schema_version(conn))
        except BaseException as exc:  # reported by the assertion below
            failure.append(exc)
        finally:
            conn.close()

    thread = threading.Thread(target=second)
    thread.start()
    assert waiting.wait(30), "the second connection never asked for the write lock"
    for statement in schema._statements(MIGRATIONS[-1]()):
        other.execute(statement)
    other.execute(f"pragma user_version = {len(MIGRATIONS)}")
    other.execute("commit")
    thread.join(30)
    other.close()
    assert not thread.is_alive()
    assert (failure, versions) == ([], [len(MIGRATIONS)])


def test_a_first_open_waits_for_another_connection_writing_a_new_file(tmp_path: Path) -> None:
    # A new file is in rollback-journal mode until the first open turns it into WAL; while
    # another connection holds its write lock, SQLite answers that switch BUSY at once, without
    # waiting (its deadlock rule), so two first opens at once failed one of them.
    db = tmp_path / "s.db"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("begin immediate")
    other.execute("create table t(x)")
    modes: list[str] = []
    failure: list[BaseException] = []

    def first_open() -> None:
        try:
            conn = schema.connect(db, busy_timeout=30.0)
            modes.append(conn.execute("pragma journal_mode").fetchone()[0])
            conn.close()
        except BaseException as exc:  # reported by the assertion below
            failure.append(exc)

    thread = threading.Thread(target=first_open)
    thread.start()
    thread.join(0.3)  # the open is under way: before the fix it had failed by now
    other.execute("commit")
    other.close()
    thread.join(30)
    assert (failure, modes) == ([], ["wal"])


def test_stores_opened_by_many_processes_at_once_are_migrated_once(tmp_path: Path) -> None:
    dbs = [tmp_path / f"s{n}.db" for n in range(4)]
    script = (
        "import sys\nfrom pathlib import Path\nfrom scout.store import Store\n"
        "Store.open(Path(sys.argv[1]), create=True).close()\n"
    )
    for db in dbs:
        openers = [
            subprocess.Popen([sys.executable, "-c", script, str(db)], stderr=subprocess.PIPE)
            for _ in range(4)
        ]
        errors = [opener.communicate(timeout=60)[1].decode() for opener in openers]
        assert [opener.returncode for opener in openers] == [0] * 4, errors
        with Store.open(db) as store:
            assert store.schema_version == len(MIGRATIONS)


def test_a_missing_store_is_an_error_unless_created(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="run `scout index` first"):
        Store.open(tmp_path / "none.db")


def test_a_newer_store_is_refused(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute(f"pragma user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this Scout"):
        Store.open(tmp_path / "s.db")


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "s.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="is damaged or not a Scout store"):
        Store.open(tmp_path / "s.db")


def test_a_failed_replacement_keeps_the_previous_passages(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db", create=True)
    store.replace_project(_row(), [_passage(n) for n in range(5)])

    def broken():
        yield _passage(10)
        raise RuntimeError("forge died mid-project")

    with pytest.raises(RuntimeError):
        store.replace_project(_row(sha="b" * 40), broken())
    assert [p.path for p in store.passages()] == [f"docs/{n}.md" for n in range(5)]
    assert store.projects()["acme/a"].indexed_sha == "a" * 40
    assert len(store.search('"heading"', 20, heading_weight=5.0)) == 5


def test_fts_follows_deletes(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db", create=True)
    store.replace_project(_row(), [_passage(n) for n in range(3)])
    store.replace_project(_row("acme/b"), [_passage(7, "acme/b")])
    assert store.remove_project("acme/a") == 3
    hits = store.search('"body"', 10, heading_weight=5.0)
    assert [h.project for h in hits] == ["acme/b"]
    store.close()
    # Read the index itself, not through the store's search (which joins to live passages and so
    # would hide stale index rows): every term of the deleted passages is gone from it.
    db = sqlite3.connect(tmp_path / "s.db")
    live = [r for (r,) in db.execute("select id from passages")]
    indexed = db.execute("select rowid from passages_fts where passages_fts match 'body'")
    assert [r for (r,) in indexed] == live and len(live) == 1
    match = "select rowid from passages_fts where passages_fts match ?"
    assert [db.execute(match, [term]).fetchall() for term in ("0", "1", "2")] == [[], [], []]
    # FTS5 compares the index with its content table and raises if they disagree.
    db.execute("insert into passages_fts(passages_fts) values('integrity-check')")
    db.close()


def test_one_line_file_targets_written_as_a_range_are_rewritten(tmp_path: Path) -> None:
    # A store written before the line anchor had one form: schema 3, keys ending "#L3-3".
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(";".join(m() for m in MIGRATIONS[:3]) + ";pragma user_version = 3;")
    columns = (
        "issue_project, issue_iid, issue_url, kind, reference, status, reason, target_line_start, "
        "target_line_end, target, reference_json, checks, checked_at, first_seen_at"
    )
    rows = [
        ("r1", 3, 3, "file:acme/a:docs/x.md#L3-3"),
        ("r2", 3, 9, "file:acme/a:docs/x.md#L3-9"),
        ("r3", None, None, "file:acme/a:docs/y.md"),
        ("r4", 12, 12, "file:acme/a:docs/L12-12.md#L12-12"),
    ]
    for reference, start, end, target in rows:
        db.execute(
            f"insert into signposts ({columns}) values "
            "('acme/a', 1, 'u', 'file', ?, 'accepted', 'ok', ?, ?, ?, '{}', '[]', 't', 't')",
            [reference, start, end, target],
        )
        db.execute(
            "insert into passages (project, path, sha, line_start, line_end, heading, body, "
            "source, origin, url, target) values "
            "('acme/a', 'docs/x.md', 'a', 1, 2, 'h', 'b', 'docs', 'signpost', 'u', ?)",
            [target],
        )
    db.commit()
    db.close()

    Store.open(path).close()
    db = sqlite3.connect(path)
    expected = [
        "file:acme/a:docs/x.md#L3",
        "file:acme/a:docs/x.md#L3-9",
        "file:acme/a:docs/y.md",
        "file:acme/a:docs/L12-12.md#L12",
    ]
    assert [t for (t,) in db.execute("select target from signposts order by reference")] == expected
    assert [t for (t,) in db.execute("select target from passages order by id")] == expected
    db.close()


def test_the_record_types_name_the_columns_they_are_read_from(tmp_path: Path) -> None:
    # Rows are mapped by name from column lists derived from the records: a field the schema
    # lacks (or a column renamed) must fail here, not shift values into the wrong fields.
    from scout.store.records import (
        ISSUE_FIELDS,
        PASSAGE_FIELDS,
        PROJECT_FIELDS,
        QUESTION_FIELDS,
        SIGNPOST_FIELDS,
    )

    Store.open(tmp_path / "s.db", create=True).close()
    db = sqlite3.connect(tmp_path / "s.db")

    def columns(table: str) -> list[str]:
        return [row[1] for row in db.execute(f"pragma table_info({table})")]

    assert list(SIGNPOST_FIELDS) == columns("signposts")
    # all but the row id, the words only the full-text index reads (scout.identifiers) and
    # the key of the passage's vector (scout.records.embed_key)
    assert list(PASSAGE_FIELDS) == columns("passages")[1:-2]
    assert columns("passages")[-2:] == ["words", "embed_key"]
    assert list(PROJECT_FIELDS) == columns("projects")
    assert list(ISSUE_FIELDS) == columns("issues")[:5]  # read_at is the store's own
    assert list(QUESTION_FIELDS) == columns("questions")[1:]  # all but the row id
    db.close()


def test_the_sweep_status_of_a_new_store_serialises_as_before(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db", create=True) as store:
        assert store.sweep_state().to_json() == {
            "cursors": {},
            "issues": 0,
            "last_read_at": None,
            "last_checked_at": None,
        }


def test_gap_issue_links_keep_only_link_fields(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db", create=True) as store:
        link = {
            "project": "acme/a",
            "iid": 3,
            "url": "https://g/acme/a/-/issues/3",
            "state": "closed",
        }
        store.save_gap_issues("offic wifi", [{**link, "title": "never kept", "description": "no"}])
        store.save_gap_issues("bake bread", [])
        assert store.gap_issues() == {"offic wifi": [link], "bake bread": []}
        store.save_gap_issues("offic wifi", [])  # a later search replaces the links
        assert store.gap_issues()["offic wifi"] == []
    assert b"never kept" not in (tmp_path / "s.db").read_bytes()
