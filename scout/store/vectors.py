"""Passages' sentence-embedding vectors (``[retrieval.embeddings]``), kept in the store's one file.

Vectors are stored by model and by the hash of the text embedded (``passages.embed_key``), not by
passage row: a project indexed again writes new rows, and its unchanged sections keep their
vectors, so a second ``scout index`` with nothing changed sends nothing. Each vector is one BLOB
of little-endian float32 (measured at 100k passages of 384 dimensions: sqlite-vec needs
``enable_load_extension``, which some CPython builds lack, this machine's among them; a BLOB read
into memory needs nothing). The settings ``embeddings.model`` and ``embeddings.dimension`` record
what the vectors are; a change of either means every passage is embedded again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from scout.errors import StoreError
from scout.records import embed_key
from scout.store.base import Connected

MODEL_SETTING = "embeddings.model"
DIMENSION_SETTING = "embeddings.dimension"


class Vectors(Connected):
    """What indexing writes for dense retrieval, and what the dense stage reads."""

    def vector_model(self) -> tuple[str, int | None] | None:
        """The recorded model and dimension (None: no model recorded yet)."""
        model = self.setting(MODEL_SETTING)
        if model is None:
            return None
        dimension = self.setting(DIMENSION_SETTING)
        return model, int(dimension) if dimension and dimension.isdigit() else None

    def start_vectors(self, model: str, dimension: int | None, *, every: bool = False) -> int:
        """Record ``model`` (and ``dimension``) as what the vectors are, removing every vector of
        another model or dimension (``every``: all of them); how many were removed."""
        with self.transaction():
            removed = self._db.execute(
                "delete from vectors where model != ? or ?", [model, int(every)]
            ).rowcount
            if dimension is not None:
                removed += self._db.execute(
                    "delete from vectors where model = ? and length(vector) != ?",
                    [model, dimension * 4],
                ).rowcount
            self._set(MODEL_SETTING, model)
            self._set(DIMENSION_SETTING, "" if dimension is None else str(dimension))
            self._passages_changed()
        return int(removed)

    def fill_embed_keys(self, batch: int = 2_000) -> int:
        """Give passages written before vectors existed their ``embed_key``; how many."""
        filled = 0
        while True:
            rows = self._db.execute(
                "select id, heading, body from passages where embed_key is null limit ?", [batch]
            ).fetchall()
            if not rows:
                return filled
            with self.transaction():
                self._db.executemany(
                    "update passages set embed_key = ? where id = ?",
                    [(embed_key(heading, body), pid) for pid, heading, body in rows],
                )
                self._passages_changed()
            filled += len(rows)

    def unembedded(self, model: str, after: int, limit: int) -> list[tuple[int, str, str, str]]:
        """Up to ``limit`` passages after row ``after`` with no vector for ``model``, in row
        order (each project's as it was written), as (row id, key, heading, body). Walking on
        from the last row returned reads every row once in a whole pass."""
        rows = self._db.execute(
            "select id, embed_key, heading, body from passages where id > ? and embed_key is "
            "not null and not exists (select 1 from vectors where model = ? and "
            "key = passages.embed_key) order by id limit ?",
            [after, model, limit],
        ).fetchall()
        return [(int(i), str(k), str(h), str(b)) for i, k, h, b in rows]

    def count_unembedded(self, model: str) -> int:
        row = self._db.execute(
            "select count(distinct embed_key) from passages where embed_key is not null and "
            "not exists (select 1 from vectors where model = ? and key = passages.embed_key)",
            [model],
        ).fetchone()
        return int(row[0])

    def save_vectors(self, model: str, vectors: Iterable[tuple[str, bytes]]) -> int:
        """Store (key, float32 bytes) pairs for ``model`` in one transaction; how many."""
        rows = list(vectors)
        with self.transaction():
            self._db.executemany(
                "insert or replace into vectors (model, key, vector) values (?, ?, ?)",
                [(model, key, blob) for key, blob in rows],
            )
            self._passages_changed()
        return len(rows)

    def prune_vectors(self) -> int:
        """Remove the vectors no passage has any more (its section changed or went)."""
        with self.transaction():
            removed = self._db.execute(
                "delete from vectors where not exists ("
                "select 1 from passages where passages.embed_key = vectors.key)"
            ).rowcount
            self._passages_changed()
        return int(removed)

    def vector_count(self, model: str | None = None) -> int:
        if model is None:
            return int(self._db.execute("select count(*) from vectors").fetchone()[0])
        row = self._db.execute("select count(*) from vectors where model = ?", [model]).fetchone()
        return int(row[0])

    def passage_vectors(
        self, model: str, dimension: int, projects: Sequence[str] | None = None
    ) -> list[tuple[int, bytes]]:
        """Every passage's (row id, vector) for ``model`` (vectors of another dimension are
        left out), in row order; with ``projects``, those projects' passages only."""
        where, args = "", []
        if projects is not None:
            where = f" and p.project in ({', '.join('?' for _ in projects)})"
            args = list(projects)
        with self.reading():
            rows = self._db.execute(
                "select p.id, v.vector from passages p join vectors v on v.model = ? and "
                f"v.key = p.embed_key where length(v.vector) = ?{where} order by p.id",
                [model, dimension * 4, *args],
            ).fetchall()
        return [(int(pid), bytes(blob)) for pid, blob in rows]

    def copy_caches(self, other: Path) -> dict[str, int]:
        """Copy the expansion cache and the vectors (with what they are) from the store at
        ``other`` into this one; how many rows of each. A store that cannot be read, or that
        is older than either table, gives nothing: what is copied is only ever a saving."""
        copied = {"expansions": 0, "vectors": 0}
        try:
            self._db.execute("attach database ? as other", [str(other)])
        except StoreError:
            return copied
        try:
            with self.transaction():
                copied["expansions"] = self._db.execute(
                    "insert or ignore into expansion_cache select question, provider, model, "
                    "terms, created_at from other.expansion_cache"
                ).rowcount
                copied["vectors"] = self._db.execute(
                    "insert or ignore into vectors (model, key, vector) "
                    "select model, key, vector from other.vectors"
                ).rowcount
                self._db.execute(
                    "insert or replace into settings select key, value from other.settings "
                    "where key in (?, ?)",
                    [MODEL_SETTING, DIMENSION_SETTING],
                )
                self._passages_changed()
        except StoreError:
            copied = {"expansions": 0, "vectors": 0}
        finally:
            with contextlib.suppress(StoreError):
                self._db.execute("detach database other")
        return {key: max(0, int(n)) for key, n in copied.items()}

    def _set(self, key: str, value: str) -> None:
        self._db.execute("insert or replace into settings (key, value) values (?, ?)", [key, value])
