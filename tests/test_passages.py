"""Splitting documentation files into passages: headings, exact lines, bounds, hostile input."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scout.corpus import markdown, passages
from scout.corpus.passages import (
    MAX_HEADING_CHARS,
    MAX_PASSAGE_CHARS,
    Section,
    collapse_blank_lines,
    rendered_lines,
    slugify,
    source_lines,
    split_document,
    split_markdown,
    split_plain,
    split_rst,
    window,
)
from tests.helpers.growth import assert_linear

S = Section


def check(text: str, sections: list[Section], path: str = "a.md") -> None:
    """The invariants every split must keep, checked by slicing the file's rendered lines (as
    many as its source lines); a table cut across passages may repeat its header first."""
    lines = rendered_lines(path, text)
    assert len(lines) == len(source_lines(text))
    previous: Section | None = None
    # The passages hard-cut from one long line cite the same lines: collapsed once, not once a
    # passage (333 passages of a 1 MB line collapsed it 333 times: 1 s of a hostile case).
    collapsed: dict[tuple[int, int], str] = {}
    for section in sections:
        assert 1 <= section.line_start <= section.line_end <= len(lines), section
        assert 0 < len(section.body) <= MAX_PASSAGE_CHARS
        assert section.body.strip(), section
        body = section.body.split("\n")
        span = (section.line_start, section.line_end)
        if span not in collapsed:
            collapsed[span] = collapse_blank_lines("\n".join(lines[span[0] - 1 : span[1]]))
        cited = collapsed[span]
        if section.body not in cited:
            # a table's header repeated first (from the file), then the table's rows
            whole = "\n".join(lines)
            assert any(
                "\n".join(body[k:]) in cited and "\n".join(body[:k]) in whole
                for k in range(1, len(body))
            ), section
        if len(body) == 1:  # one line, or a hard-cut slice of one
            assert section.body in lines[section.line_end - 1]
        else:  # the passage ends at its last line
            assert body[-1] == lines[section.line_end - 1], section
        if previous is not None:
            same_line_cut = previous.line_end == section.line_start == section.line_end
            assert section.line_start > previous.line_end or same_line_cut
        previous = section


# ---- Markdown ----------------------------------------------------------------------------------

GUIDE = """\
---
title: Configuration guide
tags: [config]
---
Scout reads one TOML file.

# Configuration guide

## Credentials

Tokens come from the environment.

```sh
# this line is a comment, not a heading
export GITLAB_TOKEN=...
```

### Rotating keys

1. Create a new token.
2. Update the variable.

Troubleshooting
---------------

> # A quoted heading stays text
> in the block quote.

[docs]: https://docs.acme.example/
"""


def test_realistic_markdown_splits_by_heading_with_exact_lines() -> None:
    lines = GUIDE.split("\n")
    sections = split_markdown(GUIDE)
    assert [(s.heading, s.line_start, s.line_end, s.anchor) for s in sections] == [
        ("Configuration guide", 5, 5, None),
        ("Configuration guide > Credentials", 9, 16, "credentials"),
        ("Configuration guide > Credentials > Rotating keys", 18, 21, "rotating-keys"),
        # the link reference definition at its end shows nothing
        ("Configuration guide > Troubleshooting", 23, 27, "troubleshooting"),
    ]
    assert sections[1].body == "\n".join(lines[10:16])
    assert sections[3].body == "\n".join(lines[25:27])
    check(GUIDE, sections)


MARKDOWN_CASES = {
    "atx headings carry their ancestors": (
        "# A\n\na\n\n## B\n\nb\n\n### C\nc\n\n## D\nd\n",
        [
            S("A", "a", 1, 3, "a"),
            S("A > B", "b", 5, 7, "b"),
            S("A > B > C", "c", 9, 10, "c"),
            S("A > D", "d", 12, 13, "d"),
        ],
    ),
    "setext headings": (
        "Title\n=====\n\ntext\n\nSub\n---\nmore\n",
        [S("Title", "text", 1, 4, "title"), S("Title > Sub", "more", 6, 8, "sub")],
    ),
    "text before the title heading carries the title": (
        "\n\nintro\n\n# H\nbody\n",
        [S("H", "intro", 3, 3, None), S("H", "body", 5, 6, "h")],
    ),
    "text before two top-level headings has an empty heading": (
        "intro\n\n# H\nbody\n# I\ni\n",
        [S("", "intro", 1, 1, None), S("H", "body", 3, 4, "h"), S("I", "i", 5, 6, "i")],
    ),
    "a lone first heading is the title over later deeper ones": (
        "## A\na\n### B\nb\n",
        [S("A", "a", 1, 2, "a"), S("A > B", "b", 3, 4, "b")],
    ),
    "a # line in a fenced block is not a heading": (
        "# H\n```\n# not\n```\n",
        [S("H", "```\n# not\n```", 1, 4, "h")],
    ),
    "a # line in a tilde fence is not a heading": (
        "~~~\n# not\n~~~\n",
        [S("", "~~~\n# not\n~~~", 1, 3, None)],
    ),
    "an unclosed fence runs to the end": (
        "# H\n```\n# not\n\n## nor this\n",
        [S("H", "```\n# not\n\n## nor this", 1, 5, "h")],
    ),
    "headings in block quotes and lists are content": (
        "> # q\n\n- # l\n",
        [S("", "> # q\n\n- # l", 1, 3, None)],
    ),
    "empty sections are dropped": (
        "# A\n\n## B\n\n### C\nc\n## D\n",
        [S("A > B > C", "c", 5, 6, "c", ("a", "b"))],
    ),
    "Hugo's TOML front matter gives title and description, which opens the first passage": (
        '+++\ntitle = "Deploy with Rsync"\ndescription = "Copy it over SSH."\n+++\n'
        "\n## Steps\nrun\n",
        [S("Deploy with Rsync > Steps", "Copy it over SSH.\n\nrun", 3, 7, "steps")],
    ),
    "a description with text before the first heading opens that text": (
        "---\ntitle: T\ndescription: Sum.\n---\nIntro.\n\n## Steps\nrun\n",
        [S("T", "Sum.\n\nIntro.", 3, 5, None), S("T > Steps", "run", 7, 8, "steps")],
    ),
    "a YAML block scalar description opens the first passage like a one-line one": (
        "---\ntitle: T\ndescription: >-\n  Folded over\n  two lines.\nauthor: x\n---\n\n"
        "# T\n\nBody.\n",
        [S("T", "Folded over two lines.\n\nBody.", 3, 11, "t")],
    ),
    "a description that repeats the title adds nothing": (
        "---\ntitle: Events\ndescription: Events\n---\n\n# Events\n\nEmit them.\n",
        [S("Events", "Emit them.", 6, 8, "events")],
    ),
    "front matter is dropped and its title heads the path": (
        "---\ntitle: 'Guide: setup'\n---\n\n## Step\nrun\n",
        [S("Guide: setup > Step", "run", 5, 6, "step")],
    ),
    "an h1 repeating the title is not doubled": (
        "---\ntitle: Guide\n---\n# Guide\nx\n",
        [S("Guide", "x", 4, 5, "guide")],
    ),
    "front matter without a title is just dropped": (
        "---\nauthor: me\n---\nx\n",
        [S("", "x", 4, 4, None)],
    ),
    "a file that is only front matter has no passages": ("---\ntitle: Only\n---\n", []),
    "an empty file has no passages": ("", []),
    "duplicate headings get GitLab's numbered anchors": (
        "# Setup\na\n# Setup\nb\n# Setup\nc\n",
        [
            S("Setup", "a", 1, 2, "setup"),
            S("Setup", "b", 3, 4, "setup-1", ("setup_1",)),  # MkDocs numbers with _
            S("Setup", "c", 5, 6, "setup-2", ("setup_2",)),
        ],
    ),
    "inline markup is removed from the heading": (
        "## Use `scout index` with **care** [now](x)\nbody\n",
        [S("Use scout index with care now", "body", 1, 2, "use-scout-index-with-care-now")],
    ),
    "skipped levels keep the nearest ancestor": (
        "# A\n### C\nc\n## B\nb\n",
        [S("A > C", "c", 2, 3, "c", ("a",)), S("A > B", "b", 4, 5, "b")],
    ),
    "CRLF line endings are dropped from bodies": (
        "# A\r\n\r\none\r\ntwo\r\n",
        [S("A", "one\ntwo", 1, 4, "a")],
    ),
    "a lone CR is kept but does not shift lines": (
        "# A\rB\nx\n# C\ny\n",
        [S("A B", "x", 1, 2, "a-b"), S("C", "y", 3, 4, "c")],
    ),
    "NUL bytes become U+FFFD": (
        "# a\0b\nx\0y\n",
        [S("a\ufffdb", "x\ufffdy", 1, 2, "ab")],
    ),
    "delimiter strings are kept as text": (
        "# H\n-----END PASSAGE 1-----\n-----BEGIN PASSAGE 2-----\n",
        [S("H", "-----END PASSAGE 1-----\n-----BEGIN PASSAGE 2-----", 1, 3, "h")],
    ),
    "a heading with no text opens a section without a name": (
        "# A\n##\nx\n",
        [S("A", "x", 2, 3, None, ("a",))],
    ),
}


@pytest.mark.parametrize("text, expected", MARKDOWN_CASES.values(), ids=MARKDOWN_CASES.keys())
def test_split_markdown(text: str, expected: list[Section]) -> None:
    sections = split_markdown(text)
    assert sections == expected
    check(text, sections)


SLUGS = {
    "lowercase, spaces to hyphens": ("Has spaces in it", "has-spaces-in-it"),
    "emoji removed": ("Has a 😃 in it", "has-a-in-it"),
    "unicode letters kept": ("Has Unicode in it. 한글", "has-unicode-in-it-한글"),
    "punctuation removed": ("Has 3.5 in it (and parentheses)", "has-35-in-it-and-parentheses"),
    "hyphen runs squeezed": ("A  -- b", "a-b"),
    "underscores kept": ("snake_case name", "snake_case-name"),
    "leading hyphen kept": ("-c cmd", "-c-cmd"),
    "only punctuation": ("?!", ""),
}


@pytest.mark.parametrize("heading, slug", SLUGS.values(), ids=SLUGS.keys())
def test_slugify_follows_gitlab(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


FRONT_MATTER_TITLES = {
    "plain": ("title: Setup guide", "Setup guide"),
    "double quoted": ('title: "Setup: the guide"', "Setup: the guide"),
    "single quoted": ("title: 'Setup'", "Setup"),
    "comment after a plain scalar": ("title: Setup # draft", "Setup"),
    "among other keys": ("tags: [a]\ntitle: Setup\nauthor: me", "Setup"),
    "nested keys are not the title": ("meta:\n  title: Nested", None),
    "block scalars are ignored": ("title: >\n  Folded", None),
    "empty": ("title:", None),
    "absent": ("author: me", None),
}


@pytest.mark.parametrize(
    "yaml, title", FRONT_MATTER_TITLES.values(), ids=FRONT_MATTER_TITLES.keys()
)
def test_front_matter_title(yaml: str, title: str | None) -> None:
    assert markdown.front_matter_title(yaml) == title


ANCHORS = {
    "GitLab, MkDocs and Hugo agree": ("## Draft, future, and more", "draft-future-and-more", ()),
    "MkDocs folds to ASCII": ("## Café setup", "café-setup", ("cafe-setup",)),
    "Hugo and Docusaurus keep runs of hyphens": ("## A -- B", "a-b", ("a----b",)),
    "MkDocs numbers duplicates with _": ("## A\n\nx\n\n## A", "a-1", ("a_1",)),
    "an explicit id is the only id": ("## Configure {#config}", "config", ()),
}  # fmt: skip


@pytest.mark.parametrize(("text", "anchor", "aliases"), ANCHORS.values(), ids=ANCHORS.keys())
def test_anchors_as_each_generator_spells_them(
    text: str, anchor: str, aliases: tuple[str, ...]
) -> None:
    last = split_markdown(text + "\n\ntext\n")[-1]
    assert (last.anchor, last.aliases) == (anchor, aliases)


# ---- reStructuredText --------------------------------------------------------------------------

MANUAL = """\
=============
 Ledger manual
=============

The ledger keeps accounts.

.. contents::

Installing
==========

Run::

    pip install ledger
    # Not a title
    -------------

Configuring ``ledger.toml``
===========================

Accounts
--------

Each account has a code.

----------

Limits
------

Short
--
Not a title: the underline is too short.
"""


def test_realistic_rst_splits_by_title_with_exact_lines() -> None:
    lines = MANUAL.split("\n")
    sections = split_rst(MANUAL)
    assert [(s.heading, s.line_start, s.line_end, s.anchor) for s in sections] == [
        ("Ledger manual", 1, 5, "ledger-manual"),
        ("Ledger manual > Installing", 9, 16, "installing"),
        ("Ledger manual > Configuring ledger.toml > Accounts", 21, 26, "accounts"),
        ("Ledger manual > Configuring ledger.toml > Limits", 28, 33, "limits"),
    ]
    assert sections[1].body == "\n".join(["Run:", *lines[12:16]])  # `::` shows as ":"
    assert sections[3].body == "Short\n--\nNot a title: the underline is too short."
    check(MANUAL, sections, "a.rst")


RST_CASES = {
    "levels follow the order styles first appear": (
        "A\n~\n\na\n\nB\n*\n\nb\n\nC\n~\n\nc\n",
        [S("A", "a", 1, 4, "a"), S("A > B", "b", 6, 9, "b"), S("C", "c", 11, 14, "c")],
    ),
    "an overlined style differs from the underlined one": (
        "===\nTop\n===\nt\n\nSub\n===\ns\n",
        [S("Top", "t", 1, 4, "top"), S("Top > Sub", "s", 6, 8, "sub")],
    ),
    "a title needs a blank line before it": (
        "para\nmore\n----\n",
        [S("", "para\nmore\n----", 1, 3, None)],
    ),
    "a long underline is fine for a short title": (
        "Go\n----------\nx\n",
        [S("Go", "x", 1, 3, "go")],
    ),
    "a four-character underline may be shorter than the title": (
        "Longer title\n----\nx\n",
        [S("Longer title", "x", 1, 3, "longer-title")],
    ),
    "a transition is not a title": ("a\n\n----\n\nb\n", [S("", "a\n\n----\n\nb", 1, 5, None)]),
    "indented text is not a title": (
        "::\n\n    code\n    ----\n",
        [S("", "    code\n    ----", 3, 4, None)],
    ),
    "the anchor is the docutils id": (
        "2. Rotating Keys!\n=================\nx\n",
        [S("2. Rotating Keys!", "x", 1, 3, "rotating-keys")],
    ),
    "CRLF line endings": ("T\r\n=\r\n\r\nx\r\n", [S("T", "x", 1, 4, "t")]),
    "a PEP header gives the title and is not a passage": (
        "PEP: 8\nTitle: Style Guide for Python Code\nAuthor: Guido\n\nIntro\n=====\n\nx\n",
        [S("Style Guide for Python Code > Intro", "x", 5, 8, "intro")],
    ),
    "a :title: field gives the title": (
        ":title: Ledger\n:orphan:\n\nA\n-\n\na\n\nB\n-\n\nb\n",
        [S("Ledger > A", "a", 4, 7, "a"), S("Ledger > B", "b", 9, 12, "b")],
    ),
    "a repeated title is numbered as docutils numbers it": (
        "T\n=\n\nX\n-\n\nx\n\nX\n-\n\ny\n",
        [S("T > X", "x", 4, 7, "x", ("t",)), S("T > X", "y", 9, 12, "id1")],
    ),
    "a label opens the section it labels": (
        "T\n=\n\nt\n\n.. _keys:\n\nKeys\n----\n\nk\n",
        # the label took the id "keys", so docutils numbers the title (its section: "keys id1")
        [S("T", "t", 1, 4, "t"), S("T > Keys", "k", 6, 11, "id1", ("keys",))],
    ),
    "a label inside a section lands on its block": (
        "T\n=\n\nt\n\n.. _example:\n\nexample\n",
        [S("T", "t\n\nexample", 1, 8, "t", ("example",))],
    ),
    "comments, options and substitutions show nothing; footnotes show their text": (
        ".. a comment\n   that goes on\n\n.. note::\n   :class: wide\n\n   Mind the |x|.\n\n"
        ".. |x| replace:: gap\n.. [1] A footnote.\n",
        # a numeric footnote's name makes no id: docutils numbers it
        [S("", "   Mind the |x|.\n\nA footnote.", 7, 10, None, ("id1",))],
    ),
    "an only directive keeps its body; a toctree's is dropped": (
        ".. only:: html\n\n   Shown on the site.\n\n.. toctree::\n   :hidden:\n\n   setup\n",
        [S("", "   Shown on the site.", 3, 3, None)],
    ),
    "roles render, but not in a literal block": (
        "See :ref:`the keys <keys>` and :pep:`8`::\n\n   :ref:`raw`\n",
        [S("", "See the keys and PEP 8:\n\n   :ref:`raw`", 1, 3, None)],
    ),
}


@pytest.mark.parametrize("text, expected", RST_CASES.values(), ids=RST_CASES.keys())
def test_split_rst(text: str, expected: list[Section]) -> None:
    sections = split_rst(text)
    assert sections == expected
    check(text, sections, "a.rst")


# ---- plain text and dispatch -------------------------------------------------------------------


def test_plain_text_groups_paragraphs_up_to_the_bound() -> None:
    paragraph = ("word " * 100).strip()  # 499 characters
    text = "\n\n".join([paragraph] * 12) + "\n"
    sections = split_plain(text)
    # five paragraphs and four blank lines: 5 * 499 + 4 * 2 = 2,503 characters; six would not fit
    assert [(s.line_start, s.line_end) for s in sections] == [(1, 9), (11, 19), (21, 23)]
    assert {s.heading for s in sections} == {""}
    check(text, sections, "README")


DISPATCH = {
    "markdown": ("docs/setup.md", ["H", "T"]),
    "long markdown extension": ("docs/setup.MARKDOWN", ["H", "T"]),
    "restructured text": ("docs/setup.rst", ["T", "T"]),
    "README is plain": ("README", [""]),
    "README.txt is plain": ("sub/README.txt", [""]),
}


@pytest.mark.parametrize("path, headings", DISPATCH.values(), ids=DISPATCH.keys())
def test_split_document_dispatches_on_extension(path: str, headings: list[str]) -> None:
    text = "# H\nh\n\nT\n=\n\nt\n"
    assert [s.heading for s in split_document(path, text)] == headings


# ---- long sections -----------------------------------------------------------------------------


def test_long_section_is_split_at_paragraphs_keeping_heading_and_lines() -> None:
    paragraph = "x" * 1_400
    text = "## Long\n\n" + "\n\n".join([paragraph] * 5) + "\n"
    sections = split_markdown(text)
    assert [(s.heading, s.line_start, s.line_end, s.anchor) for s in sections] == [
        ("Long", 1, 5, "long"),
        ("Long", 7, 9, "long"),
        ("Long", 11, 11, "long"),
    ]
    check(text, sections)


def test_a_fence_that_fits_moves_whole_to_the_next_passage() -> None:
    fence = "```\n" + "\n".join(["code line"] * 100) + "\n```"  # 1,007 characters
    text = "# H\n\n" + "p" * 2_500 + "\n\n" + fence + "\n"
    sections = split_markdown(text)
    assert [(s.line_start, s.line_end) for s in sections] == [(1, 3), (5, 106)]
    assert sections[1].body == fence
    check(text, sections)


def test_a_huge_paragraph_is_cut_at_lines_and_a_huge_line_hard() -> None:
    text = "# H\n" + "\n".join(["y" * 1_000] * 5) + "\n" + "z" * 7_000 + "\n"
    sections = split_markdown(text)
    assert [(s.line_start, s.line_end, len(s.body)) for s in sections] == [
        (1, 3, 2_001),
        (4, 5, 2_001),
        (6, 6, 1_000),
        (7, 7, 3_000),
        (7, 7, 3_000),
        (7, 7, 1_000),
    ]
    assert "".join(s.body for s in sections[3:]) == "z" * 7_000
    check(text, sections)


def test_lines_past_the_parsed_limit_stay_under_the_last_heading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(passages, "MAX_PARSED_LINES", 3)
    text = "# A\na\n# B\nb\n# C\nc\n"
    assert split_markdown(text) == [S("A", "a", 1, 2, "a"), S("B", "b\n# C\nc", 3, 6, "b")]


# ---- hostile input -----------------------------------------------------------------------------

HOSTILE = {
    "a 100 KB heading line": "# " + "h" * 100_000 + "\n\nbody\n",
    "a 100 KB setext heading": "h" * 100_000 + "\n===\nbody\n",
    "deeply nested lists": "".join("  " * i + "- item\n" for i in range(500)),
    "10,000 nested block quotes": ">" * 10_000 + " x\n",
    "10,000 nested list markers": "- " * 10_000 + "x\n",
    "nested brackets": "# " + "[" * 50_000 + "\n" + "](" * 50_000 + "\n",
    "only NUL bytes": "\0" * 10_000,
    "only CRs": "\r" * 10_000,
    "unclosed front matter": "---\ntitle: x\n" + "a: b\n" * 1_000,
    # just past the lines markdown-it parses: the tail past the bound is what differs (2.5x past
    # it, 60,000 lines, cost 1 s more a splitter and showed the same)
    "more lines than are parsed": "#\n" * (passages.MAX_PARSED_LINES + 1_000),
    "a container title of 500,000 spaces": ":::note" + " " * 500_000 + "x\n",
    "40,000 component tags on a line": "<Tab label='x'>y</Tab> " * 40_000,
    "50,000 export paragraphs": "text\nexport a\n\n" * 50_000,
    "200,000 unclosed MDX comments": "{/* " * 200_000,
    "code spans between tags": "`a` <Tab> " * 80_000,
    "a 1 MB tag name": "<A" + "b" * 1_000_000,
    "100,000 simple-table rules": "\n=== ===\n" * 100_000,
    # a table of many passages, its header repeated in each: 2,000 rows make 7; 50,000 cost
    # 3 s more in Markdown (a list of 20,000 parsed lines, twice) for the bound the case above
    # shows already
    "a 2,000-row list table": ".. list-table:: T\n   :header-rows: 1\n\n" + "   * - a\n" * 2_000,
}


HOSTILE_CASES = list(HOSTILE.values())


@pytest.mark.parametrize("text", HOSTILE_CASES, ids=HOSTILE.keys())
@pytest.mark.parametrize("split", [split_markdown, split_rst, split_plain])
def test_hostile_input_is_bounded(text: str, split: Callable[[str], list[Section]]) -> None:
    sections = split(text)  # how long it takes is bench/bench_bounds.py's; growth is below
    path = {split_markdown: "a.md", split_rst: "a.rst", split_plain: "README"}[split]
    check(text, sections, path)
    assert all(len(s.heading) <= 5 * MAX_HEADING_CHARS for s in sections)


@pytest.mark.parametrize("text", HOSTILE_CASES, ids=HOSTILE.keys())
def test_hostile_mdx_is_bounded(text: str) -> None:
    sections = split_document("a.mdx", text)
    assert all(len(s.body) <= MAX_PASSAGE_CHARS for s in sections)


# Shapes of the hostile table that grow with a count: the splitters' time must grow linearly
# with it (CPU time at 4n at most 6x that at n, in the same run).
GROWING: dict[str, Callable[[int], str]] = {
    "nested block quotes": lambda n: ">" * n + " x\n",
    "nested list markers": lambda n: "- " * n + "x\n",
    "nested brackets": lambda n: "# " + "[" * n + "\n" + "](" * n + "\n",
    "component tags on a line": lambda n: "<Tab label='x'>y</Tab> " * n,
    "export paragraphs": lambda n: "text\nexport a\n\n" * n,
    "unclosed MDX comments": lambda n: "{/* " * n,
    "code spans between tags": lambda n: "`a` <Tab> " * n,
    "headings": lambda n: "## Heading\n\nbody\n\n" * n,
}


@pytest.mark.parametrize("make", GROWING.values(), ids=GROWING.keys())
@pytest.mark.parametrize("path", ["a.md", "a.mdx", "a.rst"])
def test_splitting_time_grows_linearly(make: Callable[[int], str], path: str) -> None:
    def run(n: int) -> Callable[[], object]:
        text = make(n)
        return lambda: split_document(path, text)

    assert_linear(run, 1_000)


def test_five_thousand_headings_keep_every_section() -> None:
    # 5,000 four-line sections fill the lines markdown-it parses; every one keeps its heading
    text = "".join(f"## Heading {i}\n\nbody {i}\n\n" for i in range(5_000))
    assert text.count("\n") == passages.MAX_PARSED_LINES
    sections = split_markdown(text)
    check(text, sections)
    assert len(sections) == 5_000
    assert sections[-1] == S("Heading 4999", "body 4999", 19_997, 19_999, "heading-4999")


# ---- windows of code files ---------------------------------------------------------------------

CODE = "\n".join(f"line {n}" for n in range(1, 101)) + "\n"

WINDOWS = {
    "cited lines with context": ((50, 52), 3, 3_000, (47, 55)),
    "context stops at the file's start": ((2, 2), 20, 3_000, (1, 22)),
    "context stops at the file's end, blank edges trimmed": ((100, 100), 5, 3_000, (95, 100)),
    "reversed range is sorted": ((52, 50), 0, 3_000, (50, 52)),
    "out-of-range lines are clamped": ((500, 900), 0, 3_000, (101, 101)),
    "the bound limits the context": ((50, 50), 20, 23, (49, 51)),
    "the bound limits the cited lines": ((10, 90), 20, 23, (10, 12)),
    "no lines means the opening": (None, 20, 30, (1, 4)),
}


@pytest.mark.parametrize("lines, context, limit, expected", WINDOWS.values(), ids=WINDOWS.keys())
def test_window(
    lines: tuple[int, int] | None, context: int, limit: int, expected: tuple[int, int]
) -> None:
    section = window(CODE, lines, context=context, max_chars=limit)
    source = CODE.split("\n")
    assert (section.line_start, section.line_end) == expected
    assert section.body == "\n".join(source[expected[0] - 1 : expected[1]])
    assert section.heading == "" and section.anchor is None
    assert len(section.body) <= limit


def test_window_cuts_a_huge_line_and_trims_blank_edges() -> None:
    assert window("z" * 9_000, (1, 1)) == S("", "z" * MAX_PASSAGE_CHARS, 1, 1, None)
    assert window("\n\nx\n\n\n", (3, 3)) == S("", "x", 3, 3, None)
    assert window("", None) == S("", "", 1, 1, None)
    assert window("\n  \n\n", (1, 3)) == S("", "", 1, 1, None)
    assert window("a\n\n\nb\n", (2, 3), context=0) == S("", "", 2, 2, None)
    assert window("a\n\n\n" + "b" * 3_000, (1, 4), context=0) == S("", "a", 1, 1, None)


# ---- properties --------------------------------------------------------------------------------

FRAGMENTS = [
    "# Heading", "## Sub", "### Deep", "Title", "=====", "-----", "~~~~~", "```", "~~~", "---",
    "title: Front", "", "", "text line", "- item", "  - nested", "> quote", "    indented",
    "-----END PASSAGE 1-----", "a\rb", "nul\0", "x" * 2_900, "word " * 700, "::", ".. note::",
]  # fmt: skip
lines = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40))
documents = st.lists(lines, max_size=40).map("\n".join)
quick = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@quick
@given(documents, st.sampled_from(["a.md", "a.rst", "README"]), st.booleans())
def test_any_document_splits_within_bounds(text: str, path: str, crlf: bool) -> None:
    if crlf:
        text = text.replace("\n", "\r\n")
    check(text, split_document(path, text), path)


@quick
@given(
    documents,
    st.one_of(st.none(), st.tuples(st.integers(-5, 60), st.integers(-5, 60))),
    st.integers(-1, 30),
    st.integers(-1, 5_000),
)
def test_any_window_is_within_the_file_and_the_bound(
    text: str, lines: tuple[int, int] | None, context: int, limit: int
) -> None:
    section = window(text, lines, context=context, max_chars=limit)
    source = source_lines(text)
    assert 1 <= section.line_start <= section.line_end <= len(source)
    assert len(section.body) <= max(1, limit)
    assert section.body in "\n".join(source[section.line_start - 1 : section.line_end])
