"""The fake ``claude``'s recorded calls, told apart by task.

With a model provider, ``[retrieval] expand = "auto"`` asks for search terms before each answer:
those calls carry the question alone. :func:`with_passages` returns the other calls, after
checking that every search-terms call holds no passage at all, so a test about what reaches a
passage checks both kinds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_FENCE = re.compile(r"-----(BEGIN|END) PASSAGE")


def recorded(record: Path) -> list[dict[str, Any]]:
    """Every call the fake ``claude`` recorded, in order."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def is_expansion(call: dict[str, Any]) -> bool:
    """A search-terms call: its output schema asks for ``terms``."""
    argv: list[str] = call["argv"]
    if "--json-schema" not in argv:
        return False
    schema = json.loads(argv[argv.index("--json-schema") + 1])
    return "terms" in schema.get("properties", {})


def with_passages(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls that are not search-terms calls; AssertionError if a search-terms call holds a
    passage (they are given the question alone)."""
    for call in calls:
        if is_expansion(call):
            assert not _FENCE.search(call["stdin"] + " ".join(call["argv"])), "a passage"
    return [call for call in calls if not is_expansion(call)]
