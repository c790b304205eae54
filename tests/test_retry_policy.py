"""The one retry policy (scout/forge/retry.py): which statuses are final and what they are called,
how many retries a call gets and how long it waits. Both transports follow it; tests/test_graphql.py
checks that they come to the same end on the same faults from the GitLab test server."""

from __future__ import annotations

import pytest

from scout.forge.retry import MAX_THROTTLED, Attempts, judge


@pytest.mark.parametrize(
    "status, decision",
    [
        # GitLab's doc/api/rest/troubleshooting.md status codes
        (400, "bad data"),
        (401, "unauthorized"),
        (403, "unauthorized"),
        (404, "not found"),
        (409, "bad data"),
        (422, "bad data"),
        (429, "throttle"),
        (500, "retry"),
        (502, "retry"),
        (503, "retry"),
        (None, "retry"),  # no answer, or one that could not be read
    ],
)
def test_each_status_gets_one_decision(status: int | None, decision: str) -> None:
    assert judge(status) == decision


def test_retries_back_off_exponentially_and_stop() -> None:
    attempts = Attempts(max_retries=3, backoff=0.5)
    waits = [attempts.backoff_wait() for _ in range(5)]
    assert waits == [0.5, 1.0, 2.0, None, None]
    assert attempts.made == 4


@pytest.mark.parametrize("max_retries", [0, -1])
def test_no_retries_means_the_first_attempt_is_the_last(max_retries: int) -> None:
    attempts = Attempts(max_retries=max_retries, backoff=0.5)
    assert attempts.backoff_wait() is None and attempts.made == 1


def test_throttling_is_bounded_per_call_and_spends_no_retry() -> None:
    attempts = Attempts(max_retries=1, backoff=0.5)
    assert [attempts.may_throttle() for _ in range(MAX_THROTTLED + 2)] == [True] * MAX_THROTTLED + [
        False,
        False,
    ]
    assert attempts.backoff_wait() == 0.5  # the 429s left the retry untouched
