"""The page at ``/``: a question box and one answer or decline, rendered on the server.

Rules: Jinja2 with autoescape on, so no repository, model or asker text is ever markup; no
script at all (the form posts), no cookies, nothing kept between questions; the only links are
the citations' permalinks, and only when they are http(s) URLs. The stylesheet is a file served
by the app, so the Content-Security-Policy needs no ``'unsafe-inline'``.

An answer's Markdown is read for what a reader needs and nothing more: paragraphs, bulleted and
numbered lists, inline code and citation markers become parts the template renders as elements,
each part's text escaped; HTML in an answer (a model may copy it from the docs) stays text.
Offline mode's result is shown as what it is: where to look, not an answer.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

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


# A list item: a bullet (-, *, +) or a number (1. or 1)) and a space; a line is bounded first.
LIST_ITEM = re.compile(r"[ ]{0,3}(?:([-*+])|(\d{1,9})[.)])[ \t]+(\S.*)")
BACKTICKS = re.compile(r"`+")
MAX_LINE_CHARS = 4_000


@dataclass(frozen=True)
class Part:
    """A run of answer text, inline code (``code``), or a citation marker (``n``) that links to
    its source."""

    text: str
    n: int | None = None
    code: bool = False


@dataclass(frozen=True)
class Block:
    """A paragraph (one item), or a bulleted (``ul``) or numbered (``ol``) list of items."""

    kind: Literal["p", "ul", "ol"]
    items: tuple[tuple[Part, ...], ...]
    start: int = 1  # a numbered list's first number


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


def inline_parts(text: str, cited: set[int]) -> list[Part]:
    """Text split into code spans (CommonMark's: a run of backticks up to the next run of the
    same length, text inside taken as written) and the rest, whose cited markers link."""
    runs = [(m.start(), m.end()) for m in BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    parts: list[Part] = []
    last, index = 0, 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        # the next run of the same length closes the span (one bisect: linear overall)
        at = bisect_right(same, index)
        if at == len(same):
            index += 1
            continue
        closing = same[at]
        parts += answer_parts(text[last:start], cited)
        code = text[end : runs[closing][0]]
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]  # one space each side is padding (CommonMark)
        parts.append(Part(code.replace("\n", " "), code=True))
        last = runs[closing][1]
        index = closing + 1
    parts += answer_parts(text[last:], cited)
    return [part for part in parts if part.text]


def answer_blocks(answer: str, cited: set[int]) -> list[Block]:
    """The answer as paragraphs and lists (a blank line ends a block, a list item starts one or
    carries on its list, any other line carries on the item or paragraph above it), each
    item's text as inline parts."""
    blocks: list[Block] = []
    kind, start = "", 1  # the block being read
    items: list[list[str]] = []  # its lines, item by item

    def close() -> None:
        if items:
            parts = tuple(tuple(inline_parts(" ".join(item), cited)) for item in items)
            blocks.append(Block(kind, parts, start))  # type: ignore[arg-type]

    for line in answer[:MAX_ANSWER_CHARS].splitlines():
        line = line[:MAX_LINE_CHARS]
        item = LIST_ITEM.fullmatch(line)
        if not line.strip():
            close()
            kind, items = "", []
        elif item is not None:
            listed = "ul" if item.group(1) else "ol"
            if kind != listed:
                close()
                kind, items, start = listed, [], int(item.group(2) or 1)
            items.append([item.group(3)])
        elif kind:  # an item's or a paragraph's next line (CommonMark's lazy continuation)
            items[-1].append(line.strip())
        else:
            kind, items, start = "p", [[line.strip()]], 1
    close()
    return blocks


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
    blocks: list[Block] = []
    places: list[dict[str, Any]] = []
    if result and result.get("outcome") == "answered":
        citations = [{**c, "href": safe_url(c["url"])} for c in result["citations"]]
        blocks = answer_blocks(result.get("answer") or "", {c["n"] for c in citations})
    if result and result.get("where_to_look"):
        places = _places(result, {c["n"] for c in citations})
    return (
        _environment()
        .get_template("page.html")
        .render(
            question=question,
            result=result,
            blocks=blocks,
            citations=citations,
            places=places,
            error=error,
            needs_key=needs_key,
            max_chars=max_chars,
        )
    )


def _places(result: dict[str, Any], cited: set[int]) -> list[dict[str, Any]]:
    """Offline mode's where to look, each place linked; under the passage offline mode quoted,
    its matching sentences (the markers taken out: they are no model's citations)."""
    matching = MARKER.sub("", result.get("answer") or "").strip()
    return [
        {
            **place,
            "href": safe_url(place["url"]),
            "matching": inline_parts(" ".join(matching.split()), set())
            if place["n"] in cited
            else [],
        }
        for place in result["where_to_look"]
    ]


def stylesheet() -> bytes:
    return STYLESHEET.read_bytes()
