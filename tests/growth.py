"""A linear-growth check for code that reads untrusted text: time at 4n at most 6 times time at
n, both measured in the same run (a ratio, so a slow or busy machine does not fail it)."""

from __future__ import annotations

import time
from collections.abc import Callable

ROUNDS = 3  # the best of a few runs: one preempted run must not fail the check


def best_time(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def assert_linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    """``make(size)`` returns a call over an input of that size; it must grow linearly."""
    small, large = best_time(make(n)), best_time(make(4 * n))
    assert large <= 6 * max(small, 1e-4), f"time at 4n is {large / max(small, 1e-9):.1f}x time at n"
