"""Scout's one time format: UTC, ISO 8601, whole seconds, ``2026-02-01T10:00:00Z``.

Main rule: every time that enters Scout (a forge's issue, note and commit times, the sweep's
cursors, the store's own clock, ``--since``) passes through here, because all of them are
compared as strings, in SQL and in Python. A mixed precision broke that: ``...:00Z`` sorts after
``...:00.123Z`` (``Z`` > ``.``), and GitLab's ``.123Z`` must not become ``.123000Z`` in one
forge and ``.123Z`` in the other.

Whole seconds, truncated, because git records no finer time and the store always wrote seconds.
Truncating never skips an issue: a cursor is at or before the time it stands for, and issue
listings are inclusive (GitLab's ``updated_after`` returns issues updated "on or after" it), so
the sweep re-reads the last second and drops what it has already stored.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def parse(text: str) -> datetime:
    """An ISO 8601 date or time as an aware UTC datetime (no zone: UTC); ValueError if not one."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def stamp(moment: datetime) -> str:
    """``moment`` in the one format (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(FORMAT)


def now() -> str:
    """The current time in the one format."""
    return stamp(datetime.now(UTC))


def normalise(text: str) -> str:
    """Any ISO 8601 time in the one format; ValueError if ``text`` is not one."""
    return stamp(parse(text))


def from_forge(value: object) -> str | None:
    """A time read from a forge in the one format: None when absent, the text unchanged when it
    is not a time at all (kept for the record rather than guessed at)."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return normalise(value)
    except ValueError:
        return value


# ``--since`` as people say it: a number of days or hours back, or yesterday (UTC midnight).
_RELATIVE = re.compile(r"([1-9][0-9]{0,5})([dh])")
MAX_SINCE_CHARS = 64
MAX_SINCE_DAYS = 36_600  # a century: further back is a typo, and datetime ends at year 1


def since(text: str, now: datetime | None = None) -> str:
    """A ``--since`` value in the one format: ``YYYY-MM-DD`` or an ISO 8601 time, ``7d`` or
    ``24h`` (that long before ``now``), or ``yesterday`` (00:00 UTC of the day before ``now``).
    ValueError for anything else."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    word = text.strip().casefold()
    if len(word) > MAX_SINCE_CHARS:
        raise ValueError("too long")
    if word == "yesterday":
        midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        return stamp(midnight - timedelta(days=1))
    relative = _RELATIVE.fullmatch(word)
    if relative is None:
        return normalise(text)
    count, unit = int(relative.group(1)), relative.group(2)
    back = timedelta(days=count) if unit == "d" else timedelta(hours=count)
    if back > timedelta(days=MAX_SINCE_DAYS):
        raise ValueError("too far back")
    return stamp(moment - back)
