"""Projects as last indexed, their passages, and full-text search over them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from scout.errors import StoreDamaged, StoreError
from scout.records import PassageHit, PassageRecord
from scout.store.base import Connected, passage_words
from scout.store.faults import DAMAGED_HELP
from scout.store.records import (
    PASSAGE_COLUMNS,
    PASSAGE_FIELDS,
    PROJECT_COLUMNS,
    ProjectRow,
    by_name,
    passage_from_row,
    project_from_row,
)

# The third column, the words of a passage's identifiers (``scout.identifiers``), weighs as its
# body: measured on realdocs-dev's tune questions, 0.5 and 1.0 ranked alike and 2.0 lower.
WORDS_WEIGHT = 1.0
# What a connection keeps of the passages between questions (``Connected.derived``): a word's
# row count (its key a query literal of at most a few hundred characters: a few megabytes at
# most) and a scope's clause (as large as its list of projects, so fewer of them).
MAX_COUNTS = 10_000
MAX_SCOPES = 64


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
        records = list(passages)
        words = passage_words(records)
        count = 0
        with self.transaction():
            self._db.execute(
                "delete from passages where project = ? and origin = 'corpus'", [project.path]
            )
            for record, found in zip(records, words, strict=True):
                self._insert_passage(record, found)
                count += 1
            self._passages_changed()
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
            self._passages_changed()
            self._db.execute("delete from projects where path = ?", [path])
        return int(removed)

    def insert_passages(self, records: Iterable[PassageRecord]) -> int:
        batch = list(records)
        words = passage_words(batch)
        count = 0
        with self.transaction():
            for record, found in zip(batch, words, strict=True):
                self._insert_passage(record, found)
                count += 1
            self._passages_changed()
        return count

    def passage_count(self, origin: str | None = None) -> int:
        if origin is None:
            return self.derived(
                "passages",
                None,
                lambda: int(self._db.execute("select count(*) from passages").fetchone()[0]),
                most=1,
            )
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

    def search(
        self,
        match: str,
        limit: int,
        *,
        heading_weight: float,
        projects: tuple[str, ...] | None = None,
    ) -> list[PassageHit]:
        """Top passages for an FTS5 MATCH expression, BM25 with the heading column weighted.

        ``match`` must come from ``scout.retrieve``: raw user text is not safe here. Ties break
        by row, so that rankings made in parts (``scout.retrieve``) order them the same way.
        The top rows are found first and joined to their passages after, so passage text is
        read for ``limit`` rows, not for every match. ``projects`` (exact paths) limits the
        rows to those projects' passages; BM25's statistics stay the whole index's. Both reads
        see one snapshot, so a row the full-text index names and the passages table lacks is
        damage, never a race with a writer: it is StoreDamaged, not a shorter list to answer from.
        """
        try:
            with self.reading():
                within, args = self._within(projects)
                return self._search(match, limit, heading_weight, within, args)
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed on {self.path}: {exc}") from exc

    def _search(
        self, match: str, limit: int, heading_weight: float, within: str, args: list[object]
    ) -> list[PassageHit]:
        top = self._db.execute(
            f"select rowid, bm25(passages_fts, ?, 1.0, {WORDS_WEIGHT}) as score from passages_fts "
            f"where passages_fts match ? {within} order by score, rowid limit ?",
            [heading_weight, match, *args, limit],
        ).fetchall()
        if not top:
            return []
        marks = ", ".join("?" for _ in top)
        rows = self._db.execute(
            f"select passages.id, {PASSAGE_COLUMNS} from passages where passages.id in ({marks})",
            [rowid for rowid, _ in top],
        ).fetchall()
        found = {row[0]: by_name(PASSAGE_FIELDS, row[1:]) for row in rows}
        missing = [rowid for rowid, _ in top if rowid not in found]
        if missing:
            raise StoreDamaged(
                f"store {self.path} is damaged (its full-text index names passage(s) "
                f"{missing[:5]} that its passages table lacks): {DAMAGED_HELP}"
            )
        return [
            PassageHit(**found[rowid], id=rowid, score=score)
            for rowid, score in top
            if rowid in found
        ]

    def passage_ids(self, projects: tuple[str, ...]) -> list[int]:
        """The row ids of ``projects``' passages."""
        marks = ", ".join("?" for _ in projects)
        rows = self._db.execute(
            f"select id from passages where project in ({marks})", list(projects)
        ).fetchall()
        return [int(pid) for (pid,) in rows]

    def passages_by_id(self, ids: list[int]) -> list[PassageHit]:
        """The passages of row ``ids`` (those that exist), in no particular order."""
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        rows = self._db.execute(
            f"select passages.id, {PASSAGE_COLUMNS} from passages where passages.id in ({marks})",
            ids,
        ).fetchall()
        return [PassageHit(**by_name(PASSAGE_FIELDS, row[1:]), id=row[0]) for row in rows]

    def count_matches(
        self, match: str, cap: int, *, projects: tuple[str, ...] | None = None
    ) -> int:
        """How many rows match ``match`` (in ``projects``), counting no further than ``cap``.

        Kept until the passages change (:meth:`derived`): a common word costs its whole list of
        rows to count, and the askers of one estate use the same words question after question.
        """
        within, args = self._within(projects)

        def count() -> int:
            try:
                row = self._db.execute(
                    "select count(*) from (select rowid from passages_fts "
                    f"where passages_fts match ? {within} limit ?)",
                    [match, *args, cap],
                ).fetchone()
            except sqlite3.OperationalError as exc:
                raise StoreError(f"search failed on {self.path}: {exc}") from exc
            return int(row[0])

        return self.derived("count", (match, cap, projects), count, most=MAX_COUNTS)

    def project_names(self, globs: Iterable[str] = ()) -> tuple[str, ...]:
        """The projects that have passages, in path order; with ``globs``, those whose full path
        matches one of them (SQLite GLOB: ``*``, ``?``, ``[...]``, case-sensitive)."""
        patterns = list(globs)
        where = " or ".join("name glob ?" for _ in patterns) or "1"
        # A skip-scan of the passages_project index: one probe per project, not one per row.
        rows = self._db.execute(
            "with recursive p(name) as (select min(project) from passages union all "
            "select (select min(project) from passages where project > p.name) from p "
            f"where p.name is not null) select name from p where name is not null and ({where})",
            patterns,
        ).fetchall()
        return tuple(name for (name,) in rows)

    def _within(self, projects: tuple[str, ...] | None) -> tuple[str, list[object]]:
        """The clause that keeps a MATCH to ``projects``' rows (worked out once for the
        passages as they are: :meth:`derived`)."""
        if projects is None:
            return "", []
        return self.derived("scope", projects, lambda: self._runs_clause(projects), most=MAX_SCOPES)

    def _runs_clause(self, projects: tuple[str, ...]) -> tuple[str, list[object]]:
        """The clause that keeps a MATCH to ``projects``' rows.

        A project's passages are written in one transaction, so their ids are usually one run:
        then the clause is a test of the rowid against those runs, which costs nothing per
        row. Otherwise (signposted passages in between) the project's ids are looked up."""
        runs: list[tuple[int, int]] = []
        for project in projects:
            low, high, count = self._db.execute(
                "select min(id), max(id), count(*) from passages where project = ?", [project]
            ).fetchone()
            if count and high - low + 1 != count:
                marks = ", ".join("?" for _ in projects)
                clause = f"and +rowid in (select id from passages where project in ({marks}))"
                return clause, list(projects)
            if count:
                runs.append((int(low), int(high)))
        if not runs:
            return "and 0", []
        merged: list[list[int]] = []
        for low, high in sorted(runs):
            if merged and low == merged[-1][1] + 1:  # neighbouring projects: one run
                merged[-1][1] = high
            else:
                merged.append([low, high])
        bounds: list[object] = [bound for run in merged for bound in run]
        if len(merged) == 1:
            # One run: a rowid range FTS5 itself honours, reading only that part of each list.
            return "and rowid between ? and ?", bounds
        tests = " or ".join("+rowid between ? and ?" for _ in merged)
        return f"and ({tests})", bounds

    def passage_counts(self) -> dict[str, dict[str, int]]:
        """Passages per project and origin (``corpus``, ``signpost``), for reports."""
        counts: dict[str, dict[str, int]] = {}
        for project, origin, n in self._db.execute(
            "select project, origin, count(*) from passages group by project, origin"
        ).fetchall():
            counts.setdefault(project, {"corpus": 0, "signpost": 0})[origin] = int(n)
        return counts

    def scores(self, match: str, ids: Iterable[int], *, heading_weight: float) -> dict[int, float]:
        """The BM25 scores of the rows ``ids`` for ``match`` (rows it does not match are left
        out): re-scoring a ranked pool by part of its query (``scout.retrieve``)."""
        wanted = list(ids)
        if not wanted:
            return {}
        marks = ", ".join("?" for _ in wanted)
        try:
            rows = self._db.execute(
                f"select rowid, bm25(passages_fts, ?, 1.0, {WORDS_WEIGHT}) from passages_fts "
                f"where passages_fts match ? and +rowid in ({marks})",
                [heading_weight, match, *wanted],
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed on {self.path}: {exc}") from exc
        return {int(rowid): float(score) for rowid, score in rows}
