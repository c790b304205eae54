"""The store's records: what a row of each table is, read back by column name (the passage
itself is in ``scout/records.py``, below the verdict that holds passages).

Column lists are derived from these types, so a field added here is a column read everywhere.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from scout.records import PassageRecord
from scout.verdict import Check, Kind, Status, Verdict, checks_from_json

R = TypeVar("R")


@dataclass(frozen=True)
class ProjectRow:
    path: str
    visibility: str
    archived: bool
    default_branch: str | None
    web_url: str
    indexed_sha: str | None
    indexed_at: str | None
    rules: str | None = None  # fingerprint of the corpus rules and passages format it was read by


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
        """A row selected with ``SIGNPOST_COLUMNS``, mapped by name, names typed."""
        values = by_name(SIGNPOST_FIELDS, row)
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


@dataclass(frozen=True)
class QuestionRow:
    """A logged question's outcome (never passage text), as the gap backlog and costs read it."""

    asked_at: str
    question: str
    outcome: str
    reason: str | None
    provider: str
    passages: int
    latency_ms: int
    input_tokens: int
    output_tokens: int
    usd: float | None
    terms: tuple[str, ...] = ()  # content words: the gap's grouping key
    nearest: tuple[dict[str, Any], ...] = ()  # a decline's best three passages (no text)
    cause: str | None = None  # why a decline is not a gap: ``index_empty``
    # a model's suggested terms retrieval searched with; None: expansion was off
    expanded: tuple[str, ...] | None = None
    # who asked, hashed (``QuestionLog.log_question``); None: logged before askers were kept
    asker: str | None = None


@dataclass(frozen=True)
class SweepStatus:
    """Where the sweep stands: its cursors (scope -> issues updated up to), issues known, when it
    last read an issue and last judged a signpost."""

    cursors: dict[str, str]
    issues: int
    last_read_at: str | None
    last_checked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "cursors": dict(self.cursors),
            "issues": self.issues,
            "last_read_at": self.last_read_at,
            "last_checked_at": self.last_checked_at,
        }


def field_names(record: type[Any]) -> tuple[str, ...]:
    """The fields of a record type, in order: the columns it is read from."""
    return tuple(f.name for f in fields(record))


def by_name(names: Sequence[str], row: sqlite3.Row | Sequence[Any]) -> dict[str, Any]:
    """A selected row as {column: value}, for columns selected in ``names`` order."""
    return dict(zip(names, row, strict=True))


PASSAGE_FIELDS = field_names(PassageRecord)
PASSAGE_COLUMNS = ", ".join(f"passages.{name}" for name in PASSAGE_FIELDS)
PROJECT_FIELDS = field_names(ProjectRow)
PROJECT_COLUMNS = ", ".join(PROJECT_FIELDS)
ISSUE_FIELDS = field_names(IssueRow)
ISSUE_COLUMNS = ", ".join(ISSUE_FIELDS)
SIGNPOST_FIELDS = field_names(SignpostRow)
SIGNPOST_COLUMNS = ", ".join(SIGNPOST_FIELDS)
QUESTION_FIELDS = field_names(QuestionRow)
QUESTION_COLUMNS = ", ".join(QUESTION_FIELDS)


def passage_from_row(row: sqlite3.Row | Sequence[Any]) -> PassageRecord:
    return PassageRecord(**by_name(PASSAGE_FIELDS, row))


def project_from_row(row: sqlite3.Row | Sequence[Any]) -> ProjectRow:
    values = by_name(PROJECT_FIELDS, row)
    values["archived"] = bool(values["archived"])
    return ProjectRow(**values)
