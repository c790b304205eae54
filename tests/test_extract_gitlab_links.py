"""Where a merge request, commit or issue URL ends in prose, and links to folders, read as GitLab
reads them, with the rules taken from GitLab's own text (tests/fixtures/gitlab-specs, MIT).

- ``autolink_filter.rb`` and its spec: a bare URL loses trailing ``.``/``,`` and other punctuation
  and an unbalanced closing bracket or quote, and keeps a balanced ``(...)``, ``[...]``,
  ``{...}``;
- ``abstract_reference_filter.rb``: a link shown as its own text (``link == text``) names a
  merge request or commit from its start (``link_pattern_start``), so ``.../merge_requests/12(the
  fix)`` is ``!12`` and then text; a Markdown link target must be the reference whole
  (``link_pattern_anchor``);
- ``referable.rb`` and ``commit.rb``: what may follow the id (a sub-path, a query, an anchor, a
  ``.patch`` extension); ``commit.rb``'s ``uri_type`` tells a folder (``:tree``) from a file.

A folder is no signpost (docs/design.md, "Edges of the forms"): a tree URL, a blob URL
ending in ``/`` and a relative link ending in ``/`` are dropped and reported as ``folder``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from signposts.extract import extract
from signposts.references import ExtractContext

SPECS = Path(__file__).parent / "fixtures" / "gitlab-specs"
G = "https://gitlab.acme.example"
P = f"{G}/acme/app"
SHA = "0123456789abcdef0123456789abcdef01234567"
CTX = ExtractContext(gitlab_url=G, docs_sites=(), project="acme/app")

MR_URLS = [
    f"{P}/-/merge_requests/12",
    f"{P}/-/merge_requests/12/",  # issue_reference_filter_spec.rb, "link with trailing slash"
    f"{P}/-/merge_requests/12/diffs",
    f"{P}/-/merge_requests/12/diffs#note_123",  # "cross-project URL reference"
    f"{P}/-/merge_requests/12/diffs?commit_id={SHA}",  # "URL reference for a commit"
    f"{P}/-/merge_requests/12+",  # "data-reference-format attribute for URL references"
    f"{P}/-/merge_requests/12+s",
    f"{P}/merge_requests/12",  # the legacy route without /-/
]
COMMIT_URLS = [f"{P}/-/commit/{SHA}", f"{P}/-/commit/{SHA}.patch", f"{P}/-/commit/{SHA}/builds"]
ISSUE_URLS = [f"{P}/-/issues/12", f"{P}/-/issues/12#note_123", f"{P}/-/issues/incident/12"]
EXPECTED = {"mr": ["acme/app!12"], "commit": [f"acme/app@{SHA}"], "issue": []}
URLS = (
    [(u, "mr") for u in MR_URLS]
    + [(u, "commit") for u in COMMIT_URLS]
    + [(u, "issue") for u in ISSUE_URLS]
)


def _spec_list(text: str, before: str) -> list[str]:
    """The Ruby string array literal that follows ``before`` in a spec excerpt."""
    found = re.search(re.escape(before) + r".*?(\[[^\]]*\])", text, re.S)
    assert found is not None, before
    return list(ast.literal_eval(found.group(1)))


def _punctuation_pairs() -> dict[str, str]:
    """``PUNCTUATION_PAIRS`` (closing -> opening) as autolink_filter.rb defines it."""
    source = (SPECS / "autolink_filter.rb.txt").read_text()
    block = source.split("PUNCTUATION_PAIRS = {", 1)[1].split("}.freeze", 1)[0]
    pairs = dict(re.findall(r"""['"](.)['"] => ['"](.)['"]""", block))
    assert set(pairs) == {"'", '"', ")", "]", "}"}, pairs
    return pairs


TRAILING = _spec_list(
    (SPECS / "autolink_filter_spec.rb.txt").read_text(), "does not include trailing punctuation"
)
PAIRS = _punctuation_pairs()
QUOTES = [c for c, o in PAIRS.items() if c == o]
BRACKETS = [(o, c) for c, o in PAIRS.items() if c != o]


def refs(text: str) -> list[str]:
    return [r.reference for r in extract(text, CTX).references]


def test_the_rules_are_read_from_gitlab_s_text() -> None:
    assert TRAILING == [".", ", ok?", "...", "?", "!", ": is that ok?"]
    assert BRACKETS == [("(", ")"), ("[", "]"), ("{", "}")] and QUOTES == ["'", '"']
    anchors = (SPECS / "abstract_reference_filter.rb.txt").read_text()
    assert "if link == text && text =~ link_pattern_start" in anchors
    assert "link_pattern_anchor = /\\A#{link_pattern}\\z/" in anchors


@pytest.mark.parametrize(("url", "kind"), URLS)
@pytest.mark.parametrize("tail", TRAILING)
def test_trailing_punctuation_is_not_part_of_the_reference(url: str, kind: str, tail: str) -> None:
    # autolink_filter_spec.rb, "does not include trailing punctuation"
    assert refs(f"See {url}{tail}") == EXPECTED[kind]


@pytest.mark.parametrize(("url", "kind"), URLS)
@pytest.mark.parametrize(("opening", "closing"), BRACKETS)
def test_a_balanced_pair_stays_in_the_link_but_not_in_the_reference(
    url: str, kind: str, opening: str, closing: str
) -> None:
    # "includes trailing punctuation when part of a balanced pair": the link is
    # <url>(abc), which GitLab reads as the reference from its start, the rest being text
    assert refs(f"See {url}{opening}abc{closing}...") == EXPECTED[kind]
    # ... and an unbalanced closing one is not part of the link
    assert refs(f"See {url}{closing}...") == EXPECTED[kind]


@pytest.mark.parametrize(("url", "kind"), URLS)
@pytest.mark.parametrize("quote", QUOTES)
def test_quotes_after_the_url_are_not_part_of_the_reference(
    url: str, kind: str, quote: str
) -> None:
    # "removes trailing quotes"
    assert refs(f"See {url}{quote}abc{quote}...") == EXPECTED[kind]
    assert refs(f"See {url}{quote}...") == EXPECTED[kind]


@pytest.mark.parametrize(("url", "kind"), URLS)
def test_the_spec_s_unbalanced_link_names_the_reference(url: str, kind: str) -> None:
    # "removes one closing punctuation mark when the punctuation in the link is unbalanced"
    assert refs(f"({url}(a'b[c'd]))'") == EXPECTED[kind]


# Text in brackets after the URL, as people write it: with or without a space, in any bracket
# (full-width ones too), with a trailing period or comma, or the sentence going on.
ASIDES = [
    f"{gap}{opening}the fix{closing}{tail}"
    for gap in ("", " ", "\u00a0")
    for opening, closing in [*BRACKETS, ("\uff08", "\uff09"), ("\u201c", "\u201d")]
    for tail in ("", ".", ",", "), and more", "; see below")
]


@pytest.mark.parametrize(("url", "kind"), URLS)
@pytest.mark.parametrize("aside", ASIDES)
def test_text_in_brackets_after_the_url_is_not_read_into_it(
    url: str, kind: str, aside: str
) -> None:
    assert refs(f"Fixed by {url}{aside}") == EXPECTED[kind]
    assert refs(f"Fixed by <{url}>{aside}") == EXPECTED[kind]
    assert refs(f"(fixed by {url}{aside})") == EXPECTED[kind]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a link target is read whole (link_pattern_anchor): GitLab links "12(the_fix)" nowhere
        (f"[the fix]({P}/-/merge_requests/12(the_fix))", []),
        (f"[the fix]({P}/-/commit/{SHA}(the_fix))", []),
        (f"[the fix]({P}/-/merge_requests/12)", ["acme/app!12"]),
        # a CommonMark title after the target is no part of it
        (f"[the fix]({P}/-/merge_requests/12 (the fix))", ["acme/app!12"]),
        # an autolink is shown as its text: read from its start
        (f"<{P}/-/merge_requests/12(the_fix)>", ["acme/app!12"]),
        # the id must start the segment, and stay within its bounds
        (f"{P}/-/merge_requests/(12)", []),
        (f"{P}/-/merge_requests/2147483648(x)", []),
        (f"{P}/-/commit/abc12(x)", []),
        (f"{P}/-/commit/{SHA}{SHA}(x)", []),
        # a reference inside the brackets still counts on its own
        (f"{P}/-/issues/12 (fixed by !13)", ["acme/app!13"]),
        (f"{P}/-/merge_requests/12 (and {P}/-/merge_requests/13)", ["acme/app!12", "acme/app!13"]),
    ],
)
def test_link_targets_are_read_whole_and_shown_urls_from_their_start(
    text: str, expected: list[str]
) -> None:
    assert refs(text) == expected


FOLDERS = [
    f"{P}/-/tree/main/docs",
    f"{P}/-/tree/main/docs/",
    f"{P}/-/tree/{SHA}/docs/runbooks?ref_type=heads",
    f"{P}/-/tree/main",  # the repository's root folder
    f"{P}/tree/main/docs",  # the legacy route
    f"{P}/-/blob/main/docs/",  # GitLab sends a blob URL ending in "/" to the tree
    f"{P}/-/raw/main/docs/",
]


@pytest.mark.parametrize("url", FOLDERS)
@pytest.mark.parametrize("form", ["{u}", "<{u}>", "[docs]({u})", "see {u}."])
def test_a_folder_is_no_signpost_and_is_reported(url: str, form: str) -> None:
    text = form.format(u=url)
    found = extract(text, CTX)
    assert found.references == [] and found.skipped["folder"] == 1
    assert [reason for _, reason in found.dropped] == ["folder"]


@pytest.mark.parametrize(
    "target", ["docs/runbooks/", "./docs/", "docs/runbooks/#setup", "/acme/app/-/tree/main/docs"]
)
def test_a_relative_link_to_a_folder_is_no_signpost(target: str) -> None:
    found = extract(f"[the runbooks]({target})", CTX)
    assert found.references == [] and found.dropped == [(target, "folder")]


@pytest.mark.parametrize(
    ("text", "expected", "reason"),
    [
        # a file in a folder, and a file whose name looks like nothing in particular, are files
        (f"{P}/-/blob/main/docs/setup.md", ["acme/app/-/blob/main/docs/setup.md"], None),
        ("[setup](docs/setup.md)", ["acme/app:docs/setup.md"], None),
        # a tree URL on another host stays other_host
        ("https://gitlab.com/acme/app/-/tree/main/docs", [], "other_host"),
        # a folder's path written bare is not a link, and not a file either
        ("see docs/runbooks/ for more", [], None),
    ],
)
def test_files_stay_files_and_other_hosts_stay_other_hosts(
    text: str, expected: list[str], reason: str | None
) -> None:
    found = extract(text, CTX)
    assert [r.reference for r in found.references] == expected
    assert [r for _, r in found.dropped] == ([reason] if reason else [])
