"""The HTTP routes: each reads its request, calls the service, and writes one document.

Rules: every error is ``{"error": {"code", "message"}}`` with its status (and ``Retry-After``
where waiting helps), written by :func:`error_response` alone; the page is the same question path
as ``POST /api/v1/ask``, its result rendered as HTML; nothing a request sends is kept.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from scout.errors import Refused, ScoutError
from scout.gaps import gaps as gap_backlog
from scout.gaps import parse_since
from scout.serve import page
from scout.serve.metrics import CONTENT_TYPE
from scout.serve.service import Service
from scout.store import Store
from scout.verdict import Status, status_filters

logger = logging.getLogger("scout.serve")

# Fields a form may carry: the question and, where keys are needed, the key.
MAX_FORM_FIELDS = 4
SIGNPOST_STATUSES = (Status.REJECTED.value, Status.ACCEPTED.value, Status.WITHDRAWN.value, "all")
DEFAULT_SIGNPOSTS, MAX_SIGNPOSTS = 50, 1_000
DEFAULT_GAPS, MAX_GAPS, MAX_PAGE = 50, 500, 10_000


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def bearer(request: Request) -> str | None:
    """The key from ``Authorization: Bearer KEY`` (or ``X-Scout-Key``), if any."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.headers.get("x-scout-key") or None


def address(request: Request, service: Service) -> str:
    """The client's address: the peer, or the one a trusted proxy forwards (``[serve]
    trusted_proxies``); never anything else the request says."""
    peer = request.client.host if request.client else None
    forwarded = request.headers.get("x-forwarded-for")
    if not service.warned_forwarded and service.security.untrusted_forwarder(peer, forwarded):
        service.warned_forwarded = True  # once: the log is no place for every request
        logger.warning(
            "X-Forwarded-For from %s, which serve.trusted_proxies does not list: not read "
            "(behind a proxy, list it, or every client is the proxy's address)",
            peer,
        )
    return service.security.client_address(peer, forwarded)


def error_response(service: Service, refused: Refused) -> JSONResponse:
    headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after else None
    return JSONResponse(service.refused(refused), status_code=refused.status, headers=headers)


def _admitted(request: Request, *, maintainer: bool = False) -> tuple[Service, str]:
    service = service_of(request)
    client = service.client(bearer(request), address(request, service), maintainer=maintainer)
    service.admit(client)
    return service, client


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except (ValueError, RecursionError):
        # not UTF-8, not JSON, nested too deeply, or an integer past Python's 4,300 digits
        raise Refused(400, "bad_request", "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise Refused(400, "bad_request", "the body must be a JSON object")
    return body


async def ask(request: Request) -> Response:
    service, client = _admitted(request)
    body = await _json_body(request)
    if "question" not in body:
        raise Refused(400, "bad_request", 'the body needs "question"')
    document = await service.ask(body["question"], body.get("project"), client=client)
    return JSONResponse(document)


async def search(request: Request) -> Response:
    service, client = _admitted(request)
    query = request.query_params
    if "q" not in query:
        raise Refused(400, "bad_request", "search needs q=QUESTION")
    projects = query.getlist("project") or None
    found = await service.search(query["q"], query.get("limit"), projects, client=client)
    return JSONResponse(found)


async def gaps(request: Request) -> Response:
    service, _ = _admitted(request, maintainer=True)
    since = _since(request)
    limit = _whole(request, "limit", DEFAULT_GAPS, MAX_GAPS)
    page = _whole(request, "page", 1, MAX_PAGE)
    start = (page - 1) * limit

    def backlog(store: Store) -> list[dict[str, Any]]:
        ranked = gap_backlog(store, since=since)
        return [group.to_json() for group in ranked[start : start + limit]]

    return JSONResponse(await service.read(backlog))


async def signposts(request: Request) -> Response:
    service, _ = _admitted(request, maintainer=True)
    query = request.query_params
    status = query.get("status", Status.REJECTED.value)
    if status not in SIGNPOST_STATUSES:
        raise Refused(400, "bad_request", f"status must be one of {', '.join(SIGNPOST_STATUSES)}")
    limit = _whole(request, "limit", DEFAULT_SIGNPOSTS, MAX_SIGNPOSTS)
    project = query.get("project") or None
    since = _since(request)

    def verdicts(store: Store) -> list[dict[str, Any]]:
        rows = store.signposts(
            **status_filters(status, None),
            project=project,
            since=parse_since(since) if since else None,
            limit=limit,
        )
        return [{**row.to_json(), "status": str(row.state)} for row in rows]

    return JSONResponse(await service.read(verdicts))


def _whole(request: Request, name: str, default: int, most: int) -> int:
    """A whole-number query parameter from 1 to ``most`` (400 for anything else)."""
    text = request.query_params.get(name, str(default))
    if not (text.isascii() and text.isdigit() and len(text) <= 6 and 1 <= int(text) <= most):
        raise Refused(400, "bad_request", f"{name} must be a whole number from 1 to {most}")
    return int(text)


def _since(request: Request) -> str | None:
    since = request.query_params.get("since") or None
    if since is not None:
        try:
            parse_since(since)
        except ScoutError as exc:
            raise Refused(400, "bad_request", str(exc)) from None
    return since


async def healthz(request: Request) -> Response:
    service = service_of(request)
    try:
        return JSONResponse(await service.health())
    except Refused as refused:
        return JSONResponse({"status": "unavailable", **service.refused(refused)}, status_code=503)


async def metrics(request: Request) -> Response:
    return Response(service_of(request).metrics.text(), media_type=CONTENT_TYPE)


async def stylesheet(request: Request) -> Response:
    return Response(
        request.app.state.stylesheet,
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600"},
    )


def _page(service: Service, status: int = 200, **values: Any) -> HTMLResponse:
    html = page.render(
        needs_key=service.api_keys is not None,
        max_chars=service.settings.max_question_chars,
        **values,
    )
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


async def home(request: Request) -> Response:
    return _page(service_of(request))


async def home_ask(request: Request) -> Response:
    """The form's post: the same checks and answer as the API, rendered as the page."""
    service = service_of(request)
    question = ""
    try:
        raw = (await request.body()).decode("utf-8", "replace")
        try:
            fields = parse_qs(raw, max_num_fields=MAX_FORM_FIELDS, keep_blank_values=True)
        except ValueError:
            raise Refused(400, "bad_request", "the form has too many fields") from None
        question = (fields.get("question") or [""])[0]
        key = (fields.get("key") or [""])[0] or bearer(request)
        client = service.client(key, address(request, service))
        service.admit(client)
        result = await service.ask(question, client=client)
    except Refused as refused:
        shown = question[: service.settings.max_question_chars]
        response = _page(
            service, refused.status, question=shown, error=service.refused(refused)["error"]
        )
        if refused.retry_after:
            response.headers["Retry-After"] = str(refused.retry_after)
        return response
    return _page(service, question=question, result=result)
