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
from scout.store.questions import QuestionLog
from scout.store.records import IssueRow, ProjectRow, QuestionRow, SignpostRow, SweepStatus
from scout.store.schema import BUSY_TIMEOUT_MS, MIGRATIONS, connect, migrate, schema_version
from scout.store.sweep import SweepState


def now() -> str:
    """The current time in the store's format, which is Scout's one format (``scout.timefmt``)."""
    return timefmt.now()


class Store(Corpus, SweepState, QuestionLog):
    """A Scout database. Open with :meth:`open`; every read and write goes through its methods."""

    @classmethod
    def open(cls, path: Path, *, create: bool = False) -> Store:
        """Open (and migrate) the store; without ``create`` a missing file is a StoreError."""
        path = Path(path)
        if not path.exists() and not create:
            raise StoreError(f"no index at {path}: run `scout index` first")
        if not create and path.is_file() and path.stat().st_size == 0:
            # An empty file is no index; opening it would turn it into an empty store that
            # declines every question as "nothing matched".
            raise StoreError(f"{path} holds no Scout index: run `scout index` first")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path)
            store = cls(conn, path)
            if not create and schema_version(conn) == 0:
                # a database that never held an index (some other SQLite file) is no index either
                conn.close()
                raise StoreError(f"{path} holds no Scout index: run `scout index` first")
            migrate(conn, path)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        return store

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return schema_version(self._db)


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
