"""The schema: numbered migrations, applied in order on every open.

Each migration is a function returning one SQL script, with a docstring saying why it exists. It
runs in its own transaction together with the ``PRAGMA user_version`` that records it, so a
schema change and its number land together or not at all; a database newer than this code is
refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from scout.errors import StoreError

BUSY_TIMEOUT_MS = 10_000


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


def _m8_gap_loop() -> str:
    """What the gap backlog needs to say where an answer should go.

    Each question's content words (``terms``, a JSON list: the gap's grouping key), the best
    three passages retrieval found for a declined one (``nearest``, a JSON list of project, path,
    heading, lines and url: the page a writer would extend), and the ``cause`` of a decline that
    is not a gap (``index_empty``). ``gap_issues`` keeps, per gap, the issue links the forge's
    search last found (project, iid, url, state: links only, never a title or text), so the
    report shows them offline and a run never repeats GitLab's rate-limited searches.
    """
    return """
        alter table questions add column terms text;
        alter table questions add column nearest text;
        alter table questions add column cause text;
        create table gap_issues (
            gap text primary key,
            links text not null,
            searched_at text not null
        );
        """


def _m9_question_expansion() -> str:
    """The terms a model suggested for a question (``[retrieval] expand = "model"``), as a JSON
    list, so a gap can be read with what retrieval searched for; null when expansion was off."""
    return """
        alter table questions add column expanded text;
        """


def _m10_identifier_words() -> str:
    """A third full-text column, ``words``: the words of the passage's camelCase identifiers
    (``scout.identifiers``), so that "open browser" finds ``openBrowser``.

    FTS5 cannot add a column to a table, so the index is made again, from the passages (the
    triggers index ``words`` from now on). Existing passages have none until ``scout index``
    reads their project again, which it does once for every project (``PASSAGES_FORMAT``).
    """
    return """
        alter table passages add column words text not null default '';
        drop trigger passages_ai;
        drop trigger passages_ad;
        drop trigger passages_au;
        drop table passages_fts;
        create virtual table passages_fts using fts5(
            heading, body, words, content='passages', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        insert into passages_fts(passages_fts) values ('rebuild');
        create trigger passages_ai after insert on passages begin
            insert into passages_fts(rowid, heading, body, words)
                values (new.id, new.heading, new.body, new.words);
        end;
        create trigger passages_ad after delete on passages begin
            insert into passages_fts(passages_fts, rowid, heading, body, words)
                values ('delete', old.id, old.heading, old.body, old.words);
        end;
        create trigger passages_au after update on passages begin
            insert into passages_fts(passages_fts, rowid, heading, body, words)
                values ('delete', old.id, old.heading, old.body, old.words);
            insert into passages_fts(rowid, heading, body, words)
                values (new.id, new.heading, new.body, new.words);
        end;
        """


def _m11_expansion_cache() -> str:
    """A model's search terms for a question, kept so that the question asked again (in a chat
    channel, by the next person) costs no second call. Keyed by the question as the gap backlog
    groups it (``scout.words.question_key``), the provider and the model; bounded in rows and
    age by ``scout.store.expansions``."""
    return """
        create table expansion_cache (
            question text not null,
            provider text not null,
            model text not null,
            terms text not null,
            created_at text not null,
            primary key (question, provider, model)
        );
        create index expansion_cache_age on expansion_cache(created_at);
        """


def _m12_vectors() -> str:
    """Sentence-embedding vectors of passages (``[retrieval.embeddings]``), by model and by the
    hash of the text embedded (``scout.records.embed_key``), not by passage: a project indexed
    again gets new passage rows, and its unchanged sections keep their vectors. ``embed_key``
    of passages written before this is filled in by the next ``scout index`` that embeds. A
    rowid table, not WITHOUT ROWID: a vector (1.5 KB at 384 dimensions) is over what an index
    page holds in place and took a page of overflow each (4.7 KB a passage, measured)."""
    return """
        alter table passages add column embed_key text;
        create index passages_embed_key on passages(embed_key);
        create table vectors (
            id integer primary key,
            model text not null,
            key text not null,
            vector blob not null
        );
        create unique index vectors_key on vectors(model, key);
        """


def _m13_question_askers() -> str:
    """Who asked each question, so the gap backlog counts askers, not asks (one asker repeating
    a question must not steer it), and an index to trim the log by age as it grows.

    ``asker`` is a salted hash of the server's client identity (a key's digest or an address;
    the CLI's user is one local asker), never the identity itself; the salt is drawn once per
    store. Rows logged before have none, and count as one asker each, as they counted before.
    """
    return """
        alter table questions add column asker text;
        create index questions_asked_at on questions (asked_at);
        insert or ignore into settings (key, value)
            values ('asker_salt', lower(hex(randomblob(16))));
        """


MIGRATIONS: list[Callable[[], str]] = [
    _m1_corpus,
    _m2_questions,
    _m3_signposts,
    _m4_question_cost,
    _m5_issue_failures,
    _m6_corpus_rules,
    _m7_one_line_anchor,
    _m8_gap_loop,
    _m9_question_expansion,
    _m10_identifier_words,
    _m11_expansion_cache,
    _m12_vectors,
    _m13_question_askers,
]


def connect(path: Path, busy_timeout: float = BUSY_TIMEOUT_MS / 1000) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, with a busy timeout
    (seconds a statement waits for another connection's lock before SQLITE_BUSY)."""
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    conn.execute(f"pragma busy_timeout = {int(busy_timeout * 1000)}")
    _wal(conn, busy_timeout)
    conn.execute("pragma synchronous = normal")
    conn.execute("pragma foreign_keys = on")
    return conn


def _wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """WAL mode, which the file keeps once set. Turning a new (rollback-journal) file into WAL
    while another process does the same can deadlock their locks, and SQLite then answers BUSY
    at once instead of waiting (sqlite3_busy_handler: "could result in a deadlock"): first
    opens of one store at once (a backup as the first index starts) try again until the
    busy timeout, as a wait for the lock would have."""
    if conn.execute("pragma journal_mode").fetchone()[0] == "wal":
        return
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            conn.execute("pragma journal_mode = wal")
            return
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("pragma user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Apply the migrations this database has not had; StoreError if it is newer than the code.

    Another process may be opening the same store (``scout backup`` while a first ``scout index``
    migrates, two first runs at once): each migration re-reads the version under the write lock
    it runs in, so it is applied once, by whichever connection takes the lock first.
    """
    if _check_version(conn, path) == len(MIGRATIONS):
        return  # up to date: no write lock, so opening never waits behind a writer
    while True:
        conn.execute("begin immediate")
        try:
            version = _check_version(conn, path)
            if version == len(MIGRATIONS):
                conn.execute("commit")
                return
            # statement by statement, not executescript, which commits the open transaction
            # first and so would run the migration outside the lock the version was read under
            for statement in _statements(MIGRATIONS[version]()):
                conn.execute(statement)
            conn.execute(f"pragma user_version = {version + 1}")
            conn.execute("commit")
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("rollback")
                except sqlite3.Error:
                    pass  # SQLite may have ended it already: the error raised is the cause
            raise


def _check_version(conn: sqlite3.Connection, path: Path) -> int:
    version = schema_version(conn)
    if version > len(MIGRATIONS):
        raise StoreError(
            f"store {path} has schema {version}, newer than this Scout "
            f"({len(MIGRATIONS)}): upgrade Scout"
        )
    return version


def _statements(script: str) -> list[str]:
    """A migration's script as its statements: a ``;`` ends one only where SQLite says the
    statement is complete (not inside a trigger's body, a string or a comment)."""
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\n;"):
                statements.append(pending)
            pending = ""
    if pending.strip(" \t\n;"):
        raise ValueError(f"migration ends inside a statement: {pending[:80]!r}")
    return statements
