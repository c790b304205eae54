"""Responses, API errors and pagination in GitLab's wire format.

Offset pagination follows GitLab: ``page`` from 1, ``per_page`` default 20 and capped at 100,
headers ``x-page``, ``x-per-page``, ``x-next-page``/``x-prev-page`` (empty when none),
``x-total``/``x-total-pages`` and a ``Link`` header with next/prev/first/last; above 10,000
records the totals and ``rel="last"`` are omitted, as GitLab does. Keyset pagination (the tree
listing) only carries a ``Link: rel="next"``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

T = TypeVar("T")
Query = dict[str, list[str]]
_TOTALS_LIMIT = 10_000


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        return cls(status, body, {"Content-Type": "application/json", **(headers or {})})


class ApiError(Exception):
    """An error answer, with GitLab's body (``{"message": ...}`` or ``{"error": ...}``)."""

    def __init__(self, status: int, message: str, key: str = "message"):
        super().__init__(message)
        self.status = status
        self.body = {key: message}

    def response(self) -> Response:
        return Response.json(self.body, self.status)


def not_found(what: str) -> ApiError:
    return ApiError(404, f"404 {what} Not Found")


def first(query: Query, name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


def int_param(query: Query, name: str, default: int) -> int:
    value = first(query, name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ApiError(400, f"{name} is invalid", "error") from None


def bool_param(query: Query, name: str) -> bool:
    return (first(query, name) or "").lower() in ("true", "1", "yes")


def _link(base: str, query: Query, **changes: str) -> str:
    params = {k: v for k, v in query.items() if k not in changes}
    params.update({k: [v] for k, v in changes.items()})
    return f"{base}?{urlencode(params, doseq=True)}"


def paginate(items: Sequence[T], query: Query, base: str) -> tuple[list[T], dict[str, str]]:
    """The requested offset page of ``items`` and GitLab's pagination headers for it."""
    per_page = int_param(query, "per_page", 20)
    per_page = 20 if per_page < 1 else min(per_page, 100)
    page = max(1, int_param(query, "page", 1))
    total = len(items)
    pages = max(1, math.ceil(total / per_page))
    chunk = list(items[(page - 1) * per_page : page * per_page])
    has_next = page * per_page < total
    headers = {
        "x-page": str(page),
        "x-per-page": str(per_page),
        "x-next-page": str(page + 1) if has_next else "",
        "x-prev-page": str(page - 1) if page > 1 else "",
    }
    links = []
    if page > 1:
        links.append(
            f'<{_link(base, query, page=str(page - 1), per_page=str(per_page))}>; rel="prev"'
        )
    if has_next:
        links.append(
            f'<{_link(base, query, page=str(page + 1), per_page=str(per_page))}>; rel="next"'
        )
    links.append(f'<{_link(base, query, page="1", per_page=str(per_page))}>; rel="first"')
    if total <= _TOTALS_LIMIT:
        headers["x-total"] = str(total)
        headers["x-total-pages"] = str(pages)
        links.append(f'<{_link(base, query, page=str(pages), per_page=str(per_page))}>; rel="last"')
    headers["Link"] = ", ".join(links)
    return chunk, headers


def keyset(
    items: Sequence[T], query: Query, base: str, token: Callable[[T], str]
) -> tuple[list[T], dict[str, str]]:
    """A keyset page: the items after ``page_token`` (an item's token), with only a next link."""
    per_page = int_param(query, "per_page", 20)
    per_page = 20 if per_page < 1 else min(per_page, 100)
    after = first(query, "page_token")
    start = 0
    if after:
        for i, item in enumerate(items):
            if token(item) == after:
                start = i + 1
                break
    chunk = list(items[start : start + per_page])
    headers = {"x-per-page": str(per_page)}
    if start + per_page < len(items) and chunk:
        headers["Link"] = f'<{_link(base, query, page_token=token(chunk[-1]))}>; rel="next"'
    return chunk, headers
