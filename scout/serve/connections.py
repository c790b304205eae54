"""Connections a stranger cannot hold: uvicorn's HTTP/1.1 protocol (h11) with two bounds it lacks.

uvicorn times out only a connection that is idle after a response (``timeout_keep_alive``): a
connection that never sends a request, or sends it a byte at a time, stays open for ever, and
enough of them exhaust the process's file descriptors, after which nothing is accepted (not even
``/healthz``) and asyncio logs every failed accept. Here:

- every request must arrive whole, headers and body, within ``header_timeout`` seconds of the
  connection opening or of the previous response (the time a client is waited for, never the
  time Scout takes to answer); past it the connection is closed;
- at most ``limit`` connections are open: one more closes the connection that has waited
  longest for its request (or the newcomer, when every connection has a request in progress).

Closed connections are counted (``scout_connections_closed_total{reason}``), never logged one by
one. ``limit`` stays below the process's file limit (:func:`connection_limit`).
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_CONNECTIONS = 4_096
# Descriptors kept for everything but client connections: the store and its WAL files per thread,
# the listening socket, provider connections and child processes' pipes.
FD_RESERVE = 256
MIN_CONNECTIONS = 32
_REQUEST_IN = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)


def connection_limit() -> int:
    """How many client connections to allow: MAX_CONNECTIONS, or fewer when the process may
    open fewer files (its soft limit is raised to the hard one first, as servers do)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_CONNECTIONS + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        if raised > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
            except (ValueError, OSError):
                pass
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, soft - FD_RESERVE))


class Connections:
    """The bounds of one server's connections, and who is waited for (oldest first)."""

    def __init__(
        self, limit: int, header_timeout: float, closed: Callable[[str], None] = lambda _: None
    ) -> None:
        self.limit = limit
        self.header_timeout = header_timeout
        self.closed = closed
        self.waiting: dict[BoundedH11, None] = {}  # insertion order: the longest waited first

    def protocol(self) -> type[BoundedH11]:
        """The protocol class uvicorn makes each connection with (``Config(http=...)``)."""
        return type("ScoutH11", (BoundedH11,), {"bounds": self})


class BoundedH11(H11Protocol):
    """uvicorn's h11 protocol, bounded by its class's :class:`Connections`."""

    bounds: Connections
    _reading: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        bounds = self.bounds
        if len(self.connections) > bounds.limit:
            oldest = next((c for c in bounds.waiting if c is not self), None)
            if oldest is None:
                self._close("refused")
                return
            oldest._close("evicted")
        self._await_request()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._reading is not None and self.conn.their_state in _REQUEST_IN:
            self._request_in()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # a pipelined request may already be in whole: only a client still owing one is timed
        if not self.transport.is_closing() and self.conn.their_state not in _REQUEST_IN:
            self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._request_in()
        super().connection_lost(exc)

    def _await_request(self) -> None:
        self._request_in()
        self._reading = self.loop.call_later(self.bounds.header_timeout, self._close, "slow")
        self.bounds.waiting[self] = None

    def _request_in(self) -> None:
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None
        self.bounds.waiting.pop(self, None)

    def _close(self, reason: str) -> None:
        self._request_in()
        if not self.transport.is_closing():
            self.bounds.closed(reason)
            self.transport.abort()


def uvicorn_options(connections: Connections) -> dict[str, Any]:
    """What ``uvicorn.Config`` needs to use these bounds."""
    return {
        "http": connections.protocol(),
        # an idle keep-alive connection is one waited for: no longer than a request may take
        "timeout_keep_alive": max(1, min(5, int(connections.header_timeout))),
    }
