"""A per-run memo in front of a forge, so fifty references to one file cost one lookup.

Only lookups whose answer cannot change within a run are memoised: everything keyed by a sha,
plus project metadata and heads (a sweep validates against one snapshot of the estate). Not-found
answers are memoised too. The memo is bounded (least recently used out) so a huge sweep stays flat
in memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from scout.errors import NotFound
from scout.forge.base import Forge, Project

MEMOISED = frozenset(
    {
        "project",
        "head",
        "read",
        "line_count",
        "commit",
        "is_ancestor",
        "commit_diff",
        "compare",
        "merge_request",
        "merge_request_diffs",
        "resolve_ref_path",
    }
)
MAX_ENTRIES = 2_048


class CachedForge:
    """Wraps a forge; memoised methods answer from memory after their first call."""

    def __init__(self, forge: Forge, max_entries: int = MAX_ENTRIES) -> None:
        self.forge = forge
        self.max_entries = max_entries
        self._memo: OrderedDict[tuple[Any, ...], tuple[Any, NotFound | None]] = OrderedDict()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.forge, name)
        if name not in MEMOISED:
            return attribute
        return self._memoised(name, attribute)

    def _memoised(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            key = (name, *(a.path if isinstance(a, Project) else a for a in args))
            if key in self._memo:
                self._memo.move_to_end(key)
            else:
                try:
                    self._memo[key] = (function(*args), None)
                except NotFound as exc:
                    self._memo[key] = (None, exc)
                if len(self._memo) > self.max_entries:
                    self._memo.popitem(last=False)
            value, error = self._memo[key]
            if error is not None:
                raise error
            return value

        return call
