"""The question log: every question's outcome, for the gap backlog (never passage text).

A declined question keeps where retrieval looked (its best three passages' project, path,
heading, lines and url), never what they say; a gap keeps the issue links the forge's search last
found (project, iid, url, state), never an issue's title or text. Who asked is kept as a salted
hash (the salt drawn once per store), never as the key or address itself. The log is bounded:
each question logged trims it to ``[store] question_log_days`` and ``question_log_rows``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from scout import timefmt
from scout.store.base import Connected
from scout.store.records import QUESTION_COLUMNS, QUESTION_FIELDS, QuestionRow, by_name

NEAREST_FIELDS = ("project", "path", "heading", "lines", "url")
LINK_FIELDS = ("project", "iid", "url", "state")
LOCAL_ASKER = "local"  # whoever runs scout ask on this machine: one asker
KEEP_DAYS, KEEP_ROWS = 180, 100_000  # [store] question_log_days and question_log_rows


class QuestionLog(Connected):
    """What ``scout ask`` records and ``scout gaps`` reads."""

    keep_days = KEEP_DAYS
    keep_rows = KEEP_ROWS

    def keep_questions(self, days: int, rows: int) -> None:
        """Bound the question log to ``days`` and ``rows`` from the next question logged."""
        self.keep_days, self.keep_rows = days, rows

    def asker_hash(self, asker: str | None) -> str:
        """``asker`` (a client identity; None: the local user) as the log keeps it."""
        salt = getattr(self, "_asker_salt", None)
        if salt is None:
            salt = self.setting("asker_salt") or ""
            self._asker_salt = salt
        identity = (asker or LOCAL_ASKER).encode("utf-8", "replace")
        return hmac.new(salt.encode(), identity, hashlib.sha256).hexdigest()[:16]

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
        terms: Sequence[str] = (),
        nearest: Sequence[dict[str, Any]] = (),
        cause: str | None = None,
        expanded: Sequence[str] | None = None,
        asker: str | None = None,
    ) -> None:
        """Log one question (``asker``: who asked, hashed here), then trim the log."""
        hashed = self.asker_hash(asker)
        asked_at = asked_at or timefmt.now()
        with self.transaction():
            cursor = self._db.execute(
                "insert into questions (asked_at, question, outcome, reason, provider, passages,"
                " latency_ms, input_tokens, output_tokens, usd, terms, nearest, cause, expanded,"
                " asker) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    asked_at,
                    question,
                    outcome,
                    reason,
                    provider,
                    passages,
                    latency_ms,
                    input_tokens,
                    output_tokens,
                    usd,
                    json.dumps(list(terms), ensure_ascii=False),
                    json.dumps([_only(n, NEAREST_FIELDS) for n in nearest], ensure_ascii=False),
                    cause,
                    None if expanded is None else json.dumps(list(expanded), ensure_ascii=False),
                    hashed,
                ],
            )
            self._trim(asked_at, cursor.lastrowid)

    def _trim(self, asked_at: str, newest: int | None) -> None:
        """Drop rows past the age and row bounds (both by index: no scan of the log); the age
        is counted back from the question just logged (now, unless a caller says otherwise)."""
        oldest = timefmt.stamp(timefmt.parse(asked_at) - timedelta(days=self.keep_days))
        self._db.execute("delete from questions where asked_at < ?", [oldest])
        if newest is not None:
            self._db.execute("delete from questions where id <= ?", [newest - self.keep_rows])

    def questions(
        self, *, outcome: str | None = None, since: str | None = None
    ) -> list[QuestionRow]:
        clauses, args = [], []
        if outcome:
            clauses.append("outcome = ?")
            args.append(outcome)
        if since:
            clauses.append("asked_at >= ?")
            args.append(since)
        where = f"where {' and '.join(clauses)}" if clauses else ""
        cursor = self._db.execute(
            f"select {QUESTION_COLUMNS} from questions {where} order by asked_at, id", args
        )
        rows = []
        for row in cursor.fetchall():
            values = by_name(QUESTION_FIELDS, row)
            # rows logged before the gap loop's migration have neither
            values["terms"] = tuple(_json_list(values["terms"]))
            nearest = _json_list(values["nearest"])
            values["nearest"] = tuple(n for n in nearest if isinstance(n, dict))
            if values["expanded"] is not None:
                values["expanded"] = tuple(str(t) for t in _json_list(values["expanded"]))
            rows.append(QuestionRow(**values))
        return rows

    # the issue links of a gap, keyed by the gap's content-word key

    def save_gap_issues(self, gap: str, links: Sequence[dict[str, Any]]) -> None:
        """Replace the links the forge's search found for ``gap`` (links only, see above)."""
        kept = [_only(link, LINK_FIELDS) for link in links]
        with self.transaction():
            self._db.execute(
                "insert or replace into gap_issues (gap, links, searched_at) values (?, ?, ?)",
                [gap, json.dumps(kept, ensure_ascii=False), timefmt.now()],
            )

    def gap_issues(self) -> dict[str, list[dict[str, Any]]]:
        """Every gap's last found issue links, by gap key."""
        return {
            str(gap): [link for link in _json_list(links) if isinstance(link, dict)]
            for gap, links in self._db.execute("select gap, links from gap_issues")
        }


def _only(record: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    # Only the named fields are ever written: a caller's richer record cannot leak into the log.
    return {name: record.get(name) for name in names}


def _json_list(text: Any) -> list[Any]:
    if not isinstance(text, str):
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []
