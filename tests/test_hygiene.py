"""Corpus hygiene: markup and generator constructs that a reader of the page does not see as text.

One rule per test, each on a real excerpt where the development corpus holds the construct (the
files under tests/fixtures/realdocs/ are copied unedited; SOURCES.md there gives origins and
licences). Where it holds none (pymdownx blocks and snippets outside code, FastAPI-style `{* *}`
includes, MDX heading ids and placeholders, roles in reST titles), the input is written here after
the generator's own documentation, named at the case. Every new pattern also gets a worst case
whose time must grow linearly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.config import load_config
from scout.corpus import markdown, markup, passages
from scout.corpus.index import index_estate
from scout.corpus.passages import Section, redirect_stub, split_document
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.forge.local import LocalForge
from scout.store import Store
from tests.growth import assert_linear

REAL = Path(__file__).parent / "fixtures" / "realdocs"


def split(name: str, read: passages.Reader | None = None) -> list[Section]:
    return split_document(name, (REAL / name).read_text(encoding="utf-8"), read)


def text_of(sections: list[Section]) -> str:
    return "\n".join(f"{s.heading}\n{s.body}" for s in sections)


def words(sections: list[Section]) -> set[str]:
    """The tokens FTS5's unicode61 tokenizer would index: runs of letters and digits."""
    return {w.lower() for w in re.findall(r"[^\W_]+", text_of(sections))}


# ---- Markdown: links, alerts -------------------------------------------------------------------


def test_links_show_their_text_and_not_their_target() -> None:
    sections = split("gitlab-charts/ubi.md")
    text = text_of(sections)
    assert "GitLab offers Red Hat UBI\nversions of its images" in sections[0].body
    assert "](" not in text and {"https", "www", "redhat", "blog", "md"}.isdisjoint(words(sections))
    # A link around a code span keeps the code span (its text).
    assert sections[1].body.startswith(
        "We provide an example for GitLab chart values in `examples/ubi/values.yaml`\n"
    )


def test_reference_links_show_their_text_and_their_definitions_nothing() -> None:
    [section] = split("hugo-docs/gomodules-info.md")
    assert "You need Go version 1.18 or later and Git to use Hugo modules." in section.body
    assert "> - go.dev/wiki/Modules" in section.body  # the link text, which here is a URL
    assert "git-scm.com" not in section.body and "https" not in section.body
    assert section.line_end == 11  # the definitions after the quote show nothing


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("[Install](install.md)", "Install"),
        ('[Install](install.md "Title")', "Install"),
        ("[Install](<path with space.md>)", "Install"),
        ("[Wiki](https://en.wikipedia.org/wiki/Foo_(bar))", "Wiki"),
        ("[![CI](https://ci.example/badge.svg)](https://ci.example)", "CI"),
        ("[#1234](https://gitlab.example/a/b/-/issues/1234)", "#1234"),
        ("[text][ref] and [text][]", "text and text"),
        ("`[code](stays.md)` and [x](y.md)", "`[code](stays.md)` and x"),
        ('<a href="https://example.com/x">Go</a> <kbd>Ctrl</kbd>', "Go Ctrl"),
        ("replace <name> with yours", "replace <name> with yours"),
        ("[wrapped\nlink text](page.md)", "wrapped\nlink text"),
        ("[unclosed](page.md", "[unclosed](page.md"),
        (
            ':material-check:{ style="color: green" } Done `:octicons-tag-24:`',
            " Done `:octicons-tag-24:`",
        ),
    ],
)
def test_link_forms(source: str, shown: str) -> None:
    assert markup.render_links(source) == shown


def test_material_icons_are_not_text() -> None:
    [section] = split("mkdocs-material/code-blocks-colors.md")
    assert section.body.endswith("\n-  `--md-code-hl-keyword-color`")
    assert {"checkbox", "style", "var"}.isdisjoint(words([section]))


def test_gitlab_and_hugo_alerts_show_their_title() -> None:
    ubi = text_of(split("gitlab-charts/ubi.md"))
    assert "> Note\n> The UBI-based images prior to GitLab 17.3" in ubi and "[!" not in ubi
    [hugo] = split("hugo-docs/gomodules-info.md")
    assert hugo.body.startswith("> Hugo modules are Go modules\n> You need Go")


# ---- MkDocs Material: pymdownx blocks and snippets ---------------------------------------------


def test_pymdownx_blocks_in_code_stay_as_written() -> None:
    [section] = split("mkdocs-material/images-caption.md")
    assert '![Image title](https://dummyimage.com/600x400/){ width="300" }\n/// caption' in (
        section.body
    )


# Written after the pymdownx.blocks documentation (facelessuser.github.io/pymdown-extensions/
# extensions/blocks/): a titled admonition with a YAML option, a details block, a caption.
BLOCKS = """# Page

/// warning | Back up first
    type: danger

Take a backup.
///

/// details
Hidden text.
///

/// caption
Figure 1
///
"""


def test_pymdownx_blocks_show_their_title_and_no_fences() -> None:
    [section] = split_document("docs/page.md", BLOCKS)
    assert section.body == "Back up first\n\nTake a backup.\n\nDetails\nHidden text.\n\nFigure 1"


# pymdownx.snippets (facelessuser.github.io/pymdown-extensions/extensions/snippets/): paths from
# the base path (the repository root by default), a block of paths, an escaped line; FastAPI's
# docs include code with `{* ../../docs_src/app.py hl[3] *}` from a language folder.
SNIPPETS = """# Page

Text before.

--8<-- "includes/abbreviations.md"

--8<--
includes/missing.md
--8<--

{* ../../docs_src/first_steps/app.py hl[3] *}

```
;--8<-- "escaped.md"
```
"""


def test_snippets_pull_in_repository_files_and_show_no_placeholder() -> None:
    files = {
        "includes/abbreviations.md": "*[HTML]: Hyper Text Markup Language\n\nShared text.\n",
        "docs_src/first_steps/app.py": "from fastapi import FastAPI\n\napp = FastAPI()\n",
    }
    sections = split_document("docs/en/docs/page.md", SNIPPETS, files.get)
    own = [s for s in sections if s.path is None]
    assert own[0].body.startswith("Text before.\n\n```\n;--8<--")  # the escaped one is code
    assert "includes/" not in text_of(own) and "{*" not in text_of(own)
    pulled = {s.path: s.body for s in sections if s.path is not None}
    assert pulled == {
        "includes/abbreviations.md": "*[HTML]: Hyper Text Markup Language\n\nShared text.",
        "docs_src/first_steps/app.py": "from fastapi import FastAPI\n\napp = FastAPI()",
    }
    # Unresolved, a snippet line still shows nothing.
    assert "abbreviations" not in text_of(split_document("docs/page.md", SNIPPETS, {}.get))


# ---- front matter descriptions -----------------------------------------------------------------


def test_a_one_line_description_opens_the_first_section() -> None:
    first = split("hugo-docs/syntax-highlighting-styles.md")[0]
    assert first.heading == "Syntax highlighting styles > Overview"
    assert first.body.startswith(
        "Highlight code examples using one of these styles.\n\nHugo provides several methods"
    )
    assert first.line_start == 3  # the description's own line: the passage cites it


def test_a_folded_yaml_description_opens_the_first_passage() -> None:
    first = split("mkdocs-material/chinese-search-support.md")[0]
    assert first.body.startswith(
        "Insiders adds Chinese language support for the built-in search plugin – a feature that "
        "has been requested many times\n\n__Insiders adds experimental Chinese"
    )
    assert first.line_start == 5  # the `description: >` line


@pytest.mark.parametrize(
    ("yaml", "expected"),
    [
        ("description: >-\n  one\n  two\nnext: x", (0, "one two")),
        ("title: T\ndescription: |\n  kept\n\n  lines\n", (1, "kept lines")),
        ("description: plain\n  continued\n", (0, "plain continued")),
        ("description: one line\nnext: x", None),  # the one-line reader's case
        ("description: 'quoted'\n  odd\n", None),
        ("description: >\nnext: x", None),  # empty
        ("description: [a, b]\n  c\n", None),
        ("description: >\n" + "  word\n" * 10_000, (0, " ".join(["word"] * 50))),
    ],
)
def test_front_matter_block_scalars(yaml: str, expected: tuple[int, str] | None) -> None:
    assert markdown.front_matter_block(yaml, "description") == expected


# ---- redirect stubs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "stub"),
    [
        ("gitlab-charts/minio.md", True),  # "This document was moved to another location."
        ("hugo-docs/publish.md", True),  # a glossary entry that only says "See build."
        ("gitlab-charts/ubi.md", False),
        ("hugo-docs/gomodules-info.md", False),
    ],
)
def test_redirect_stubs(name: str, stub: bool) -> None:
    assert redirect_stub(split(name)) is stub


@pytest.mark.parametrize(
    "text",
    [
        "# Moving\n\nThe file was moved to another place in 2.0. " + "More text. " * 40,
        # Hugo's repository LICENSE.md: a pointer, then what the pointer does not say.
        "See [content/LICENSE.md](content/LICENSE.md) for the license of the content.\n\n"
        "The theme of this repository has no open source license.\n",
        "We moved. The old page said more. And more.\n",
    ],
)
def test_pages_that_say_more_than_a_pointer_are_not_stubs(text: str) -> None:
    assert not redirect_stub(split_document("a.md", text))


def test_index_counts_redirect_stubs_and_keeps_them_out(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    repo = estate_builder.project("acme/charts")
    repo.commit(
        {
            "doc/minio.md": (REAL / "gitlab-charts/minio.md").read_text(encoding="utf-8"),
            "doc/ubi.md": (REAL / "gitlab-charts/ubi.md").read_text(encoding="utf-8"),
        },
        "docs",
    )
    estate_builder.write()
    config = load_config(write_config())
    assert config.forge.path is not None
    forge = LocalForge(config.forge.path, config.forge.groups)
    store = Store.open(config.store.path, create=True)
    try:
        summary = index_estate(forge, store, CorpusRules(tuple(config.forge.groups), config.corpus))
        assert summary.to_json()["skipped"] == {"redirect_stub": 1}
        assert {p.path for p in store.passages()} == {"doc/ubi.md"}
    finally:
        forge.close()
        store.close()


# ---- MDX (Docusaurus) --------------------------------------------------------------------------


def test_mdx_heading_ids_are_not_text() -> None:
    # Docusaurus' heading id comment (docusaurus.io/docs/markdown-features/toc, "Heading IDs";
    # its own site writes `## Markdown headings {/* #markdown-headings */}`).
    page = "# Headings\n\n## Markdown headings {/* #markdown-headings */}\n\nUse them.\n"
    [section] = split_document("docs/toc.mdx", page)
    assert (section.heading, section.anchor) == (
        "Headings > Markdown headings",
        "markdown-headings",
    )
    [other] = split_document("docs/toc.mdx", "## Plain {/* a note */}\n\ntext\n")
    assert (other.heading, other.anchor) == ("Plain", "plain")


def test_mdx_placeholders_of_imported_code_show_nothing() -> None:
    page = (
        "import CodeBlock from '@theme/CodeBlock';\n"
        "import Example from '!!raw-loader!./example.js';\n\n"
        '# Example\n\nThe component:\n\n<CodeBlock language="js">{Example}</CodeBlock>\n\n'
        "Use `{Example}` in text.\n"
    )
    [section] = split_document("docs/example.mdx", page)
    assert section.body == "The component:\n\nUse `{Example}` in text."


# ---- Sphinx: object descriptions, roles in titles, literalinclude ------------------------------


def test_confval_entries_are_sections_named_by_their_entry() -> None:
    sections = split("sphinx/configuration.rst")
    by_heading = {s.heading: s for s in sections}
    project = by_heading["Configuration > Project information > project"]
    assert project.body.startswith("   Type: str\n   Default: 'Project name not set'\n\n")
    assert project.has_anchor("confval-project") and project.has_anchor("project-information")
    # A signature over two lines names both; the label above the entry lands on it.
    both = by_heading["Configuration > Project information > copyright, project_copyright"]
    assert both.has_anchor("config-copyright") and both.body.startswith("   Type: str | Sequence")
    assert [s.heading.rsplit(" > ", 1)[-1] for s in sections[-5:]] == [
        "project",
        "author",
        "copyright, project_copyright",
        "version",
        "release",
    ]


def test_program_options_are_sections_and_the_program_directive_shows_nothing() -> None:
    sections = split("sphinx/sphinx-build.rst")
    headings = [s.heading for s in sections]
    assert "sphinx-build > Options > -b buildername, --builder buildername" in headings
    assert "sphinx-build > Options" not in headings  # `.. program::` alone is not text
    option = sections[headings.index("sphinx-build > Options > -M buildername")]
    assert option.has_anchor("options") and option.has_anchor("make-mode")


# Written after Sphinx's domain documentation (sphinx-doc.org, "Domains"): an object whose text is
# followed by more of its section, and an object nested in another.
OBJECTS = """API
===

.. py:class:: Client(url)

   A client.

   .. py:method:: get(path)

      Fetch a path.

   More about the client.

Back in the API section.

.. envvar:: SCOUT_DEBUG

   Show tracebacks.
"""


def test_text_after_an_object_goes_back_to_its_section() -> None:
    sections = split_document("doc/api.rst", OBJECTS)
    assert [(s.heading, s.body.strip(), s.anchor) for s in sections] == [
        ("API > Client(url)", "A client.", None),
        ("API > Client(url) > get(path)", "Fetch a path.", None),
        ("API > Client(url)", "More about the client.", None),
        ("API", "Back in the API section.", None),
        ("API > SCOUT_DEBUG", "Show tracebacks.", "envvar-SCOUT_DEBUG"),
    ]


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("Using :ref:`the toctree <toctree-directive>`", "Using the toctree"),
        (":class:`~gitlab.Gitlab` objects", "Gitlab objects"),
        ("The ``:ref:`` role", "The :ref: role"),
    ],
)
def test_roles_in_rst_titles_show_their_text(title: str, shown: str) -> None:
    text = f"{title}\n{'=' * 60}\n\nBody.\n"
    assert [s.heading for s in split_document("doc/a.rst", text)] == [shown]


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("See `Python <https://python.org>`_ now", "See Python now"),
        ("`Python`_ and `anonymous <https://x.example>`__", "Python and anonymous"),
        ("``literal``_ stays", "``literal``_ stays"),
    ],
)
def test_rst_hyperlink_references_show_their_text(source: str, shown: str) -> None:
    assert markup.render_roles(source) == shown


def test_rst_hyperlinks_wrapped_over_lines_show_their_text() -> None:
    sections = split("python-gitlab/README.rst")
    install = next(s for s in sections if "development version" in s.body)
    assert "available on both GitHub.com\n and GitLab.com\n, and can be" in install.body
    assert "<https://" not in text_of(sections)
    assert "$ pip install git+https://github.com/python-gitlab/python-gitlab.git" in install.body


def test_myst_roles_in_markdown_headings_show_their_text() -> None:
    page = "# {ref}`Pagination <pagination>`\n\nPages.\n"
    assert [s.heading for s in split_document("docs/a.md", page)] == ["Pagination"]


def test_literalinclude_pulls_in_the_code_it_shows() -> None:
    code = '"""Example Google style docstrings."""\n\n\ndef function(arg1, arg2):\n    pass\n'
    files = {"sphinx/example_google.py": code}
    sections = split("sphinx/example_google.rst", files.get)
    pulled = [s for s in sections if s.path == "sphinx/example_google.py"]
    assert [s.body for s in pulled] == [code.strip().replace("\n\n\n", "\n\n")]
    assert pulled[0].heading == "Example Google Style Python Docstrings"
    # Unresolved, the directive shows nothing (it never showed its path).
    assert "literalinclude" not in text_of(split("sphinx/example_google.rst"))


# ---- bounded work ------------------------------------------------------------------------------


def _lines(unit: str) -> Callable[[int], str]:
    return lambda n: unit * max(1, n // len(unit))


WORST = {
    "link openers": (markup.render_links, _lines("[a](")),
    "link text without a close": (markup.render_links, _lines("[" + "a " * 30)),
    "image openers": (markup.render_links, _lines("![a](b ")),
    "nested brackets": (markup.render_links, lambda n: "[" * n + "](" + ")" * n),
    "backticks": (markup.render_links, _lines("`](`")),
    "definitions": (markup.render_links, _lines("[a]: \n")),
    "tag openers": (markup.render_links, _lines("<a ")),
    "icons": (markup.render_links, _lines(":material-a:{ ")),
    "alerts": (lambda t: markup.render_markdown(t.split("\n"), []), _lines("> [!note] x\n")),
    "block fences": (
        lambda t: markup.render_blocks(t.split("\n")),
        _lines("/// a | b\n    x: y\n"),
    ),
    "heading comments": (markup.heading_attributes, _lines("{/* #a * ")),
    "mdx placeholders": (markup.render_mdx, _lines("{a.b")),
    "snippets": (lambda t: markdown.snippet_lines(t, 0), _lines('--8<-- "a\n{* a ')),
    "descriptions": (
        lambda t: markdown.front_matter_block(t, "description"),
        lambda n: "description: >\n" + "  a\n" * (n // 4),
    ),
    "objects": (
        lambda t: split_document("a.rst", t),
        _lines(".. confval:: a\n   :type: b\n\n   text\n\n"),
    ),
    "pointer": (lambda t: passages._MOVED.search(t), _lines("was   ")),
    "sentences": (lambda t: passages._SENTENCE_END.findall(t), _lines(". ")),
    "hyperlink references": (markup.render_roles, _lines("`a <b `_ ")),
}


@pytest.mark.parametrize(("run", "make"), WORST.values(), ids=WORST.keys())
def test_new_patterns_grow_linearly(
    run: Callable[[str], object], make: Callable[[int], str]
) -> None:
    def over(size: int) -> Callable[[], object]:
        text = make(size)
        return lambda: run(text)

    # 64,000 characters: past the sizes where this machine's caches make times jump
    assert_linear(over, 64_000)
