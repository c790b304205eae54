"""TOML files Scout is handed (the config, an estate's estate.toml, eval files), read bounded.

Main rule: such a file is untrusted in size and shape. It is read up to MAX_TOML_BYTES, parsed
by tomllib, and refused when its values nest deeper than MAX_DEPTH (tomllib recurses on nested
arrays and inline tables, and a deep value makes validation and JSON output recurse too). Every
failure is a TomlProblem with one line to show; each loader raises it as its own error, so each
file keeps its documented exit code (config 3, estate 5, eval file 2). A missing file is left
to the caller (FileNotFoundError), which knows what to suggest.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

MAX_TOML_BYTES = 8 << 20  # an estate.toml of 20,000 projects is about 2 MiB
MAX_DEPTH = 32  # Scout's deepest shape is 4 ([[question]] -> sources -> {lines} -> [a, b])


class TomlProblem(Exception):
    """Raised when a TOML file cannot be read, is not TOML, is too large or nests too deep."""


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed document at ``path``; TomlProblem (one line) when it is not a bounded one."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_TOML_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise TomlProblem(f"cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_TOML_BYTES:
        raise TomlProblem(f"larger than {MAX_TOML_BYTES >> 20} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TomlProblem(f"not UTF-8 (byte {exc.start})") from exc
    return parse_toml(text)


def parse_toml(text: str) -> dict[str, Any]:
    """``text`` parsed; TomlProblem when it is not TOML or nests deeper than MAX_DEPTH."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlProblem(f"not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise TomlProblem(f"not valid TOML: nested deeper than {MAX_DEPTH} levels") from exc
    if _depth(data) > MAX_DEPTH:
        raise TomlProblem(f"not valid TOML: nested deeper than {MAX_DEPTH} levels")
    return data


def _depth(value: object) -> int:
    """How deep tables and arrays nest in ``value`` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest
