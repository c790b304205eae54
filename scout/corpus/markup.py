"""Generator markup rendered to the text a reader sees, line for line.

Main rule: rendering never adds or removes a line. Every function here takes a document's lines
and returns as many lines, each the rendered form of the source line at the same index, so a
passage built from rendered lines still cites the exact source lines it came from. Markup that
shows no text (HTML comments, Hugo shortcode tags, reST labels, comments and directive options)
becomes blank; markup that wraps text (Sphinx roles, a shortcode's `title=`) becomes that text.
Code (Markdown fences and indented blocks, reST literal blocks and code directives) is left as
written: a shortcode or a role inside an example is the example.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from scout.corpus import rst

# Bounded so an unterminated `{{<` cannot make each later opener scan the rest of the document.
_SHORTCODE = re.compile(r"\{\{([<%])(/\*)?(.{0,2000}?)(\*/)?([>%])\}\}", re.DOTALL)
_SHORTCODE_TITLE = re.compile(r"""\btitle\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""")
# CommonMark: an HTML comment runs to the first `-->`, or to the end of the document.
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)

# Heading attributes (Pandoc, kramdown, Python-Markdown attr_list, Hugo): `{#id}`,
# `{#id .class}`, `{: #id }`, `{ id="x" }`. Only a brace group holding an id or a class counts,
# so `Map {a}` keeps its braces.
_ATTR = r"""(?:[#.][^\s{}]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s{}]+)|data-[\w-]+)"""
_HEADING_ATTRS = re.compile(rf"\s*\{{:?\s*({_ATTR}(?:\s+{_ATTR})*)\s*\}}\s*$")
_ATTR_ID = re.compile(r"""(?:^|\s)(?:#([^\s{}.]+)|id=(?:"([^"]*)"|'([^']*)'|([^\s{}]+)))""")


# MkDocs admonitions (`!!! type "Title"`, collapsible `???`/`???+`) and content tabs (`=== "T"`).
# Words after the type are blanks-then-word pairs, so blanks never sit between two runs that
# could both take them (a lazy run of words and spaces there was quadratic in the line).
_ADMONITION = re.compile(
    r"""^([ \t]*)(?:(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)(?:[ \t]+[\w-]+)*|===\+?)"""
    r"""(?:[ \t]+"([^"\n]*)")?[ \t]*$""",
    re.MULTILINE,
)

# Docusaurus admonitions and Pandoc/MyST-style fenced containers: `:::note`, `:::tip Title`,
# `:::info[Title]`, `::: {.warning}`, and the `:::` that closes them.
# (A title runs to the end of its line, greedily, and blanks are never matched by two runs in a
# row with nothing between them: no backtracking over a long line's spaces.)
_CONTAINER = re.compile(
    r"""^([ \t]*):{3,}(?:[ \t]*([\w-]+)(?:[ \t]*\[([^\]\n]*)\]|[ \t]+([^\s{][^\n]*))?"""
    r"""|[ \t]*\{[^}\n]*\})?[ \t]*$""",
    re.MULTILINE,
)

# Material for MkDocs icons (`:material-check:`), by their prefixes: see `render_links`.
_ICON_PREFIXES = (":material-", ":octicons-", ":fontawesome-", ":simple-")
# Cheap substring tests before any regex runs: most documents hold none of these.
_MARKS = (
    "<",
    "{{",
    "!!!",
    "???",
    "===",
    "}`",
    ":::",
    "](",
    "][",
    "]:",
    "[!",
    "///",
    *_ICON_PREFIXES,
)
_MYST_ROLE = re.compile(r"\{([\w.+:-]+)\}`([^`\n]+(?:\n[^`\n]+){0,3})`")


# MDX comments in a heading show nothing; Docusaurus reads a last one whose first word starts
# with "#" as the heading's id (`## Install {/* #install */}`), the MDX form of `{#install}`.
_MDX_HEADING_COMMENT = re.compile(r"\{/\*([^*]{0,500}(?:\*(?!/)[^*]{0,500}){0,10})\*/\}")


def heading_attributes(text: str) -> tuple[str, str | None]:
    """A Markdown heading's text without its trailing attribute block (or MDX id comment), and
    the explicit id it sets (None when it sets none): "Configure {#configuration}" ->
    ("Configure", "configuration")."""
    if "{/*" in text:
        comments = _MDX_HEADING_COMMENT.findall(text)
        text = _MDX_HEADING_COMMENT.sub("", text).rstrip()
        first = comments[-1].split()[:1] if comments else []
        if first and first[0].startswith("#") and len(first[0]) > 1:
            return text, first[0][1:]
    match = _HEADING_ATTRS.search(text)
    if match is None:
        return text, None
    found = _ATTR_ID.search(match.group(1))
    anchor = next((g for g in found.groups() if g), None) if found else None
    return text[: match.start()].rstrip(), anchor


def strip_shortcodes(text: str) -> str:
    """Text with Hugo shortcodes rendered (`{{< tab title="Linux" >}}` -> "Linux", others "")."""
    return _SHORTCODE.sub(lambda m: _shortcode_text(m).replace("\n", " "), text)


def _shortcode_text(match: re.Match[str]) -> str:
    inner = match.group(3)
    if match.group(2) and match.group(4):  # `{{</* x */>}}` is Hugo's escape: it shows `{{< x >}}`
        return "{{" + match.group(1) + inner + match.group(5) + "}}"
    title = _SHORTCODE_TITLE.search(inner)
    text = next((g for g in title.groups() if g is not None), "") if title else ""
    return text + "\n" * inner.count("\n")


def _admonition_text(match: re.Match[str]) -> str:
    """A MkDocs admonition or tab opener as the title it shows: `!!! note "Mind"` -> "Mind",
    `!!! note` -> "Note", `=== "Linux"` -> "Linux"."""
    return _titled(match.group(1), match.group(2), match.group(3))


def _titled(indent: str, kind: str | None, title: str | None) -> str:
    """A box's opening line as the reader sees it: its title, else its kind ("Note")."""
    if title is None:
        title = kind.replace("-", " ").capitalize() if kind else ""
    return indent + title.strip()


def _container_text(match: re.Match[str]) -> str:
    """A container's opening line as the title it shows (`:::tip Mind` -> "Mind", `:::note` ->
    "Note"); its closing `:::` shows nothing."""
    title = match.group(3) if match.group(3) is not None else match.group(4)
    return _titled(match.group(1), match.group(2), title)


def _keep_lines(match: re.Match[str]) -> str:
    return "\n" * match.group(0).count("\n")


# MDX (Docusaurus' .mdx pages): ESM `import`/`export` blocks (from column 0 to a blank line) run
# as code, `{/* comments */}` show nothing, and a JSX component's tags (`<Tabs>`, `<TabItem
# value="py" label="Python">`, over lines or not) show only its `label` or `title`, as a tab does.
_MDX_ESM = re.compile(r"^(?:import|export)\b.*?(?=\n[ \t]*\n|\Z)", re.MULTILINE | re.DOTALL)
_MDX_COMMENT = re.compile(r"\{/\*.*?(?:\*/\}|\Z)", re.DOTALL)
# A code span comes first in the alternation, so a tag inside one (`<Tabs>`) is left as written.
_JSX_TAG = re.compile(r"(`[^`\n]*`)|</?[A-Z][\w.]*(?:\s[^<>]{0,2000})?/?>")
_TEXT_FOLLOWS = re.compile(r"[ \t]*[^\s]")
_JSX_TITLE = re.compile(
    r"""\b(?:label|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{["'`]([^"'`]*)["'`]\})"""
)


def _jsx_text(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return match.group(1)  # a code span
    title = _JSX_TITLE.search(match.group(0))
    shown = next((g for g in title.groups() if g is not None), "") if title else ""
    if shown and _TEXT_FOLLOWS.match(match.string, match.end()):
        shown += " "  # a tab's title before its text on the same line
    return shown + "\n" * match.group(0).count("\n")


def _esm_block(match: re.Match[str]) -> str:
    # ESM opens a block (or follows the front matter): a paragraph line starting "export" is
    # prose. Only the line before is read, so many matches cost no more than the text.
    at = match.start()
    previous = match.string[match.string.rfind("\n", 0, at - 1) + 1 : at].strip() if at else ""
    opens = previous in ("", "---", "+++")
    return _keep_lines(match) if opens else match.group(0)


# A JSX expression that is only a name (`{Example}`, `{props.code}`) shows what an import
# holds: code from another file (`import Example from '!!raw-loader!./example.js'`), which is
# not text of this page. The placeholder shows nothing.
_MDX_PLACEHOLDER = re.compile(r"(`[^`\n]*`)|\{[A-Za-z_$][\w$.]{0,100}\}")


def render_mdx(chunk: str) -> str:
    """MDX's own markup rendered (see above), line for line."""
    chunk = _MDX_ESM.sub(_esm_block, chunk)
    chunk = _MDX_COMMENT.sub(_keep_lines, chunk)
    chunk = _JSX_TAG.sub(_jsx_text, chunk)
    if "{" in chunk:
        chunk = _MDX_PLACEHOLDER.sub(lambda m: m.group(1) or "", chunk)
    return chunk


# ---- Markdown's own inline markup: links, images, HTML tags ------------------------------------
# A link shows its text, an image its alt text: the target (`page.md`, `https://...`, an issue
# URL) is not text a reader sees, and indexed it makes "md", "https" and "issues" common words.
# Every pattern here stays on one line (link text may wrap once) and each repetition is bounded
# or stops at a character the next part needs, so a scan never re-reads the rest of a line.
_CODE_SPAN = r"(``[^`\n]{1,500}``|`[^`\n]{1,500}`)"
_LINK_TEXT = r"\[([^\[\]\n]{0,500}(?:\n[^\[\]\n]{1,500})?)\]"
_LINK_DESTINATION = r"\((?:<[^<>\n]{0,2000}>|[^()\s]{0,2000}(?:\([^()\s]{0,200}\)[^()\s]{0,2000})?)"
_LINK_TITLE = r"""(?:[ \t]{1,20}(?:"[^"\n]{0,500}"|'[^'\n]{0,500}'))?[ \t]{0,20}\)"""
_IMAGE = re.compile(
    rf"{_CODE_SPAN}|!{_LINK_TEXT}(?:{_LINK_DESTINATION}{_LINK_TITLE}|\[[^\[\]\n]{{0,200}}\])"
)
_LINK = re.compile(
    rf"{_CODE_SPAN}|{_LINK_TEXT}(?:{_LINK_DESTINATION}{_LINK_TITLE}|\[[^\[\]\n]{{0,200}}\])"
)
# A link reference definition (`[label]: https://...`) shows nothing.
_LINK_DEFINITION = re.compile(r"^[ ]{0,3}\[[^\[\]\n]{1,500}\]:[ \t]*\S[^\n]*$", re.MULTILINE)
# HTML elements a Markdown page uses for layout: the tags show nothing, their text stays. Only
# known element names, so a placeholder such as `<name>` in prose keeps its word.
_HTML_TAG = re.compile(
    rf"{_CODE_SPAN}|</?(?:a|abbr|b|br|center|code|dd|del|details|div|dl|dt|em|figcaption|figure"
    r"|h[1-6]|hr|i|img|ins|kbd|li|mark|ol|p|picture|pre|s|small|source|span|strong|sub"
    r"|summary|sup|table|tbody|td|th|thead|tr|u|ul|video)(?:[ \t\n][^<>]{0,2000})?/?>",
    re.IGNORECASE,
)


# Material for MkDocs icons (pymdownx.emoji: `:material-check:`, `:octicons-tag-24:`), with an
# attribute list for their style (`{ style="color: red" }`), show a picture, not words.
_ICON = re.compile(
    rf"{_CODE_SPAN}|:(?:material|octicons|fontawesome|simple)-[a-z0-9-]{{1,100}}:"
    r"(?:\{[^{}\n]{0,500}\})?"
)


def render_links(chunk: str) -> str:
    """Markdown links and images as the text they show (`[Install](install.md)` -> "Install",
    `![CI](badge.svg)` -> "CI", `[text][ref]` -> "text"), link reference definitions blank, and
    the tags of common HTML elements and Material's icons removed; code spans are left as
    written."""
    if "](" in chunk or "][" in chunk or "]:" in chunk:
        if "![" in chunk:
            chunk = _IMAGE.sub(_link_text, chunk)
        chunk = _LINK.sub(_link_text, chunk)
        chunk = _LINK_DEFINITION.sub("", chunk)
    if "<" in chunk:
        chunk = _HTML_TAG.sub(lambda m: m.group(1) or "\n" * m.group(0).count("\n"), chunk)
    if any(prefix in chunk for prefix in _ICON_PREFIXES):
        chunk = _ICON.sub(lambda m: m.group(1) or "", chunk)
    return chunk


def _link_text(match: re.Match[str]) -> str:
    return match.group(1) if match.group(1) is not None else match.group(2)


# GitLab (and GitHub, Obsidian, Hugo) alerts: a block quote opening with `> [!note]` shows the
# alert's title, "Note", or the custom title after the marker (`> [!warning]+ Hot`).
_ALERT = re.compile(
    r"^([ \t]{0,3}(?:>[ \t]?){1,10})\[!([A-Za-z]{1,20})\][+-]?(?:[ \t]+([^\n]*))?$", re.MULTILINE
)


def _alert_text(match: re.Match[str]) -> str:
    title = (match.group(3) or "").strip()
    return match.group(1) + (title or match.group(2).capitalize())


# pymdownx.blocks (`/// note | Title` ... `///`): the opener shows its title (else its kind, as
# an admonition does; a `caption` or `html` block shows none), the closer nothing, and the YAML
# options indented under the opener are not text.
_BLOCK_FENCE = re.compile(
    r"^([ \t]{0,40})/{3,}(?:[ \t]{0,20}([\w-]{1,40})[ \t]{0,20}(?:\|[ \t]{0,20}([^\n]*))?)?[ \t]*$",
    re.MULTILINE,
)
_BLOCK_OPTION = re.compile(r"^[ \t]{4,}[\w-]{1,40}:(?:[ \t][^\n]*)?$")
_UNTITLED_BLOCKS = {"caption", "html", "attrs", "define"}


def render_blocks(lines: list[str]) -> list[str]:
    """pymdownx `///` block fences rendered (see above), line for line."""
    out = list(lines)
    k = 0
    while k < len(out):
        fence = _BLOCK_FENCE.match(out[k])
        if fence is None:
            k += 1
            continue
        kind = (fence.group(2) or "").lower()
        if not kind or kind in _UNTITLED_BLOCKS:
            title = fence.group(3) or ""
            out[k] = fence.group(1) + title.strip() if kind not in _UNTITLED_BLOCKS else ""
        else:
            out[k] = _titled(fence.group(1), kind, fence.group(3) or None)
        k += 1
        while kind and k < len(out) and _BLOCK_OPTION.match(out[k]):
            out[k] = ""
            k += 1
    return out


def render_markdown(
    lines: list[str], code: Iterable[tuple[int, int]], *, mdx: bool = False
) -> list[str]:
    """Markdown lines with links, HTML comments and tags, Hugo shortcodes, GitLab alerts, MkDocs
    admonitions and `///` blocks and Docusaurus containers rendered (and MDX's own markup, for
    an .mdx page); lines in the `code` spans ([start, end), 0-based) are kept as written."""
    out = list(lines)
    for start, end in _gaps(len(lines), code):
        chunk = "\n".join(lines[start:end])
        if mdx:
            chunk = render_mdx(chunk)
        elif not any(mark in chunk for mark in _MARKS):
            continue  # nothing to render, as in most chunks
        chunk = _HTML_COMMENT.sub(_keep_lines, chunk)
        chunk = render_links(chunk)
        if "[!" in chunk:
            chunk = _ALERT.sub(_alert_text, chunk)
        if "///" in chunk:
            chunk = "\n".join(render_blocks(chunk.split("\n")))
        chunk = _SHORTCODE.sub(_shortcode_text, chunk)
        chunk = _ADMONITION.sub(_admonition_text, chunk)
        if ":::" in chunk:
            chunk = _CONTAINER.sub(_container_text, chunk)
        if "}`" in chunk:  # MyST roles in Sphinx's Markdown pages: {ref}`Title <label>`
            chunk = _MYST_ROLE.sub(lambda m: _shown(m.group(1), m.group(2)), chunk)
        rendered = chunk.split("\n")
        out[start:end] = rendered if len(rendered) == end - start else lines[start:end]
    return out


def _gaps(n: int, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The [start, end) runs of range(n) outside the given spans."""
    gaps: list[tuple[int, int]] = []
    at = 0
    for start, end in sorted(spans):
        if start > at:
            gaps.append((at, start))
        at = max(at, end)
    if at < n:
        gaps.append((at, n))
    return gaps


# ---- reStructuredText --------------------------------------------------------------------------

EXPLICIT = re.compile(r"^(\s*)\.\.(?:\s+|$)(.*)$")
DIRECTIVE = re.compile(r"^([\w:.+-]+)::(?:\s+(.*))?$")
_LABEL = re.compile(r"^_([^:`]+|`[^`]+`):\s*$")
OPTION = re.compile(r"^\s+:[\w.+ -]+:(?:\s.*)?$")
# :role:`text <target>`, :domain:role:`~a.b.C`, :pep:`8`, MyST {role}`x`.
_ROLE = re.compile(r"(?::([\w.+-]+(?::[\w.+-]+)?):|\{([\w.+:-]+)\})`([^`\n]+(?:\n[^`\n]+){0,3})`")
_NUMBERED_ROLES = {"pep": "PEP", "rfc": "RFC"}
# What Sphinx prints for its version directives (sphinx/domains/changeset.py).
_VERSION_TEXT = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}

# Directives whose body is code, shown as written.
CODE_DIRECTIVES = {
    "code",
    "code-block",
    "sourcecode",
    "parsed-literal",
    "doctest",
    "testcode",
    "testoutput",
    "testsetup",
    "testcleanup",
    "prompt",
    "literalinclude",
    "highlight",
    "productionlist",
    "math",
    "raw",
    "graphviz",
}
# Directives whose argument is a path, a language or an expression rather than text.
_MUTE_ARGUMENT = CODE_DIRECTIVES | {
    "include",
    "image",
    "figure",
    "toctree",
    "only",
    "index",
    "currentmodule",
    "module",
    "program",
    "default-role",
    "role",
    "highlight",
    "tabularcolumns",
    "contents",
    "sectnum",
    "csv-table",
    "autosummary",
}
# Directives whose whole body is markup or a list of paths: dropped with their options.
_MUTE_BODY = {"toctree", "index", "tabularcolumns", "autosummary", "raw", "image"}

# Sphinx object descriptions (`.. confval:: name`, `.. option:: -b`, `.. py:function:: f(x)`):
# each is an entry of its own on the page, a section whose heading is what it describes. Plain
# names are the standard and default (Python) domain's; any directive of a domain below counts,
# but for the few that describe nothing.
_OBJECT_DIRECTIVES = {
    "confval", "option", "envvar", "describe", "object", "event", "setting", "function",
    "class", "method", "attribute", "data", "exception", "decorator", "decoratormethod",
    "classmethod", "staticmethod", "property", "type",
}  # fmt: skip
_OBJECT_DOMAINS = {"py", "c", "cpp", "js", "std", "rst"}
_NOT_OBJECTS = {"module", "currentmodule", "namespace", "namespace-push", "namespace-pop",
                "alias", "program", "default-domain"}  # fmt: skip
# Fields Sphinx shows for an object's options (`:type:` as "Type: str").
_SHOWN_OPTIONS = {"type": "Type", "default": "Default"}
_OPTION_FIELD = re.compile(r"^(\s+):([\w-]{1,40}):[ \t]*(.*)$")


@dataclass
class RstMarkup:
    """What rendering a reST document found besides its text."""

    lines: list[str]
    labels: list[tuple[int, str]] = field(default_factory=list)  # (line, label) for `.. _x:`
    includes: list[tuple[int, str]] = field(default_factory=list)  # (line, path) of includes
    terms: list[tuple[int, str]] = field(default_factory=list)  # (line, term) of glossaries
    code: list[tuple[int, int]] = field(default_factory=list)  # literal spans [start, end)
    # Sphinx object descriptions: (directive line, first line after its signature, end of its
    # block, exclusive; its indent, its directive name, the names it describes)
    objects: list[tuple[int, int, int, int, str, str]] = field(default_factory=list)


def block_end(lines: list[str], start: int, indent: int) -> int:
    """The end (exclusive) of the block of lines after `start` indented deeper than `indent`,
    blank lines inside it included, blank lines after it not."""
    last = start + 1
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        if rst.indent(line) <= indent:
            break
        last = i + 1
    return last


def render_rst(lines: list[str]) -> RstMarkup:
    """reST lines with explicit markup rendered: labels, comments, substitution definitions and
    directive options blank; a directive line shows its argument where that is text; roles
    become their text; literal blocks and code directives are kept as written."""
    out = list(lines)
    found = RstMarkup(out)
    i, n = 0, len(lines)
    literal_next = False  # the previous paragraph ended with `::`
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = rst.indent(line)
        if literal_next:
            literal_next = False
            end = block_end(lines, i - 1, paragraph_indent(lines, i))
            if end > i:
                found.code.append((i, end))
                i = end
                continue
        explicit = EXPLICIT.match(line)
        if explicit is None:
            out[i] = render_roles(line)
            if line.rstrip().endswith("::"):
                literal_next = True
                if line.rstrip() == line[:indent] + "::":  # an expanded `::` alone shows nothing
                    out[i] = ""
                else:
                    out[i] = out[i].rstrip()[:-1]
            i += 1
            continue
        body = explicit.group(2).strip()
        end = block_end(lines, i, indent)
        label = _LABEL.match(body)
        directive = DIRECTIVE.match(body)
        if label is not None:
            found.labels.append((i, label.group(1).strip("`")))
            out[i] = ""
            i += 1
            continue
        if directive is None and body.startswith("["):  # a footnote or citation: its text
            close = body.find("]")
            out[i] = line[:indent] + render_roles(body[close + 1 :].strip()) if close > 0 else ""
            i += 1
            continue
        if directive is None:  # a comment or a substitution definition, with its block
            for k in range(i, max(end, i + 1)):
                out[k] = ""
            i = max(end, i + 1)
            continue
        name = directive.group(1).lower().rsplit(":", 1)[-1]
        argument = directive.group(2) or ""
        if name in ("include", "literalinclude") and argument:
            found.includes.append((i, argument.strip()))
        if name in _MUTE_ARGUMENT:
            out[i] = ""
        else:
            shown = f"{_VERSION_TEXT[name]} {argument}" if name in _VERSION_TEXT else argument
            out[i] = line[:indent] + render_roles(shown).rstrip()
        k = i + 1
        if is_object(directive.group(1)):
            k = _object(lines, i, end, argument, directive.group(1), found)
        while k < n and OPTION.match(lines[k]) and rst.indent(lines[k]) > indent:
            out[k] = ""
            k += 1
        if name in CODE_DIRECTIVES:
            if k < end:
                found.code.append((k, end))
            i = max(end, k)
            continue
        if name in _MUTE_BODY:
            for m in range(k, end):
                out[m] = ""
            i = max(end, k)
            continue
        if name == "glossary":
            _glossary(lines, k, end, found)
        i = k
    _wrapped_roles(out, found.code)
    return found


def is_object(directive: str) -> bool:
    """Whether a directive (`confval`, `py:method`) describes an object: see above."""
    name = directive.lower()
    if ":" not in name:
        return name in _OBJECT_DIRECTIVES
    domain, _, kind = name.partition(":")
    return domain in _OBJECT_DOMAINS and kind.rsplit(":", 1)[-1] not in _NOT_OBJECTS


def _object(
    lines: list[str], i: int, end: int, argument: str, directive: str, found: RstMarkup
) -> int:
    """Record the object directive at line i; the line after its signature. A signature may go
    on over more lines (`.. confval:: copyright` then `project_copyright`), each another name;
    its `:type:` and `:default:` options show as Sphinx shows them."""
    names = [argument.strip()] if argument.strip() else []
    k = i + 1
    while k < end and lines[k].strip() and not OPTION.match(lines[k]):
        names.append(lines[k].strip())
        found.lines[k] = ""
        k += 1
    indent = rst.indent(lines[i])
    found.objects.append((i, k, end, indent, directive.lower(), ", ".join(names)))
    while k < end and OPTION.match(lines[k]):
        field = _OPTION_FIELD.match(lines[k])
        shown = _SHOWN_OPTIONS.get(field.group(2).lower()) if field else None
        if field is not None and shown is not None:
            found.lines[k] = f"{field.group(1)}{shown}: {render_roles(field.group(3))}"
        else:
            found.lines[k] = ""
        k += 1
    return k


def paragraph_indent(lines: list[str], i: int) -> int:
    """The indent of the paragraph whose last line precedes line i (skipping blanks)."""
    k = i - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    return rst.indent(lines[k]) if k >= 0 else 0


def _glossary(lines: list[str], start: int, end: int, found: RstMarkup) -> None:
    """Terms of a glossary body: lines at the body's indent (definitions are deeper)."""
    body = [k for k in range(start, end) if lines[k].strip()]
    if not body:
        return
    indent = min(rst.indent(lines[k]) for k in body)
    for k in body:
        if rst.indent(lines[k]) == indent:
            found.terms.append((k, lines[k].strip()))


# A reST hyperlink reference shows its text, not its target: `Python <https://python.org>`_ is
# "Python", `Python`_ is "Python". (The text holds no `<`, so a scan stops at the first one.)
# Wrapped over lines (in a paragraph), the line breaks stay, so no line moves.
_RST_LINK = re.compile(r"(?<![`:])`([^`<]{1,500})(<[^<>`]{1,2000}>)?`__?(?![\w`])")


def _link_ref_text(match: re.Match[str]) -> str:
    text = match.group(1).rstrip(" \t")
    return text + "\n" * (match.group(2) or "").count("\n")


def render_roles(text: str) -> str:
    """Sphinx and MyST roles as their text: :ref:`Title <label>` -> "Title",
    :class:`~gitlab.Gitlab` -> "Gitlab", :pep:`8` -> "PEP 8"; hyperlink references as theirs."""
    if "`" not in text:
        return text
    text = _ROLE.sub(_role_text, text)
    return _RST_LINK.sub(_link_ref_text, text) if "`_" in text else text


def _role_text(match: re.Match[str]) -> str:
    """A role's text; a role wrapped over lines keeps its line breaks, so no line moves."""
    return _shown(match.group(1) or match.group(2) or "", match.group(3))


def _shown(role: str, content: str) -> str:
    role = role.rsplit(":", 1)[-1]
    explicit = _explicit_title(content)
    if explicit:
        shown = explicit
    else:
        shown = content.lstrip("!")
        if shown.startswith("~"):
            shown = shown[1:].rsplit(".", 1)[-1]
        if role in _NUMBERED_ROLES:
            shown = f"{_NUMBERED_ROLES[role]} {shown}"
    return shown + "\n" * (content.count("\n") - shown.count("\n"))


def _explicit_title(content: str) -> str | None:
    """The title of a role's `Title <target>` text, None without a target. Found from the last
    `<` rather than by a lazy pattern, which would try every split of a long run of spaces."""
    opener = content.rfind("<")
    target = content[opener + 1 : -1]
    if opener < 0 or not content.endswith(">") or not target or ">" in target:
        return None
    return content[:opener].rstrip()


def _wrapped_roles(out: list[str], code: list[tuple[int, int]]) -> None:
    """Roles wrapped over two or more lines of one paragraph, rendered in place."""
    for start, end in _gaps(len(out), code):
        k = start
        while k < end:
            if not out[k].strip():
                k += 1
                continue
            para = k
            while k < end and out[k].strip():
                k += 1
            if k - para > 1 and any("`" in line for line in out[para:k]):
                joined = _ROLE.sub(_role_text, "\n".join(out[para:k]))
                rendered = _RST_LINK.sub(_link_ref_text, joined).split("\n")
                if len(rendered) == k - para:
                    out[para:k] = rendered
