"""The question log: every question's outcome, for the gap backlog (never passage text)."""

from __future__ import annotations

import json

from scout import timefmt
from scout.store.base import Connected
from scout.store.records import QUESTION_COLUMNS, QUESTION_FIELDS, QuestionRow, by_name


class QuestionLog(Connected):
    """What ``scout ask`` records and ``scout gaps`` reads."""

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
        expanded: list[str] | None = None,
    ) -> None:
        with self.transaction():
            self._db.execute(
                "insert into questions (asked_at, question, outcome, reason, provider, passages,"
                " latency_ms, input_tokens, output_tokens, usd, expanded) "
                "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    asked_at or timefmt.now(),
                    question,
                    outcome,
                    reason,
                    provider,
                    passages,
                    latency_ms,
                    input_tokens,
                    output_tokens,
                    usd,
                    None if expanded is None else json.dumps(expanded, ensure_ascii=False),
                ],
            )

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
        return [QuestionRow(**by_name(QUESTION_FIELDS, row)) for row in cursor.fetchall()]

    # audit reads
