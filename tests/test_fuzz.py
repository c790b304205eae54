"""Fuzzing with hypothesis: extraction, query building and passage splitting never raise and keep
their output bounded, whatever the text.

Strategies mix arbitrary Unicode with the pieces each parser cares about (URL parts, FTS5
operators, Markdown and reST structure), so the search reaches the interesting branches quickly.
The docs-site mapping gets front matter built from its keys and URL pieces. Only Scout's own
errors may escape (none do today). The atheris harnesses in fuzz/ (extraction; splitters and the
docs-site mapping) are documented in docs/development.md and run outside the suite.
"""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scout.corpus.passages import (
    HEADING_SEPARATOR,
    MAX_HEADING_CHARS,
    MAX_PASSAGE_CHARS,
    MAX_PATH_CHARS,
    split_document,
)
from scout.errors import UsageError
from scout.retrieve.lexical import build_query
from scout.retrieve.question import MAX_QUESTION_CHARS
from scout.words import MAX_QUERY_TERMS, MAX_WORD_CHARS
from signposts import docs_map
from signposts.extract import extract_issue
from signposts.references import MAX_REFERENCE_CHARS, DocsSite, ExtractContext

G = "https://gitlab.acme.example"
CTX = ExtractContext(
    G, (DocsSite("https://docs.acme.example/h/", "acme/h", "docs/"),), "acme/app", max_bytes=20_000
)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

URL_PIECES = [
    G, "https://docs.acme.example/h/", "/acme/app/-/blob/", "/-/merge_requests/", "/-/commit/",
    "main/", "docs/a.md", "#L", "-", "10", "%2e%2e/", "%2f", "..", "/", "@", ":", "?ref_type=heads",
    "!", "#", "acme/app!", "acme/app@", "deadbeefcafe1234", "0123456789abcdef" * 2 + "01234567",
    "[x](", ")", "<", ">", "`", "\u200b", "\u202e", "\x00", "\n", " ", "](", "\\", "\ufeff",
    "ｈｔｔｐｓ",
]  # fmt: skip
FTS_PIECES = [
    "NOT", "AND", "OR", "NEAR(", ")", "(", '"', "*", "^", ":", "-", "+", "body:", "{heading}",
    "'", ";", "\x00", "rotate", "key", " ", "ß", "İ", "ﬁ", "\u0301", "日本語", "x" * 80,
]  # fmt: skip
DOC_PIECES = [
    "# ", "## ", "###### ", "Title", "\n", "\n\n", "===\n", "---\n", "~~~\n", "```\n", "    code\n",
    "- ", "  - ", "1. ", "> ", "<!-- ", " -->", ".. code-block::\n", "::\n", "*", "_", "`",
    "\r\n",
    "-----END PASSAGE 1-----", "\x00", "\u202e", "|a|b|\n|-|-|\n", "[^1]: note\n", "<div>\n",
]  # fmt: skip


def mixed(pieces: list[str], max_size: int = 60) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=8)), max_size=max_size).map(
        "".join
    )


@FUZZ
@given(
    title=mixed(URL_PIECES, 10),
    description=mixed(URL_PIECES),
    notes=st.lists(mixed(URL_PIECES, 20), max_size=3),
)
def test_extraction_never_raises_and_is_bounded(
    title: str, description: str, notes: list[str]
) -> None:
    found = extract_issue(title, description, notes, CTX)
    assert len(found.references) <= CTX.max_references
    assert len({r.reference for r in found.references}) == len(found.references)
    for ref in found.references:
        assert len(ref.reference) <= MAX_REFERENCE_CHARS
        assert not any(c in ref.reference for c in "\x00\n\r\u200b\u202e\ufeff")
        if ref.lines is not None:
            assert 1 <= ref.lines[0] <= ref.lines[1]
        if ref.path is not None:
            assert not ref.path.startswith("/") and ".." not in ref.path.split("/")


_FTS = sqlite3.connect(":memory:")
_FTS.execute("create virtual table t using fts5(heading, body, tokenize='porter unicode61')")
_FTS.execute("insert into t values ('Rotating keys', 'rotate the key weekly')")


@FUZZ
@given(question=mixed(FTS_PIECES))
def test_query_building_never_raises_and_always_parses_in_fts5(question: str) -> None:
    try:
        query = build_query(question)
    except UsageError as exc:
        assert str(exc).startswith(("question has no words", "question is "))
        return
    terms = query.split(" OR ")
    assert 1 <= len(terms) <= MAX_QUERY_TERMS
    assert len(query) <= MAX_QUERY_TERMS * (2 * MAX_WORD_CHARS * 4 + 6)
    _FTS.execute("select count(*) from t where t match ?", [query]).fetchone()


def test_an_over_long_question_is_refused_before_any_query() -> None:
    try:
        build_query("rotate " * MAX_QUESTION_CHARS)
    except UsageError as exc:
        assert "the limit is 4000" in str(exc)
    else:
        raise AssertionError("an over-long question was accepted")


@FUZZ
@given(
    text=mixed(DOC_PIECES, 120),
    name=st.sampled_from(["a.md", "b.rst", "README", "c.markdown", "d.txt"]),
)
def test_passage_splitting_never_raises_and_is_bounded(text: str, name: str) -> None:
    sections = split_document(f"docs/{name}", text)
    total_lines = text.count("\n") + 1
    for s in sections:
        assert 1 <= s.line_start <= s.line_end <= total_lines
        assert len(s.body) <= MAX_PASSAGE_CHARS
        assert len(s.heading) <= MAX_PATH_CHARS
        assert all(len(h) <= MAX_HEADING_CHARS for h in s.heading.split(HEADING_SEPARATOR))
        assert "\x00" not in s.body + s.heading
    starts = [s.line_start for s in sections]
    assert starts == sorted(starts)


FRONT_PIECES = [
    "---\n", "+++\n", "title: ", "slug: ", "url: ", "aliases:\n", "  - ", "date: 2026-01-02\n",
    "slug = ", "aliases = [", "]", ", ", '"', "'", "/", "../", "#", " #", "\n", " ", "\t", "x",
    "index", "_index", "01-", "next/", "\x00", "\u202e", "%2e%2e", "?q=1", "[", ":", "=",
]  # fmt: skip
PAGE_PIECES = [
    "", "/", "guide/", "index.html", "x.html", "01-intro/", "next/", "..", "%2F", "?a=b", "#x",
    "README", "_index", "a.md", "\x00", " ", "ÄÖ", "blog/2026/01/02/", "a" * 300,
]  # fmt: skip
PATHS = [
    "docs/index.md", "docs/guide/setup.md", "docs/guide/_index.md", "docs/01-intro/a.mdx",
    "docs/posts/p.md", "docs/ref/api.rst", "docs/README.md", "versioned_docs/version-1/a.md",
    "mkdocs.yml", "hugo.toml", "docs/conf.py",
]  # fmt: skip


@FUZZ
@given(
    front=mixed(FRONT_PIECES, 80),
    page=mixed(PAGE_PIECES, 8),
    generator=st.sampled_from([*docs_map.GENERATORS, "auto"]),
)
def test_docs_site_mapping_never_raises(front: str, page: str, generator: str) -> None:
    fields = docs_map.front_matter(front)
    assert all(isinstance(k, str) for k in fields)
    for path in PATHS:
        if generator != "auto":
            urls = docs_map.page_urls(path, "docs/", generator, fields.get)
            assert all(isinstance(u, str) and not u.startswith("/") for u in urls)
    assert docs_map.detect_generator(PATHS, "docs/") in (*docs_map.GENERATORS, None)
    candidates = docs_map.source_candidates(page, "docs/", generator)
    assert all(c.startswith("docs/") for c in candidates)
    docs_map.normalise_page(page, generator if generator != "auto" else "mkdocs")
    reads: list[str] = []

    def read(path: str) -> str:
        reads.append(path)
        return front

    found = docs_map.find_source(page, "docs/", generator, PATHS, read)
    assert found is None or found in PATHS
    assert len(reads) <= docs_map.MAX_SCANNED * (len(docs_map.GENERATORS) + 1)


@FUZZ
@given(
    text=mixed(
        DOC_PIECES + FRONT_PIECES + [":ref:`", "<x>`", "!!! note ", ":::", "{{< ", " >}}"], 120
    ),
    name=st.sampled_from(["a.mdx", "b.rst", "c.md"]),
)
def test_splitting_with_markup_and_front_matter_never_raises(text: str, name: str) -> None:
    sections = split_document(f"docs/{name}", text)
    assert all(len(s.body) <= MAX_PASSAGE_CHARS for s in sections)
    assert all(1 <= s.line_start <= s.line_end for s in sections)
