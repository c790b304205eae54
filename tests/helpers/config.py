"""scout.toml files for tests, written as TOML from dictionaries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def render_config(estate: Path | None, **sections: dict[str, Any] | list[dict[str, Any]]) -> str:
    """A scout.toml for a local estate; ``sections`` override or add tables (docs_site: a list)."""
    base: dict[str, Any] = {
        "forge": {
            "kind": "local",
            "url": "https://gitlab.acme.example",
            "path": str(estate) if estate else "estate",
            "groups": ["acme"],
        },
        "corpus": {"visibility": ["public"], "exclude_projects": ["acme/infra"]},
        "answer": {"provider": "offline"},
        "store": {"path": "scout.db"},
    }
    for name, values in sections.items():
        if isinstance(values, dict):
            base[name] = {**base.get(name, {}), **values}
        else:
            base[name] = values
    lines: list[str] = []
    for name, values in base.items():
        rows = values if isinstance(values, list) else [values]
        for row in rows:
            lines.append(f"[[{name}]]" if isinstance(values, list) else f"[{name}]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in row.items()]
            lines.append("")
    return "\n".join(lines)
