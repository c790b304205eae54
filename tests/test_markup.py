"""Generator markup in passages: rendered to its text or dropped, on real documentation excerpts.

The excerpts under tests/fixtures/realdocs/ are copied unedited from public projects (see the
SOURCES.md there for origins and licences).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scout.config import load_config
from scout.corpus import rst
from scout.corpus.index import index_estate
from scout.corpus.markup import heading_attributes, render_roles, strip_shortcodes
from scout.corpus.passages import (
    MAX_PASSAGE_CHARS,
    Section,
    include_path,
    rendered_lines,
    source_lines,
    split_document,
)
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder, Symlink
from scout.forge.local import LocalForge
from scout.store import Store

REAL = Path(__file__).parent / "fixtures" / "realdocs"


def split(name: str) -> list[Section]:
    return split_document(name, (REAL / name).read_text(encoding="utf-8"))


def text_of(sections: list[Section]) -> str:
    return "\n".join(f"{s.heading}\n{s.body}" for s in sections)


# ---- small rules -------------------------------------------------------------------------------

ROLES = {
    "ref with a title": (":ref:`the toctree <toctree-directive>`", "the toctree"),
    "ref without a title": (":ref:`rst-directives`", "rst-directives"),
    "a tilde keeps the last name": (":class:`~sphinx.builders.Builder`", "Builder"),
    "domain roles": (":py:meth:`gitlab.Gitlab.auth`", "gitlab.Gitlab.auth"),
    "pep and rfc are numbered": (":pep:`8` and :rfc:`2822`", "PEP 8 and RFC 2822"),
    "MyST roles": ("{ref}`Pagination <pagination>`", "Pagination"),
    "literals are kept": ("``:ref:`` stays", "``:ref:`` stays"),
}


@pytest.mark.parametrize(("source", "shown"), ROLES.values(), ids=ROLES.keys())
def test_roles_render_to_their_text(source: str, shown: str) -> None:
    assert render_roles(source) == shown


ATTRIBUTES = {
    "pandoc id": ("Configure {#configuration}", ("Configure", "configuration")),
    "attr_list id": ('9.7.6 <small>May</small> { id="9.7.6" }', ("9.7.6 <small>May</small>", "9.7.6")),  # noqa: E501
    "kramdown": ("Setup {: #setup .wide}", ("Setup", "setup")),
    "a class only": ("Setup {.wide}", ("Setup", None)),
    "braces that are text": ("Map {a}", ("Map {a}", None)),
}  # fmt: skip


@pytest.mark.parametrize(("heading", "expected"), ATTRIBUTES.values(), ids=ATTRIBUTES.keys())
def test_heading_attributes_are_not_text(heading: str, expected: tuple[str, str | None]) -> None:
    assert heading_attributes(heading) == expected


SHORTCODES = {
    "a tag with no text is dropped": ("{{< details >}}Tier{{< /details >}}", "Tier"),
    "a title shows": ('{{< tab title="Gitaly Cluster (Praefect)" >}}', "Gitaly Cluster (Praefect)"),
    "percent form": ("{{% module-mounts-note %}}", ""),
    "self-closing": ("New {{< new-in 0.140.0 />}}", "New "),
    "the escaped form shows the shortcode": ("{{</* qr */>}}", "{{< qr >}}"),
}  # fmt: skip


@pytest.mark.parametrize(("source", "shown"), SHORTCODES.values(), ids=SHORTCODES.keys())
def test_hugo_shortcodes_render_to_their_text(source: str, shown: str) -> None:
    assert strip_shortcodes(source) == shown


INCLUDES = {
    "relative to the including file": ("docs/index.rst", "../README.rst", "README.rst"),
    "a sibling": ("doc/changes/index.rst", "8.3.rst", "doc/changes/8.3.rst"),
    "a leading slash is the docs folder": ("doc/a/b.rst", "/_common/x.rst", "doc/_common/x.rst"),
    "outside the repository": ("docs/index.rst", "../../etc/passwd", None),
    "docutils standard files": ("docs/index.rst", "<isonum.txt>", None),
    "empty": ("docs/index.rst", " ", None),
}


@pytest.mark.parametrize(("including", "argument", "path"), INCLUDES.values(), ids=INCLUDES.keys())
def test_include_paths_stay_inside_the_repository(
    including: str, argument: str, path: str | None
) -> None:
    assert include_path(including, argument) == path


# ---- real excerpts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "gitlab-charts/restore.md",
        "gitlab-charts/version_mappings.md",
        "hugo-docs/details.md",
        "hugo-docs/Contains.md",
        "mkdocs-material/changelog.md",
        "mkdocs-material/search.md",
        "mkdocs-material/projects.md",
        "sphinx/glossary.rst",
        "sphinx/directives.rst",
        "sphinx/deprecated.rst",
        "python-gitlab/README.rst",
        "stencil-site/webdriverio-overview.md",
    ],
)
def test_rendering_keeps_every_line_in_place(name: str) -> None:
    text = (REAL / name).read_text(encoding="utf-8")
    rendered = rendered_lines(name, text)
    assert len(rendered) == len(source_lines(text))
    for section in split_document(name, text):
        assert section.body.strip() and len(section.body) <= MAX_PASSAGE_CHARS
        assert section.body.split("\n")[-1] == rendered[section.line_end - 1]


def test_gitlab_shortcodes_and_front_matter_title() -> None:
    sections = split("gitlab-charts/restore.md")
    assert "{{" not in text_of(sections)
    assert all(s.heading.startswith("Restoring a GitLab installation") for s in sections)
    # The details shortcode's content stays; the tags around it do not.
    assert sections[0].body.startswith("- Tier: Free, Premium, Ultimate\n- Offering:")
    assert sections[0].line_start == 10  # the first line with text, past the front matter
    # "Restoring the secrets" has no text before its first subsection: its anchor still lands.
    assert sections[1].has_anchor("restoring-the-secrets")


def test_hugo_escaped_shortcodes_in_code_stay_and_live_ones_render() -> None:
    sections = split("hugo-docs/details.md")
    example = next(s for s in sections if s.heading.endswith("> Example"))
    assert '{{</* details summary="See the details" */>}}' in example.body  # inside a fence
    assert "{{< details" not in example.body.replace("{{</*", "")
    assert "new-in" not in text_of(sections)


def test_hugo_description_opens_a_reference_page() -> None:
    [section] = split("hugo-docs/Contains.md")
    assert section.heading == "strings.Contains"
    assert section.body.startswith(
        "Reports whether the given string contains the given substring.\n\n```go-html-template"
    )
    assert (section.line_start, section.line_end) == (3, 22)


def test_a_table_cut_across_passages_repeats_its_header() -> None:
    sections = split("gitlab-charts/version_mappings.md")
    mapped = [s for s in sections if "| 9." in s.body or "| 8." in s.body or "| 6." in s.body]
    assert len(mapped) == 3
    for section in mapped:
        assert section.body.startswith("| Chart version | GitLab version |\n|---")
        assert len(section.body) <= MAX_PASSAGE_CHARS
    # Every row is in exactly one passage.
    rows = [line for s in mapped for line in s.body.split("\n") if line.startswith("| 9.")]
    assert len(rows) == len(set(rows))


def test_mkdocs_heading_attributes_and_html_comments() -> None:
    sections = split("mkdocs-material/changelog.md")
    assert sections[0].heading == "Changelog > Material for MkDocs > 9.7.6 March 19, 2026"
    assert [s.anchor for s in sections[:3]] == ["9.7.6", "9.7.5", "9.7.4"]
    search = split("mkdocs-material/search.md")
    assert "<!--" not in text_of(search)
    assert any(s.body.startswith("Use this setting to enable or disable") for s in search)


def test_mkdocs_admonition_bodies_are_prose_and_show_their_title() -> None:
    [section] = split("mkdocs-material/projects.md")
    title = "\n\nThe built-in projects plugin is deprecated\n\n    [Material for MkDocs"
    assert title in section.body
    assert "!!!" not in section.body and "<!--" not in section.body  # the body is not code
    assert "was released in , the last release" in section.body


def test_docusaurus_admonitions_show_their_title_and_no_colons() -> None:
    sections = split("stencil-site/webdriverio-overview.md")
    setup = next(s for s in sections if s.heading == "WebdriverIO Overview > Overview > Set Up")
    assert ":::" not in text_of(sections)
    assert "\n\nCJS vs. ESM\n\nWebdriverIO's generated config" in setup.body
    assert "\n\nType Clashes\n\nIt's possible that you run into" in setup.body
    assert '```json\n  "types": ["jest"]\n```' in setup.body  # code inside one is code


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (":::note\nBody.\n:::", "Note\nBody."),
        (":::tip[Mind the gap]\nBody.\n::::", "Mind the gap\nBody."),
        ("::: {.warning}\nBody.\n:::", "Body."),
        ("a ::: b\n\nBody.", "a ::: b\n\nBody."),
        ("```\n:::note\n```", "```\n:::note\n```"),
    ],
    ids=["kind", "bracketed_title", "pandoc_div", "not_alone_on_its_line", "in_code"],
)
def test_container_lines_render_to_their_title(source: str, shown: str) -> None:
    [section] = split_document("a.md", source + "\n")
    assert section.body.strip("\n") == shown


@pytest.mark.parametrize(
    ("path", "text", "shown"),
    [
        ("a.rst", "as explained :ref:`in the previous\n   section <x>`.\n",
         "as explained in the previous\n   section."),
        ("a.rst", ":doc:`the RTD\ndocs`, and\n\n::\n\n   :ref:`kept\n   as is`\n",
         "the RTD\ndocs, and\n\n   :ref:`kept\n   as is`"),
        ("a.md", "See {ref}`Pagination <pagination>`.\n\n```\n{ref}`code`\n```\n",
         "See Pagination.\n\n```\n{ref}`code`\n```"),
    ],
)  # fmt: skip
def test_roles_wrapped_over_lines_and_myst_roles(path: str, text: str, shown: str) -> None:
    [section] = split_document(path, text)
    assert section.body == shown


def test_sphinx_glossary_labels_roles_and_code() -> None:
    sections = split("sphinx/glossary.rst")
    assert all(s.heading == "Glossary" for s in sections)
    assert sections[0].line_start == 1  # the `.. _glossary:` label opens the section
    assert sections[0].has_anchor("glossary")
    builder = next(s for s in sections if s.has_anchor("term-builder"))
    assert "A class (inheriting from Builder) that takes" in builder.body
    assert "See /usage/builders/index for an overview" in builder.body
    assert next(s for s in sections if s.has_anchor("term-source-directory"))
    # A code example inside a definition is kept as written.
    assert "   .. directive-name:: argument ...\n            :option: value" in text_of(sections)


def test_sphinx_labels_belong_to_the_section_they_label() -> None:
    sections = split("sphinx/directives.rst")
    lines = (REAL / "sphinx/directives.rst").read_text(encoding="utf-8").split("\n")
    toc = next(s for s in sections if s.heading == "Directives > Table of contents")
    assert lines[toc.line_start - 1] == ".. _toctree-directive:"
    assert toc.has_anchor("toctree-directive") and toc.has_anchor("table-of-contents")
    before = sections[sections.index(toc) - 1]
    assert not before.body.rstrip().endswith(":")  # the label does not trail the section before
    assert all(".. _" not in s.body.split("\n")[0] for s in sections)
    # Options of a directive are dropped; the directive's own name shows as its argument.
    assert ":maxdepth:" not in toc.body.split("Consider this example")[0]


def test_python_gitlab_index_is_its_readme(tmp_path: Path) -> None:
    files = {
        "README.rst": (REAL / "python-gitlab/README.rst").read_text(encoding="utf-8"),
        "docs/index.rst": (REAL / "python-gitlab/index.rst").read_text(encoding="utf-8"),
    }
    own = split_document("docs/index.rst", files["docs/index.rst"])
    # An include and a hidden toctree show nothing; only the last section has text of its own.
    assert [(s.heading, s.body) for s in own] == [
        ("Indices and tables", "* genindex\n* modindex\n* search")
    ]
    pulled = split_document("docs/index.rst", files["docs/index.rst"], files.get)
    assert pulled[-1] == own[-1]
    assert pulled[:-1] == [
        Section(s.heading, s.body, s.line_start, s.line_end, s.anchor, s.aliases, "README.rst")
        for s in split_document("README.rst", files["README.rst"])
    ]


# ---- includes in the index ---------------------------------------------------------------------


def _index(config_path: Path) -> tuple[dict[str, object], Store]:
    config = load_config(config_path)
    assert config.forge.path is not None
    forge = LocalForge(config.forge.path, config.forge.groups)
    store = Store.open(config.store.path, create=True)
    try:
        summary = index_estate(forge, store, CorpusRules(tuple(config.forge.groups), config.corpus))
    finally:
        forge.close()
    return summary.to_json(), store


def test_index_follows_includes_inside_the_repository_only(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    repo = estate_builder.project("acme/manual")
    repo.commit(
        {
            "AUTHORS": "Maintainers\n\n* Ada Lovelace keeps the release notes.\n",
            "secrets.txt": "the deploy token is hunter2\n",
            "doc/notes.md": "# Notes\n\nRelease notes live here.\n",
            "doc/authors.rst": "Authors\n=======\n\n.. include:: ../AUTHORS\n",
            "doc/linked.rst": "Linked\n======\n\n.. include:: secrets-link.txt\n\nafter\n",
            "doc/secrets-link.txt": Symlink("../secrets.txt"),
            "doc/outside.rst": "Outside\n=======\n\n.. include:: ../../etc/hosts\n\nafter\n",
            "doc/twice.rst": "Twice\n=====\n\n.. include:: ../AUTHORS\n",
            "doc/docs.rst": "Docs\n====\n\n.. include:: notes.md\n\nafter\n",
        },
        "includes",
    )
    estate_builder.write()
    _summary, store = _index(write_config())
    by_path: dict[str, list[str]] = {}
    for passage in store.passages():
        by_path.setdefault(passage.path, []).append(passage.body)
        assert passage.url.split("/-/blob/", 1)[1].split("/", 1)[1].startswith(passage.path)
    # The included file is cited at itself, once though two pages include it; a symlink, a path
    # outside the repository and an indexed page are not read through an include.
    assert by_path["AUTHORS"] == ["Maintainers\n\n* Ada Lovelace keeps the release notes."]
    assert "hunter2" not in str(by_path)
    assert by_path["doc/linked.rst"] == ["after"] and by_path["doc/outside.rst"] == ["after"]
    assert by_path["doc/notes.md"] == ["Release notes live here."]
    assert by_path["doc/docs.rst"] == ["after"]


# ---- MDX ---------------------------------------------------------------------------------------

# Written for this test after Docusaurus' tabs page (no MDX page with a licence is in the
# development corpus): front matter, ESM, a component over several lines, tabs with labels, a
# code block holding the same markup, an MDX comment, and a paragraph line starting "export".
MDX = """---
title: Installing
---

import Tabs from '@theme/Tabs';

import TabItem from '@theme/TabItem';

# Install the runner

Use `<Tabs>` to pick a package manager.

<Tabs
  groupId="package-managers"
  defaultValue="npm">
  <TabItem value="npm" label="npm" default>Run the npm command.</TabItem>
  <TabItem value="yarn" label={'Yarn'}>

```bash
import this
yarn add runner
```

  </TabItem>
</Tabs>

{/* Keep the list below in sync
with the release notes. */}
Then start it.
export the logs with the export button.

export const toc = [];
"""


def test_mdx_pages_are_markdown_without_their_code_and_components() -> None:
    [section] = split_document("docs/install.mdx", MDX)
    assert section.heading == "Installing > Install the runner"
    assert section.body == (
        "Use `<Tabs>` to pick a package manager.\n\n"
        "  npm Run the npm command.\n  Yarn\n\n"
        "```bash\nimport this\nyarn add runner\n```\n\n"
        "Then start it.\nexport the logs with the export button."
    )
    assert (section.line_start, section.line_end) == (9, 30)
    assert len(rendered_lines("docs/install.mdx", MDX)) == len(source_lines(MDX))
    # In a Markdown page the same lines are text: ESM and JSX are MDX's.
    plain = text_of(split_document("docs/install.md", MDX))
    assert "import Tabs from '@theme/Tabs';" in plain and '<TabItem value="npm"' in plain


def test_index_reads_mdx_pages(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    estate_builder.project("acme/site").commit({"docs/install.mdx": MDX}, "init")
    estate_builder.write()
    _summary, store = _index(write_config())
    [passage] = store.passages("acme/site")
    assert passage.path == "docs/install.mdx"
    assert passage.heading == "Installing > Install the runner"


# ---- reST tables cut across passages -----------------------------------------------------------


def test_a_cut_list_table_repeats_its_header_rows() -> None:
    sections = split("sphinx/deprecated.rst")
    header = "   * - Target\n     - Deprecated\n     - Removed\n     - Alternatives"
    inside = [s for s in sections if "     - Deprecated\n" in s.body or "   * - ``" in s.body]
    assert len(inside) >= 3
    assert header in inside[0].body  # the table's own header, where it is
    for section in inside[1:]:
        assert section.body.startswith(header + "\n   * - ")
        assert len(section.body) <= MAX_PASSAGE_CHARS
    # Every row is in one passage only.
    rows = [line for s in inside for line in s.body.split("\n") if line.startswith("   * - ``")]
    assert len(rows) == len(set(rows))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("+---+---+\n| a | b |\n+===+===+\n| 1 | 2 |\n+---+---+\n", [(0, 5, 3)]),
        ("+---+---+\n| 1 | 2 |\n+---+---+\n", []),  # no header rule: no header
        ("\n=== ===\n a   b\n=== ===\n 1   2\n\n 3   4\n=== ===\n\nafter\n", [(1, 8, 4)]),
        ("\n=== ===\n 1   2\n=== ===\n\n=== ===\n", []),  # closed by its second rule
        (".. list-table:: T\n   :header-rows: 1\n\n   * - a\n     - b\n   * - 1\n     - 2\n",
         [(3, 7, 5)]),
        (".. list-table:: T\n\n   * - a\n   * - 1\n", []),  # no header rows
        ("Title\n=====\n\ntext\n", []),  # a title's line is one column: not a table
    ],
    ids=["grid", "grid_no_header", "simple", "simple_no_header", "list_table",
         "list_table_no_header", "title"],
)  # fmt: skip
def test_rst_tables_and_their_headers(source: str, expected: list[tuple[int, int, int]]) -> None:
    assert rst.tables(source.split("\n")) == expected
