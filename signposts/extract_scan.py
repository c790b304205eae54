"""Where links are in issue text: Markdown link targets and ``<...>`` autolinks (read exactly),
then bare URLs (boundaries per linkify-it), then the text with all of them blanked out.

Main rule: the text left for short forms holds no part of any URL, link target or wiki link, so
``https://evil.test/acme/app@abc1234`` or a path after a URL cut short are never read as short
forms. Boundaries follow linkify-it's rules (``external/linkify-it``): trailing ``.``, ``,``,
``;``, ``:``, ``!``, ``?``, unbalanced closing brackets and quotes, and a ``.`` before a closing
bracket are not part of a URL (as GitLab's autolinker has it); balanced
``(...)``, ``[...]``, ``{...}`` and quotes are. Two deliberate differences: every Unicode format
character (zero-width, joiners, bidi controls) ends a URL and the URL it ends is dropped, so
invisible characters can never glue two hosts together or hide part of a path; and a backslash
or backtick ends a URL (code spans). Every group is bounded, so no pattern backtracks far.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import regex

from signposts.extract_norm import ascii_lower

_SPACE = r"[\s\p{Z}\p{Cc}\p{Cf}]"
_SEP = r"[<>\uff5c`\\]"
_STOP = rf"(?:{_SPACE}|{_SEP}|$)"
_NOT_SPACE_OR_SEP = r"\s\p{Z}\p{Cc}\p{Cf}<>\uff5c`\\"  # body of a negated class


def _except(chars: str) -> str:
    """One character that is neither space-like, a separator, nor one of ``chars`` (one negated
    class per character keeps the patterns fast on long runs)."""
    return f"[^{chars}{_NOT_SPACE_OR_SEP}]"


_PSEUDO_LETTER = rf"[^\p{{P}}{_NOT_SPACE_OR_SEP}]"
_PATH_ITEM = "|".join(
    [
        _except("()\\[\\]{}.,\"'?!\\-;:"),
        "\\[" + _except("\\]") + "{0,256}\\]",
        "\\(" + _except("\\)") + "{0,256}\\)",
        "\\{" + _except("\\}") + "{0,256}\\}",
        '"' + _except('"') + '{1,256}"',
        "'" + _except("'") + "{1,256}'",
        f"'(?={_PSEUDO_LETTER}|-)",
        "\\.{2,64}[a-zA-Z0-9%/&]",
        # GitLab (Rinku) ends a URL before a "." that precedes an unbalanced ")": "(see URL.)"
        f"\\.(?!{_STOP}|\\.|[)\\]}}])",
        # ... and before ": " (autolink_filter_spec.rb, "does not include trailing punctuation")
        f":(?!{_STOP})",
        "-+",
        f",(?!{_STOP})",
        f";(?!{_STOP})",
        f"!{{1,64}}(?!{_STOP}|!)",
        f"\\?(?!{_STOP}|\\?)",
    ]
)
# Bare URLs. The authority is read up to the path; user info is read too, so that
# ``https://gitlab.acme.example@evil.test/`` is seen whole and dropped, never cut at the ``@``.
URL_RE = regex.compile(
    r"(?<!\w)(?P<url>(?i:https?)://"
    "(?P<auth>" + _except("/?#\\[\\](){}\"'") + "{0,512}+)"
    rf"(?P<path>[/?#](?:{_PATH_ITEM})++|/)?)"
)
# Other schemes (and their whole token) are dropped; listed bare schemes need no ``//``.
OTHER_SCHEME_RE = regex.compile(
    r"(?<![\w+.-])(?:[A-Za-z][A-Za-z0-9+.-]{0,31}://"
    r"|(?i:javascript|vbscript|data|file|mailto|blob|about|view-source):)"
)
# Markdown inline link and image targets, read exactly: ``](target)``, ``](<target>)``, with an
# optional title. Balanced parentheses one level deep, as CommonMark allows.
MD_TARGET_RE = regex.compile(
    r"\]\((?P<target>[ \t]*(?:<(?P<angle>[^<>\n]{0,2048})>"
    r"|(?P<bare>(?:[^\s()<>\\]|\((?:[^\s()<>\\]){0,256}\)){1,2048}+))"
    r"(?:[ \t]+(?:\"[^\"\n]{0,512}\"|'[^'\n]{0,512}'|\([^()\n]{0,512}\)))?[ \t]*)\)"
)
# ``<scheme:...>`` autolinks, read exactly.
AUTOLINK_RE = regex.compile(r"<(?P<url>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]{0,2048}+)>")
# GitLab wiki links ``[[Page]]`` are dropped with their content.
WIKI_RE = regex.compile(r"\[\[[^\[\]\n]{0,256}\]\]")
SCHEME_RE = regex.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}:")
_TRAILING = ".,;:!?*"


@dataclass(frozen=True)
class Link:
    """A link target found in text: ``exact`` (a Markdown link target, read as written),
    ``autolink`` (``<url>``, read as written), ``bare`` (a bare http(s) URL, boundaries per
    linkify-it) or ``relative`` (a Markdown target with no scheme)."""

    start: int
    target: str
    kind: Literal["exact", "autolink", "bare", "relative"]

    @property
    def shown(self) -> bool:
        """Whether the link's text is the URL itself (a bare URL or an autolink), which GitLab
        reads as a reference from its start; a Markdown target must be a reference whole."""
        return self.kind in ("autolink", "bare")


_TOKEN_END = regex.compile(r"\s")
# A URL cut short by an invisible character is dropped rather than read truncated.
_FORMAT_CHAR = regex.compile(r"\p{Cf}")


def remaining(deadline: float) -> float:
    """Seconds left before ``deadline`` for the next pattern; TimeoutError when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def scan_links(text: str, deadline: float) -> tuple[list[Link], str]:
    """The http(s) and relative link targets in ``text``, and the text with every link, URL of
    any scheme and wiki link blanked out (so short forms are never read inside them). Raises
    TimeoutError past ``deadline``."""
    links: list[Link] = []
    blanks: list[tuple[int, int]] = []
    for match in WIKI_RE.finditer(text, timeout=remaining(deadline)):
        blanks.append(match.span())
    for match in MD_TARGET_RE.finditer(text, timeout=remaining(deadline)):
        blanks.append(match.span("target"))
        target = match.group("angle")
        target = (match.group("bare") if target is None else target).strip()
        scheme = SCHEME_RE.match(target)
        if scheme is None:
            links.append(Link(match.start(), target, "relative"))
        elif ascii_lower(scheme.group()) in ("http:", "https:"):
            # CommonMark allows spaces inside ``<...>``; they stand for %20 in a URL
            links.append(Link(match.start(), target.replace(" ", "%20"), "exact"))
    for match in AUTOLINK_RE.finditer(text, timeout=remaining(deadline)):
        blanks.append(match.span())
        if ascii_lower(match.group("url")).startswith(("http:", "https:")):
            links.append(Link(match.start(), match.group("url"), "autolink"))
    text = _blank(text, blanks)

    # A bare URL blanks its whole whitespace-delimited token: whatever follows a URL that ended
    # early (at a format character, a backslash, an unbalanced bracket) is no bare path.
    blanks = []
    for pattern in (URL_RE, OTHER_SCHEME_RE):
        blanked_to = 0
        for match in pattern.finditer(text, timeout=remaining(deadline)):
            if match.start() >= blanked_to:
                end = _TOKEN_END.search(text, match.end(), timeout=remaining(deadline))
                blanked_to = end.start() if end else len(text)
                blanks.append((match.start(), blanked_to))
            if pattern is URL_RE and not _FORMAT_CHAR.match(text, match.end()):
                url: str = match.group("url")
                if match.group("path") is None:  # an authority alone loses trailing punctuation
                    url = url.rstrip(_TRAILING)
                links.append(Link(match.start(), url, "bare"))
    links.sort(key=lambda link: link.start)
    return links, _blank(text, blanks)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces, so offsets stay valid for ordering."""
    if not spans:
        return text
    parts: list[str] = []
    at = 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        parts.append(text[at:start])
        parts.append(" " * (end - start))
        at = end
    parts.append(text[at:])
    return "".join(parts)
