"""Sweep state: issues as last read, signpost verdicts, their targets' passages, cursors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from scout import timefmt
from scout.records import PassageRecord
from scout.store.base import Connected, passage_words
from scout.store.records import (
    ISSUE_COLUMNS,
    ISSUE_FIELDS,
    PASSAGE_COLUMNS,
    SIGNPOST_COLUMNS,
    IssueRow,
    SignpostRow,
    SweepStatus,
    by_name,
    passage_from_row,
)
from scout.verdict import Verdict


class SweepState(Connected):
    """The signpost half of the store: what ``scout sweep`` writes and the audit reads."""

    def cursor(self, scope: str) -> str | None:
        row = self._db.execute("select value from cursors where scope = ?", [scope]).fetchone()
        return str(row[0]) if row else None

    def issue(self, project: str, iid: int) -> IssueRow | None:
        row = self._db.execute(
            f"select {ISSUE_COLUMNS} from issues where project = ? and iid = ?",
            [project, iid],
        ).fetchone()
        if row is None:
            return None
        values = by_name(ISSUE_FIELDS, row)
        values["refs"] = tuple(json.loads(values["refs"]))
        return IssueRow(**values)

    def save_issue(
        self,
        issue: IssueRow,
        verdicts: list[Verdict],
        passages: dict[str, Sequence[PassageRecord]],
        cursor: tuple[str, str] | None,
    ) -> None:
        """Replace one issue's verdicts, its targets' passages and the sweep cursor, atomically.

        Verdicts of references the issue no longer contains disappear; a verdict seen before
        keeps its id and first-seen time. Targets no accepted verdict names any more lose their
        passages. A crash before the commit leaves the previous state and the old cursor, so the
        next sweep reads this issue again and ends exactly where an uninterrupted sweep would.
        """
        with self.transaction():
            self._db.execute(
                "insert or replace into issues (project, iid, web_url, updated_at, refs, read_at) "
                "values (?, ?, ?, ?, ?, ?)",
                [
                    issue.project,
                    issue.iid,
                    issue.web_url,
                    issue.updated_at,
                    json.dumps(list(issue.refs)),
                    timefmt.now(),
                ],
            )
            keep = [v.reference for v in verdicts]
            marks = ", ".join("?" for _ in keep)
            self._db.execute(
                "delete from signposts where issue_project = ? and issue_iid = ?"
                + (f" and reference not in ({marks})" if keep else ""),
                [issue.project, issue.iid, *keep],
            )
            for verdict in verdicts:
                self._upsert_signpost(issue, verdict)
            for key, records in passages.items():
                self._replace_target_passages(key, records)
            self._drop_orphan_passages()
            self._db.execute(
                "delete from issue_failures where project = ? and iid = ?",
                [issue.project, issue.iid],
            )
            if cursor is not None:
                self._db.execute(
                    "insert or replace into cursors (scope, value) values (?, ?)", list(cursor)
                )

    def issue_failed(self, project: str, iid: int, updated_at: str, error: str) -> int:
        """Count one more sweep that failed on this issue; how many in a row (same update)."""
        with self.transaction():
            self._db.execute(
                "insert into issue_failures (project, iid, updated_at, failures, error, failed_at) "
                "values (?, ?, ?, 1, ?, ?) on conflict (project, iid) do update set "
                "failures = case when updated_at = excluded.updated_at then failures + 1 else 1 "
                "end, updated_at = excluded.updated_at, error = excluded.error, "
                "failed_at = excluded.failed_at",
                [project, iid, updated_at, error, timefmt.now()],
            )
            row = self._db.execute(
                "select failures from issue_failures where project = ? and iid = ?",
                [project, iid],
            ).fetchone()
        return int(row[0])

    def withdraw(self, signpost_id: int, check: str, reason: str, checks: str) -> None:
        """Withdraw an accepted verdict whose target no longer qualifies; its passages go."""
        stamp = timefmt.now()
        with self.transaction():
            self._db.execute(
                "update signposts set status = 'rejected', check_name = ?, reason = ?, "
                "checks = ?, checked_at = ?, withdrawn_at = ? where id = ?",
                [check, reason, checks, stamp, stamp, signpost_id],
            )
            self._drop_orphan_passages()

    def _upsert_signpost(self, issue: IssueRow, v: Verdict) -> None:
        lines = v.target_lines or (None, None)
        self._db.execute(
            "insert into signposts (issue_project, issue_iid, issue_url, kind, reference, status, "
            "check_name, reason, target_project, target_path, target_line_start, target_line_end, "
            "target_sha, target, reference_json, checks, checked_at, first_seen_at, withdrawn_at) "
            "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null) "
            "on conflict (issue_project, issue_iid, reference) do update set "
            "issue_url = excluded.issue_url, kind = excluded.kind, status = excluded.status, "
            "check_name = excluded.check_name, reason = excluded.reason, "
            "target_project = excluded.target_project, target_path = excluded.target_path, "
            "target_line_start = excluded.target_line_start, "
            "target_line_end = excluded.target_line_end, target_sha = excluded.target_sha, "
            "target = excluded.target, reference_json = excluded.reference_json, "
            "checks = excluded.checks, checked_at = excluded.checked_at, withdrawn_at = null",
            [
                issue.project,
                issue.iid,
                issue.web_url,
                v.kind,
                v.reference,
                v.status,
                v.check,
                v.reason,
                v.target_project,
                v.target_path,
                lines[0],
                lines[1],
                v.target_sha,
                v.target,
                v.reference_json,
                v.checks_json(),
                v.checked_at,
                v.checked_at,
            ],
        )

    def _replace_target_passages(self, key: str, records: Sequence[PassageRecord]) -> None:
        """A target's passages, minus those the corpus already holds at the same sha and lines."""
        self._db.execute("delete from passages where origin = 'signpost' and target = ?", [key])
        self._passages_changed()
        words = passage_words(records)
        for record, found in zip(records, words, strict=True):
            duplicate = self._db.execute(
                "select 1 from passages where origin = 'corpus' and project = ? and path = ? "
                "and sha = ? and line_start <= ? and line_end >= ? limit 1",
                [record.project, record.path, record.sha, record.line_start, record.line_end],
            ).fetchone()
            if duplicate is None:
                self._insert_passage(record, found)

    def _drop_orphan_passages(self) -> None:
        self._db.execute(
            "delete from passages where origin = 'signpost' and target not in "
            "(select target from signposts where status = 'accepted' and target is not null)"
        )
        self._passages_changed()

    def revalidated(
        self,
        signpost_id: int,
        verdict: Verdict,
        passages: Sequence[PassageRecord],
        *,
        withdraw: bool = True,
    ) -> None:
        """Record a re-validation: refreshed passages at the new sha, or a withdrawal.

        ``withdraw=False`` records a rejection that was never accepted (a ``cannot check:``
        verdict checked again) as a plain rejection.
        """
        with self.transaction():
            withdrawn = not verdict.accepted and withdraw
            lines = verdict.target_lines or (None, None)
            self._db.execute(
                "update signposts set status = ?, check_name = ?, reason = ?, target_path = ?, "
                "target_line_start = ?, target_line_end = ?, target_sha = ?, target = ?, "
                "checks = ?, checked_at = ?, withdrawn_at = ? where id = ?",
                [
                    verdict.status,
                    verdict.check,
                    verdict.reason,
                    verdict.target_path,
                    lines[0],
                    lines[1],
                    verdict.target_sha,
                    verdict.target,
                    verdict.checks_json(),
                    verdict.checked_at,
                    verdict.checked_at if withdrawn else None,
                    signpost_id,
                ],
            )
            if verdict.target and not withdrawn:
                self._replace_target_passages(verdict.target, passages)
            self._drop_orphan_passages()

    def signposts(
        self,
        *,
        status: str | None = None,
        check: str | None = None,
        kind: str | None = None,
        project: str | None = None,
        since: str | None = None,
        withdrawn: bool | None = None,
        limit: int | None = None,
        ids: list[int] | None = None,
    ) -> list[SignpostRow]:
        """Verdicts newest first, filtered; ``project`` matches the issue's or the target's."""
        clauses: list[str] = []
        args: list[Any] = []
        for column, value in (("status", status), ("check_name", check), ("kind", kind)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        if project is not None:
            clauses.append("(issue_project = ? or target_project = ?)")
            args += [project, project]
        if since is not None:
            clauses.append("checked_at >= ?")
            args.append(since)
        if withdrawn is not None:
            clauses.append("withdrawn_at is not null" if withdrawn else "withdrawn_at is null")
        if ids is not None:
            clauses.append(f"id in ({', '.join('?' for _ in ids)})")
            args += ids
        where = f"where {' and '.join(clauses)}" if clauses else ""
        tail = f" limit {int(limit)}" if limit else ""
        rows = self._db.execute(
            f"select {SIGNPOST_COLUMNS} from signposts {where} "
            f"order by checked_at desc, id desc{tail}",
            args,
        ).fetchall()
        return [SignpostRow.from_row(row) for row in rows]

    def target_passages(self, key: str) -> list[PassageRecord]:
        rows = self._db.execute(
            f"select {PASSAGE_COLUMNS} from passages where origin = 'signpost' and target = ? "
            "order by path, line_start",
            [key],
        ).fetchall()
        return [passage_from_row(row) for row in rows]

    def sweep_state(self) -> SweepStatus:
        """Where the sweep stands: its cursors, issues known, when it last read and judged."""
        issues, last_read = self._db.execute("select count(*), max(read_at) from issues").fetchone()
        last_check = self._db.execute("select max(checked_at) from signposts").fetchone()[0]
        cursors = self._db.execute("select scope, value from cursors order by scope").fetchall()
        return SweepStatus(
            cursors={scope: value for scope, value in cursors},
            issues=int(issues),
            last_read_at=last_read,
            last_checked_at=last_check,
        )
