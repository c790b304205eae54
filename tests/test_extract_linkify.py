"""linkify-it's URL fixtures (``tests/fixtures/linkify-it/``, with their licence and upstream
commit) as an outside check of where a URL ends and what is not a URL at all.

Only the ``http(s)://`` cases apply: Scout looks for links to configured hosts only, so each case
runs with its own host configured as a docs site. Deliberate divergences, each asserted below:
- URLs with user info (``http://user:pass@example.com``) are found whole but yield nothing: a
  credential in a URL is never followed, and reading the host after the ``@`` would be exactly the
  ``https://gitlab.acme.example@evil.test/`` trick.
- A URL touching a format character (the zero-width joiner inside the Malayalam word) ends there
  and is dropped: invisible characters never extend, truncate-and-keep, or glue a URL.
``not_links.txt`` runs without an issue project: with one, ``node.js and io.js`` would be two
bare files (``.js`` is a code extension; see the table in test_extract.py), which is not a link.
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from signposts.extract import extract
from signposts.extract_scan import scan_links
from signposts.references import DocsSite, ExtractContext

FIXTURES = Path(__file__).parent / "fixtures" / "linkify-it"


def _cases(name: str) -> list[tuple[str, str]]:
    """(input, expected link) pairs: a line followed by a non-blank line is an input and its
    link; a line alone is both. ``%`` lines are comments."""
    lines = [
        line
        for line in (FIXTURES / name).read_text("utf-8").split("\n")
        if not line.startswith("%")
    ]
    cases = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if i + 1 < len(lines) and lines[i + 1].strip():
            cases.append((lines[i], lines[i + 1]))
            i += 2
        else:
            cases.append((lines[i], lines[i]))
            i += 1
    return cases


HTTP_CASES = [c for c in _cases("links.txt") if c[1].lower().startswith(("http://", "https://"))]
NOT_LINKS = [
    line
    for line in (FIXTURES / "not_links.txt").read_text("utf-8").split("\n")
    if line.strip() and not line.startswith("%")
]
WITH_USER_INFO = {c for c in HTTP_CASES if "@" in urlsplit(c[1]).netloc}
WITH_FORMAT_CHARACTER = {c for c in HTTP_CASES if "\u200d" in c[1]}


def _site_ctx(url: str) -> ExtractContext:
    parts = urlsplit(url)
    site = DocsSite(
        url=f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/", project="f/s", root="d/"
    )
    return ExtractContext(gitlab_url="https://gitlab.acme.example", docs_sites=(site,))


def _bare_urls(text: str) -> list[str]:
    links, _ = scan_links(text, time.monotonic() + 2)
    return [link.target for link in links if link.kind != "relative"]


def test_the_fixtures_are_all_read() -> None:
    assert (len(HTTP_CASES), len(NOT_LINKS)) == (76, 38)


@pytest.mark.parametrize(("text", "expected"), HTTP_CASES)
def test_url_ends_where_linkify_it_says(text: str, expected: str) -> None:
    if (text, expected) in WITH_FORMAT_CHARACTER:
        assert _bare_urls(text) == []
    else:
        assert _bare_urls(text) == [expected]


@pytest.mark.parametrize(("text", "expected"), HTTP_CASES)
def test_url_on_a_configured_docs_site_is_one_docs_page(text: str, expected: str) -> None:
    found = extract(text, _site_ctx(expected)).references
    if (text, expected) in WITH_USER_INFO | WITH_FORMAT_CHARACTER:
        assert found == []
    else:
        assert [r.kind for r in found] == ["docs_page"]


@pytest.mark.parametrize(("text", "expected"), HTTP_CASES)
def test_url_on_another_host_yields_nothing(text: str, expected: str) -> None:
    assert extract(text, _site_ctx("https://docs.acme.example/")).references == []


SITES = tuple(
    DocsSite(url=f"{scheme}://{host}/", project="f/s", root="d/")
    for scheme in ("http", "https")
    for host in ("example.com", "test.com", "localhost", "google.com", "123", "test")
)


# URL-shaped candidates that the scanner reads whole and that then fail on their host.
CANDIDATES = {
    "http://.example.com": ["http://.example.com"],
    "http://-example.com": ["http://-example.com"],
    "http://example.com_": ["http://example.com_"],
    "http://": ["http://"],
    "http://.": ["http://"],
    "http://..": ["http://"],
    "http://#": ["http://"],
    "http://##": ["http://##"],
    "http://?": ["http://"],
    "http://??": ["http://"],
}


@pytest.mark.parametrize("text", NOT_LINKS)
def test_not_a_link_yields_nothing(text: str) -> None:
    ctx = ExtractContext(gitlab_url="https://example.com", docs_sites=SITES)
    assert extract(text, ctx).references == []
    assert _bare_urls(text) == CANDIDATES.get(text, [])
