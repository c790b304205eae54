"""The expansion cache: a model's search terms for a question, reused while they are fresh.

Only the terms are kept (cleaned literal words, never a reply's text), keyed by the question as
the gap backlog groups it, the provider and the model. Bounded twice: rows older than the age the
config gives are never read and are removed on the next write, and past ``MAX_ROWS`` the oldest
go. A failed write is not the question's problem: the caller decides (a busy store skips it).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from scout import timefmt
from scout.store.base import Connected

MAX_ROWS = 10_000
MAX_TERMS_JSON = 4_096  # a stored list longer than this was not written by Scout: not read


class Expansions(Connected):
    """What expansion reads before calling a model, and writes after."""

    def cached_terms(self, question: str, provider: str, model: str, days: int) -> list[str] | None:
        """The terms stored for this question, provider and model within ``days``, else None."""
        if days <= 0:
            return None
        row = self._db.execute(
            "select terms from expansion_cache where question = ? and provider = ? and model = ? "
            "and created_at >= ?",
            [question, provider, model, _since(days)],
        ).fetchone()
        if row is None or len(row[0]) > MAX_TERMS_JSON:
            return None
        try:
            terms = json.loads(row[0])
        except ValueError:
            return None
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            return None
        return terms

    def cache_terms(
        self, question: str, provider: str, model: str, terms: list[str], days: int
    ) -> None:
        """Keep ``terms`` for the question (replacing what was kept); drop what is too old, and
        the oldest rows past ``MAX_ROWS``."""
        if days <= 0:
            return
        with self.transaction():
            self._db.execute(
                "insert or replace into expansion_cache (question, provider, model, terms, "
                "created_at) values (?, ?, ?, ?, ?)",
                [question, provider, model, json.dumps(terms, ensure_ascii=False), timefmt.now()],
            )
            self._db.execute("delete from expansion_cache where created_at < ?", [_since(days)])
            self._db.execute(
                "delete from expansion_cache where rowid in (select rowid from expansion_cache "
                "order by created_at desc, rowid desc limit -1 offset ?)",
                [MAX_ROWS],
            )

    def expansion_cache_size(self) -> int:
        return int(self._db.execute("select count(*) from expansion_cache").fetchone()[0])


def _since(days: int) -> str:
    return timefmt.stamp(datetime.now(UTC) - timedelta(days=days))
