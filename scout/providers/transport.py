"""HTTP for the model providers: every reply bounded in bytes and every call in time.

Both SDKs (openai, anthropic) run on httpx2, whose timeouts are per read: a server that sends a
byte a second never times out, and the SDKs retry timeouts, so one call could hold an answer
slot many times over. Here, instead:

- :class:`BoundedTransport` reads a reply's body up to a byte limit, refuses compressed bodies
  (Scout asks for ``identity``: a compressed body could be a decompression bomb), and gives every
  socket operation (connect, TLS, each read and write) at most the time left until the
  transport's ``deadline``: past it, the next operation fails at once as a timeout, however the
  server dribbles.
- :func:`call_with_retries` is the one retry policy of both providers (the SDKs' own, made to
  respect a deadline): connection failures, timeouts, 408, 409, 429 and 5xx are retried with the
  SDKs' backoff, honouring ``Retry-After`` (``retry-after-ms`` first) up to two minutes and
  ``x-should-retry``, and only while the wait and another attempt fit before the deadline.
"""

from __future__ import annotations

import email.utils
import functools
import math
import random
import ssl
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpcore2
import httpx2

R = TypeVar("R")

MAX_RETRY_AFTER = 120.0  # seconds: a server asking for longer is not waited for (as the SDKs)
INITIAL_RETRY_DELAY, MAX_RETRY_DELAY = 0.5, 8.0
# Below this, another attempt is not worth starting: it could not even connect.
MIN_ATTEMPT_SECONDS = 0.05
RETRIED_STATUSES = frozenset({408, 409, 429})


class ReplyRefused(Exception):
    """Raised inside the transport for a reply Scout will not read: too large, or compressed."""


def remaining(deadline: float | None) -> float:
    """Seconds left until ``deadline`` (a ``time.monotonic()`` instant); infinite without one."""
    return math.inf if deadline is None else deadline - time.monotonic()


def _clamped(timeout: float | None, deadline: float | None, kind: type[Exception]) -> float | None:
    left = remaining(deadline)
    if left <= 0:
        raise kind("the call's deadline has passed")
    if math.isinf(left):
        return timeout
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A network stream whose every operation ends by the owner's deadline."""

    def __init__(self, stream: httpcore2.NetworkStream, owner: BoundedTransport) -> None:
        self._stream, self._owner = stream, owner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        limit = _clamped(timeout, self._owner.deadline, httpcore2.ReadTimeout)
        return self._stream.read(max_bytes, limit)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        limit = _clamped(timeout, self._owner.deadline, httpcore2.WriteTimeout)
        self._stream.write(buffer, limit)

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        limit = _clamped(timeout, self._owner.deadline, httpcore2.ConnectTimeout)
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, limit), self._owner
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, owner: BoundedTransport) -> None:
        self._backend = httpcore2.SyncBackend()
        self._owner = owner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        limit = _clamped(timeout, self._owner.deadline, httpcore2.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, limit, local_address, socket_options)
        return _DeadlineStream(stream, self._owner)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        limit = _clamped(timeout, self._owner.deadline, httpcore2.ConnectTimeout)
        stream = self._backend.connect_unix_socket(path, limit, socket_options)
        return _DeadlineStream(stream, self._owner)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, stream: httpx2.SyncByteStream, limit: int) -> None:
        self._stream, self._limit = stream, limit

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise ReplyRefused(f"a reply over {self._limit} bytes")
            yield chunk

    def close(self) -> None:
        self._stream.close()


@functools.cache
def _tls() -> ssl.SSLContext:
    # Loading the CA bundle takes tens of milliseconds, more than the rest of a call to a local
    # server: it is done once per process, and the context is shared (it is thread-safe).
    return httpx2.create_ssl_context()


class BoundedTransport(httpx2.HTTPTransport):
    """HTTP with every reply's body bounded by ``limit`` bytes, as it is read, and every socket
    operation ending by ``deadline`` (set it before each attempt; None: the timeouts alone)."""

    def __init__(self, limit: int) -> None:
        super().__init__(verify=_tls())
        self.limit = limit
        self.deadline: float | None = None
        # httpx2 takes no network backend, so its pool is made again with one (same TLS context;
        # the pool's other settings are httpx2's defaults either way)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=_tls(), network_backend=_DeadlineBackend(self)
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding != "identity":
            response.close()
            raise ReplyRefused(f"a reply compressed with {encoding[:20]!r}")
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)
        response.stream = _BoundedStream(stream, self.limit)
        return response


@dataclass(frozen=True)
class Retryable:
    """A failure worth another attempt: its HTTP status (None: no reply at all) and headers."""

    status: int | None = None
    headers: Mapping[str, str] | None = None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The wait a reply asks for, in seconds (``retry-after-ms``, else ``retry-after`` in
    seconds or as an HTTP date); None when it names none."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value[:40])
        except ValueError:
            continue
        if math.isnan(delay):
            continue
        return delay / divisor
    try:
        parsed = email.utils.parsedate_tz(headers.get("retry-after", "")[:80])
        if parsed is None:
            return None
        return float(email.utils.mktime_tz(parsed)) - time.time()
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def retry_wait(attempt: int, failure: Retryable) -> float | None:
    """Seconds to wait before retrying after ``attempt`` (0 for the first call) failed with
    ``failure``; None when it is not worth retrying (a status that will not change, a server
    that says so, or one that asks for more than two minutes)."""
    headers = failure.headers or {}
    asked = retry_after(headers)
    if asked is not None and asked > MAX_RETRY_AFTER:
        return None
    should = (headers.get("x-should-retry") or "").strip().lower()
    if should == "false":
        return None
    status = failure.status
    if should != "true" and status is not None:
        if status not in RETRIED_STATUSES and status < 500:
            return None
    if asked is not None and 0 < asked <= MAX_RETRY_AFTER:
        return asked
    backoff = min(INITIAL_RETRY_DELAY * 2.0 ** min(attempt, 30), MAX_RETRY_DELAY)
    return backoff * (1 - 0.25 * random.random())


def call_with_retries(
    attempt: Callable[[], R],
    *,
    retries: int,
    deadline: float | None,
    classify: Callable[[Exception], Retryable | None],
) -> R:
    """``attempt()``, again after each failure ``classify`` calls retryable, at most
    ``retries`` more times, each only when its wait leaves time before ``deadline``; the last
    failure is raised as it was (the provider translates it)."""
    tried = 0
    while True:
        try:
            return attempt()
        except Exception as exc:  # noqa: BLE001 - classified, then raised again as it was
            failure = classify(exc)
            if failure is None or tried >= retries:
                raise
            wait = retry_wait(tried, failure)
            if wait is None or wait + MIN_ATTEMPT_SECONDS >= remaining(deadline):
                raise
            time.sleep(wait)
            tried += 1
