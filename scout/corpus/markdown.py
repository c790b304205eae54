"""The Markdown outline of a document: headings, top-level block starts and front matter.

Main rule: only markdown-it-py's block parser reads the whole document (its inline parser, the
slow and pathological part, only ever sees a bounded heading), and only top-level headings open
sections: a `#` line inside a fenced code block, a block quote or a list item is content.
Line numbers are 0-based indices into the document's lines; `passages` turns them into sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from scout.corpus.markup import heading_attributes, render_roles, strip_shortcodes
from scout.corpus.outline import Description, Heading, Include, Span, Table

# A heading's source is cut to this before inline parsing; a 100 KB heading line stays cheap.
MAX_HEADING_SOURCE = 1_000

# Deeper nesting than this is left unparsed by markdown-it (it stays text of its outer block),
# which bounds recursion on hostile input such as 10,000 nested block quotes.
MAX_NESTING = 20

_WHITESPACE = re.compile(r"\s+")
_INLINE_SYNTAX = re.compile(r"[\\`*_\[\]<>!&~]")  # without these, a heading's text is its source
_MKDOCS_OPENER = re.compile(r"^\s*(?:!!!|\?\?\?\+?|===\+?)\s")
# A quoted one-line string of TOML front matter: `title = "Setup"`, `description = 'x'`.
_TOML_KEY = re.compile(r"""^(title|description)\s*=\s*(["'])(.*)\2\s*$""")
MAX_TOML_LINES = 1_000  # front matter longer than this is not front matter
_MYST_INCLUDE = re.compile(r"^\{include\}\s+(\S.*)$")
# Greedy to the line's end and stripped after: a lazy value before a greedy tail of blanks would
# try every split of a long run of spaces (quadratic in the line).
_YAML_KEY = r"^{key}:(.*)$"


@dataclass
class Outline:
    """What the section splitter needs to know about one Markdown document."""

    first_line: int = 0  # first line after the front matter
    title: str | None = None  # the front matter's `title:`, if any
    # the front matter's one-line `description:` (a page's summary, shown on the site) and its line
    description: Description | None = None
    headings: list[Heading] = field(default_factory=list)
    block_starts: list[int] = field(default_factory=list)  # lines where a top-level block begins
    anchors: dict[int, str] = field(default_factory=dict)  # heading line -> its explicit `{#id}`
    code: list[Span] = field(default_factory=list)  # fenced and indented code spans
    tables: list[Table] = field(default_factory=list)
    # MyST include directives (```{include} path```)
    includes: list[Include] = field(default_factory=list)
    # Snippet lines that show another file of the repository (pymdownx `--8<-- "file"`, the
    # `{* file.py *}` of FastAPI-style docs): (line, path as written); the line shows nothing.
    snippets: list[tuple[int, str]] = field(default_factory=list)


def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).use(front_matter_plugin)
    md.enable("table")  # GitLab renders GFM tables; a table is one block, not paragraphs
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


_BLOCKS = _block_parser()
_INLINE = MarkdownIt("commonmark")


def outline(src: str) -> Outline:
    """The outline of `src`, whose lines must be separated by "\\n" only (no "\\r")."""
    result = Outline()
    if src.startswith("+++"):
        src = _toml_front_matter(src, result)
    tokens = _BLOCKS.parse(src)
    lines: list[str] | None = None  # split only when an indented block needs a look back
    for i, token in enumerate(tokens):
        if token.type == "fence" and token.map is not None and _MYST_INCLUDE.match(token.info):
            argument = _MYST_INCLUDE.match(token.info)
            assert argument is not None
            result.includes.append(Include(token.map[0], token.map[1], argument.group(1).strip()))
        elif token.type == "code_block" and token.map is not None:
            if lines is None:
                lines = src.split("\n")
            if not _opens_indented_content(lines, token.map[0]):
                result.code.append(Span(token.map[0], token.map[1]))
        elif token.type == "fence" and token.map is not None:
            result.code.append(Span(token.map[0], token.map[1]))
        elif token.type == "inline" and token.map is not None and _has_snippet(token.content):
            result.snippets += snippet_lines(token.content, token.map[0])
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        start, end = token.map
        if token.type == "table_open":
            result.tables.append(Table(start, end, start + 2))
        if token.type == "front_matter":
            result.first_line = end
            result.title = front_matter_title(token.content)
            found = front_matter_block(token.content, "description") or front_matter_value(
                token.content, "description"
            )
            if found is not None and found[1].lower() != (result.title or "").lower():
                result.description = Description(start + 1 + found[0], found[1])
            continue
        result.block_starts.append(start)
        if token.type == "heading_open":
            source = tokens[i + 1].content if i + 1 < len(tokens) else ""
            source = source[:MAX_HEADING_SOURCE]
            if "{" in source:  # shortcodes and attribute blocks both start with a brace
                source, anchor = heading_attributes(strip_shortcodes(source))
                if anchor:
                    result.anchors[start] = anchor
                if "}`" in source:  # a MyST role shows its text: {ref}`Text <target>`
                    source = render_roles(source)
            result.headings.append(Heading(start, end, int(token.tag[1:]), heading_text(source)))
    return result


# A snippet line (a paragraph line of its own): `--8<-- "file.md"` (pymdownx.snippets; an
# escaped `;--8<--` is shown, not read; `file.py:3:9` names lines of the file, read whole here),
# `--8<--` alone opening or closing a block of one path a line, or `{* ../src/app.py hl[3] *}`.
_SNIPPET = re.compile(r"""^--8<--[ \t]{1,20}(["'])([^"'\n]{1,500})\1[ \t]*$""")
_SNIPPET_BLOCK = "--8<--"
_CODE_SNIPPET = re.compile(r"^\{\*[ \t]{1,20}(\S{1,500})(?:[ \t][^\n]{0,500})?\*\}[ \t]*$")
_SNIPPET_PATH = re.compile(r"^[^\s:]{1,500}")


def _has_snippet(content: str) -> bool:
    return "--8<--" in content or "{*" in content


def snippet_lines(paragraph: str, first: int) -> list[tuple[int, str]]:
    """(line, path) of the snippet lines of a paragraph whose first line is `first`."""
    found: list[tuple[int, str]] = []
    in_block = False
    for k, line in enumerate(paragraph.split("\n")):
        text = line.strip()
        if text == _SNIPPET_BLOCK:
            in_block = not in_block
            found.append((first + k, ""))
            continue
        single, code = _SNIPPET.match(text), _CODE_SNIPPET.match(text)
        named = single.group(2) if single else code.group(1) if code else None
        path = _SNIPPET_PATH.match(named or (text if in_block else ""))
        if path is not None:
            found.append((first + k, path.group(0)))
    return found


def _toml_front_matter(src: str, result: Outline) -> str:
    """Hugo's TOML front matter (between `+++` lines): its `title` and one-line `description`
    recorded, its lines blanked for the block parser (which knows only YAML front matter)."""
    lines = src.split("\n", MAX_TOML_LINES)
    end = next((k for k in range(1, len(lines)) if lines[k].rstrip() == "+++"), None)
    if lines[0].rstrip() != "+++" or end is None or end >= MAX_TOML_LINES:
        return src
    for k in range(1, end):
        match = _TOML_KEY.match(lines[k])
        if match is None:
            continue
        value = _WHITESPACE.sub(" ", match.group(3)).strip()
        if match.group(1) == "title" and value:
            result.title = value
        elif match.group(1) == "description" and value and value != result.title:
            result.description = Description(k, value)
    result.first_line = end + 1
    return "\n" * (end + 1) + "\n".join(lines[end + 1 :])


def _opens_indented_content(lines: list[str], start: int) -> bool:
    """Whether the indented block at `start` is the body of a MkDocs admonition (`!!! note`,
    `??? tip`) or content tab (`=== "Linux"`), which is prose, not an indented code block."""
    k = start - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    return k >= 0 and _MKDOCS_OPENER.match(lines[k]) is not None


def heading_text(source: str) -> str:
    """The plain text of a heading's inline Markdown: markup removed, whitespace collapsed."""
    source = source[:MAX_HEADING_SOURCE]
    parts: list[str] = []
    if "<" in source:  # an HTML comment in a heading shows nothing (and may be all it holds)
        source = re.sub(r"<!--.*?(?:-->|$)", "", source)
    if _INLINE_SYNTAX.search(source):
        _plain(_INLINE.parseInline(source), parts)
    else:  # most headings: skip the inline parser, which costs more than the block parse
        parts.append(source)
    return _WHITESPACE.sub(" ", "".join(parts)).strip()


def _plain(tokens: list[Token], parts: list[str]) -> None:
    for token in tokens:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        if token.children:
            _plain(token.children, parts)


def front_matter_title(yaml: str) -> str | None:
    """The top-level `title:` of YAML front matter, unquoted; None when absent or empty."""
    found = front_matter_value(yaml, "title")
    return found[1] if found else None


def front_matter_value(yaml: str, key: str) -> tuple[int, str] | None:
    """The line (0-based, within `yaml`) and unquoted value of a one-line top-level `key:` of
    YAML front matter; None when absent or empty.

    A line scan rather than a YAML parser: we need one scalar, and YAML parsers are a large
    attack surface for untrusted files (aliases, tags). Block scalars (`title: >`) are ignored.
    """
    match = re.search(_YAML_KEY.format(key=re.escape(key)), yaml, re.MULTILINE)
    if match is None:
        return None
    value = match.group(1).strip(" \t")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    elif value.startswith(("'", '"', ">", "|")):
        return None
    else:
        value = value.split(" #", 1)[0]  # a YAML comment after a plain scalar
    value = _WHITESPACE.sub(" ", value).strip()
    return (yaml.count("\n", 0, match.start()), value) if value else None


# A block scalar's header (`>`, `|-`, `>2+`) and the lines it may take: a summary, not a chapter.
_BLOCK_SCALAR = re.compile(r"^[>|](?:[1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#[^\n]*)?$")
MAX_BLOCK_LINES = 50
MAX_DESCRIPTION_CHARS = 2_000


def front_matter_block(yaml: str, key: str) -> tuple[int, str] | None:
    """The line (0-based, within `yaml`) and text of a top-level `key:` whose value is a YAML
    block scalar (`description: >-` or `|`, its text on the indented lines under it) or a plain
    scalar continued on indented lines, folded to one line; None otherwise.

    Folded and literal scalars alike become one line: the value is shown as one summary line.
    """
    # Only the lines a value can be on are split off: the rest of a huge front matter is never
    # touched (a million-line value costs what a 1,050-line one does).
    window = MAX_TOML_LINES + MAX_BLOCK_LINES
    lines = yaml.split("\n", window)[:window]
    prefix = key + ":"
    for k, line in enumerate(lines[:MAX_TOML_LINES]):
        if not line.startswith(prefix):
            continue
        head = line[len(prefix) :].strip(" \t")
        if head and not _BLOCK_SCALAR.match(head):
            if head[0] in "'\"[{&*!%@`" or k + 1 >= len(lines) or not lines[k + 1][:1].isspace():
                return None  # quoted, a flow collection, a tag or alias, or one line only
            parts = [head]
        else:
            parts = []
        for more in lines[k + 1 : k + 1 + MAX_BLOCK_LINES]:
            if more.strip() and not more[:1].isspace():
                break
            parts.append(more.strip())
        value = _WHITESPACE.sub(" ", " ".join(parts)).strip()[:MAX_DESCRIPTION_CHARS]
        return (k, value) if value else None
    return None
