"""What every part of the store shares: the connection, the file, and write transactions."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from scout.store.records import PassageRecord


class Connected:
    """Holds the store's connection; the parts of the store are its subclasses."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self.path = path

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, taken up front (BEGIN IMMEDIATE) so it never fails half-way."""
        conn = self._db
        conn.execute("begin immediate")
        try:
            yield
        except BaseException:
            conn.execute("rollback")
            raise
        else:
            conn.execute("commit")

    def _insert_passage(self, record: PassageRecord) -> None:
        """One passage row (its FTS5 entry follows by trigger)."""
        row = asdict(record)
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self._db.execute(f"insert into passages ({columns}) values ({marks})", list(row.values()))
