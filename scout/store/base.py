"""What every part of the store shares: the connection, the file, and write transactions."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import TypeVar

from scout.errors import StoreError
from scout.identifiers import batch_words
from scout.records import PassageRecord, embed_key
from scout.store.faults import Guarded

# Bumped by every write to the passages or their vectors (``Connected._passages_changed``).
GENERATION_SETTING = "store.generation"
T = TypeVar("T")
# The columns are the record's fields, read by name: dataclasses.asdict deep-copies every value
# and was an eighth of an index's CPU time (2,160 passages: 0.29 s of 2.2 s).
_PASSAGE_COLUMNS = tuple(f.name for f in fields(PassageRecord))
# ``words`` and ``embed_key`` are not fields of the record: what the full-text index holds
# besides the passage's text (``scout.identifiers``) and the key of its vector (``embed_key``),
# worked out here so that no writer can leave them out.
_INSERT_PASSAGE = (
    f"insert into passages ({', '.join(_PASSAGE_COLUMNS)}, words, embed_key)"
    f" values ({', '.join('?' for _ in _PASSAGE_COLUMNS)}, ?, ?)"
)


def passage_words(records: Sequence[PassageRecord]) -> list[str]:
    """Each passage's ``words``, for one batch of them (a project, a signposted file): which
    identifiers are names depends on the batch (``scout.identifiers``)."""
    return batch_words(f"{record.heading}\n{record.body}" for record in records)


class Connected:
    """Holds the store's connection; the parts of the store are its subclasses."""

    def __init__(self, db: Guarded, path: Path) -> None:
        self._db = db
        self.path = path
        self._derived: dict[str, dict[Hashable, object]] = {}
        self._derived_generation = -1
        self._writing = False

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, taken up front (BEGIN IMMEDIATE) so it never fails half-way.

        A failing statement may have ended the transaction already (SQLite rolls back by itself
        on a full disk or an I/O error): the rollback is then skipped, and a rollback that fails
        never replaces the error that caused it.
        """
        conn = self._db
        conn.execute("begin immediate")
        self._writing = True
        try:
            yield
            conn.execute("commit")
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("rollback")
                except StoreError:
                    pass  # the cause below is the error to report
            raise
        finally:
            self._writing = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction (a consistent snapshot across statements), or the caller's."""
        conn = self._db
        if conn.in_transaction:
            yield
            return
        conn.execute("begin")
        try:
            yield
        finally:
            if conn.in_transaction:
                conn.execute("commit")

    def setting(self, key: str) -> str | None:
        """A stored setting (such as the corpus rules the sweep last checked by), or None."""
        row = self._db.execute("select value from settings where key = ?", [key]).fetchone()
        return str(row[0]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction():
            self._db.execute(
                "insert or replace into settings (key, value) values (?, ?)", [key, value]
            )

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Pass every SQL statement the store runs to ``callback`` (None: stop); for tests that
        check which queries a code path takes, without reaching into the connection."""
        self._db.set_trace_callback(callback)

    def refuse_writes(self) -> None:
        """Make this connection read-only (SQLite's ``query_only``): any write through it fails.
        For readers that must never write, such as the server's search and audit threads."""
        self._db.execute("pragma query_only = on")

    def _passages_changed(self) -> None:
        """Count a change of the passages (inside the writer's transaction), so that a reader
        holding what it derived from them (the dense stage's matrix, :meth:`derived`'s facts) knows
        to read again."""
        self._db.execute(
            "insert into settings (key, value) values (?, '1') on conflict (key) do update set "
            "value = cast(cast(value as integer) + 1 as text)",
            [GENERATION_SETTING],
        )

    def generation(self) -> int:
        """How many times the passages or their vectors changed: equal counts, nothing did."""
        value = self.setting(GENERATION_SETTING) or "0"
        return int(value) if value.isdigit() else 0

    def derived(self, family: str, key: Hashable, compute: Callable[[], T], *, most: int) -> T:
        """``compute()``, a fact about the passages, read again only once they changed (by this
        connection or another process: the generation says). A connection keeps at most
        ``most`` facts of a ``family`` (its caller knows how large one is): askers who never
        ask the same thing twice cannot grow it.

        Why: at 100k passages the row count and a project's id runs cost 2 ms each, and every
        question asked for them several times over (a tenth of a long question's time)."""
        if self._writing:
            # Half-way through a write, the generation is bumped before the rows are written:
            # nothing read now may be kept under it (once the write ends, the generation says
            # whether what was kept before still holds: moved on a commit, not on a rollback).
            return compute()
        generation = self.generation()
        if generation != self._derived_generation:
            self._derived.clear()
            self._derived_generation = generation
        facts = self._derived.setdefault(family, {})
        if key not in facts:
            if len(facts) >= most:
                facts.clear()
            facts[key] = compute()
        return facts[key]  # type: ignore[return-value]

    def _insert_passage(self, record: PassageRecord, words: str) -> None:
        """One passage row (its FTS5 entry follows by trigger); ``words`` from
        :func:`passage_words`."""
        self._db.execute(
            _INSERT_PASSAGE,
            [
                *(getattr(record, name) for name in _PASSAGE_COLUMNS),
                words,
                embed_key(record.heading, record.body),
            ],
        )
