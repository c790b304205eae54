"""The limits a public channel needs: a rate per client, and a bounded number of answers at once.

Both are plain objects with an injectable clock, so they are tested without a server. Their rule:
a refusal always says when to come back (``retry_after``, whole seconds, at least 1), and neither
grows without bound whatever clients send (the rate table forgets the least recent clients).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from scout.errors import Refused

# Clients remembered at once: an address-spraying client costs memory up to here, never more.
MAX_CLIENTS = 10_000


class RateLimiter:
    """A token bucket per client: ``count`` requests, refilled evenly over ``period`` seconds."""

    def __init__(
        self,
        count: int,
        period: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.count = count
        self.period = period
        self.clock = clock
        self.max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str) -> None:
        """Spend one request of ``client``'s budget, or raise Refused (429) with its wait."""
        rate = self.count / self.period
        with self._lock:
            now = self.clock()
            tokens, seen = self._buckets.pop(client, (float(self.count), now))
            tokens = min(float(self.count), tokens + (now - seen) * rate)
            if tokens < 1.0:
                self._remember(client, tokens, now)
                wait = math.ceil((1.0 - tokens) / rate)
                raise Refused(
                    429,
                    "rate_limited",
                    f"more than {self.count} requests in {self.period:g} s: wait {wait} s",
                    retry_after=max(1, wait),
                )
            self._remember(client, tokens - 1.0, now)

    def _remember(self, client: str, tokens: float, now: float) -> None:
        self._buckets[client] = (tokens, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)

    def clients(self) -> int:
        return len(self._buckets)


class AnswerSlots:
    """At most ``size`` answers at once; a question waits up to ``wait`` seconds for a slot.

    A slot is held until the answer's thread really ends, even when its caller has stopped
    waiting (a timeout), so the provider never has more than ``size`` calls in flight. Used from
    one event loop (the server's); the waiting costs no thread.
    """

    def __init__(self, size: int, wait: float) -> None:
        self.size = size
        self.wait = wait
        self._free = asyncio.Semaphore(size)
        self._busy = 0

    async def acquire(self) -> None:
        """Take a slot, or raise Refused (503) after ``wait`` seconds without one."""
        try:
            await asyncio.wait_for(self._free.acquire(), self.wait)
        except TimeoutError:
            raise Refused(
                503,
                "busy",
                f"all {self.size} answer slots stayed busy for {self.wait:g} s: ask again",
                retry_after=max(1, math.ceil(self.wait)),
            ) from None
        self._busy += 1

    def release(self) -> None:
        self._busy -= 1
        self._free.release()

    def busy(self) -> int:
        return self._busy
