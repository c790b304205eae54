"""HTTP to GitLab through python-gitlab: one retry loop, request counting, error translation.

Main rule: every request the GitLab forge makes goes through ``Transport.call``, which counts it
(retries included) by kind, reads the body bounded in size and time, retries what is transient,
and turns every python-gitlab or requests exception into ``scout.errors.ForgeError`` chained
``from exc``. Messages name the method, the API path and the status, never the token or a body.

We run our own retry loop and call python-gitlab with its retries off. Its loop sleeps for
whatever ``Retry-After`` says without a bound, retries out of our sight (so retries could not be
counted), treats a refused connection like a dropped one, and cannot retry a body that breaks
while it is being streamed; ours bounds the wait, counts every attempt, fails fast when nothing
listens, and retries body reads as well as status codes.
"""

from __future__ import annotations

import email.utils
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Container, Iterator
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit, urlunsplit

import gitlab
import requests
import urllib3.exceptions

from scout.errors import CannotCheck, ForgeError, NotFound

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_RETRY_AFTER = 60.0  # seconds: a longer Retry-After is cut to this
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
    return quote(str(value), safe="")


def _public_url(url: str) -> str:
    """The URL without user info, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def retry_after_seconds(value: str | None, fallback: float) -> float:
    """Seconds to wait for a 429: Retry-After in seconds or as an HTTP date, bounded."""
    if value:
        value = value.strip()
        try:
            seconds = float(value)
        except ValueError:
            try:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError):
                seconds = fallback
        return min(max(seconds, 0.0), MAX_RETRY_AFTER)
    return min(fallback, MAX_RETRY_AFTER)


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
    ) -> None:
        self.url = url.rstrip("/")
        self.public_url = _public_url(self.url)
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self.per_page = max(1, min(per_page, PER_PAGE))
        self.requests = counter
        self._sleep = sleep
        # The sweep fetches notes from worker threads: each thread remembers its own last answer,
        # and the request counter is updated under a lock so the figures stay exact.
        self._local = threading.local()
        self._count_lock = threading.Lock()
        session = requests.Session()
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
        attempt = 0
        where = f"{method.upper()} {path.split('?', 1)[0]}"
        while True:
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
                    return consume(response)
                finally:
                    response.close()
            except gitlab.exceptions.GitlabError as exc:
                status = exc.response_code
                if status is not None and status in refused:
                    return None
                wait, reason = self._judge_status(status, attempt)
                if wait is not None and attempt < self.max_retries:
                    log.warning(
                        "%s answered %s; retry %d in %.1fs", where, status, attempt + 1, wait
                    )
                    self._sleep(wait)
                    attempt += 1
                    continue
                raise self._status_error(reason, status, where) from exc
            except (
                requests.exceptions.ChunkedEncodingError,
                requests.exceptions.ContentDecodingError,
                requests.exceptions.Timeout,
                requests.exceptions.ConnectionError,
                _Transient,
            ) as exc:
                retry = not (
                    isinstance(exc, requests.exceptions.ConnectionError)
                    and not isinstance(exc, requests.exceptions.Timeout)
                    and _refused(exc)
                )
                if retry and attempt < self.max_retries:
                    wait = self.backoff * 2**attempt
                    log.warning(
                        "%s failed (%s); retry %d in %.1fs",
                        where,
                        type(exc).__name__,
                        attempt + 1,
                        wait,
                    )
                    self._sleep(wait)
                    attempt += 1
                    continue
                what = "connection refused" if not retry else type(exc).__name__
                raise ForgeError(
                    "unreachable",
                    f"{where} on {self.public_url}: {what} after {attempt + 1} attempt(s); "
                    "check forge.url and that GitLab is up",
                ) from exc
            except _BadData as exc:
                raise ForgeError("bad data", f"{where}: {exc}") from exc
            except requests.exceptions.RequestException as exc:
                raise ForgeError(
                    "unreachable", f"{where} on {self.public_url}: {type(exc).__name__}"
                ) from exc

    def _judge_status(self, status: int | None, attempt: int) -> tuple[float | None, str]:
        """(seconds to wait before a retry or None for no retry, reason if we give up)."""
        if status == 429:
            header = self._last.headers.get("Retry-After") if self._last is not None else None
            return retry_after_seconds(header, self.backoff * 2**attempt), "rate limited"
        if status is not None and status >= 500:
            return self.backoff * 2**attempt, "server error"
        return None, "bad data"

    def _status_error(self, reason: str, status: int | None, where: str) -> ForgeError:
        if status == 404:
            return NotFound(f"{where}")
        if status in (401, 403):
            return ForgeError(
                "unauthorized",
                f"{where} answered {status}; check the token (forge.token_env) and its access",
            )
        if status == 429:
            return ForgeError("rate limited", f"{where} still answered 429 after retries")
        if reason == "server error":
            return ForgeError("server error", f"{where} answered {status} after retries")
        return ForgeError("bad data", f"{where} answered {status}")

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
        """Every item of a paginated listing, fetched page by page as the caller iterates."""
        url: str | None = path
        params: dict[str, Any] | None = {**(query or {}), "per_page": self.per_page}
        for _ in range(MAX_PAGES):
            if url is None:
                return
            got = self.call(kind, url, params, self._consume_page)
            assert got is not None
            items, next_link, next_page = got
            yield from items
            if next_link and next_link.startswith(self._api + "/"):
                # The next link carries every parameter (keyset listings have no page number).
                url, params = next_link, None
            elif next_page:
                url, params = path, {**(query or {}), "per_page": self.per_page, "page": next_page}
            else:
                url = None
        raise ForgeError("bad data", f"GET {path}: more than {MAX_PAGES} pages")

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
