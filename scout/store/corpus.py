"""Projects as last indexed, their passages, and full-text search over them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from scout.errors import StoreError
from scout.records import PassageHit, PassageRecord
from scout.store.base import Connected
from scout.store.records import (
    PASSAGE_COLUMNS,
    PASSAGE_FIELDS,
    PROJECT_COLUMNS,
    ProjectRow,
    by_name,
    passage_from_row,
    project_from_row,
)


class Corpus(Connected):
    """The corpus half of the store: what ``scout index`` writes and ``scout ask`` reads."""

    def projects(self) -> dict[str, ProjectRow]:
        rows = self._db.execute(f"select {PROJECT_COLUMNS} from projects order by path").fetchall()
        return {row.path: row for row in map(project_from_row, rows)}

    def replace_project(
        self,
        project: ProjectRow,
        passages: Iterable[PassageRecord],
    ) -> int:
        """Replace a project's corpus passages and record its indexed sha, all or nothing."""
        count = 0
        with self.transaction():
            self._db.execute(
                "delete from passages where project = ? and origin = 'corpus'", [project.path]
            )
            for record in passages:
                self._insert_passage(record)
                count += 1
            self._db.execute(
                "insert or replace into projects (path, visibility, archived, default_branch, "
                "web_url, indexed_sha, indexed_at, rules) values (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    project.path,
                    project.visibility,
                    int(project.archived),
                    project.default_branch,
                    project.web_url,
                    project.indexed_sha,
                    project.indexed_at,
                    project.rules,
                ],
            )
        return count

    def remove_project(self, path: str) -> int:
        """Forget a project that no longer qualifies: its row and every passage read from it."""
        with self.transaction():
            removed = self._db.execute("delete from passages where project = ?", [path]).rowcount
            self._db.execute("delete from projects where path = ?", [path])
        return int(removed)

    def insert_passages(self, records: Iterable[PassageRecord]) -> int:
        count = 0
        with self.transaction():
            for record in records:
                self._insert_passage(record)
                count += 1
        return count

    def passage_count(self, origin: str | None = None) -> int:
        if origin is None:
            return int(self._db.execute("select count(*) from passages").fetchone()[0])
        return int(
            self._db.execute("select count(*) from passages where origin = ?", [origin]).fetchone()[
                0
            ]
        )

    def passages(self, project: str | None = None) -> list[PassageRecord]:
        """Every passage (of one project), in a stable order: for tests, audits and reports."""
        where, args = ("where project = ?", [project]) if project else ("", [])
        rows = self._db.execute(
            f"select {PASSAGE_COLUMNS} from passages {where} "
            "order by project, path, line_start, origin, id",
            args,
        ).fetchall()
        return [passage_from_row(row) for row in rows]

    def search(self, match: str, limit: int, *, heading_weight: float) -> list[PassageHit]:
        """Top passages for an FTS5 MATCH expression, BM25 with the heading column weighted.

        ``match`` must come from ``scout.retrieve``: raw user text is not safe here. Ties break
        by row, so that rankings made in parts (``scout.retrieve``) order them the same way.
        The top rows are found first and joined to their passages after, so passage text is
        read for ``limit`` rows, not for every match.
        """
        try:
            top = self._db.execute(
                "select rowid, bm25(passages_fts, ?, 1.0) as score from passages_fts "
                "where passages_fts match ? order by score, rowid limit ?",
                [heading_weight, match, limit],
            ).fetchall()
            if not top:
                return []
            marks = ", ".join("?" for _ in top)
            rows = self._db.execute(
                f"select passages.id, {PASSAGE_COLUMNS} from passages "
                f"where passages.id in ({marks})",
                [rowid for rowid, _ in top],
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed on {self.path}: {exc}") from exc
        found = {row[0]: by_name(PASSAGE_FIELDS, row[1:]) for row in rows}
        return [
            PassageHit(**found[rowid], id=rowid, score=score)
            for rowid, score in top
            if rowid in found
        ]

    def count_matches(self, match: str, cap: int) -> int:
        """How many rows match ``match``, counting no further than ``cap`` (bounded cost)."""
        try:
            row = self._db.execute(
                "select count(*) from (select rowid from passages_fts "
                "where passages_fts match ? limit ?)",
                [match, cap],
            ).fetchone()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed on {self.path}: {exc}") from exc
        return int(row[0])

    def passage_counts(self) -> dict[str, dict[str, int]]:
        """Passages per project and origin (``corpus``, ``signpost``), for reports."""
        counts: dict[str, dict[str, int]] = {}
        for project, origin, n in self._db.execute(
            "select project, origin, count(*) from passages group by project, origin"
        ).fetchall():
            counts.setdefault(project, {"corpus": 0, "signpost": 0})[origin] = int(n)
        return counts
