"""The one way a command lays out rows for a person: a header row, widths fitted to the terminal,
cuts that keep what tells rows apart, and colour for statuses on a terminal only.

Main rule: every cell goes through :func:`scout.safe_text.printable` before rich sees it, and rich
gets cells as plain :class:`rich.text.Text` (never markup), so the only escape sequences in a
:class:`Styled` result are the colours this module asked for. :func:`scout.cli.runtime.emit`
prints a ``Styled`` as it is and makes every other string safe itself.

Fitting, in order: a column whose value is the same on every row (of two or more) leaves the
table for a caption line (``kind: file``), or leaves it without one when that value is empty;
flexible columns share what the fixed ones leave; when even their minimum does not fit, the
column with the highest ``drop`` goes first. A cut keeps a URL's or path's tail
(``https://docs.gitlab.com/…/ci/pipelines/schedules``), other text's start.
rich is imported when a table is drawn, never by ``scout ask``.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scout.safe_text import printable, printable_block

ELLIPSIS = "…"
EMPTY = ("", "-")  # what a cell with nothing to say shows
GAP = 2  # spaces between columns
FALLBACK_WIDTH = 160  # off a terminal with no COLUMNS: wide, as a log or a file is read
MIN_WIDTH = 40
MAX_WIDTH = 1_000  # a COLUMNS of millions would lay out millions of blanks a row
CELL_LIMIT = 2_000  # characters of one cell considered at all (untrusted text is bounded)

# What a status value looks like on a terminal with colour; anything else is left plain.
STATUS_STYLES = {
    "accepted": "green",
    "answered": "green",
    "ok": "green",
    "rejected": "red",
    "withdrawn": "yellow",
    "declined": "yellow",
    "--": "red",
    "opened": "green",
    "closed": "magenta",
}


@dataclass(frozen=True)
class Column:
    """One column: ``key`` in each row, its ``header``, and how it behaves when space is short.

    ``flex`` columns share the width the others leave, in proportion to ``flex``, down to
    ``minimum``; fixed columns (``flex`` 0) are as wide as their widest cell. ``drop`` orders the
    columns that may go on a narrow terminal (highest first; 0 never goes). ``cut`` is ``"end"``
    for prose and ``"middle"`` for URLs, paths and references, whose tails tell rows apart.
    ``status`` colours the cell by its value. ``caption`` lets a constant column become a caption.
    """

    key: str
    header: str
    align: Literal["left", "right"] = "left"
    cut: Literal["end", "middle"] = "end"
    flex: int = 0
    minimum: int = 12
    drop: int = 0
    status: bool = False
    caption: bool = True
    note: str = ""  # a footer line when the column is dropped for want of width


@dataclass(frozen=True)
class Styled:
    """Text for a terminal that is already safe: made by this module from printable cells, its
    only escape sequences the colours it chose. Adding a plain string makes that string safe."""

    text: str

    def __add__(self, other: str | Styled) -> Styled:
        return Styled(self.text + _safe(other))

    def __radd__(self, other: str) -> Styled:
        return Styled(printable_block(other) + self.text)

    @staticmethod
    def join(parts: Sequence[str | Styled], separator: str = "\n") -> Styled:
        """``parts`` joined by ``separator``, each plain part made safe."""
        return Styled(separator.join(_safe(part) for part in parts))


def _safe(part: str | Styled) -> str:
    return part.text if isinstance(part, Styled) else printable_block(part)


@dataclass(frozen=True)
class Terminal:
    """Where a table is drawn: its width in columns and whether colour is wanted."""

    width: int = FALLBACK_WIDTH
    colour: bool = False
    height: int = 24

    @staticmethod
    def detect(stream: Any = None) -> Terminal:
        """The terminal standard output is: ``COLUMNS``/``LINES`` or its real size, and colour
        only when it is a terminal, ``NO_COLOR`` is unset or empty, and ``TERM`` is not dumb."""
        stream = stream or sys.stdout
        tty = _isatty(stream)
        if tty:
            size = shutil.get_terminal_size((FALLBACK_WIDTH, 24))
        else:  # a pipe or a file: COLUMNS if set, never the size of some other terminal
            size = os.terminal_size((_env_int("COLUMNS", FALLBACK_WIDTH), _env_int("LINES", 24)))
        colour = tty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        width = min(MAX_WIDTH, max(MIN_WIDTH, size.columns))
        return Terminal(width=width, colour=colour, height=size.lines)


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, "")) or default
    except ValueError:
        return default


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def cell_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (wide characters count two)."""
    from rich.cells import cell_len

    return int(cell_len(text))


def cut(text: str, width: int, how: Literal["end", "middle"] = "end") -> str:
    """``text`` in at most ``width`` columns, an ellipsis where it was cut. ``"middle"`` keeps a
    URL's scheme and host (or a path's first segment) when they leave room, and the tail from a
    ``/`` on: ``https://docs.gitlab.com/…/ci/pipelines/schedules``."""
    if cell_width(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    if how == "end":
        return _head(text, width - 1) + ELLIPSIS
    room = width - 1
    half = (room + 1) // 2
    head = _prefix(text)
    if cell_width(head) > half:
        head = head.partition("://")[2]  # the host tells more than the scheme
    if cell_width(head) > half:
        head = ""  # narrow: the tail alone tells rows apart
    tail = _tail(text, room - cell_width(head))
    slash = tail.find("/")
    if 0 < slash <= max(3, len(tail) // 6):
        tail = tail[slash:]  # start the tail at a segment boundary when that costs little
    return head + ELLIPSIS + tail


def _prefix(text: str) -> str:
    """``https://host/`` of a URL, ``first/`` of a path, else nothing."""
    scheme = text.find("://")
    start = scheme + 3 if 0 < scheme < 12 else 0
    slash = text.find("/", start)
    return text[: slash + 1] if slash > 0 else ""


def _head(text: str, width: int) -> str:
    out, used = [], 0
    for char in text:
        w = cell_width(char)
        if used + w > width:
            break
        out.append(char)
        used += w
    return "".join(out)


def _tail(text: str, width: int) -> str:
    return _head(text[::-1], width)[::-1]


@dataclass
class _Fitted:
    columns: list[Column]
    widths: dict[str, int]
    captions: list[tuple[Column, str]] = field(default_factory=list)


def _fit(columns: Sequence[Column], cells: list[dict[str, str]], width: int) -> _Fitted:
    shown = list(columns)
    captions = []
    if len(cells) > 1:
        for column in columns:
            values = {row[column.key] for row in cells}
            if column.caption and len(values) == 1:
                shown.remove(column)
                value = values.pop()
                if value not in EMPTY:  # a column empty on every row says nothing at all
                    captions.append((column, value))
    natural = {
        c.key: max(cell_width(c.header), *(cell_width(row[c.key]) for row in cells)) for c in shown
    }
    while True:
        fixed = [c for c in shown if not c.flex]
        flexible = [c for c in shown if c.flex]
        used = sum(natural[c.key] for c in fixed) + GAP * (len(shown) - 1)
        free = width - used
        wanted = sum(natural[c.key] for c in flexible)
        if free >= wanted:
            return _Fitted(shown, dict(natural), captions)
        floor = sum(min(c.minimum, natural[c.key]) for c in flexible)
        droppable = [c for c in shown if c.drop]
        if free >= floor or not droppable:
            break
        shown.remove(max(droppable, key=lambda c: c.drop))
    widths = dict(natural)
    _share(flexible, natural, max(free, 0), widths)
    return _Fitted(shown, widths, captions)


def _share(
    flexible: list[Column], natural: dict[str, int], free: int, widths: dict[str, int]
) -> None:
    """Give each flexible column its minimum, then what is left of ``free`` by weight, never past
    a column's natural width (what one does not need goes to the others)."""
    for c in flexible:
        widths[c.key] = min(c.minimum, natural[c.key])
    floor = sum(widths[c.key] for c in flexible)
    if floor > free:  # nothing left to drop: every flexible column gives up the same share
        for c in flexible:
            widths[c.key] = max(1, widths[c.key] * free // floor)
        return
    spare = free - floor
    pending = [c for c in flexible if widths[c.key] < natural[c.key]]
    while spare > 0 and pending:
        weight = sum(c.flex for c in pending)
        given = 0
        for c in pending:
            more = min(natural[c.key] - widths[c.key], max(1, spare * c.flex // weight))
            more = min(more, spare - given)
            widths[c.key] += more
            given += more
        spare -= given
        pending = [c for c in pending if widths[c.key] < natural[c.key]]
        if not given:
            break


def table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    *,
    terminal: Terminal | None = None,
    footer: Sequence[str] = (),
) -> Styled:
    """``rows`` as a table with a header row for ``terminal`` (default: standard output's)."""
    terminal = terminal or Terminal.detect()
    # cut before cleaning too: a cell of megabytes costs what a cell of CELL_LIMIT does
    cells = [
        {c.key: printable(_text(row.get(c.key))[: 4 * CELL_LIMIT], CELL_LIMIT) for c in columns}
        for row in rows
    ]
    fitted = _fit(columns, cells, terminal.width)
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    grid = Table(
        box=None,
        padding=(0, GAP // 2),
        pad_edge=False,
        show_edge=False,
        header_style="",
        expand=False,
    )

    def padded(text: str, column: Column, style: str) -> Text:
        # padded here, unstyled, so a colour covers the word and not the blank after it
        fill = " " * max(0, fitted.widths[column.key] - cell_width(text))
        if column.align == "right":
            return Text.assemble(fill, (text, style))
        return Text.assemble((text, style), fill)

    for c in fitted.columns:
        grid.add_column(
            padded(cut(c.header, fitted.widths[c.key]), c, "bold" if terminal.colour else ""),
            justify=c.align,
            width=fitted.widths[c.key],
            no_wrap=True,
            overflow="crop",
        )
    for row in cells:
        grid.add_row(
            *(
                padded(
                    cut(row[c.key], fitted.widths[c.key], c.cut),
                    c,
                    STATUS_STYLES.get(row[c.key], "") if c.status else "",
                )
                for c in fitted.columns
            )
        )
    out = io.StringIO()
    console = Console(
        file=out,
        width=max(terminal.width, sum(fitted.widths.values()) + GAP * len(fitted.widths)),
        force_terminal=terminal.colour,
        color_system="standard" if terminal.colour else None,
        no_color=not terminal.colour,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
        legacy_windows=False,
    )
    console.print(grid)
    lines = [line.rstrip() for line in out.getvalue().rstrip("\n").split("\n")]
    if terminal.colour:
        lines = [_strip_padding(line) for line in lines]
    lines += [cut(f"{c.header}: {value}", terminal.width) for c, value in fitted.captions]
    shown = {c.key for c in fitted.columns} | {c.key for c, _ in fitted.captions}
    lines += [c.note for c in columns if c.note and c.key not in shown]
    lines += [printable(line, CELL_LIMIT) for line in footer]
    return Styled("\n".join(lines))


def wrap(text: str, terminal: Terminal | None = None) -> str:
    """Prose (a summary sentence, not a table) wrapped to the terminal's width, made safe."""
    import textwrap

    width = (terminal or Terminal.detect()).width
    return "\n".join(textwrap.fill(printable(line, CELL_LIMIT), width) for line in text.split("\n"))


def _text(value: Any) -> str:
    if value is None:
        return "-"
    return str(value)


def _strip_padding(line: str) -> str:
    # rich pads the last cell before closing its style: drop spaces just before the final reset
    reset = "\x1b[0m"
    while line.endswith(reset) and line[: -len(reset)].endswith(" "):
        line = line[: -len(reset)].rstrip() + reset
    return line
