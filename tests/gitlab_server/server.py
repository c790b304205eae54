"""GitLabServer: a GitLab REST API v4 test server on 127.0.0.1 over an estate directory.

It serves the estate read-only through git (see ``api``), checks ``PRIVATE-TOKEN`` (or an
``Authorization: Bearer`` token) on every request, logs every request, and can add latency and
injected faults (see ``faults``). Each request is handled in order: latency, fault, token, route.
The log entry is written before the response goes out, so a client that has its answer always
finds its request in ``log``.
"""

from __future__ import annotations

import hmac
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.gitlab_server import api
from tests.gitlab_server.estate import Estate
from tests.gitlab_server.faults import FaultBook
from tests.gitlab_server.graphql_api import GraphQLFaults
from tests.gitlab_server.limits import DiffLimits, RateLimits
from tests.gitlab_server.wire import ApiError, Response


@dataclass(frozen=True)
class Request:
    """One logged request: raw (percent-encoded) path, decoded query, status (0: dropped)."""

    method: str
    path: str
    query: dict[str, str | list[str]]
    status: int
    at: float = field(default=0.0, compare=False)  # time.monotonic() when answered


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: GitLabServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes; without this, Nagle's algorithm and the
        # client's delayed ACK add about 40 ms to every keep-alive request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.owner.verbose:
            super().log_message(format, *args)

    def _handle(self, method: str) -> None:
        owner = self.server.owner
        parts = urlsplit(self.path)
        raw_path = parts.path
        query = parse_qs(parts.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, 1_000_000)) if length else b""
        if owner.latency:
            owner._stopping.wait(owner.latency)
        fault = owner.faults.take(self.path)
        truncate = False
        response: Response | None = None
        if fault is not None:
            if fault.kind == "drop":
                owner._record(method, raw_path, query, 0)
                self.close_connection = True
                return
            if fault.kind == "slow":
                owner._stopping.wait(fault.delay)
            elif fault.kind == "truncate":
                truncate = True
            elif fault.kind == "redirect":
                response = Response(302, b"", {"Location": fault.location or "/"})
            else:
                response = _fault_response(fault.kind, fault.status, fault.retry_after)
        if response is None:
            # Throttles count before authentication, as Rack::Attack does.
            searching = any(query.get("search") or ())
            throttled, limit_headers = owner.rate_limits.check(raw_path, searching=searching)
            if throttled:
                response = Response(429, b"Retry later\n", {"Content-Type": "text/plain"})
            else:
                response = owner._answer(
                    method,
                    raw_path,
                    query,
                    self.headers.get("PRIVATE-TOKEN"),
                    self.headers.get("Authorization"),
                    body,
                )
            response.headers.update(limit_headers)
        owner._record_headers(raw_path, dict(self.headers.items()))
        body = response.body
        if truncate:
            body = body[: len(body) // 2]
        owner._record(method, raw_path, query, response.status)
        try:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first (a "slow" fault past its timeout): nothing to answer.
            self.close_connection = True


def _fault_response(kind: str, status: int, retry_after: float | None) -> Response:
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    if kind == "bare429":
        # GitLab.com's Projects and Groups APIs: no Retry-After, no RateLimit-* headers
        # (doc/user/gitlab_com/index.md, "Rate limits on GitLab.com").
        return Response(429, b"Retry later\n", {"Content-Type": "text/plain"})
    if kind == "429":
        headers.update(
            {"RateLimit-Limit": "600", "RateLimit-Remaining": "0", "RateLimit-Observed": "601"}
        )
        if retry_after is None:
            # Without Retry-After GitLab still says when the window resets, as a Unix time
            # (doc/security/rate_limits.md, "Rate limiting responses").
            headers["RateLimit-Reset"] = str(int(time.time()) + 1)
        return Response.json({"message": "Retry later"}, 429, headers)
    if kind == "refuse_archive":
        message = "403 Forbidden" if status == 403 else f"{status} Not Found"
        return Response.json({"message": message}, status, headers)
    if kind in ("502", "503"):
        text = {502: "502 Bad Gateway", 503: "503 Service Unavailable"}[status]
        page = f"<html><body><h1>{text}</h1></body></html>\n".encode()
        return Response(status, page, {"Content-Type": "text/html", **headers})
    return Response.json({"message": "500 Internal Server Error"}, status, headers)


class GitLabServer:
    """A GitLab REST v4 server on 127.0.0.1 over an estate directory; use as a context manager."""

    def __init__(
        self,
        estate: Path,
        *,
        token: str = "glpat-test-token",
        latency: float = 0.0,
        seed: int = 0,
        port: int = 0,
        verbose: bool = False,
    ):
        self.estate = Estate(Path(estate))
        self.token = token
        self.latency = latency
        self.verbose = verbose
        self.faults = FaultBook(seed)
        self.graphql = GraphQLFaults()  # faults only POST /api/graphql has
        self.diff_limits = DiffLimits()  # see limits.py; all off
        self.rate_limits = RateLimits()  # see limits.py; none
        # GitLab writes Link headers on its external_url, which a proxy may hide
        # (doc/api/rest/index.md, "Pagination Link header"): this base replaces <url>/api/v4.
        self.link_base: str | None = None
        # Moved projects (old full path -> new): 301 to the new path since GitLab 16.7
        # (doc/api/rest/index.md, "Redirects"; doc/user/project/working_with_projects.md).
        self.moved: dict[str, str] = {}
        # Archives served as given instead of `git archive`'s (project path -> bytes): a
        # hostile archive, as a compromised or buggy instance could send one.
        self.archives: dict[str, bytes] = {}
        self.log: list[Request] = []
        self.headers_seen: list[tuple[str, dict[str, str]]] = []
        self.url = ""
        self._port = port
        self._log_lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> GitLabServer:
        self.estate.data()  # fail here, not on the first request, if estate.toml is unreadable
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.05,), name="gitlab-test-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def serve_forever(self) -> None:
        """Run in the foreground until interrupted (``python -m tests.gitlab_server``)."""
        if self._httpd is None:
            self.start()
        assert self._thread is not None
        try:
            while self._thread.is_alive():
                self._thread.join(timeout=0.5)
        finally:
            self.stop()

    def __enter__(self) -> GitLabServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # test controls
    def clear_log(self) -> None:
        with self._log_lock:
            self.log.clear()

    def inject(
        self,
        fault: str,
        *,
        times: int | None = 1,
        match: str | None = None,
        retry_after: float | None = None,
        probability: float | None = None,
        delay: float = 5.0,
        status: int | None = None,
        location: str | None = None,
    ) -> None:
        """Make the next ``times`` requests matching ``match`` fail with ``fault``.

        ``match`` is a regex searched in the raw request target (percent-encoded path and query).

        ``times=None`` fails every matching request; ``probability`` fails each matching request
        on a draw from the seeded RNG instead. ``retry_after`` adds a ``Retry-After`` header
        (omitted when None). ``delay`` is the sleep of "slow"; ``status`` (403 or 404) the answer
        of "refuse_archive", which only ever matches archive requests; ``location`` where
        "redirect" sends the client (302).
        """
        self.faults.add(
            fault,
            times=times,
            match=match,
            retry_after=retry_after,
            probability=probability,
            delay=delay,
            status=status,
            location=location,
        )

    def clear_faults(self) -> None:
        self.faults.clear()
        self.rate_limits.clear()

    def reset(self) -> None:
        """Every test control back as the server started (faults, limits, moves, hostile
        archives, visibility overrides, the log): a server shared by a module's tests then
        answers each test as a fresh one would, whatever order they run in."""
        self.faults.reset()
        self.rate_limits.clear()
        self.clear_log()
        with self._log_lock:
            self.headers_seen.clear()
        self.graphql = GraphQLFaults()
        self.diff_limits = DiffLimits()
        self.link_base = None
        self.moved.clear()
        self.archives.clear()
        self.estate.clear_overrides()

    def set_visibility(self, path: str, visibility: str) -> None:
        """Serve ``path`` with another visibility from now on (estate.toml is not written)."""
        self.estate.override(path, visibility=visibility)

    def set_archived(self, path: str, archived: bool) -> None:
        self.estate.override(path, archived=archived)

    def requests(self, pattern: str = "") -> list[Request]:
        """Logged requests whose raw path contains ``pattern`` (a plain substring)."""
        with self._log_lock:
            return [r for r in self.log if pattern in r.path]

    # internals
    def _record_headers(self, path: str, headers: dict[str, str]) -> None:
        with self._log_lock:
            self.headers_seen.append((path, headers))

    def _record(self, method: str, path: str, query: dict[str, list[str]], status: int) -> None:
        flat = {k: v[0] if len(v) == 1 else list(v) for k, v in query.items()}
        with self._log_lock:
            self.log.append(Request(method, path, flat, status, time.monotonic()))

    def _authorised(self, private_token: str | None, authorization: str | None) -> bool:
        offered = private_token
        if offered is None and authorization and authorization.startswith("Bearer "):
            offered = authorization[len("Bearer ") :]
        return offered is not None and hmac.compare_digest(offered.encode(), self.token.encode())

    def _answer(
        self,
        method: str,
        raw_path: str,
        query: dict[str, list[str]],
        private_token: str | None,
        authorization: str | None,
        body: bytes = b"",
    ) -> Response:
        if not self._authorised(private_token, authorization):
            return Response.json({"message": "401 Unauthorized"}, 401)
        if raw_path == "/api/graphql" and method == "POST":
            from tests.gitlab_server import graphql_api

            return graphql_api.answer(self.estate.data(), body, self.graphql)
        if method not in ("GET", "HEAD"):
            return Response.json({"message": "405 Method Not Allowed"}, 405)
        moved = self._moved(raw_path, query)
        if moved is not None:
            return moved
        api_url = f"{self.url}/api/v4"
        ctx = api.Context(
            data=self.estate.data(),
            api_url=api_url,
            link_base=(self.link_base or api_url) + raw_path.removeprefix("/api/v4"),
            method=method,
            query=query,
            diff_limits=self.diff_limits,
            estate_root=self.estate.root,
            archives=self.archives,
        )
        try:
            return api.dispatch(ctx, raw_path)
        except ApiError as exc:
            return exc.response()
        except Exception:
            # a bug in the server must show in the test output, not only as a 500 to the client
            traceback.print_exc(file=sys.stderr)
            return Response.json({"message": "500 Internal Server Error"}, 500)

    def _moved(self, raw_path: str, query: dict[str, list[str]]) -> Response | None:
        parts = raw_path.split("/", 5)  # "", api, v4, projects, id, rest
        if len(parts) < 5 or parts[3] != "projects":
            return None
        new = {k.lower(): v for k, v in self.moved.items()}.get(unquote(parts[4]).lower())
        if new is None:
            return None
        parts[4] = quote(new, safe="")
        target = f"{self.url}{'/'.join(parts)}"
        flat = "&".join(f"{quote(k)}={quote(v)}" for k, vs in query.items() for v in vs)
        return Response.json(
            {"message": "301 Moved Permanently"},
            301,
            {"Location": target + (f"?{flat}" if flat else "")},
        )
