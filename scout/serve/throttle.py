"""A log that strangers cannot fill: at most a few lines a minute of any one kind.

A server in front of a public channel logs what clients make happen (a malformed request, a
Host it refuses, a socket it could not accept): one client repeating it must not grow the log by
megabytes a second. :class:`Throttle` is a logging filter, put on the server's log handler, that
lets through ``burst`` records of one kind (logger, level and message template) a ``window``
and counts the rest, saying how many it held back on the next one it lets through.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

BURST = 10
WINDOW = 60.0  # seconds
MAX_KINDS = 256  # kinds tracked at once; past it, every new kind shares one allowance
_OVERFLOW = ("", 0, "")


class Throttle(logging.Filter):
    """Let through ``burst`` records of each kind a ``window`` seconds."""

    def __init__(
        self,
        burst: int = BURST,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.burst, self.window, self.clock = burst, window, clock
        self._lock = threading.Lock()
        self._started = clock()
        # kind -> (records let through this window, records held back since the last one)
        self._seen: dict[tuple[str, int, str], tuple[int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        # the template, not the text: a client's Host or path must not make a new kind
        kind = (record.name, record.levelno, str(record.msg)[:80])
        with self._lock:
            now = self.clock()
            if now - self._started >= self.window:
                # held-back counts carry over, to be reported; the allowances start afresh
                self._seen = {k: (0, held) for k, (_, held) in self._seen.items() if held}
                self._started = now
            if kind not in self._seen and len(self._seen) >= MAX_KINDS:
                kind = _OVERFLOW
            passed, held = self._seen.get(kind, (0, 0))
            if passed >= self.burst:
                self._seen[kind] = (passed, held + 1)
                return False
            self._seen[kind] = (passed + 1, 0)
        if held:
            record.msg = f"({held} similar line(s) held back) {record.msg}"
        return True


def throttle_handlers(*loggers: logging.Logger) -> Throttle:
    """Put one throttle on every handler of ``loggers`` (the root logger's: the server's log)."""
    throttle = Throttle()
    for logger in loggers:
        for handler in logger.handlers:
            handler.addFilter(throttle)
    return throttle
