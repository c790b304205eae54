"""The SQLite store: the only module that writes SQL.

One database file in WAL mode (readers such as ``scout ask`` never block on a writer and never see a
half-written project: every replacement happens in one short transaction). The schema is built by
the numbered migrations below, applied in order on every open and recorded in ``PRAGMA
user_version``; a database newer than this code is refused rather than guessed at.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scout import timefmt
from scout.errors import StoreError
from scout.verdict import Check, Kind, Status, Verdict, checks_from_json

BUSY_TIMEOUT_MS = 10_000


def now() -> str:
    """The current time in the store's format, which is Scout's one format (``scout.timefmt``)."""
    return timefmt.now()


@dataclass(frozen=True)
class PassageRecord:
    """A passage as written: where it was read (project, path, sha, lines) and what it says."""

    project: str
    path: str
    sha: str
    line_start: int
    line_end: int
    heading: str
    body: str
    source: str  # docs | code
    origin: str  # corpus | signpost
    url: str
    target: str | None = None  # for origin = signpost: the key of the signpost target it belongs to


@dataclass(frozen=True)
class PassageHit(PassageRecord):
    """A passage found by search, with its BM25 score (lower is better) and row id."""

    id: int = 0
    score: float = 0.0


@dataclass(frozen=True)
class ProjectRow:
    path: str
    visibility: str
    archived: bool
    default_branch: str | None
    web_url: str
    indexed_sha: str | None
    indexed_at: str | None
    rules: str | None = None  # fingerprint of the corpus rules the project was indexed under


def _m1_corpus() -> str:
    """Projects as last indexed and their passages, with FTS5 over heading and body.

    The porter stemmer lets "rotating" find "rotate"; remove_diacritics folds accents so questions
    typed without them still match. Triggers keep the external-content FTS table in sync, so no
    code path can forget to update it.
    """
    return """
        create table projects (
            path text primary key,
            visibility text not null,
            archived integer not null default 0,
            default_branch text,
            web_url text not null,
            indexed_sha text,
            indexed_at text
        );
        create table passages (
            id integer primary key,
            project text not null,
            path text not null,
            sha text not null,
            line_start integer not null,
            line_end integer not null,
            heading text not null,
            body text not null,
            source text not null check (source in ('docs', 'code')),
            origin text not null check (origin in ('corpus', 'signpost')),
            url text not null,
            target text
        );
        create index passages_project on passages(project, origin);
        create index passages_target on passages(target);
        create virtual table passages_fts using fts5(
            heading, body, content='passages', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        create trigger passages_ai after insert on passages begin
            insert into passages_fts(rowid, heading, body) values (new.id, new.heading, new.body);
        end;
        create trigger passages_ad after delete on passages begin
            insert into passages_fts(passages_fts, rowid, heading, body)
                values ('delete', old.id, old.heading, old.body);
        end;
        create trigger passages_au after update on passages begin
            insert into passages_fts(passages_fts, rowid, heading, body)
                values ('delete', old.id, old.heading, old.body);
            insert into passages_fts(rowid, heading, body) values (new.id, new.heading, new.body);
        end;
        """


def _m2_questions() -> str:
    """Every question's outcome, for the gap backlog. Never passage text, never answers."""
    return """
        create table questions (
            id integer primary key,
            asked_at text not null,
            question text not null,
            outcome text not null check (outcome in ('answered', 'declined')),
            reason text,
            provider text not null,
            passages integer not null,
            latency_ms integer not null
        );
        create index questions_asked on questions(outcome, asked_at);
        """


def _m3_signposts() -> str:
    """Issue sweep state and signpost verdicts.

    ``issues`` keeps only what docs/design.md invariant 1 allows (project, iid, URL, updated_at and
    the extracted reference strings) so an unchanged issue is recognised without re-reading it.
    ``signposts`` holds one verdict per (issue, reference); accepted ones name a ``target`` key, and
    the target's passages (origin ``signpost``) live as long as one accepted verdict names it.
    ``cursors`` holds each group's sweep position, advanced in the same transaction as the issue.
    """
    return """
        create table issues (
            project text not null,
            iid integer not null,
            web_url text not null,
            updated_at text not null,
            refs text not null,
            read_at text not null,
            primary key (project, iid)
        );
        create table signposts (
            id integer primary key,
            issue_project text not null,
            issue_iid integer not null,
            issue_url text not null,
            kind text not null,
            reference text not null,
            status text not null check (status in ('accepted', 'rejected')),
            check_name text check (check_name in ('corpus_rules', 'resolves', 'addresses')),
            reason text not null,
            target_project text,
            target_path text,
            target_line_start integer,
            target_line_end integer,
            target_sha text,
            target text,
            reference_json text not null,
            checks text not null,
            checked_at text not null,
            first_seen_at text not null,
            withdrawn_at text,
            unique (issue_project, issue_iid, reference)
        );
        create index signposts_status on signposts(status, checked_at);
        create index signposts_target on signposts(target);
        create table cursors (
            scope text primary key,
            value text not null
        );
        """


def _m4_question_cost() -> str:
    """What answering cost: tokens and US dollars per question, as the provider reported them
    (null dollars: the provider's price is unknown). Lets ``scout gaps`` and the report total it."""
    return """
        alter table questions add column input_tokens integer not null default 0;
        alter table questions add column output_tokens integer not null default 0;
        alter table questions add column usd real;
        """


def _m5_issue_failures() -> str:
    """How many sweeps in a row failed on an issue (at one ``updated_at``), and with what error.

    A transient forge failure stops the sweep before the issue, so the next sweep retries it; an
    issue that failed three sweeps in a row is recorded with ``cannot check:`` rejections and
    passed, so one issue can never hold back every issue after it. A saved issue loses its row.
    """
    return """
        create table issue_failures (
            project text not null,
            iid integer not null,
            updated_at text not null,
            failures integer not null,
            error text not null,
            failed_at text not null,
            primary key (project, iid)
        );
        """


def _m6_corpus_rules() -> str:
    """The corpus rules each project was indexed under, and the ones the sweep last checked by.

    A change of rules (a new ``exclude_paths``) must take effect without waiting for a commit:
    ``scout index`` re-reads a project whose fingerprint differs, and the sweep re-checks every
    accepted signpost when ``settings.sweep_rules`` differs from the configured rules.
    """
    return """
        alter table projects add column rules text;
        create table settings (
            key text primary key,
            value text not null
        );
        """


def _m7_one_line_anchor() -> str:
    """File target keys name one line as ``#L13``, like every other anchor, not ``#L13-13``.

    The key is shown by ``scout signposts summary`` and links a target's passages to its verdicts,
    so keys written before the line anchor had one form are rewritten in both places.
    """
    one_line = (
        "target like 'file:%' and target_line_start = target_line_end "
        "and target like '%#L' || target_line_start || '-' || target_line_end"
    )
    short = "substr(target, 1, length(target) - length('-' || target_line_end))"
    return f"""
        update passages set target = (
            select {short} from signposts where signposts.target = passages.target and {one_line}
            limit 1
        )
        where origin = 'signpost' and target in (select target from signposts where {one_line});
        update signposts set target = {short} where {one_line};
        """


MIGRATIONS: list[Callable[[], str]] = [
    _m1_corpus,
    _m2_questions,
    _m3_signposts,
    _m4_question_cost,
    _m5_issue_failures,
    _m6_corpus_rules,
    _m7_one_line_anchor,
]


class Store:
    """A Scout database. Open with :meth:`open`; every read and write goes through its methods."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, path: Path, *, create: bool = False) -> Store:
        """Open (and migrate) the store; without ``create`` a missing file is a StoreError."""
        path = Path(path)
        if not path.exists() and not create:
            raise StoreError(f"no index at {path}: run `scout index` first")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            conn.execute(f"pragma busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("pragma journal_mode = wal")
            conn.execute("pragma synchronous = normal")
            conn.execute("pragma foreign_keys = on")
            store = cls(conn, path)
            store._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        return store

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self.db.execute("pragma user_version").fetchone()[0])

    def _migrate(self) -> None:
        version = self.schema_version
        if version > len(MIGRATIONS):
            raise StoreError(
                f"store {self.path} has schema {version}, newer than this Scout "
                f"({len(MIGRATIONS)}): upgrade Scout"
            )
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            # One script, its own transaction: executescript would commit any open one first,
            # so the schema change and its version number land together or not at all.
            try:
                self.db.executescript(
                    f"begin immediate;\n{migration()}\npragma user_version = {number};\ncommit;"
                )
            except sqlite3.Error:
                if self.db.in_transaction:
                    self.db.execute("rollback")
                raise

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, taken up front (BEGIN IMMEDIATE) so it never fails half-way."""
        conn = self.db
        conn.execute("begin immediate")
        try:
            yield
        except BaseException:
            conn.execute("rollback")
            raise
        else:
            conn.execute("commit")

    # ------------------------------------------------------------------ projects and corpus
    def projects(self) -> dict[str, ProjectRow]:
        rows = self.db.execute(
            "select path, visibility, archived, default_branch, web_url, indexed_sha, indexed_at, "
            "rules from projects order by path"
        ).fetchall()
        return {
            r[0]: ProjectRow(r[0], r[1], bool(r[2]), r[3], r[4], r[5], r[6], r[7]) for r in rows
        }

    def replace_project(
        self,
        project: ProjectRow,
        passages: Iterable[PassageRecord],
    ) -> int:
        """Replace a project's corpus passages and record its indexed sha, all or nothing."""
        count = 0
        with self.transaction():
            self.db.execute(
                "delete from passages where project = ? and origin = 'corpus'", [project.path]
            )
            for record in passages:
                self._insert_passage(record)
                count += 1
            self.db.execute(
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
            removed = self.db.execute("delete from passages where project = ?", [path]).rowcount
            self.db.execute("delete from projects where path = ?", [path])
        return int(removed)

    def insert_passages(self, records: Iterable[PassageRecord]) -> int:
        count = 0
        with self.transaction():
            for record in records:
                self._insert_passage(record)
                count += 1
        return count

    def _insert_passage(self, record: PassageRecord) -> None:
        row = asdict(record)
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self.db.execute(f"insert into passages ({columns}) values ({marks})", list(row.values()))

    def passage_count(self, origin: str | None = None) -> int:
        if origin is None:
            return int(self.db.execute("select count(*) from passages").fetchone()[0])
        return int(
            self.db.execute("select count(*) from passages where origin = ?", [origin]).fetchone()[
                0
            ]
        )

    def passages(self, project: str | None = None) -> list[PassageRecord]:
        """Every passage (of one project), in a stable order: for tests, audits and reports."""
        where, args = ("where project = ?", [project]) if project else ("", [])
        rows = self.db.execute(
            f"select {_PASSAGE_COLUMNS} from passages {where} "
            "order by project, path, line_start, origin, id",
            args,
        ).fetchall()
        return [PassageRecord(*row) for row in rows]

    # ------------------------------------------------------------------ retrieval
    def search(
        self,
        match: str,
        limit: int,
        *,
        heading_weight: float,
        within: str | None = None,
    ) -> list[PassageHit]:
        """Top passages for an FTS5 MATCH expression, BM25 with the heading column weighted.

        ``match`` (and ``within``) must come from ``scout.retrieve``: raw user text is not safe
        here. With ``within``, only rows matching it are ranked, each with its exact ``match``
        score: FTS5's bm25 is a sum of independent per-phrase terms, so the score of
        ``(match) AND (within)`` minus the score of ``within`` is the score of ``match``. That
        scores the rows of the rare terms only, instead of every row of every common term.
        The top rows are found first and joined to their passages after, so passage text is
        read for ``limit`` rows, not for every match.
        """
        bm25 = "bm25(passages_fts, ?, 1.0)"
        try:
            if within is None:
                top = self.db.execute(
                    f"select rowid, {bm25} as score from passages_fts "
                    "where passages_fts match ? order by score limit ?",
                    [heading_weight, match, limit],
                ).fetchall()
            else:
                query = f"select rowid, {bm25} from passages_fts where passages_fts match ?"
                both = self.db.execute(
                    query, [heading_weight, f"({match}) AND ({within})"]
                ).fetchall()
                alone = dict(self.db.execute(query, [heading_weight, within]).fetchall())
                top = sorted(((r, s - alone[r]) for r, s in both), key=lambda x: (x[1], x[0]))
                top = top[:limit]
            if not top:
                return []
            marks = ", ".join("?" for _ in top)
            rows = self.db.execute(
                f"select passages.id, {_PASSAGE_COLUMNS} from passages "
                f"where passages.id in ({marks})",
                [rowid for rowid, _ in top],
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed on {self.path}: {exc}") from exc
        found = {row[0]: (*row[1:], row[0]) for row in rows}
        return [PassageHit(*(*found[rowid], score)) for rowid, score in top if rowid in found]

    def count_matches(self, match: str, cap: int) -> int:
        """How many rows match ``match``, counting no further than ``cap`` (bounded cost)."""
        try:
            row = self.db.execute(
                "select count(*) from (select rowid from passages_fts "
                "where passages_fts match ? limit ?)",
                [match, cap],
            ).fetchone()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"search failed on {self.path}: {exc}") from exc
        return int(row[0])

    def setting(self, key: str) -> str | None:
        row = self.db.execute("select value from settings where key = ?", [key]).fetchone()
        return str(row[0]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction():
            self.db.execute(
                "insert or replace into settings (key, value) values (?, ?)", [key, value]
            )

    def withdraw(self, signpost_id: int, check: str, reason: str, checks: str) -> None:
        """Withdraw an accepted verdict whose target no longer qualifies; its passages go."""
        stamp = now()
        with self.transaction():
            self.db.execute(
                "update signposts set status = 'rejected', check_name = ?, reason = ?, "
                "checks = ?, checked_at = ?, withdrawn_at = ? where id = ?",
                [check, reason, checks, stamp, stamp, signpost_id],
            )
            self._drop_orphan_passages()

    # ------------------------------------------------------------------ issues and signposts
    def cursor(self, scope: str) -> str | None:
        row = self.db.execute("select value from cursors where scope = ?", [scope]).fetchone()
        return str(row[0]) if row else None

    def issue(self, project: str, iid: int) -> IssueRow | None:
        row = self.db.execute(
            "select project, iid, web_url, updated_at, refs from issues "
            "where project = ? and iid = ?",
            [project, iid],
        ).fetchone()
        if row is None:
            return None
        return IssueRow(row[0], row[1], row[2], row[3], tuple(json.loads(row[4])))

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
            self.db.execute(
                "insert or replace into issues (project, iid, web_url, updated_at, refs, read_at) "
                "values (?, ?, ?, ?, ?, ?)",
                [
                    issue.project,
                    issue.iid,
                    issue.web_url,
                    issue.updated_at,
                    json.dumps(list(issue.refs)),
                    now(),
                ],
            )
            keep = [v.reference for v in verdicts]
            marks = ", ".join("?" for _ in keep)
            self.db.execute(
                "delete from signposts where issue_project = ? and issue_iid = ?"
                + (f" and reference not in ({marks})" if keep else ""),
                [issue.project, issue.iid, *keep],
            )
            for verdict in verdicts:
                self._upsert_signpost(issue, verdict)
            for key, records in passages.items():
                self._replace_target_passages(key, records)
            self._drop_orphan_passages()
            self.db.execute(
                "delete from issue_failures where project = ? and iid = ?",
                [issue.project, issue.iid],
            )
            if cursor is not None:
                self.db.execute(
                    "insert or replace into cursors (scope, value) values (?, ?)", list(cursor)
                )

    def issue_failed(self, project: str, iid: int, updated_at: str, error: str) -> int:
        """Count one more sweep that failed on this issue; how many in a row (same update)."""
        with self.transaction():
            self.db.execute(
                "insert into issue_failures (project, iid, updated_at, failures, error, failed_at) "
                "values (?, ?, ?, 1, ?, ?) on conflict (project, iid) do update set "
                "failures = case when updated_at = excluded.updated_at then failures + 1 else 1 "
                "end, updated_at = excluded.updated_at, error = excluded.error, "
                "failed_at = excluded.failed_at",
                [project, iid, updated_at, error, now()],
            )
            row = self.db.execute(
                "select failures from issue_failures where project = ? and iid = ?",
                [project, iid],
            ).fetchone()
        return int(row[0])

    def _upsert_signpost(self, issue: IssueRow, v: Verdict) -> None:
        lines = v.target_lines or (None, None)
        self.db.execute(
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
        self.db.execute("delete from passages where origin = 'signpost' and target = ?", [key])
        for record in records:
            duplicate = self.db.execute(
                "select 1 from passages where origin = 'corpus' and project = ? and path = ? "
                "and sha = ? and line_start <= ? and line_end >= ? limit 1",
                [record.project, record.path, record.sha, record.line_start, record.line_end],
            ).fetchone()
            if duplicate is None:
                self._insert_passage(record)

    def _drop_orphan_passages(self) -> None:
        self.db.execute(
            "delete from passages where origin = 'signpost' and target not in "
            "(select target from signposts where status = 'accepted' and target is not null)"
        )

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
            withdrawn = verdict.status == "rejected" and withdraw
            lines = verdict.target_lines or (None, None)
            self.db.execute(
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
        rows = self.db.execute(
            f"select {_SIGNPOST_COLUMNS} from signposts {where} "
            f"order by checked_at desc, id desc{tail}",
            args,
        ).fetchall()
        return [SignpostRow.from_row(row) for row in rows]

    def target_passages(self, key: str) -> list[PassageRecord]:
        rows = self.db.execute(
            f"select {_PASSAGE_COLUMNS} from passages where origin = 'signpost' and target = ? "
            "order by path, line_start",
            [key],
        ).fetchall()
        return [PassageRecord(*row) for row in rows]

    # ------------------------------------------------------------------ question log
    def log_question(
        self,
        *,
        question: str,
        outcome: str,
        reason: str | None,
        provider: str,
        passages: int,
        latency_ms: int,
        asked_at: str | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        usd: float | None = 0.0,
    ) -> None:
        with self.transaction():
            self.db.execute(
                "insert into questions (asked_at, question, outcome, reason, provider, passages,"
                " latency_ms, input_tokens, output_tokens, usd) "
                "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    asked_at or now(),
                    question,
                    outcome,
                    reason,
                    provider,
                    passages,
                    latency_ms,
                    input_tokens,
                    output_tokens,
                    usd,
                ],
            )

    def questions(
        self, *, outcome: str | None = None, since: str | None = None
    ) -> list[dict[str, Any]]:
        clauses, args = [], []
        if outcome:
            clauses.append("outcome = ?")
            args.append(outcome)
        if since:
            clauses.append("asked_at >= ?")
            args.append(since)
        where = f"where {' and '.join(clauses)}" if clauses else ""
        cursor = self.db.execute(
            "select asked_at, question, outcome, reason, provider, passages, latency_ms, "
            f"input_tokens, output_tokens, usd from questions {where} order by asked_at, id",
            args,
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    # audit reads
    def passage_counts(self) -> dict[str, dict[str, int]]:
        """Passages per project and origin (``corpus``, ``signpost``), for reports."""
        counts: dict[str, dict[str, int]] = {}
        for project, origin, n in self.db.execute(
            "select project, origin, count(*) from passages group by project, origin"
        ).fetchall():
            counts.setdefault(project, {"corpus": 0, "signpost": 0})[origin] = int(n)
        return counts

    def sweep_state(self) -> dict[str, Any]:
        """Where the sweep stands: its cursors, issues known, when it last read and judged."""
        issues, last_read = self.db.execute("select count(*), max(read_at) from issues").fetchone()
        last_check = self.db.execute("select max(checked_at) from signposts").fetchone()[0]
        cursors = self.db.execute("select scope, value from cursors order by scope").fetchall()
        return {
            "cursors": {scope: value for scope, value in cursors},
            "issues": int(issues),
            "last_read_at": last_read,
            "last_checked_at": last_check,
        }


@dataclass(frozen=True)
class IssueRow:
    project: str
    iid: int
    web_url: str
    updated_at: str
    refs: tuple[str, ...]


@dataclass(frozen=True)
class SignpostRow:
    """A stored verdict, as audits read it and as the sweep re-validates it."""

    id: int
    issue_project: str
    issue_iid: int
    issue_url: str
    kind: Kind
    reference: str
    status: Status
    check_name: Check | None
    reason: str
    target_project: str | None
    target_path: str | None
    target_line_start: int | None
    target_line_end: int | None
    target_sha: str | None
    target: str | None
    reference_json: str
    checks: str
    checked_at: str
    first_seen_at: str
    withdrawn_at: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row | tuple[Any, ...]) -> SignpostRow:
        """A row selected with ``_SIGNPOST_COLUMNS``, mapped by name, names typed."""
        values = dict(zip(_SIGNPOST_FIELDS, row, strict=True))
        values["kind"] = Kind(values["kind"])
        values["status"] = Status(values["status"])
        values["check_name"] = Check(values["check_name"]) if values["check_name"] else None
        return cls(**values)

    @property
    def state(self) -> Status:
        """Accepted, rejected, or withdrawn (rejected after having been accepted)."""
        if self.status == Status.REJECTED and self.withdrawn_at:
            return Status.WITHDRAWN
        return self.status

    def verdict(self) -> Verdict:
        """The stored verdict (without passages: they live with the target)."""
        lines = (
            (self.target_line_start, self.target_line_end)
            if self.target_line_start is not None and self.target_line_end is not None
            else None
        )
        return Verdict(
            kind=self.kind,
            reference=self.reference,
            reference_json=self.reference_json,
            status=self.status,
            check=self.check_name,
            reason=self.reason,
            target_project=self.target_project,
            target_path=self.target_path,
            target_lines=lines,
            target_sha=self.target_sha,
            target=self.target,
            checks=checks_from_json(self.checks),
            checked_at=self.checked_at,
        )

    def to_json(self) -> dict[str, Any]:
        """docs/design.md's ``scout signposts --json`` fields (plus ``withdrawn_at``)."""
        lines = (
            [self.target_line_start, self.target_line_end]
            if self.target_line_start is not None
            else None
        )
        return {
            "id": self.id,
            "status": self.status,
            "kind": self.kind,
            "reference": self.reference,
            "issue": {"project": self.issue_project, "iid": self.issue_iid, "url": self.issue_url},
            "target": {
                "project": self.target_project,
                "path": self.target_path,
                "lines": lines,
                "sha": self.target_sha,
            },
            "check": self.check_name,
            "reason": self.reason,
            "checked_at": self.checked_at,
            "withdrawn_at": self.withdrawn_at,
        }


_SIGNPOST_FIELDS = tuple(SignpostRow.__dataclass_fields__)
_SIGNPOST_COLUMNS = ", ".join(_SIGNPOST_FIELDS)

_PASSAGE_COLUMNS = ", ".join(
    f"passages.{name}"
    for name in (
        "project path sha line_start line_end heading body source origin url target".split()
    )
)
