"""The ids docutils (and so Sphinx) gives a reST page's elements, numbered ones included.

Main rule: one counter per document. docutils gives an element the id of its name
(`nodes.make_id`) unless that id is taken or empty, and otherwise the next free `id<n>` of the
document's counter (`nodes.document.set_id`; Sphinx sets `auto_id_prefix = "id"` in
`sphinx/environment/__init__.py`), in the order the parser meets the elements. So a title that
repeats on a page, a title that makes no id ("日本語"), a title whose id a label above it took, an
anonymous link target (`__ url`, `.. __: url`), a footnote reference (`[#]_`, `[1]_`), an
auto-numbered or numeric footnote (`.. [#]`, `.. [1]`) and a citation reference all take the next
number, in document order. Text docutils does not parse (literal blocks, code, math, raw and
comments) takes none. Checked against pages Sphinx 9.0.4 (docutils 0.22.4) built:
tests/fixtures/sphinx.

What cannot be known without running docutils is said, not guessed: an `include` pulls in text
whose elements take numbers too, so numbered ids from that line on are left unplaced
(`uncertain_from`); so are ids of parse errors, which docutils numbers after the page is parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scout.corpus import markup, rst

AUTO_ID = re.compile(r"id[0-9]{1,9}")  # what Sphinx's generated ids look like
# Directives whose body docutils does not parse as reST (their elements take no ids).
_UNPARSED = markup.CODE_DIRECTIVES | {"include"}
_NAME_OPTION = re.compile(r"^\s+:name:[ \t]+(\S.*)$")
# Inline text whose content is not parsed for references: ``literals`` and :roles:`text`.
# A role's name is at most three colon-separated parts (`:py:func:`), so a scan from a colon stops
# within three of them: a long run of `:a:a:a` is not rescanned from every colon.
_UNPARSED_INLINE = re.compile(r"``[^`]+``|:(?:[\w.+-]+:){1,3}`[^`]*`|`[^`]*`(?::[\w.+-]+){1,3}:")
# A footnote's or citation's label: auto-numbered (`#`, `#name`), a symbol, a number, a name.
_LABEL = r"#[\w.-]*|\*|[0-9]+|[A-Za-z0-9_.-]+"
# Inline elements that take an id: footnote and citation references, an embedded target's
# reference (`text <url>`_, single underscore: a named target), an inline target _`text`.
_INLINE = re.compile(
    rf"(?P<note>\[(?:{_LABEL})\]_)(?![\w])"
    r"|`(?P<named>[^`<]*)<[^`<>]+>`_(?!_)"
    r"|(?<![\w`])_`(?P<inline>[^`]+)`"
)
# A footnote or citation reference in a title, and the text it has while the page is parsed
# (an auto-numbered or symbol footnote's number comes later): what the title's name holds.
_NOTE_TEXT = re.compile(rf"\[({_LABEL})\]_(?![\w])")
_FOOTNOTE = re.compile(rf"^\[(?P<label>{_LABEL})\](?:\s+(?P<text>.*))?$")
_TARGET = re.compile(r"^_(?:`(?P<quoted>[^`]+)`|(?P<plain>(?:[^:\\]|\\.)+)):(?:\s|$)")


@dataclass
class Ids:
    """The ids of a page's titles (by the title's first line), of its labels (`.. _x:`, by
    line), and of its other elements that take one (line, id), in document order."""

    titles: dict[int, str] = field(default_factory=dict)
    labels: dict[int, str] = field(default_factory=dict)
    others: list[tuple[int, str]] = field(default_factory=list)
    uncertain_from: int | None = None  # numbered ids from this line on are not placed

    def placed(self, line: int, ident: str) -> bool:
        """Whether an id at ``line`` is known: a name's id always, a number before any include."""
        before = self.uncertain_from is None or line < self.uncertain_from
        return before or not AUTO_ID.fullmatch(ident)


class _Counter:
    """docutils' `document.ids` and its `id<n>` counter."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.n = 0

    def name(self, name: str) -> str:
        """The id an element named ``name`` gets: its own, or the next number if taken."""
        base = rst.docutils_id(name)
        if base and base not in self.taken:
            self.taken.add(base)
            return base
        return self.number()

    def number(self) -> str:
        self.n += 1
        while f"id{self.n}" in self.taken:
            self.n += 1
        self.taken.add(f"id{self.n}")
        return f"id{self.n}"


def assign(lines: list[str], titles: list[tuple[int, int, str]]) -> Ids:
    """The ids of a page whose section titles are ``titles`` ((first line, end line, title
    text), as `rst.outline` finds them), read in document order as docutils parses it."""
    found = Ids()
    ids = _Counter()
    title_at = {start: (end, text) for start, end, text in titles}
    i, n = 0, len(lines)
    literal_next = False  # the paragraph before ended with "::"
    while i < n:
        if i in title_at:
            end, text = title_at[i]
            _inline(lines[i + 1] if end - i == 3 else lines[i], i, ids, found)
            found.titles[i] = ids.name(_NOTE_TEXT.sub(_note_text, text))
            literal_next = False
            i = end
            continue
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = rst.indent(line)
        if literal_next:
            literal_next = False
            end = markup.block_end(lines, i - 1, markup.paragraph_indent(lines, i))
            if end > i:
                i = end
                continue
        stripped = line.strip()
        if stripped == "__" or stripped.startswith("__ "):  # an anonymous target, short form
            found.others.append((i, ids.number()))
            i = max(markup.block_end(lines, i, indent), i + 1)
            continue
        explicit = markup.EXPLICIT.match(line)
        if explicit is None:
            _inline(line, i, ids, found)
            literal_next = line.rstrip().endswith("::")
            i += 1
            continue
        i = _explicit(lines, i, explicit.group(2).strip(), ids, found)
    return found


def _explicit(lines: list[str], i: int, body: str, ids: _Counter, found: Ids) -> int:
    """Read the explicit markup block at line i (its first line's text is ``body``); the line
    to read on from."""
    indent = rst.indent(lines[i])
    end = max(markup.block_end(lines, i, indent), i + 1)
    if body.startswith("__:"):
        found.others.append((i, ids.number()))
        return end
    target = _TARGET.match(body)
    if target is not None:
        name = target.group("quoted") or re.sub(r"\\(.)", r"\1", target.group("plain"))
        found.labels[i] = ids.name(" ".join(name.split()))
        return end
    note = _FOOTNOTE.match(body)
    if note is not None:
        label = note.group("label")
        named = label[1:] if label.startswith("#") else label if label != "*" else ""
        found.others.append((i, ids.name(named) if named else ids.number()))
        _inline(note.group("text") or "", i, ids, found)
        return i + 1  # the footnote's text is parsed: its own references take ids too
    directive = markup.DIRECTIVE.match(body)
    if directive is None:  # a comment or a substitution definition: not parsed here
        return end
    name = directive.group(1).lower().rsplit(":", 1)[-1]
    if name == "include" and found.uncertain_from is None:
        found.uncertain_from = i
    k = i + 1
    while k < len(lines) and markup.OPTION.match(lines[k]) and rst.indent(lines[k]) > indent:
        option = _NAME_OPTION.match(lines[k])
        if option is not None:  # `:name:` makes the directive's element a named target
            found.others.append((k, ids.name(option.group(1).strip())))
        k += 1
    # Any other body is parsed as reST, and read on; an object description's own id is Sphinx's
    # (`confval-x`, `module.func`), not the counter's.
    return end if name in _UNPARSED else k


def _note_text(match: re.Match[str]) -> str:
    label = match.group(1)
    return "" if label.startswith(("#", "*")) else label


def _inline(text: str, line: int, ids: _Counter, found: Ids) -> None:
    """The ids inline elements of one line of parsed text take, left to right."""
    if "_" not in text:
        return
    text = _UNPARSED_INLINE.sub(" ", text)
    for match in _INLINE.finditer(text):
        if match.group("note") is not None:
            ident = ids.number()
        else:
            name = match.group("named")
            name = match.group("inline") if name is None else name
            ident = ids.name(" ".join(name.split())) if name.strip() else ids.number()
        found.others.append((line, ident))
