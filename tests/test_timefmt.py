"""Scout's one time format: every way a time enters gives the same string for the same second."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scout import timefmt
from scout.gaps import parse_since
from scout.store import now


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-02-01T10:00:00Z", "2026-02-01T10:00:00Z"),
        ("2026-02-01T10:00:00.123Z", "2026-02-01T10:00:00Z"),  # GitLab's milliseconds
        ("2026-02-01T10:00:00.999999Z", "2026-02-01T10:00:00Z"),  # truncated, never rounded up
        ("2026-02-01T10:00:00.000+00:00", "2026-02-01T10:00:00Z"),
        ("2026-02-01T12:00:00+02:00", "2026-02-01T10:00:00Z"),  # git's %aI
        ("2026-02-01T10:00:00", "2026-02-01T10:00:00Z"),  # no zone: UTC
        ("2026-02-01", "2026-02-01T00:00:00Z"),  # --since a day
        (" 2026-02-01t10:00:00z ", "2026-02-01T10:00:00Z"),
    ],
)
def test_times_normalise_to_whole_utc_seconds(text: str, expected: str) -> None:
    assert timefmt.normalise(text) == expected
    assert parse_since(text) == expected


@pytest.mark.parametrize("value", [None, "", "  ", 42])
def test_a_missing_forge_time_is_none(value: object) -> None:
    assert timefmt.from_forge(value) is None


def test_a_forge_time_that_is_not_a_time_is_kept_as_text() -> None:
    assert timefmt.from_forge("yesterday") == "yesterday"
    with pytest.raises(ValueError):
        timefmt.normalise("yesterday")


def test_the_store_clock_writes_the_same_format() -> None:
    stamp = now()
    assert timefmt.normalise(stamp) == stamp
    assert abs(timefmt.parse(stamp) - datetime.now(UTC)) < timedelta(seconds=5)


moments = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@given(moments, moments)
def test_string_order_is_time_order(a: datetime, b: datetime) -> None:
    # Cursors and stored times are compared as strings, in Python and in SQL.
    sa, sb = timefmt.stamp(a), timefmt.stamp(b)
    floor = timedelta(microseconds=a.microsecond), timedelta(microseconds=b.microsecond)
    assert (sa < sb) == (a - floor[0] < b - floor[1])
