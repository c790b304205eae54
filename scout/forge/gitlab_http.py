"""HTTP to GitLab through python-gitlab: one retry loop, request counting, error translation.

Main rule: every request the GitLab forge makes goes through ``Transport.call``, which counts it
(retries included) by kind, reads the body bounded in size and time, retries what is transient,
and turns every python-gitlab or requests exception into ``scout.errors.ForgeError`` chained
``from exc``. Messages name the method, the API path and the status, never the token or a body.

We run our own retry loop, under the policy in ``scout/forge/retry.py`` that the GraphQL client
follows too, and call python-gitlab with its retries off. Its loop sleeps for
whatever ``Retry-After`` says without a bound, fails on an HTTP-date ``Retry-After``, retries out
of our sight (so retries could not be counted), backs off per thread, treats a refused connection
like a dropped one, and cannot retry a body that breaks while it is being streamed; ours counts
every attempt, fails fast when nothing listens, and retries body reads as well as status codes.

Rate limits (GitLab's doc/security/rate_limits.md and doc/user/gitlab_com/index.md): one
``RateLimiter`` per forge is shared by every thread, so a 429 seen by one pauses them all. It
honours ``Retry-After`` (seconds or an HTTP date), then ``RateLimit-Reset`` (a Unix time), and
pauses before the window runs out when ``RateLimit-Remaining`` reaches 0. GitLab.com's Projects
and Groups APIs answer 429 with no header at all; their throttles count requests in fixed windows
aligned on the epoch (Rack::Attack keys a period by ``now // period``), so a headerless 429 never
needs to wait past the next minute boundary, and often much less (a burst limit, another client's
window): it waits 1 s, then twice as long at each headerless 429 in a row, never past the
boundary; any answer that is not a 429 starts the doubling again. Waiting is charged once per
paused second (not per thread) against a run's budget; beyond it the run stops with
``RateLimitBudget`` (exit 5) to be resumed later.

Redirects: GitLab answers 301 for a moved project (since 16.7) and requests follows it, keeping
``PRIVATE-TOKEN`` everywhere (it strips only ``Authorization``, and only across hosts). Our
session drops both whenever a redirect changes scheme, host or port.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Container, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import gitlab
import requests
import urllib3.exceptions

from scout.errors import CannotCheck, ForgeError, NotFound, RateLimitBudget
from scout.forge.retry import MAX_THROTTLED, Attempts, judge

log = logging.getLogger(__name__)

T = TypeVar("T")

WAIT_BUDGET = 900.0  # seconds of rate-limit pauses per run, all threads together
WINDOW = 60.0  # seconds: GitLab's throttle period when a 429 names no wait
JSON_LIMIT = 32 * 1024 * 1024  # bytes of one JSON page
PER_PAGE = 100  # GitLab's maximum page size
MAX_PAGES = 10_000  # one listing never follows more pages than this


class TooLarge(Exception):
    """Raised by a bounded read when the body exceeds its limit (the caller decides what then)."""


class _Transient(Exception):
    """A body that could not be read in time or was cut short: retried like a dropped connection."""


class _BadData(Exception):
    """A body that is not the JSON shape we asked for."""


def enc(value: str | int) -> str:
    """One URL path segment: GitLab wants ``acme%2Fconfig`` and ``docs%2Fa.md``."""
    return str(gitlab.utils.EncodedId(str(value)))


def _public_url(url: str) -> str:
    """The URL without user info, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds to wait named by a Retry-After header (seconds or an HTTP date); None without one."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - now
        except (TypeError, ValueError):
            return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


class RateLimiter:
    """GitLab's rate limits for every thread of one forge: a pause seen by one holds them all."""

    def __init__(
        self,
        budget: float = WAIT_BUDGET,
        window: float = WINDOW,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.budget = budget
        self.window = window
        self.waited = 0.0  # seconds of pause charged so far (wall clock, not per thread)
        self.throttles = 0  # 429 answers seen
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._until = 0.0  # wall-clock time before which no request goes out
        self._bare = 0  # headerless 429s in a row: the next one waits 2 ** _bare seconds

    def before_request(self) -> None:
        """Wait out a pause in force; RateLimitBudget when the run has waited its budget away."""
        while True:  # another thread may lengthen the pause while this one sleeps
            with self._lock:
                if self.waited > self.budget:
                    raise RateLimitBudget(
                        f"GitLab kept throttling: waiting would exceed the {self.budget:g} s "
                        f"budget of this run ({self.throttles} answer(s) 429); run again later "
                        "to resume"
                    )
                delay = self._until - self._clock()
            if delay <= 0:
                return
            self._sleep(delay)

    def throttled(self, headers: Any) -> float:
        """Record a 429 and pause every thread as it asks; returns the pause in seconds."""
        now = self._clock()
        with self._lock:
            self.throttles += 1
        seconds = retry_after_seconds(headers.get("Retry-After"), now)
        if seconds is not None:
            return self._pause_until(now + seconds, now)
        reset = _reset_time(headers.get("RateLimit-Reset"), now)
        if reset is not None and reset > now:
            return self._pause_until(reset, now)
        # No usable header (GitLab.com's Projects and Groups APIs): 1 s, doubling, and never past
        # the boundary where the throttle's window ends.
        with self._lock:
            backoff = float(2 ** min(self._bare, 16))
            self._bare += 1
        boundary = (math.floor(now / self.window) + 1) * self.window
        return self._pause_until(min(now + backoff, boundary), now)

    def observe(self, headers: Any) -> None:
        """A successful answer that says the window is spent pauses until it resets."""
        with self._lock:
            self._bare = 0
        remaining = (headers.get("RateLimit-Remaining") or "").strip()
        if remaining != "0":
            return
        now = self._clock()
        reset = _reset_time(headers.get("RateLimit-Reset"), now)
        if reset is not None and reset > now:
            self._pause_until(reset, now)

    def _pause_until(self, moment: float, now: float) -> float:
        with self._lock:
            start = max(now, self._until)
            if moment > start:
                self.waited += moment - start
                self._until = moment
            return max(self._until - now, 0.0)


def _reset_time(value: str | None, now: float) -> float | None:
    """RateLimit-Reset as a Unix time: GitLab sends one; a proxy following the IETF draft sends
    seconds from now instead, told apart by size (no reset lies before 2001)."""
    try:
        reset = float((value or "").strip())
    except ValueError:
        return None
    if not math.isfinite(reset):
        return None
    return now + reset if reset < 1e9 else reset


class _Session(requests.Session):
    """A session that never carries the token across a redirect to another origin."""

    def rebuild_auth(
        self, prepared_request: requests.PreparedRequest, response: requests.Response
    ) -> None:
        super().rebuild_auth(prepared_request, response)
        old, new = urlsplit(response.request.url or ""), urlsplit(prepared_request.url or "")
        if (old.scheme, old.netloc) != (new.scheme, new.netloc):
            # requests strips only Authorization, and keeps it on an http -> https upgrade.
            for header in ("PRIVATE-TOKEN", "JOB-TOKEN", "Authorization"):
                prepared_request.headers.pop(header, None)


def _refused(exc: BaseException) -> bool:
    """Whether a ConnectionError means nobody listens (refused, DNS) rather than a dropped line."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        # NameResolutionError is a NewConnectionError; a connect timeout is not one.
        if isinstance(item, urllib3.exceptions.NewConnectionError):
            return True
        if isinstance(item, urllib3.exceptions.MaxRetryError):
            stack.append(item.reason)
        stack.extend(a for a in item.args if isinstance(a, BaseException))
        stack.append(item.__cause__)
        stack.append(item.__context__)
    return False


def read_bounded(response: requests.Response, limit: int, deadline: float) -> bytes:
    """The response body, at most ``limit`` bytes (else TooLarge) and read before ``deadline``."""
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        raise TooLarge(f"{length} bytes")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=256 * 1024):
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"more than {limit} bytes")
        if time.monotonic() > deadline:
            raise _Transient("body not read in time")
        chunks.append(chunk)
    return b"".join(chunks)


class Transport:
    """python-gitlab with our retry loop; counts every attempt in ``requests`` by kind."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout: float,
        max_retries: int,
        backoff: float,
        counter: Counter[str],
        per_page: int = PER_PAGE,
        sleep: Callable[[float], None] = time.sleep,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.public_url = _public_url(self.url)
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self.per_page = max(1, min(per_page, PER_PAGE))
        self.requests = counter
        self._sleep = sleep
        self.limiter = limiter or RateLimiter(sleep=sleep)
        # The sweep fetches notes from worker threads: each thread remembers its own last answer,
        # and the request counter is updated under a lock so the figures stay exact.
        self._local = threading.local()
        self._count_lock = threading.Lock()
        session = _Session()
        # python-gitlab's errors drop the headers; the hook keeps Retry-After of the last answer.
        session.hooks["response"].append(self._remember)
        self._gl = gitlab.Gitlab(
            self.url,
            private_token=token or None,
            timeout=timeout,
            session=session,
            retry_transient_errors=False,
        )
        self._api = self._gl.api_url

    def __repr__(self) -> str:
        return f"Transport({self.public_url!r})"

    @property
    def _last(self) -> requests.Response | None:
        return getattr(self._local, "last", None)

    def _remember(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self._local.last = response

    def close(self) -> None:
        self._gl.session.close()

    def call(
        self,
        kind: str,
        path: str,
        query: dict[str, Any] | None,
        consume: Callable[[requests.Response], T],
        *,
        refused: Container[int] = (),
        method: str = "get",
    ) -> T | None:
        """One request (plus bounded retries) whose body ``consume`` reads; ForgeError on failure.

        Statuses in ``refused`` return None instead of raising, for callers with a fallback.
        """
        attempts = Attempts(self.max_retries, self.backoff)
        where = f"{method.upper()} {path.split('?', 1)[0]}"
        while True:
            self.limiter.before_request()
            with self._count_lock:
                self.requests[kind] += 1
            self._local.last = None
            try:
                response = self._gl.http_request(
                    method,
                    path,
                    query_data=dict(query or {}),
                    streamed=True,
                    obey_rate_limit=False,
                    retry_transient_errors=False,
                    max_retries=0,
                )
                try:
                    self.limiter.observe(response.headers)
                    return consume(response)
                finally:
                    response.close()
            except gitlab.exceptions.GitlabError as exc:
                status = exc.response_code
                if status is not None and status in refused:
                    return None
                decision = judge(status)
                if decision == "throttle" and attempts.may_throttle():
                    last = self._last
                    paused = self.limiter.throttled(last.headers if last is not None else {})
                    log.warning(
                        "%s answered 429; retry %d in %.1fs (every thread waits)",
                        where,
                        attempts.throttled,
                        paused,
                    )
                    continue
                wait = attempts.backoff_wait() if decision == "retry" else None
                if wait is not None:
                    log.warning(
                        "%s answered %s; retry %d in %.1fs", where, status, attempts.retries, wait
                    )
                    self._sleep(wait)
                    continue
                raise self._status_error(status, where) from exc
            except (
                requests.exceptions.ChunkedEncodingError,
                requests.exceptions.ContentDecodingError,
                requests.exceptions.Timeout,
                requests.exceptions.ConnectionError,
                _Transient,
            ) as exc:
                refused_connection = (
                    isinstance(exc, requests.exceptions.ConnectionError)
                    and not isinstance(exc, requests.exceptions.Timeout)
                    and _refused(exc)
                )
                wait = None if refused_connection else attempts.backoff_wait()
                if wait is not None:
                    log.warning(
                        "%s failed (%s); retry %d in %.1fs",
                        where,
                        type(exc).__name__,
                        attempts.retries,
                        wait,
                    )
                    self._sleep(wait)
                    continue
                what = "connection refused" if refused_connection else type(exc).__name__
                raise ForgeError(
                    "unreachable",
                    f"{where} on {self.public_url}: {what} after {attempts.made} attempt(s); "
                    "check forge.url and that GitLab is up",
                ) from exc
            except _BadData as exc:
                raise ForgeError("bad data", f"{where}: {exc}") from exc
            except requests.exceptions.RequestException as exc:
                raise ForgeError(
                    "unreachable", f"{where} on {self.public_url}: {type(exc).__name__}"
                ) from exc

    def _status_error(self, status: int | None, where: str) -> ForgeError:
        """The failure a status is once the policy retries it no more."""
        decision = judge(status)
        if decision == "not found":
            return NotFound(f"{where}")
        if decision == "unauthorized":
            return ForgeError(
                "unauthorized",
                f"{where} answered {status}; check the token (forge.token_env) and its access",
            )
        if decision == "throttle":
            return ForgeError(
                "rate limited", f"{where} still answered 429 after {MAX_THROTTLED} waits"
            )
        if decision == "retry":
            return ForgeError("server error", f"{where} answered {status} after retries")
        return ForgeError(decision, f"{where} answered {status}")

    # bodies

    def json(self, kind: str, path: str, query: dict[str, Any] | None = None) -> Any:
        return self.call(kind, path, query, self.consume_json)

    def raw(
        self,
        kind: str,
        path: str,
        query: dict[str, Any] | None,
        limit: int,
        refused: Container[int] = (),
    ) -> bytes | None:
        """The raw body, at most ``limit`` bytes (TooLarge beyond)."""
        return self.call(
            kind,
            path,
            query,
            lambda r: read_bounded(r, limit, self._deadline(limit)),
            refused=refused,
        )

    def pages(self, kind: str, path: str, query: dict[str, Any] | None = None) -> Iterator[Any]:
        """Every item of a paginated listing, fetched page by page as the caller iterates.

        Not python-gitlab's ``iterator=True``: its pages go through its own retry loop, unseen
        and uncounted, and it cannot stop loudly on a next link it cannot follow.
        """
        url: str | None = path
        params: dict[str, Any] | None = {**(query or {}), "per_page": self.per_page}
        for _ in range(MAX_PAGES):
            if url is None:
                return
            got = self.call(kind, url, params, self._consume_page)
            assert got is not None
            items, next_link, next_page = got
            yield from items
            if next_link:
                # The next link carries every parameter (keyset listings have no page number).
                url, params = self._rebase(next_link, path), None
            elif next_page:
                url, params = path, {**(query or {}), "per_page": self.per_page, "page": next_page}
            else:
                url = None
        raise ForgeError("bad data", f"GET {path}: more than {MAX_PAGES} pages")

    def _rebase(self, link: str, path: str) -> str:
        """A Link URL on the configured API base, whatever host GitLab wrote into it.

        GitLab builds Link headers from its external_url, which differs from the configured URL
        behind a proxy; python-gitlab's ``keep_base_url`` rebases them the same way. We page by
        hand rather than through its iterator so that every page is counted and retried alone.
        """
        parts = urlsplit(link)
        marker = "/api/v4"
        at = parts.path.find(marker + "/")
        if at < 0:
            raise ForgeError(
                "bad data", f"GET {path}: cannot follow the next page link {_public_url(link)}"
            )
        rest = parts.path[at + len(marker) :]
        return f"{self._api}{rest}" + (f"?{parts.query}" if parts.query else "")

    def _deadline(self, limit: int) -> float:
        # A body may take the connection timeout per MiB (at least 30 timeouts) before we give up.
        return time.monotonic() + self.timeout * max(30.0, limit / (1024 * 1024))

    def consume_json(self, response: requests.Response) -> Any:
        try:
            body = read_bounded(response, JSON_LIMIT, self._deadline(JSON_LIMIT))
        except TooLarge as exc:
            # Not retried: the same question gets the same oversize answer (a huge compare).
            where = urlsplit(response.url).path.split("/api/v4", 1)[-1]
            raise CannotCheck(f"GitLab's answer to {where} is over {JSON_LIMIT >> 20} MiB") from exc
        try:
            return json.loads(body)
        except ValueError as exc:
            raise _BadData("the answer is not JSON") from exc

    def _consume_page(
        self, response: requests.Response
    ) -> tuple[list[Any], str | None, str | None]:
        data = self.consume_json(response)
        if not isinstance(data, list):
            raise _BadData("a listing that is not a JSON list")
        next_link = response.links.get("next", {}).get("url")
        next_page = (response.headers.get("X-Next-Page") or "").strip() or None
        if next_page is not None and not next_page.isdigit():
            raise _BadData("x-next-page is not a number")
        return data, next_link, next_page
