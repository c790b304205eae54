"""The SQLite store: the only package that writes SQL, behind one facade, ``Store``.

One database file in WAL mode (readers such as ``scout ask`` never block on a writer and never see a
half-written project: every replacement happens in one short transaction). Its parts:
``schema`` (numbered migrations, applied on every open), ``records`` (the row types, read by column
name), ``corpus`` (projects, passages, search), ``sweep`` (issues, verdicts, cursors) and
``questions`` (the question log). The connection is private: callers and tests go through methods.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scout import timefmt
from scout.errors import StoreError
from scout.records import PassageHit, PassageRecord
from scout.store.corpus import Corpus
from scout.store.expansions import Expansions
from scout.store.faults import Guarded, store_fault
from scout.store.questions import QuestionLog
from scout.store.records import IssueRow, ProjectRow, QuestionRow, SignpostRow, SweepStatus
from scout.store.schema import BUSY_TIMEOUT_MS, MIGRATIONS, connect, migrate, schema_version
from scout.store.sweep import SweepState
from scout.store.vectors import Vectors


def now() -> str:
    """The current time in the store's format, which is Scout's one format (``scout.timefmt``)."""
    return timefmt.now()


class Store(Corpus, SweepState, QuestionLog, Expansions, Vectors):
    """A Scout database. Open with :meth:`open`; every read and write goes through its methods."""

    @classmethod
    def open(
        cls, path: Path, *, create: bool = False, busy_timeout: float = BUSY_TIMEOUT_MS / 1000
    ) -> Store:
        """Open (and migrate) the store; without ``create`` a missing file is a StoreError.

        Busy, full and damaged stores raise their own StoreErrors (``scout.store.faults``), here
        and at every later statement.
        """
        path = Path(path)
        if not path.exists() and not create:
            raise StoreError(f"no index at {path}: run `scout index` first")
        if not create and path.is_file() and path.stat().st_size == 0:
            # An empty file is no index; opening it would turn it into an empty store that
            # declines every question as "nothing matched".
            raise StoreError(f"{path} holds no Scout index: run `scout index` first")
        conn: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path, busy_timeout)
            if not create and schema_version(conn) == 0:
                # a database that never held an index (some other SQLite file) is no index either
                raise StoreError(f"{path} holds no Scout index: run `scout index` first")
            migrate(conn, path)
            # the schema lives in pages beyond the header: reading it finds a damaged one early
            conn.execute("select count(*) from sqlite_schema").fetchone()
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()
            fault = store_fault(exc, path, busy_timeout)
            if fault is not None:
                raise fault from exc
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        except StoreError:
            if conn is not None:
                conn.close()
            raise
        return cls(Guarded(conn, path, busy_timeout), path)

    def close(self) -> None:
        self._db.close()

    def backup(self, target: Path) -> int:
        """An online, consistent copy of the store at ``target`` (SQLite's backup API), written
        beside it and renamed into place, so ``target`` is never half a copy; its size in bytes.

        A write by another connection restarts the copy (sqlite3_backup_step), so it is copied in
        one step under a read transaction: what it holds is one committed state.
        """
        from scout.store.backup import copy_store

        return copy_store(self._db, target)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return schema_version(self._db.raw)


__all__ = [
    "BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "IssueRow",
    "PassageHit",
    "PassageRecord",
    "ProjectRow",
    "QuestionRow",
    "SignpostRow",
    "Store",
    "SweepStatus",
    "now",
]
