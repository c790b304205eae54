"""The pieces of a document's outline, as the Markdown and reStructuredText readers find them and
the section splitter reads them: headings, code spans, tables, include directives.

Line numbers are 0-based and every ``end`` is exclusive, in both formats.
"""

from __future__ import annotations

from typing import NamedTuple


class Heading(NamedTuple):
    start: int  # first line of the heading (an RST title's overline, when it has one)
    end: int
    level: int  # 1-6 in Markdown; RST levels in order of first appearance of each adornment
    text: str  # plain text, markup removed


class Span(NamedTuple):
    start: int
    end: int


class Table(NamedTuple):
    start: int
    end: int
    body: int  # first line below the header (a GFM header is its first row and delimiter row)


class Include(NamedTuple):
    start: int
    end: int
    path: str  # as the directive wrote it


class Description(NamedTuple):
    line: int
    text: str
