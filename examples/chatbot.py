#!/usr/bin/env python3
"""A chat bot's side of ``scout serve``: ask one question, get one chat message back.

Copy this into a Slack, Mattermost or Discord bot (standard library only). The bot calls
:func:`ask` with the text someone wrote and posts what it returns:

    message = ask("https://scout.internal.example", "How do I rotate keys?", key=KEY)

On the command line, for trying a server out:

    SCOUT_API_KEY=... python examples/chatbot.py https://scout.internal.example "question"
    python examples/chatbot.py --style slack http://127.0.0.1:8765 "question"

An answer comes with its numbered sources as links (pinned to a commit); a decline says that the
documentation does not cover the question, and why. Documentation text is escaped for the chat's
markup (:func:`escape`): a page that spells a link, a mention or ``<!channel>`` shows it as
text. A refusal (rate limit, busy) waits once for the server's Retry-After when it is short;
anything else becomes a one-line apology, never a guess. Exit 0 when a message was produced
(answer or decline), 1 when the server failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from typing import Any

TIMEOUT = 130  # seconds: the server's answer timeout, plus a margin
MAX_WAIT = 10  # seconds of Retry-After worth waiting for once, in a chat


class ScoutUnavailable(Exception):
    """The server refused or failed; the message says why, in words for the channel."""


def _post(url: str, question: str, key: str | None) -> tuple[int, dict[str, Any], str | None]:
    body = json.dumps({"question": question}).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, json.load(response), None
    except urllib.error.HTTPError as exc:
        try:
            document = json.load(exc)
        except ValueError:
            document = {"error": {"code": "http_error", "message": str(exc)}}
        return exc.code, document, exc.headers.get("Retry-After")


def ask_document(base_url: str, question: str, *, key: str | None = None) -> dict[str, Any]:
    """The ``scout ask --json`` document for ``question``, or ScoutUnavailable."""
    url = base_url.rstrip("/") + "/api/v1/ask"
    status, document, retry_after = _post(url, question, key)
    if status in (429, 503) and retry_after and retry_after.isdigit():
        if int(retry_after) <= MAX_WAIT:
            time.sleep(int(retry_after))
            status, document, retry_after = _post(url, question, key)
    if status != 200:
        error = document.get("error", {})
        raise ScoutUnavailable(
            f"Scout could not answer ({status} {error.get('code')}): {error.get('message')}"
        )
    return document


# Slack's mrkdwn gives meaning to three characters only, and asks apps to escape exactly these
# (api.slack.com/reference/surfaces/formatting, "Escaping text"): `<url|text>` links, `<!channel>`
# pings and `<@U123>` mentions all need a raw `<`.
_SLACK = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
# Markdown (Mattermost, Discord): a backslash makes each of these a plain character (links,
# images, autolinks, emphasis, spoilers, headings, entities); "@" gets a zero-width space after
# it, since @everyone, @here, @channel and @all ping and no backslash stops that. Inline code is
# kept as it is: nothing inside a code span is a link or a mention, in either chat.
_MARKDOWN = re.compile(r"([\\*_~\[\]()<>|#&])")
_CODE_SPAN = re.compile(r"(`[^`\n]{1,2000}`)")
# In a link's address, what would end it or start markup is percent-encoded.
_URL_UNSAFE = {"<": "%3C", ">": "%3E", "|": "%7C", "(": "%28", ")": "%29", " ": "%20"}


def escape(text: str, style: str) -> str:
    """``text`` from the documentation as plain text in the chat's markup: no link, mention,
    ping or formatting that the text spells reaches the channel as one."""
    if style == "slack":
        return text.translate(_SLACK)
    pieces = _CODE_SPAN.split(text)  # odd pieces are code spans
    return "".join(
        piece if n % 2 else _MARKDOWN.sub(r"\\\1", piece).replace("@", "@\u200b")
        for n, piece in enumerate(pieces)
    )


def _address(url: str, style: str) -> str:
    safe = "".join(_URL_UNSAFE.get(c, c) for c in url if c.isprintable())
    return safe.translate(_SLACK) if style == "slack" else safe


def link(text: str, url: str, style: str) -> str:
    """A link whose text and address are escaped: the text shown is the text given."""
    if style == "slack":
        return f"<{_address(url, style)}|{escape(text, style)}>"
    return f"[{escape(text, style)}]({_address(url, style)})"


def format_message(document: dict[str, Any], *, style: str = "markdown") -> str:
    """A chat message for an ask document: Markdown (Mattermost, Discord) or Slack mrkdwn, every
    piece of documentation text escaped for it. Offline mode (no model) gets where to look,
    never its extract posted as an answer."""
    places = document.get("where_to_look") or []
    if places:
        if document["outcome"] == "answered":
            head = "Offline mode: no model read these passages; they best match the question."
        else:
            head = (
                f"Not answered in offline mode ({escape(str(document['reason']), style)}); no "
                "model read the passages, so this does not mean the documentation lacks the answer."
            )
        lines = [head, "", "Where to look:"]
        for place in places:
            where = (
                f"{place['project']} {place['path']} lines {place['lines'][0]}-{place['lines'][1]}"
            )
            lines.append(f"[{place['n']}] {link(where, str(place['url']), style)}")
        return "\n".join(lines)
    if document["outcome"] != "answered":
        return (
            "The documentation does not cover this, so there is no answer rather than a guess.\n"
            f"Reason: {escape(str(document['reason']), style)}"
        )
    lines = [escape(str(document["answer"]), style), "", "Sources:"]
    for c in document["citations"]:
        where = f"{c['project']} {c['path']} lines {c['lines'][0]}-{c['lines'][1]}"
        lines.append(f"[{c['n']}] {link(where, str(c['url']), style)}")
    return "\n".join(lines)


def ask(base_url: str, question: str, *, key: str | None = None, style: str = "markdown") -> str:
    """The message to post for ``question`` (an apology line when the server failed)."""
    try:
        return format_message(ask_document(base_url, question, key=key), style=style)
    except ScoutUnavailable as exc:
        return str(exc)
    except (urllib.error.URLError, TimeoutError) as exc:
        return f"Scout could not be reached: {exc}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Ask scout serve one question, print a message.")
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8765")
    parser.add_argument("question")
    parser.add_argument("--style", choices=["markdown", "slack"], default="markdown")
    args = parser.parse_args(argv)
    key = os.environ.get("SCOUT_API_KEY") or None
    try:
        document = ask_document(args.url, args.question, key=key)
    except (ScoutUnavailable, urllib.error.URLError, TimeoutError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(format_message(document, style=args.style))
    return 0


if __name__ == "__main__":
    sys.exit(main())
