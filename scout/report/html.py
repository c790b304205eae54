"""The report as one HTML page: inline CSS, no scripts, no external assets, rendered by Jinja2
from ``templates/report.html``.

Main rule: every value reaches the page escaped and bounded. The environment autoescapes, and
its ``finalize`` turns every ``{{ value }}`` into at most :data:`MAX_TEXT` printable characters
escaped by ``html.escape`` (quotes included; the escaping the page has always had, so pages stay
byte-identical); links go through the template's ``link`` macro, which makes an anchor only for
http(s) URLs. Questions, issue references, paths and reasons are untrusted text; a
Content-Security-Policy that forbids scripts and every remote load backs the escaping up, so a
mistake here still cannot run code or phone home.

Why a template engine: the page's structure reads as HTML in one file instead of f-strings spread
over a dozen functions, and escaping is the environment's default rather than a call each value
must remember (Jinja2, as datasette and most Python web tools use).
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

import jinja2
from jinja2.ext import Extension
from markupsafe import Markup

from scout.report.model import Report
from scout.safe_text import printable

MAX_TEXT = 500  # characters of any one value shown: a page stays readable and bounded
CHECK_TITLES = {
    "corpus_rules": "Corpus rules: the target is private, excluded, archived or outside the groups",
    "resolves": "Resolves: the target moved on (stale link, reverted or unmerged change)",
    "addresses": "Addresses: the target does not answer the issue's question (a documentation gap)",
}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
_LAYOUT = re.compile(r"\n[ \t]*")


class _Compact(Extension):
    """Drops each line break of an .html template with the indentation after it, as it loads:
    the template is laid out for reading, the page has no whitespace between its tags."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return _LAYOUT.sub("", source) if name and name.endswith(".html") else source


def _bounded(value: Any) -> Markup:
    """A value as the page shows it: printable (bidi overrides and control characters out, as in
    a terminal), cut at MAX_TEXT characters, escaped. Markup (macro output) passes as it is."""
    if isinstance(value, Markup):
        return value
    # Bidi overrides reorder what a browser shows as surely as a terminal's: taken out here too.
    text = "" if value is None else printable(str(value), MAX_TEXT + 1)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + "…"
    return Markup(html.escape(text, quote=True))


def _http_url(url: Any) -> bool:
    """Only http(s) URLs become links; any other scheme (javascript:, data:) is shown as text."""
    return bool(url) and url.lower().startswith(("https://", "http://"))


def _iid(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment the page renders with (built once)."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("scout.report", "templates"),
        autoescape=True,
        finalize=_bounded,
        undefined=jinja2.StrictUndefined,  # a misspelt field fails the render, not blanks it
        keep_trailing_newline=True,  # the CSS keeps its last line break
        extensions=[_Compact],
    )
    environment.tests["http_url"] = _http_url
    environment.filters["iid"] = _iid
    environment.globals.update(check_titles=CHECK_TITLES, csp=Markup(CSP), newline=Markup("\n"))
    return environment


def render_html(report: Report) -> str:
    """The whole page, as one string."""
    return environment().get_template("report.html").render(report=report)
