"""Two eval runs side by side: every figure of two ``scout eval --json`` documents, and the
questions whose correctness differs. Works on the JSON documents (the files two runs wrote),
checked on read: a file that is not an eval document is a ConfigError naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scout.errors import ConfigError

# The figures, in table order: dotted paths into the eval JSON document.
_SECTIONS = ("bands", "citations", "retrieval", "floor", "cost", "latency_ms")
# Sections that runs of an older Scout lack: compared where a run has them.
_LATER_SECTIONS = ("expansion",)
MAX_DEPTH = 8  # an eval document's figures nest three deep (bands.answerable.n)


@dataclass(frozen=True)
class Figure:
    name: str
    a: Any
    b: Any

    def to_json(self) -> dict[str, Any]:
        return {"figure": self.name, "a": self.a, "b": self.b}


@dataclass(frozen=True)
class Changed:
    question: str
    a: bool | None  # correct in run A; None: not asked in A
    b: bool | None

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "a_correct": self.a, "b_correct": self.b}


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    figures: tuple[Figure, ...]
    changed: tuple[Changed, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "figures": [f.to_json() for f in self.figures],
            "changed": [c.to_json() for c in self.changed],
        }


def read_run(path: Path) -> dict[str, Any]:
    """A ``scout eval --json`` document, or ConfigError naming the file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: not found (write it with `scout eval FILE --json`)") from None
    except (OSError, ValueError) as exc:
        # ValueError: not UTF-8, not JSON, or an integer past Python's 4,300 digits
        raise ConfigError(f"{path}: not an eval JSON document: {_first_line(exc)}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: not an eval JSON document: nested too deeply") from None
    if not isinstance(document, dict) or not all(
        isinstance(document.get(key), dict) for key in _SECTIONS
    ):
        raise ConfigError(f"{path}: not an eval JSON document (write it with `scout eval --json`)")
    if not isinstance(document.get("rows", []), list):
        raise ConfigError(f"{path}: its `rows` is not a list")
    if any(_depth(document[key]) > MAX_DEPTH for key in _SECTIONS):
        raise ConfigError(f"{path}: not an eval JSON document: its figures nest too deeply")
    return document


def _depth(value: Any, seen: int = 0) -> int:
    """How deep ``value``'s objects nest, counted no further than past MAX_DEPTH."""
    if not isinstance(value, dict) or seen > MAX_DEPTH:
        return seen
    return max((_depth(inner, seen + 1) for inner in value.values()), default=seen + 1)


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _flatten(document: dict[str, Any]) -> dict[str, Any]:
    flat: dict[str, Any] = {
        "provider": document.get("provider"),
        "model": document.get("model"),
        "expand": document.get("expand", "off"),
        "questions": document.get("questions"),
    }

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}", inner)
        else:
            flat[prefix] = value

    for section in _SECTIONS:
        walk(section, document[section])
    for section in _LATER_SECTIONS:
        if isinstance(document.get(section), dict):
            walk(section, document[section])
    return flat


def _correct(document: dict[str, Any]) -> dict[str, bool]:
    return {
        str(row.get("question")): bool(row.get("correct"))
        for row in document.get("rows", [])
        if isinstance(row, dict)
    }


def compare(a_path: Path, b_path: Path) -> Comparison:
    a, b = read_run(a_path), read_run(b_path)
    flat_a, flat_b = _flatten(a), _flatten(b)
    names = list(dict.fromkeys([*flat_a, *flat_b]))
    figures = tuple(Figure(name, flat_a.get(name), flat_b.get(name)) for name in names)
    correct_a, correct_b = _correct(a), _correct(b)
    changed = tuple(
        Changed(question, correct_a.get(question), correct_b.get(question))
        for question in dict.fromkeys([*correct_a, *correct_b])
        if correct_a.get(question) != correct_b.get(question)
    )
    return Comparison(str(a_path), str(b_path), figures, changed)
