"""``[ingest] schedule``: a five-field cron expression or an interval, checked on config load.

Pure and dependency-free, so every command can reject a bad schedule at once (the config error,
exit 3, names the file and the key) without importing the scheduler, which costs about 100 ms
of start-up. ``scout worker`` builds its trigger from the parsed value.

Cron fields follow crontab(5): minute 0-59, hour 0-23, day 1-31, month 1-12 or ``jan``-``dec``,
day of week 0-7 or ``sun``-``sat`` with 0 and 7 both Sunday; each field a comma list of ``*``,
``n``, ``a-b``, optionally ``/step``. Each field is handed to the scheduler as the explicit list
of values it stands for, the day of week as day names: APScheduler 3 numbers days from Monday
(crontab's ``0`` would run on Mondays) and reads names and steps in fewer places than crontab.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_INTERVAL = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# name, lowest, highest, names for lowest.. (or none)
_FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_ITEM = re.compile(r"^(?:(\*)|(\w+)(?:-(\w+))?)(?:/(\d+))?$")
# Every minute listed one by one, in five fields, fits in 400 characters: longer is no schedule,
# and parsing it (splitting a config value of megabytes) would be work for nothing.
MAX_SCHEDULE_CHARS = 1_000


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: ``seconds`` for an interval, else the five cron fields."""

    text: str
    seconds: int | None = None
    cron: tuple[str, str, str, str, str] | None = None


def parse_schedule(text: str) -> Schedule:
    """The schedule ``text`` stands for; ValueError saying what is wrong and what would do."""
    if len(text) > MAX_SCHEDULE_CHARS:
        raise ValueError(
            f"the schedule is {len(text):,} characters long; a cron expression or an interval "
            f"is at most {MAX_SCHEDULE_CHARS:,} (such as '*/30 * * * *' or '30m')"
        )
    match = _INTERVAL.match(text)
    if match:
        seconds = int(match.group(1)) * _SECONDS[match.group(2)]
        if seconds <= 0:
            raise ValueError(f"{text!r}: the interval must be positive (such as '30m')")
        return Schedule(text, seconds=seconds)
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(
            f"{text!r} is neither a cron expression of five fields ('*/30 * * * *') "
            f"nor an interval ('30m', '1s', '2h', '1d')"
        )
    minute, hour, day, month, weekday = (
        _explicit(value, *field) for value, field in zip(fields, _FIELDS, strict=True)
    )
    return Schedule(text, cron=(minute, hour, day, month, weekday))


def _number(token: str, name: str, low: int, high: int, names: tuple[str, ...]) -> int:
    lowered = token.lower()
    if lowered in names:
        return names.index(lowered) + low
    if not token.isdigit():
        raise ValueError(f"{name} {token!r} is not a number")
    number = int(token)
    if not low <= number <= high:
        raise ValueError(f"{name} {number} is outside {low}-{high}")
    return number


def _values(item: str, name: str, low: int, high: int, names: tuple[str, ...]) -> range:
    match = _ITEM.match(item)
    if not match:
        raise ValueError(f"{name} {item!r} is not '*', 'n', 'a-b' or one of them with '/step'")
    star, first, last, step = match.groups()
    if star:
        start, end = low, high
    else:
        start = _number(first, name, low, high, names)
        end = _number(last, name, low, high, names) if last else (high if step else start)
        if end < start:
            raise ValueError(f"{name} range {item!r} runs backwards")
    if step is not None and int(step) <= 0:
        raise ValueError(f"{name} step in {item!r} must be positive")
    return range(start, end + 1, int(step or 1))


def _explicit(value: str, name: str, low: int, high: int, names: tuple[str, ...]) -> str:
    if value == "*":
        return value
    numbers = {n for item in value.split(",") for n in _values(item, name, low, high, names)}
    if names is _DAYS:
        return ",".join(_DAYS[d] for d in sorted({n % 7 for n in numbers}))
    return ",".join(str(n) for n in sorted(numbers))
