"""The page at ``/``: a question box and one answer or decline, rendered on the server.

Rules: Jinja2 with autoescape on, so no repository, model or asker text is ever markup; no
script at all (the form posts), no cookies, nothing kept between questions; the only links are
the citations' permalinks, and only when they are http(s) URLs. The stylesheet is a file served
by the app, so the Content-Security-Policy needs no ``'unsafe-inline'``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

HERE = Path(__file__).parent
STYLESHEET = HERE / "static" / "page.css"
# A citation marker in an answer's prose, e.g. "[2]": bounded digits, so the scan is linear.
MARKER = re.compile(r"\[(\d{1,3})\]")
MAX_ANSWER_CHARS = 20_000

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'; object-src 'none'; script-src 'none'"
)


@dataclass(frozen=True)
class Part:
    """A run of answer text, or a citation marker (``n``) that links to its source."""

    text: str
    n: int | None = None


def answer_parts(answer: str, cited: set[int]) -> list[Part]:
    """The answer split at its citation markers; a marker of no citation stays plain text."""
    parts: list[Part] = []
    last = 0
    answer = answer[:MAX_ANSWER_CHARS]
    for match in MARKER.finditer(answer):
        n = int(match.group(1))
        if n not in cited:
            continue
        if match.start() > last:
            parts.append(Part(answer[last : match.start()]))
        parts.append(Part(match.group(), n))
        last = match.end()
    if last < len(answer):
        parts.append(Part(answer[last:]))
    return parts


def safe_url(url: str) -> str | None:
    return url if url.startswith(("https://", "http://")) else None


@cache
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(
    *,
    question: str = "",
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    needs_key: bool = False,
    max_chars: int = 2000,
) -> str:
    """The whole page: the form (with the question asked, if any), then the result or error."""
    citations = []
    parts: list[Part] = []
    if result and result.get("outcome") == "answered":
        citations = [{**c, "href": safe_url(c["url"])} for c in result["citations"]]
        parts = answer_parts(result.get("answer") or "", {c["n"] for c in citations})
    return (
        _environment()
        .get_template("page.html")
        .render(
            question=question,
            result=result,
            parts=parts,
            citations=citations,
            error=error,
            needs_key=needs_key,
            max_chars=max_chars,
        )
    )


def stylesheet() -> bytes:
    return STYLESHEET.read_bytes()
