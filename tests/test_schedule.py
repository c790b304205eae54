"""``[ingest] schedule``: crontab(5) meaning, checked at config load, run by APScheduler."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingest.worker import trigger_for
from scout.schedule import parse_schedule

MONDAY = datetime(2026, 11, 30, 0, 1, tzinfo=UTC)  # Monday 30 November 2026, 00:01 UTC


@pytest.mark.parametrize(
    ("schedule", "fires"),
    [
        ("*/30 * * * *", ["2026-11-30T00:30", "2026-11-30T01:00", "2026-11-30T01:30"]),
        ("0 9 * * 0", ["2026-12-06T09:00", "2026-12-13T09:00"]),  # 0 is Sunday, as in crontab
        ("0 9 * * 7", ["2026-12-06T09:00", "2026-12-13T09:00"]),  # and so is 7
        ("0 9 * * sun", ["2026-12-06T09:00", "2026-12-13T09:00"]),
        ("15 6 * * 1-5", ["2026-11-30T06:15", "2026-12-01T06:15", "2026-12-02T06:15"]),
        ("0 0 * * 5-7", ["2026-12-04T00:00", "2026-12-05T00:00", "2026-12-06T00:00"]),
        ("0 12 1 jan,jul *", ["2027-01-01T12:00", "2027-07-01T12:00"]),
        ("0 0 1 */6 *", ["2027-01-01T00:00", "2027-07-01T00:00"]),
        ("5,35 2-3 * * *", ["2026-11-30T02:05", "2026-11-30T02:35", "2026-11-30T03:05"]),
    ],
)
def test_cron_schedules_fire_when_crontab_says(schedule: str, fires: list[str]) -> None:
    trigger = trigger_for(schedule)
    seen, previous, now = [], None, MONDAY
    for _ in fires:
        moment = trigger.get_next_fire_time(previous, now)
        seen.append(moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M"))
        previous = now = moment
    assert seen == fires


@pytest.mark.parametrize(("schedule", "seconds"), [("30m", 1800), ("1s", 1), (" 2h ", 7200)])
def test_intervals(schedule: str, seconds: int) -> None:
    assert parse_schedule(schedule).seconds == seconds
    assert trigger_for(schedule).interval.total_seconds() == seconds


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("every tuesday", "is neither a cron expression of five fields"),
        ("* * * *", "is neither a cron expression of five fields"),
        ("0m", "the interval must be positive"),
        ("61 * * * *", "minute 61 is outside 0-59"),
        ("* 24 * * *", "hour 24 is outside 0-23"),
        ("0 0 0 * *", "day of month 0 is outside 1-31"),
        ("0 0 * 13 *", "month 13 is outside 1-12"),
        ("0 0 * * 8", "day of week 8 is outside 0-7"),
        ("0 0 * * funday", "day of week 'funday' is not a number"),
        ("5-1 * * * *", "minute range '5-1' runs backwards"),
        ("*/0 * * * *", "minute step in '*/0' must be positive"),
        ("0 0 L * *", "day of month 'L' is not a number"),
        ("0,,5 * * * *", "minute '' is not"),
        ("a " * 40_000 + "* * * *", "the schedule is 80,007 characters long"),
        (",".join(["0"] * 600) + " * * * *", "at most 1,000"),
    ],
)
def test_bad_schedules_say_what_is_wrong(schedule: str, message: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        parse_schedule(schedule)
    assert message in str(caught.value)
