"""A signpost verdict: the one shape validation returns, the store keeps and the audit reads.

The names of checks, reference kinds and statuses are spelled here and nowhere else; they are
``StrEnum`` members, so they compare equal to, and serialise as, the plain strings the store and
the JSON output have always used. The module lives in ``scout/`` because the store writes verdicts;
validation (``signposts/``) builds them and the sweep (``ingest/``) saves them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from scout import timefmt
from scout.records import PassageRecord


class Check(StrEnum):
    """The three checks, in the order they run; a rejection names the one that failed."""

    CORPUS_RULES = "corpus_rules"
    RESOLVES = "resolves"
    ADDRESSES = "addresses"


class Kind(StrEnum):
    """What a reference points at."""

    DOCS_PAGE = "docs_page"
    FILE = "file"
    COMMIT = "commit"
    MERGE_REQUEST = "merge_request"


class Status(StrEnum):
    """A verdict's status. The store keeps accepted or rejected; a withdrawn verdict is a rejected
    one that was accepted before (it has a ``withdrawn_at``), shown as its own state."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"


@dataclass(frozen=True)
class CheckOutcome:
    """One check as it ran: passed or failed, with what it found."""

    check: Check
    ok: bool
    detail: str

    def to_json(self) -> dict[str, str | bool]:
        return {"check": self.check.value, "ok": self.ok, "detail": self.detail}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> CheckOutcome:
        return cls(Check(str(data["check"])), bool(data["ok"]), str(data["detail"]))


@dataclass(frozen=True)
class Verdict:
    """What validation decided about one reference of one issue.

    ``reference`` is the normalised reference string and ``reference_json`` the whole reference as
    the store keeps it (re-validation reads it back). ``target`` is the key that verdicts pointing
    at the same thing share; ``passages`` are what an accepted target contributes (not compared:
    two verdicts are equal when they decided the same).
    """

    kind: Kind
    reference: str
    reference_json: str
    status: Status
    check: Check | None
    reason: str
    target_project: str | None = None
    target_path: str | None = None
    target_lines: tuple[int, int] | None = None
    target_sha: str | None = None
    target: str | None = None
    checks: tuple[CheckOutcome, ...] = ()
    passages: tuple[PassageRecord, ...] = field(default=(), compare=False, repr=False)
    checked_at: str = field(default_factory=timefmt.now, compare=False)

    @property
    def accepted(self) -> bool:
        return self.status == Status.ACCEPTED

    def checks_json(self) -> str:
        """The checks as the store's ``checks`` column holds them."""
        return json.dumps([c.to_json() for c in self.checks])


def checks_from_json(text: str) -> tuple[CheckOutcome, ...]:
    """The store's ``checks`` column back as outcomes."""
    return tuple(CheckOutcome.from_json(item) for item in json.loads(text))


def status_filters(status: str, check: str | None) -> dict[str, Any]:
    """The store's signpost filters for an audit state (``rejected``, ``accepted``,
    ``withdrawn`` or ``all``): one definition of each state, so withdrawn is never also
    rejected (``scout signposts`` and the server's ``/api/v1/signposts`` both list by it)."""
    if status == Status.WITHDRAWN.value:
        return {"status": "rejected", "withdrawn": True, "check": check}
    if status == Status.REJECTED.value:
        return {"status": "rejected", "withdrawn": False, "check": check}
    return {"status": None if status == "all" else status, "check": check}
