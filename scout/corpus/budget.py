"""The per-file splitting budget: no single file can stop an index.

Main rule: splitting checks the budget between its stages (after the outline, after rendering,
before each section is assembled, before each include), and each stage is linear in a file
already capped at MAX_DOCUMENT_CHARS, so a file over budget is given up within one stage of its
deadline. The clock is the thread's CPU time by default: a loaded machine (waiting for a core)
does not make a file "too slow", only work does. Outside `split_budget` checks are free.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

SPLIT_BUDGET_SECONDS = 5.0

Clock = Callable[[], float]
_DEADLINE: ContextVar[tuple[Clock, float] | None] = ContextVar("split_deadline", default=None)


class SplitTooSlow(Exception):
    """Raised inside `split_budget` when splitting one file has used up its budget."""


@contextmanager
def split_budget(
    seconds: float = SPLIT_BUDGET_SECONDS, clock: Clock = time.thread_time
) -> Iterator[None]:
    """Splitting inside this block raises SplitTooSlow once `clock` passes `seconds` from now."""
    token = _DEADLINE.set((clock, clock() + seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check() -> None:
    """Raise SplitTooSlow when the current file's budget is spent (no-op outside a budget)."""
    current = _DEADLINE.get()
    if current is not None and current[0]() > current[1]:
        raise SplitTooSlow
