"""The ASGI app of ``scout serve``: routes, MCP at ``/mcp``, headers, limits, and running it.

Rules: every response carries the strict Content-Security-Policy and no cookie; a request body
over ``serve.max_body_bytes`` is a 413 before any route reads it (:class:`BodyLimit`); CORS
answers only the configured origins; SIGTERM lets the answers in flight finish (uvicorn's graceful
shutdown, bounded so the process is gone within 10 s) and ends the process with exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
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
from scout.serve.service import Service

logger = logging.getLogger("scout.serve")

# uvicorn waits this long for answers in flight after SIGTERM, then cancels what is left: the
# contract's 10 s, less a margin for closing the rest.
GRACEFUL_SECONDS = 8

SECURITY_HEADERS = [
    (b"content-security-policy", page.CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]

STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
}


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


class _TooLarge(Exception):
    pass


class BodyLimit:
    """A 413 in the one error shape for a body over ``limit`` bytes: at once from its
    Content-Length, or as soon as streamed bytes pass it (Starlette's own limit answers 413 in
    plain text, and replaces any response to a request whose Content-Length is over it)."""

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
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if started:
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = Refused(
            413, "body_too_large", f"the request body is over {self.limit} bytes: send less"
        )
        service: Service = scope["app"].state.service
        await routes.error_response(service, refused)(scope, receive, send)


class KeyGuard:
    """In front of ``/mcp``: the API key rule of the other routes (401 without a needed key)."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            try:
                self.service.client(routes.bearer(request), routes.address(request))
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


def build_app(config: Config, service: Service | None = None) -> Starlette:
    """The app for ``config``; ``service`` shared with the caller when given."""
    from scout.serve.mcp import build_mcp

    service = service or Service(config)
    mcp = build_mcp(service)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=config.serve.max_body_bytes,
        host=config.serve.host,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield
        # after uvicorn's drain: whatever is still running past it is not waited for
        service.close()

    middleware = [
        Middleware(SecurityHeaders),
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

    service = Service(config)
    app = build_app(config, service)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            timeout_graceful_shutdown=GRACEFUL_SECONDS,
            log_level="info",
            access_log=False,
            server_header=False,
        )
    )
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
