"""A reStructuredText section-title scanner: titles, their levels and block starts.

Main rule: follow docutils' title syntax closely enough for real documentation without running
docutils (heavy, and it executes directives). A title is a line of text under an adornment line
(one punctuation character repeated, at least as wide as the title or four long), optionally also
over an identical overline, and preceded by a blank line or the start of the file. Levels come
from the order in which adornment styles first appear, as in docutils. Indented lines are never
titles, so literal blocks and directive bodies cannot open sections. Lines are 0-based.
"""

from __future__ import annotations

import re
import unicodedata

from scout.corpus.outline import Heading, Table

_ADORNMENT_CHARS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# Inline markup removed from title text: ``literal``, **strong**, *emphasis*, `role`, :role:`x`.
# The text between two delimiters holds no delimiter character, so a match attempt scans only to
# the next one: linear in the title, where "shortest text up to the same delimiter" (a lazy group)
# rescanned the rest of the line from every opener.
_INLINE_MARKUP = re.compile(
    r"(?::[\w.+-]+:)?(?:``(?=\S)([^`]+)(?<=\S)``|\*\*(?=\S)([^*]+)(?<=\S)\*\*"
    r"|\*(?=\S)([^*]+)(?<=\S)\*|`(?=\S)([^`]+)(?<=\S)`)_{0,2}"
)
_NON_ID = re.compile(r"[^a-z0-9]+")
_ID_ENDS = re.compile(r"^[-0-9]+|-+$")


def _adornment(line: str) -> str | None:
    """The adornment character if `line` is one punctuation character repeated, else None."""
    stripped = line.rstrip()
    if not stripped or stripped[0] not in _ADORNMENT_CHARS:
        return None
    return stripped[0] if stripped == stripped[0] * len(stripped) else None


def _width(text: str) -> int:
    """Display columns, counting East Asian wide characters twice, as docutils does."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _blank(line: str) -> bool:
    return not line.strip()


def outline(lines: list[str]) -> tuple[list[Heading], list[int]]:
    """The titles and top-level block starts of an reST document."""
    headings: list[Heading] = []
    block_starts: list[int] = []
    styles: dict[tuple[str, bool], int] = {}
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        after_blank = i == 0 or _blank(lines[i - 1])
        found = _title_at(lines, i) if after_blank else None
        if found is not None:
            span, style, text = found
            level = styles.setdefault(style, len(styles) + 1)
            headings.append(Heading(i, i + span, level, title_text(text)))
            block_starts.append(i)
            i += span
            continue
        if after_blank and not _blank(line) and not line[0].isspace():
            block_starts.append(i)
        i += 1
    return headings, block_starts


def _title_at(lines: list[str], i: int) -> tuple[int, tuple[str, bool], str] | None:
    """(lines spanned, style, raw text) when a section title starts at line i."""
    n = len(lines)
    over = _adornment(lines[i])
    if over is not None and i + 2 < n:
        text, under = lines[i + 1], lines[i + 2]
        title = text.strip()
        if (
            title
            and _adornment(text) is None
            and under.rstrip() == lines[i].rstrip()
            and _width(title) <= len(under.rstrip())
        ):
            return 3, (over, True), title
    if over is None and i + 1 < n and not _blank(lines[i]) and not lines[i][0].isspace():
        char = _adornment(lines[i + 1])
        underline = lines[i + 1].rstrip()
        title = lines[i].strip()
        if char is not None and (len(underline) >= 4 or len(underline) >= _width(title)):
            return 2, (char, False), title
    return None


def title_text(raw: str) -> str:
    """A title with its inline markup removed: ``code`` becomes code, *x* becomes x."""
    return _INLINE_MARKUP.sub(_markup_text, raw).strip()


def _markup_text(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None)


def docutils_id(title: str) -> str:
    """The HTML id docutils (and so Sphinx) gives a section title, as `nodes.make_id` does.

    Lowercase, accents folded to ASCII, every run of other characters one hyphen, leading digits
    and hyphens and trailing hyphens removed: "2. Rotating Keys!" -> "rotating-keys".
    """
    folded = unicodedata.normalize("NFKD", title.lower()).encode("ascii", "ignore").decode()
    return _ID_ENDS.sub("", _NON_ID.sub("-", " ".join(folded.split())))


_PEP_FIELD = re.compile(r"^([A-Z][\w-]*):(?:\s+(.*))?$")
_FIELD = re.compile(r"^:([\w -]+):(?:\s+(.*))?$")
_TITLE_DIRECTIVE = re.compile(r"^\.\.\s+title::\s+(.+)$")


def header_end(lines: list[str]) -> int:
    """The end (exclusive) of a PEP-style RFC 2822 header or a leading field list: the run of
    `Key: value` / `:key: value` lines (with indented continuations) at the top of the file."""
    pep = _PEP_FIELD.match(lines[0]) if lines else None
    if not (pep is not None and pep.group(1) == "PEP" or lines and _FIELD.match(lines[0])):
        return 0
    k = 1
    while k < len(lines) and lines[k].strip():
        if not (lines[k][0].isspace() or _PEP_FIELD.match(lines[k]) or _FIELD.match(lines[k])):
            return 0  # a paragraph that happens to start like a field, not a header
        k += 1
    return k


def document_title(lines: list[str]) -> str | None:
    """The title a PEP-style header (`PEP: 8` ... `Title: Style Guide`), a leading `:title:`
    field or a `.. title::` directive gives the document; None when none does."""
    for k in range(header_end(lines)):
        field = _PEP_FIELD.match(lines[k]) or _FIELD.match(lines[k])
        if field is not None and field.group(1).strip().lower() == "title" and field.group(2):
            return title_text(field.group(2).strip())
    for line in lines[:200]:
        directive = _TITLE_DIRECTIVE.match(line)
        if directive is not None:
            return title_text(directive.group(1).strip())
    return None


# ---- tables whose header a cut must repeat -----------------------------------------------------

_LIST_TABLE = re.compile(r"^(\s*)\.\.\s+list-table::")
_HEADER_ROWS = re.compile(r"^\s+:header-rows:\s*(\d+)\s*$")
_OPTION_LINE = re.compile(r"^\s+:[\w-]+:")
_ROW = re.compile(r"^(\s*)\*\s")
_GRID_BORDER = re.compile(r"^\s*\+(?:-+\+)+\s*$")
_GRID_HEADER_RULE = re.compile(r"^\s*\+(?:=+\+)+\s*$")
_SIMPLE_RULE = re.compile(r"^\s*=+(?:[ \t]+=+)+\s*$")  # two columns at least: not a title's line
MAX_TABLE_LINES = 5_000  # a simple table is looked for this far: bounded work per rule line


def tables(lines: list[str]) -> list[Table]:
    """Tables with a header row, as (start, end, body start), 0-based, end exclusive: the lines
    [start, body start) are the header a passage starting inside the body repeats. A
    `list-table` with `:header-rows:` (its rows are bullets), a grid table with a `+===+` rule
    under its header, and a simple table whose header sits between its first two rules."""
    found: list[Table] = []
    i = 0
    while i < len(lines):
        span = _list_table(lines, i) or _grid_table(lines, i) or _simple_table(lines, i)
        if span is None:
            i += 1
            continue
        if span[2] < span[1]:  # a header with no rows under it has nothing to repeat for
            found.append(span)
        i = max(span[1], i + 1)
    return found


def _list_table(lines: list[str], i: int) -> Table | None:
    directive = _LIST_TABLE.match(lines[i])
    if directive is None:
        return None
    depth = len(directive.group(1))
    header_rows, k = 0, i + 1
    while k < len(lines) and _OPTION_LINE.match(lines[k]):
        rows = _HEADER_ROWS.match(lines[k])
        header_rows = int(rows.group(1)) if rows else header_rows
        k += 1
    end = k
    row_starts: list[int] = []
    while end < len(lines) and (_blank(lines[end]) or indent(lines[end]) > depth):
        row = _ROW.match(lines[end])
        if row and (not row_starts or len(row.group(1)) == indent(lines[row_starts[0]])):
            row_starts.append(end)
        end += 1
    while end > k and _blank(lines[end - 1]):
        end -= 1
    if not header_rows or len(row_starts) <= header_rows:
        return Table(i, end, end)  # no header, or no rows below it
    return Table(row_starts[0], end, row_starts[header_rows])


def _grid_table(lines: list[str], i: int) -> Table | None:
    if not _GRID_BORDER.match(lines[i]):
        return None
    end, rule = i + 1, None
    while end < len(lines) and lines[end].strip()[:1] in ("+", "|"):
        if rule is None and _GRID_HEADER_RULE.match(lines[end]):
            rule = end
        end += 1
    return Table(i, end, rule + 1 if rule is not None else end)


def _simple_table(lines: list[str], i: int) -> Table | None:
    """Top rule, header rows, a rule, body rows, and a closing rule followed by a blank line (or
    the end); a table whose second rule closes it has no header."""
    if not _SIMPLE_RULE.match(lines[i]) or (i and not _blank(lines[i - 1])):
        return None
    middle = None
    for k in range(i + 1, min(len(lines), i + MAX_TABLE_LINES)):
        if not _SIMPLE_RULE.match(lines[k]):
            continue
        closes = k + 1 >= len(lines) or _blank(lines[k + 1])
        if middle is None and closes:
            return Table(i, k + 1, k + 1)
        if middle is None:
            middle = k
        elif closes:
            return Table(i, k + 1, middle + 1)
    return None


def indent(line: str) -> int:
    """How far a line is indented (reST's structure is indentation)."""
    return len(line) - len(line.lstrip())
