"""A linear-growth check for code that reads untrusted text: time at 4n at most 6 times time at
n, both measured in the same run (a ratio, so a slow or busy machine does not fail it)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

ROUNDS = 5  # the best of a few runs each, taken in turn, so one preempted run cannot decide


def _timed(run: Callable[[], object]) -> float:
    # CPU time of this thread: on a shared machine, time spent waiting for a core is not the
    # code's, and wall-clock ratios on a loaded machine said 10x for linear code.
    started = time.thread_time()
    run()
    return time.thread_time() - started


def assert_linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    """``make(size)`` returns a call over an input of that size; it must grow linearly."""
    small_run, large_run = make(n), make(4 * n)
    small = large = float("inf")
    enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection falling in one run is not the code's growth
    try:
        for _ in range(ROUNDS):
            small = min(small, _timed(small_run))
            large = min(large, _timed(large_run))
    finally:
        if enabled:
            gc.enable()
    floor = max(small, 1e-4)
    assert large <= 6 * floor, f"time at 4n is {large / floor:.1f}x time at n"
