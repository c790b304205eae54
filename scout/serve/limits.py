"""The limits a public channel needs: a rate per client, a bounded number of answers at once,
and a bounded number of those per client.

All are plain objects (the rate with an injectable clock), so they are tested without a server.
Their rule: a refusal always says when to come back (``retry_after``, whole seconds, at least 1),
and none grows without bound whatever clients send (the rate table forgets the least recent
clients; a client's slot entry goes when it holds and awaits nothing).
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

    async def acquire(self, wait: float | None = None) -> None:
        """Take a slot, or raise Refused (503) after ``wait`` seconds (default: the slots'
        own) without one."""
        refusal = Refused(
            503,
            "busy",
            f"all {self.size} answer slots stayed busy for {self.wait:g} s: ask again",
            retry_after=max(1, math.ceil(self.wait)),
        )
        await _take(self._free, self.wait if wait is None else max(0.0, wait), refusal)
        self._busy += 1

    def release(self) -> None:
        self._busy -= 1
        self._free.release()

    def busy(self) -> int:
        return self._busy


class ClientSlots:
    """At most ``size`` answers in progress per client: one client cannot take every answer
    slot. A client past it waits up to ``wait`` seconds for one of its own to end (holding no
    shared slot meanwhile), then gets 429. Used from the server's event loop, as AnswerSlots."""

    def __init__(self, size: int, wait: float) -> None:
        self.size = size
        self.wait = wait
        # client -> (its semaphore, how many of its requests hold or await a slot)
        self._clients: dict[str, tuple[asyncio.Semaphore, int]] = {}

    async def acquire(self, client: str) -> None:
        """Take one of ``client``'s slots, or raise Refused (429) after ``wait`` seconds."""
        semaphore, users = self._clients.get(client, (None, 0))
        if semaphore is None:
            semaphore = asyncio.Semaphore(self.size)
        self._clients[client] = (semaphore, users + 1)
        refusal = Refused(
            429,
            "too_many_answers",
            f"this client already has {self.size} answer(s) in progress: wait for them",
            retry_after=max(1, math.ceil(self.wait)),
        )
        try:
            await _take(semaphore, self.wait, refusal)
        except BaseException:
            self._leave(client)
            raise

    def release(self, client: str) -> None:
        entry = self._clients.get(client)
        if entry is None:
            return
        entry[0].release()
        self._leave(client)

    def _leave(self, client: str) -> None:
        semaphore, users = self._clients[client]
        if users <= 1:
            del self._clients[client]
        else:
            self._clients[client] = (semaphore, users - 1)

    def clients(self) -> int:
        """Clients holding or awaiting a slot (what the table holds: nothing else)."""
        return len(self._clients)


async def _take(semaphore: asyncio.Semaphore, wait: float, refusal: Refused) -> None:
    """Acquire ``semaphore`` within ``wait`` seconds, or raise ``refusal``."""
    try:
        await asyncio.wait_for(semaphore.acquire(), wait)
    except TimeoutError:
        raise refusal from None
