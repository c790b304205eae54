"""Normalisation shared by every extraction form: project paths, repository paths, lines, shas.

Main rule: anything that does not normalise cleanly (bad percent-encoding, control characters, a
path climbing out of its root, an invalid project path) makes the caller drop the reference;
nothing is guessed.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote, unquote

import regex

HEX = frozenset("0123456789abcdefABCDEF")
MAX_IID = 2147483647  # GitLab iids are signed 32-bit
MAX_LINE = 10_000_000  # no real file has more lines; larger numbers are not line anchors
MAX_PATH = 4096  # characters of a repository path

# GitLab path characters: start with [A-Za-z0-9_.], continue with [A-Za-z0-9_.-].
_PROJECT_SEGMENT = regex.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}")
_LINES = regex.compile(r"L(\d{1,9})(?:-L?(\d{1,9}))?")


def is_sha(text: str, *, full: bool = False) -> bool:
    """A hex commit id: 7 to 64 characters, or exactly 40 or 64 when ``full``."""
    if full:
        return len(text) in (40, 64) and all(c in HEX for c in text)
    return 7 <= len(text) <= 64 and all(c in HEX for c in text)


def valid_project_path(path: str) -> bool:
    """GitLab's rules for a full project path: 2 to 22 segments (a top group, 20 levels of
    subgroups, the project), no ``.git``/``.atom`` ending, namespaces not ending in ``.``."""
    segments = path.split("/")
    if not 2 <= len(segments) <= 22:
        return False
    if any(not _PROJECT_SEGMENT.fullmatch(s) or s in (".", "..") for s in segments):
        return False
    if any(s.endswith(".") for s in segments[:-1]):
        return False
    return not segments[-1].endswith((".git", ".atom"))


def resolve_project(written: str | None, own: str | None) -> str | None:
    """The full path a short form names: none -> the issue's project, ``name`` -> a sibling in
    the issue's namespace, ``group/name`` -> as written. None when it cannot be known or is
    invalid."""
    if written is None:
        full = own
    elif "/" in written:
        full = written
    elif own is not None and "/" in own:
        full = own.rsplit("/", 1)[0] + "/" + written
    else:
        return None
    if full is None or not valid_project_path(full):
        return None
    return full


def decode(text: str) -> str | None:
    """Percent-decode; None on invalid UTF-8 or any control/format character after decoding."""
    try:
        decoded = unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in decoded):
        return None
    return decoded


def clean_segments(segments: list[str]) -> list[str] | None:
    """Drop empty and ``.`` segments, resolve ``..``; None if the path climbs above its root."""
    out: list[str] = []
    for segment in segments:
        if segment in ("", "."):
            continue
        if segment == "..":
            if not out:
                return None
            out.pop()
            continue
        out.append(segment)
    return out


def clean_path(raw: str) -> str | None:
    """A repository path from written (possibly percent-encoded) text, or None if unusable."""
    decoded = decode(raw)
    if decoded is None or "\\" in decoded or len(decoded) > MAX_PATH:
        return None
    segments = clean_segments(decoded.split("/"))
    if not segments:
        return None
    return "/".join(segments)


def encode(text: str) -> str:
    """Percent-encode for a normalised URL; characters that end URLs in prose are encoded."""
    return quote(text, safe="/-._~+@:!$&*=;,")


def parse_lines(fragment: str) -> tuple[int, int] | None:
    """``L10``, ``L10-20``, ``L10-L20`` -> (10, 20); reversed ranges are ordered; a zero or huge
    line means no usable line anchor (the file itself still counts)."""
    match = _LINES.fullmatch(fragment)
    if match is None:
        return None
    return make_lines(match.group(1), match.group(2))


def make_lines(first: str, last: str | None) -> tuple[int, int] | None:
    a = int(first)
    b = int(last) if last is not None else a
    a, b = min(a, b), max(a, b)
    if a < 1 or b > MAX_LINE:
        return None
    return (a, b)


def parse_iid(digits: str) -> int | None:
    """A merge request iid in 1..2147483647, else None."""
    if len(digits) > 10:
        return None
    iid = int(digits)
    return iid if 1 <= iid <= MAX_IID else None


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only: ``str.lower`` maps some non-ASCII letters to ASCII ones
    (the Kelvin sign becomes ``k``), which would let a look-alike host match."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
