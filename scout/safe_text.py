"""Untrusted text made safe for a terminal: the one helper every human output goes through.

Repository file names, headings, issue references, reasons and model prose are written by
strangers. A control character (ESC starts an OSC or CSI sequence: retitled windows, hidden
hyperlinks, cursor moves) or a bidi control (U+202E reverses what follows) would let such text
disguise itself on a maintainer's screen. So every character Python does not call printable (the
Unicode "Other" categories, bidi and other format characters included, and every separator but the
space) is taken out. Pure and dependency-free: the CLI, the audit and the gap backlog share it.
"""

from __future__ import annotations

import logging
import re

DEFAULT_LIMIT = 300
# What str.split() splits on: both use Python's own test of a whitespace character.
_WORD = re.compile(r"\S+")
# Characters a JSON document keeps raw with ``ensure_ascii=False`` that a terminal acts on: C1
# controls (0x9b is a one-byte CSI) and the format characters (bidi controls, invisible marks).
_JSON_UNSAFE = re.compile(
    "[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)


def printable(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """One terminal-safe line: non-printable characters become spaces, runs of space collapse."""
    return one_line("".join(c if c.isprintable() else " " for c in text), limit)


def one_line(text: str, limit: int) -> str:
    """``" ".join(text.split())[:limit]``, reading only the words the limit keeps: a megabyte of
    reason costs what its first ``limit`` characters do, not a list of all its words."""
    kept: list[str] = []
    size = -1  # the length of the kept words joined by single spaces
    for word in _WORD.finditer(text):
        kept.append(word.group())
        size += len(kept[-1]) + 1
        if size >= limit:
            break
    return " ".join(kept)[:limit]


def printable_block(text: str) -> str:
    """Terminal-safe multi-line text: line breaks, tabs and indentation kept, the rest as above."""
    lines = text.replace("\r\n", "\n").replace("\u2028", "\n").replace("\u2029", "\n").split("\n")
    return "\n".join(
        "".join(c if c.isprintable() or c == "\t" else "" for c in line).rstrip() for line in lines
    )


def json_safe(document: str) -> str:
    """A JSON text with the characters terminals act on escaped as ``\\uXXXX`` (same value)."""
    return _JSON_UNSAFE.sub(lambda m: "".join(_escape(c) for c in m.group(0)), document)


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class SafeFormatter(logging.Formatter):
    """A log formatter for terminals: records carry paths and references from repositories.
    ``%(asctime)s`` is Scout's one time format (UTC, ``2026-02-01T10:00:00Z``), never local time
    without a zone."""

    def format(self, record: logging.LogRecord) -> str:
        return printable_block(super().format(record))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        from datetime import UTC, datetime

        from scout.timefmt import stamp

        return stamp(datetime.fromtimestamp(record.created, UTC))


# A log record whose ``extra`` holds this key is written once per handler (a command, or the
# server's whole run) for each value: a failing model's stage says so once, not per question.
ONCE = "scout_once"


class _Once(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.seen: set[object] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = getattr(record, ONCE, None)
        if key is None:
            return True
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def configure_logging(level: int = logging.WARNING, fmt: str = "%(message)s") -> logging.Handler:
    """Route every log record, and every Python warning, to stderr through SafeFormatter.

    Without a handler, records reach Python's last-resort handler, which writes them raw: a
    GraphQL error text or a project path holding ESC would reach the terminal as a sequence. So
    the root logger gets one handler (replacing the one an earlier call installed), warnings
    become log records (`logging.captureWarnings`), and the last-resort handler is this one too.
    """
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(SafeFormatter(fmt))
    handler.addFilter(_Once())
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    logging.lastResort = handler
    return handler


def reset_logging() -> None:
    """Undo `configure_logging` (a command is over; an embedding caller keeps its own setup)."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    logging.captureWarnings(False)
    logging.lastResort = _LAST_RESORT


_HANDLER_NAME = "scout-terminal"
_LAST_RESORT = logging.lastResort
