"""Properties of extraction on arbitrary text: it never raises, never returns a reference on a host
that is not configured, and its normalised URLs read back to the same reference."""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from signposts.extract import extract, extract_issue
from signposts.extract_norm import valid_project_path
from signposts.references import DocsSite, ExtractContext, Reference

G = "https://gitlab.acme.example"
SITE = DocsSite(url="https://docs.acme.example/config/", project="acme/config", root="docs/")
CTX = ExtractContext(gitlab_url=G, docs_sites=(SITE,), project="acme/app", max_references=1000)
ORIGINS = {("https", "gitlab.acme.example", None), ("https", "docs.acme.example", None)}

# Pieces that matter to the patterns, with look-alikes, invisible characters and other scripts.
PIECES = [
    "https://",
    "http://",
    "HTTPS://",
    "javascript:",
    "data:",
    "file://",
    "ftp://",
    "//",
    "gitlab.acme.example",
    "docs.acme.example",
    "evil.test",
    "gitlab.\u0430cme.example",
    "gitla\u212a.acme.example",
    "\uff47itlab.acme.example",
    "gitlab\u3002acme\u3002example",
    "@",
    ":",
    ":8443",
    ":443",
    "/",
    "/-/",
    "blob/",
    "raw/",
    "commit/",
    "merge_requests/",
    "issues/",
    "tree/",
    "config/",
    "acme/",
    "acme/config",
    "main/",
    "docs/",
    "a.md",
    "x.py",
    "..",
    ".",
    "%2e",
    "%2E%2e",
    "%2F",
    "%00",
    "%",
    "#",
    "#L",
    "#L10-20",
    "-L",
    "?",
    "ref_type=tags",
    "!",
    "!12",
    "\\!",
    "abc1234",
    "0123456789abcdef0123456789abcdef01234567",
    "deadbeef",
    "1234567",
    "[",
    "]",
    "(",
    ")",
    "](",
    "<",
    ">",
    "{",
    "}",
    '"',
    "'",
    "`",
    ",",
    ";",
    " ",
    "\n",
    "\t",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u2066",
    "\ufeff",
    "\u00a0",
    "\x00",
    "\x1b",
    "\u0430",
    "\u0435",
    "\u4e2d",
    "\u0d28\u0d4d",
    "\U0001f600",
    "\uff5c",
    "[[",
    "]]",
    "~",
    "&",
]
pieces_text = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
any_text = st.text(st.characters(codec="utf-8"), max_size=200)
texts = st.one_of(pieces_text, any_text, st.tuples(pieces_text, any_text).map("".join))


def _check(ref: Reference) -> None:
    assert ref.kind in ("docs_page", "file", "commit", "merge_request")
    if ref.url is not None:
        parts = urlsplit(ref.url)
        assert (parts.scheme, parts.hostname, parts.port) in ORIGINS
        assert parts.username is None and parts.password is None
    if ref.kind == "docs_page":
        assert ref.docs_site == SITE.url and ref.url is not None
        assert ref.url.startswith(SITE.url.rstrip("/"))
    else:
        assert ref.project is not None and valid_project_path(ref.project)
    if ref.path is not None:
        assert ".." not in ref.path.split("/") and not ref.path.startswith("/")
        assert all(c >= " " for c in ref.path)
    if ref.iid is not None:
        assert 1 <= ref.iid <= 2147483647
    if ref.lines is not None:
        assert 1 <= ref.lines[0] <= ref.lines[1]


@settings(max_examples=200, deadline=None)
@given(texts)
def test_never_raises_and_never_leaves_the_configured_hosts(text: str) -> None:
    result = extract(text, CTX)
    for ref in result.references:
        _check(ref)
    assert len({r.reference for r in result.references}) == len(result.references)


@settings(max_examples=200, deadline=None)
@given(texts)
def test_a_normalised_url_reads_back_to_the_same_reference(text: str) -> None:
    for ref in extract(text, CTX).references:
        if ref.url is not None:
            again = extract(f"<{ref.url}>", CTX).references
            assert [r.reference for r in again] == [ref.reference]


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, max_size=5), st.integers(0, 300), st.integers(0, 5))
def test_budgets_hold_across_an_issue(notes: list[str], max_bytes: int, max_refs: int) -> None:
    ctx = ExtractContext(
        gitlab_url=G,
        docs_sites=(SITE,),
        project="acme/app",
        max_bytes=max_bytes,
        max_references=max_refs,
    )
    result = extract_issue("", None, notes, ctx)
    assert len(result.references) <= max_refs
    total = sum(len(n.encode("utf-8")) for n in notes)
    assert result.skipped["bytes_over_limit"] >= total - max_bytes
    assert set(result.skipped) <= {"bytes_over_limit", "references_over_limit", "no_project"}
