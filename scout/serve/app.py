"""The ASGI app of ``scout serve``: routes, MCP at ``/mcp``, headers, limits, and running it.

Rules: every response carries the strict Content-Security-Policy and no cookie; a request for
another Host is a 421, a POST that is neither JSON nor the page's form a 415 and one from another
site's page a 403, before any route runs (:class:`RequestGuard`, :mod:`scout.serve.security`);
a request body over ``serve.max_body_bytes`` is a 413 before any route reads it, chunked or not
(:class:`BodyLimit`); CORS answers only the configured origins; a connection must send its whole
request within ``header_timeout`` and connections are capped (:mod:`scout.serve.connections`);
the log is throttled (:mod:`scout.serve.throttle`); SIGTERM lets the answers in flight finish
(uvicorn's graceful shutdown, bounded so the process is gone within 10 s) and ends the process
with exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scout.config import Config
from scout.errors import Refused
from scout.serve import page, routes
from scout.serve.connections import Connections, connection_limit, uvicorn_options
from scout.serve.security import Security
from scout.serve.service import Service
from scout.serve.throttle import throttle_handlers

logger = logging.getLogger("scout.serve")

# uvicorn waits this long for answers in flight after SIGTERM, then cancels what is left: the
# contract's 10 s, less a margin for closing the rest.
GRACEFUL_SECONDS = 8

SECURITY_HEADERS = [
    (b"content-security-policy", page.CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin: the page's own form posts carry its Origin (no-referrer makes it "null"),
    # and no other site learns a page address from a link
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]

STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
}
JSON_TYPE = "application/json"
FORM_TYPE = "application/x-www-form-urlencoded"  # the page's own form (POST /)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class SecurityHeaders:
    """Adds the security headers to every response, and drops any Set-Cookie (no state)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"set-cookie"
                ]
                names = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in names]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimit:
    """A 413 in the one error shape for a body over ``limit`` bytes: at once from its
    Content-Length, or as soon as the bytes read pass it; the body is read whole (at most
    ``limit`` bytes) before any route sees it, so a chunked body with no Content-Length is
    refused the same way, whichever app would have read it (MCP's runs in tasks of its own,
    where an error raised from the stream became a 500)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before its body was in: nobody to answer
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = Refused(
            413, "body_too_large", f"the request body is over {self.limit} bytes: send less"
        )
        service: Service = scope["app"].state.service
        await routes.error_response(service, refused)(scope, receive, send)


class RequestGuard:
    """In front of every route: 421 for a ``Host`` that is not this server's (DNS rebinding);
    for a POST, 415 for a body that is neither JSON nor the page's form, and for any method but
    GET, HEAD and OPTIONS, 403 for another site's ``Origin`` (``Sec-Fetch-Site: cross-site``
    without one). A script sends neither header and is not refused for it."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.refusal(scope, Headers(scope=scope))
            if refused is not None:
                await routes.error_response(self.service, refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope, headers: Headers) -> Refused | None:
        security = self.service.security
        if not security.host_allowed(headers.get("host")):
            return Refused(
                421,
                "misdirected_request",
                "this server does not answer for that host name: list it in serve.allowed_hosts",
            )
        method = scope["method"]
        if method in SAFE_METHODS:
            return None
        if method == "POST" and _has_body(headers):
            kind = headers.get("content-type", "").partition(";")[0].strip().lower()
            wanted = FORM_TYPE if scope["path"] == "/" else JSON_TYPE
            if kind != wanted:
                return Refused(415, "unsupported_media_type", f"send the body as {wanted}")
        if not security.origin_allowed(headers):
            return Refused(
                403,
                "forbidden_origin",
                "requests from another site's page are refused: list its origin in "
                "serve.cors_origins",
            )
        return None


def _has_body(headers: Headers) -> bool:
    """Whether a request carries a body (one with none cannot be misread as a form or JSON)."""
    length = headers.get("content-length")
    if length is not None:
        return length.strip() != "0"
    return "transfer-encoding" in headers


class KeyGuard:
    """In front of ``/mcp``: the API key rule of the other routes (401 without a needed key)."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            try:
                address = routes.address(request, self.service)
                self.service.client(routes.bearer(request), address)
            except Refused as refused:
                await routes.error_response(self.service, refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    return routes.error_response(routes.service_of(request), exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = STATUS_CODES.get(exc.status_code, "http_error")
    refused = Refused(exc.status_code, code, str(exc.detail))
    return routes.error_response(routes.service_of(request), refused)


async def _internal(request: Request, exc: Exception) -> Response:
    logger.exception("internal error on %s", request.url.path)
    body = {"error": {"code": "internal", "message": "internal error: see the server's log"}}
    routes.service_of(request).metrics.failed("internal")
    return JSONResponse(body, status_code=500)


def mcp_security(security: Security) -> TransportSecuritySettings:
    """The MCP SDK's own Host and Origin check, made to agree with :class:`RequestGuard` (the
    effective host and ``allowed_hosts``, not the config's host alone)."""
    hosts, origins = [], [*security.cors_origins]
    for name in sorted(security.allowed_hosts):
        host = f"[{name}]" if ":" in name else name
        hosts += [host, f"{host}:*"]
        for scheme in ("http", "https"):
            origins += [f"{scheme}://{host}", f"{scheme}://{host}:*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def build_app(config: Config, service: Service | None = None) -> Starlette:
    """The app for ``config``; ``service`` shared with the caller when given (its security
    settings name the host it listens on)."""
    from scout.serve.mcp import build_mcp

    service = service or Service(config)
    mcp = build_mcp(service)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=config.serve.max_body_bytes,
        transport_security=mcp_security(service.security),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield
        # after uvicorn's drain: whatever is still running past it is not waited for
        service.close()

    middleware = [
        Middleware(SecurityHeaders),
        Middleware(RequestGuard, service=service),
        Middleware(BodyLimit, limit=config.serve.max_body_bytes),
    ]
    if config.serve.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=config.serve.cors_origins,
                allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type", "X-Scout-Key"],
                max_age=600,
            )
        )
    app = Starlette(
        routes=[
            Route("/", routes.home, methods=["GET"]),
            Route("/", routes.home_ask, methods=["POST"]),
            Route("/static/page.css", routes.stylesheet, methods=["GET"]),
            Route("/api/v1/ask", routes.ask, methods=["POST"]),
            Route("/api/v1/search", routes.search, methods=["GET"]),
            Route("/api/v1/gaps", routes.gaps, methods=["GET"]),
            Route("/api/v1/signposts", routes.signposts, methods=["GET"]),
            Route("/healthz", routes.healthz, methods=["GET"]),
            Route("/metrics", routes.metrics, methods=["GET"]),
            Route("/mcp", KeyGuard(mcp_app, service), methods=["GET", "POST", "DELETE"]),
        ],
        middleware=middleware,
        exception_handlers={
            Refused: _refused,
            HTTPException: _http_error,
            Exception: _internal,
        },
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.stylesheet = page.stylesheet()
    return app


def serve(config: Config, *, host: str, port: int) -> dict[str, int]:
    """Serve until SIGTERM or SIGINT; SIGTERM drains the answers in flight, then returns how
    many questions were answered and declined."""
    import uvicorn

    service = Service(config, security=Security.of(config, host))
    app = build_app(config, service)
    connections = Connections(
        connection_limit(), config.serve.header_timeout, service.metrics.closed
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            timeout_graceful_shutdown=GRACEFUL_SECONDS,
            log_level="info",
            # uvicorn's records go to Scout's one log handler (safe text, one time format)
            log_config=None,
            access_log=False,
            server_header=False,
            # the client's address is Scout's to decide (serve.trusted_proxies), not uvicorn's
            proxy_headers=False,
            **uvicorn_options(connections),
        )
    )
    throttle_handlers(logging.getLogger())
    # uvicorn handles SIGTERM itself (a graceful stop), then raises it again once it has
    # restored the handler it found: this one, so the process returns and exits 0, not 143.
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        asyncio.run(server.serve())
    finally:
        signal.signal(signal.SIGTERM, previous)
    return service.outcomes()


def _stopped(_signum: int, _frame: Any) -> None:
    logger.info("stopped on SIGTERM after the answers in flight")
